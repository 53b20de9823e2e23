"""The search page of `code-alias serve`: `GET /` and its static files, and the two calls it makes.

The page (`page_static/`: one HTML file, one script, one style sheet, an icon; no build step, nothing from another
origin) offers completions as you type from `POST /code_alias_autocomplete/run` (the dictionary alone: never the model)
and on Enter asks `POST /page/ask`, which is the ask answer plus, for each ranked symbol, its code at the file's
line numbers (`answer_view`: a snippet centred on the lines that match, the lines around it, the matches to
highlight), its *why* in words and the absolute path an editor link opens, and the groups of near-duplicates the
page folds. `GET /page/info` names the repositories and packages (for the filters), the limits, the folders they
were indexed from and the server's default link template (each person may choose another, and map the server's
folder to their own checkout, in the page's settings).

The static files carry no data, so they are served without the token (a browser cannot send a bearer token on
navigation); the page then asks for the token (or reads it once from `#token=...`) and sends it on every call,
which the guard checks as for any route. The page's own headers forbid other origins' scripts, styles, frames and
connections (`Content-Security-Policy`), so text from the index is only ever shown, never run.
"""

from __future__ import annotations

from importlib import resources
from pathlib import PurePosixPath
from typing import Any

from haystack_integrations.components.code_alias.answer_view import (
    LINK_PRESETS,
    attach_code,
    group_symbols,
    match_terms,
)
from haystack_integrations.components.code_alias.app.requests import (
    LIMIT_RANGE,
    MAX_PREFIX_CHARS,
    MAX_QUESTION_CHARS,
    TOP_K_RANGE,
)
from haystack_integrations.components.code_alias.core.model import DictionaryError
from haystack_integrations.components.code_alias.indexing.dictionary_handle import DictionaryHandle
from haystack_integrations.components.code_alias.paths import DICTIONARY_FILE
from haystack_integrations.components.code_alias.presentation import display_name, short_reason, why_in_words
from haystack_integrations.components.code_alias.serving.graph_page import add_graph_page_routes
from haystack_integrations.components.code_alias.serving.service import (
    CodeAliasService,
    json_fields,
)

#: The files the page is made of, by URL path: nothing else is read from the folder.
STATIC_FILES: dict[str, tuple[str, str]] = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/page/page.js": ("page.js", "text/javascript; charset=utf-8"),
    "/page/page.css": ("page.css", "text/css; charset=utf-8"),
    "/page/favicon.svg": ("favicon.svg", "image/svg+xml"),
    "/page/graph.js": ("graph.js", "text/javascript; charset=utf-8"),  # callers · callees (`graph_page.py`)
}
PAGE_HEADERS = {
    "content-security-policy": "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-cache",
}
PAGE_FIELDS = frozenset({"question", "top_k", "repo", "package"})


def is_page_asset(method: str, path: str) -> bool:
    """Whether a request fetches one of the page's static files (served without the token: they hold no data)."""
    return method in ("GET", "HEAD") and path in STATIC_FILES


def read_page_question(raw: bytes, content_type: str | None = "application/json") -> dict[str, Any]:
    """The `/page/ask` body: a JSON object of `question` and, optionally, `top_k`, `repo`, `package` (400/422)."""
    return json_fields(raw, content_type, allowed=PAGE_FIELDS, required="question")


