"""The search page's "callers · callees" link: `POST /page/graph` and the script that adds the link (`graph.js`).

For each ranked symbol of an answer the page shows a "callers · callees" toggle (`page_static/graph.js`, loaded after
`page.js`); opening it asks `POST /page/graph` `{"name": QUALIFIED_NAME, "file_path": PATH}` for both lists of that
one definition, answered from the reference graph (`graph_service.graph_answer`: the same answers as the
`code_alias_callers` and `code_alias_callees` routes, at most `PAGE_LIMIT` of each). The route needs the token like
every data route; the script puts every string it gets into the page as text.
"""

from __future__ import annotations

from typing import Any

from haystack_integrations.components.code_alias.serving.graph_service import graph_answer
from haystack_integrations.components.code_alias.serving.service import CodeAliasService, json_fields

PAGE_LIMIT = 20
GRAPH_FIELDS = frozenset({"name", "file_path", "repo"})


def page_graph(service: CodeAliasService, raw: bytes, content_type: str | None) -> dict[str, Any]:
    """Callers and callees of one definition, for the page (400/415/422 on a bad body, 404 on an unknown name)."""
    body = json_fields(raw, content_type, allowed=GRAPH_FIELDS, required="name")
    options = {key: body.get(key) for key in ("file_path", "repo")}
    callers = graph_answer(service, "callers", body["name"], limit=PAGE_LIMIT, **options)
    callees = graph_answer(service, "callees", body["name"], limit=PAGE_LIMIT, **options)
    return {"callers": callers, "callees": callees}


def add_graph_page_routes(app: Any, service: CodeAliasService) -> None:
    """Add `POST /page/graph` to the page's routes (`page.add_page_routes` calls this)."""
    from fastapi import Request
    from fastapi.concurrency import run_in_threadpool
    from fastapi.responses import JSONResponse

    async def graph(request: Request) -> JSONResponse:
        raw, kind = await request.body(), request.headers.get("content-type")
        return JSONResponse(await run_in_threadpool(page_graph, service, raw, kind))

    graph.__annotations__ = {"request": Request}  # the real class (this module's annotations are strings)
    app.add_api_route("/page/graph", graph, methods=["POST"], tags=["page"], response_model=None)