class PageService:
    """
    What the page shows, from the process's service.

    :param service: The service the REST routes use.
    """

    def __init__(self, service: CodeAliasService) -> None:
        self.service = service

    def _dictionary(self) -> Any:
        return DictionaryHandle.for_path(self.service.settings.index_dir / DICTIONARY_FILE).dictionary

    def info(self) -> dict[str, Any]:
        """The repositories and packages to filter by, the limits, and where links to code go by default."""
        try:
            dictionary = self._dictionary()
        except (DictionaryError, FileNotFoundError) as error:
            raise self.service._missing_index(error) from error
        return {
            "repositories": sorted(dictionary.repositories),
            "packages": sorted({package.name for package in dictionary.packages}),
            "dictionary_version": dictionary.version,
            "roots": self.service.roots(),
            "links": {"default": self.service.settings.link_template, "presets": dict(LINK_PRESETS)},
            "limits": {
                "max_question_chars": MAX_QUESTION_CHARS,
                "max_prefix_chars": MAX_PREFIX_CHARS,
                "top_k": list(TOP_K_RANGE),
                "limit": list(LIMIT_RANGE),
            },
        }

    def ask(self, body: dict[str, Any]) -> dict[str, Any]:
        """
        The ask answer as the page shows it: per symbol its name beside its path, its why in words, the absolute
        path an editor link opens, and its code (the snippet centred on the matching lines, the lines around it for
        "show more", the matches to highlight); the near-duplicate groups; the files with their first lines.
        """
        payload, documents = self.service.ask_with_chunks(
            body["question"], body.get("top_k", 10), "dictionary", body.get("repo"), body.get("package")
        )
        roots = self.service.roots()
        terms = match_terms(payload["question"], payload["rewrite"]["symbols"])
        symbols: list[dict[str, Any]] = [dict(item) for item in payload["symbols"]]
        attach_code(symbols, documents, terms, more=True, spans=True)
        for item in symbols:
            root = roots.get(str(item.get("repo") or ""), roots.get(""))
            item["display_name"] = display_name(item)
            item["why_words"] = why_in_words(item.get("evidence"))
            item["reason"] = short_reason(item.get("evidence"))
            item["editor_path"] = str(PurePosixPath(root) / item["file_path"]) if root else None
        files: list[dict[str, Any]] = []
        for ranked in payload["files"]:
            root = roots.get(str(ranked.get("repo") or ""), roots.get(""))
            first = next((hit.get("start_line") for hit in ranked.get("hits") or [] if hit.get("start_line")), 1)
            path = str(PurePosixPath(root) / ranked["file_path"]) if root else None
            files.append({**ranked, "line": first, "editor_path": path})
        return {
            **payload,
            "symbols": symbols,
            "files": files,
            "groups": group_symbols(symbols),
            "terms": terms.to_dict(),
        }


def add_page_routes(app: Any, service: CodeAliasService) -> None:
    """
    Add `GET /` (and the page's script and style), `GET /page/info` and `POST /page/ask` to `app`.

    :param app: The FastAPI app of `code-alias serve`.
    :param service: The process's service.
    """
    from fastapi import Request
    from fastapi.concurrency import run_in_threadpool
    from fastapi.responses import JSONResponse, Response

    page = PageService(service)
    folder = resources.files("haystack_integrations.components.code_alias.serving") / "page_static"
    files = {path: ((folder / name).read_bytes(), kind) for path, (name, kind) in STATIC_FILES.items()}

    def static(path: str) -> Any:
        content, kind = files[path]

        async def endpoint() -> Response:
            return Response(content, media_type=kind, headers=PAGE_HEADERS)

        endpoint.__annotations__ = {}
        return endpoint

    for path in STATIC_FILES:
        app.add_api_route(path, static(path), methods=["GET"], include_in_schema=False, response_model=None)

    async def info() -> JSONResponse:
        return JSONResponse(await run_in_threadpool(page.info))

    async def ask(request: Request) -> JSONResponse:
        body = read_page_question(await request.body(), request.headers.get("content-type"))
        return JSONResponse(await run_in_threadpool(page.ask, body))

    info.__annotations__ = {}
    ask.__annotations__ = {"request": Request}  # the real class (this module's annotations are strings)
    app.add_api_route("/page/info", info, methods=["GET"], tags=["page"], response_model=None)
    app.add_api_route("/page/ask", ask, methods=["POST"], tags=["page"], response_model=None)
    add_graph_page_routes(app, service)  # `POST /page/graph`: a symbol's callers and callees
