"""The search page of `code-alias serve`: `GET /` and its two static files, and the two calls it makes.

The page (`page_static/`: one HTML file, one script, one style sheet; no build step, nothing from another origin)
offers completions as you type from `POST /code_alias_autocomplete/run` (the dictionary alone: never the model)
and on Enter asks `POST /page/ask`, which is the ask answer plus, for each ranked symbol, its code lines from the
retrieved chunk, its *why* in words and the absolute path an editor link opens. `GET /page/info` names the
repositories and packages (for the filters) and the limits.

The static files carry no data, so they are served without the token (a browser cannot send a bearer token on
navigation); the page then asks for the token (or reads it once from `#token=...`) and sends it on every call,
which the guard checks as for any route. The page's own headers forbid other origins' scripts, styles, frames and
connections (`Content-Security-Policy`), so text from the index is only ever shown, never run.
"""

from __future__ import annotations

import re
from importlib import resources
from pathlib import PurePosixPath
from typing import Any

from haystack_integrations.components.code_alias.core.model import DictionaryError
from haystack_integrations.components.code_alias.indexing.dictionary_handle import DictionaryHandle
from haystack_integrations.components.code_alias.paths import DICTIONARY_FILE
from haystack_integrations.components.code_alias.serving.chat import symbol_code
from haystack_integrations.components.code_alias.serving.graph_page import add_graph_page_routes
from haystack_integrations.components.code_alias.serving.service import (
    LIMIT_RANGE,
    MAX_PREFIX_CHARS,
    MAX_QUESTION_CHARS,
    TOP_K_RANGE,
    CodeAliasService,
    bad_request,
    json_object,
)

#: The files the page is made of, by URL path: nothing else is read from the folder.
STATIC_FILES: dict[str, tuple[str, str]] = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/page/page.js": ("page.js", "text/javascript; charset=utf-8"),
    "/page/page.css": ("page.css", "text/css; charset=utf-8"),
    "/page/graph.js": ("graph.js", "text/javascript; charset=utf-8"),  # callers · callees (`graph_page.py`)
}
PAGE_HEADERS = {
    "content-security-policy": "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-cache",
}
MAX_CODE_LINES = 40
PAGE_FIELDS = frozenset({"question", "top_k", "repo", "package"})
_RANK_RE = re.compile(r"^(\w+) #(\d+)$")
_RETRIEVERS = {"bm25": "keyword search", "embedding": "meaning (embedding) search"}
_EVIDENCE = {  # `core.hints.EvidenceKind`, said in words
    "exact": "the question writes the name out",
    "nickname": "the team's nickname file maps the question's words to it",
    "alias": "it is a renamed symbol's or a package's alias",
    "fuzzy": "a near spelling of a word in the question",
    "retrieved": "it is defined in a chunk the first search found",
    "all-words": "every word of its name is in the question",
    "described": "the question describes it",
    "package": "its package is the one asked about",
    "words": "words of its name are in the question",
    "doc": "its docstring shares words with the question",
    "abbreviation": "through an abbreviation",
}


def is_page_asset(method: str, path: str) -> bool:
    """Whether a request fetches one of the page's static files (served without the token: they hold no data)."""
    return method in ("GET", "HEAD") and path in STATIC_FILES


def why_in_words(why: list[str]) -> str:
    """
    A ranked symbol's evidence (`results.why_ranked`: "bm25 #2", "rewrite: NAME (evidence, confidence 0.54)")
    as one sentence a person reads.
    """
    found: list[str] = []
    named = ""
    for reason in why:
        rank = _RANK_RE.match(reason)
        if rank:
            found.append(f"#{rank.group(2)} in {_RETRIEVERS.get(rank.group(1), rank.group(1) + ' search')}")
        elif reason.startswith("rewrite: "):
            symbol, _, rest = reason[len("rewrite: ") :].partition(" (")
            parts = [part.strip() for part in rest.rstrip(")").split(",") if part.strip()]
            confidence = next((part.split()[-1] for part in parts if part.startswith("confidence")), None)
            kinds = dict.fromkeys(part.split(":")[0] for part in parts if not part.startswith("confidence"))
            evidence = [_EVIDENCE.get(kind, kind) for kind in kinds]
            named = f"It defines {symbol}, a name the rewrite found for the question"
            if evidence:
                named += " (" + "; ".join(evidence) + ")"
            if confidence:
                named += f", confidence {confidence}"
            named += "."
        else:
            found.append(reason)
    sentence = ("Found " + ", ".join(found) + ".") if found else ""
    return " ".join(part for part in (sentence, named) if part) or "Ranked by the fused retrieval score."


def read_page_question(raw: bytes, content_type: str | None = "application/json") -> dict[str, Any]:
    """The `/page/ask` body: a JSON object of `question` and, optionally, `top_k`, `repo`, `package` (400/422)."""
    body = json_object(raw, "with a question", content_type)
    unknown = sorted(set(body) - PAGE_FIELDS)
    if unknown:
        raise bad_request(f"unknown field(s) {', '.join(repr(name[:40]) for name in unknown[:5])}")
    if "question" not in body:
        raise bad_request("question is required")
    return body


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
        """The repositories and packages to filter by, and the limits."""
        try:
            dictionary = self._dictionary()
        except (DictionaryError, FileNotFoundError) as error:
            raise self.service._missing_index(error) from error
        return {
            "repositories": sorted(dictionary.repositories),
            "packages": sorted({package.name for package in dictionary.packages}),
            "dictionary_version": dictionary.version,
            "limits": {
                "max_question_chars": MAX_QUESTION_CHARS,
                "max_prefix_chars": MAX_PREFIX_CHARS,
                "top_k": list(TOP_K_RANGE),
                "limit": list(LIMIT_RANGE),
            },
        }

    def ask(self, body: dict[str, Any]) -> dict[str, Any]:
        """The ask answer with, per symbol, its code lines, its why in words and the path an editor opens."""
        payload, documents = self.service.ask_with_chunks(
            body["question"], body.get("top_k", 10), "dictionary", body.get("repo"), body.get("package")
        )
        dictionary = self._dictionary()
        roots = {name: record.root for name, record in dictionary.repositories.items()}
        symbols: list[dict[str, Any]] = []
        for item in payload["symbols"]:
            start, end = item.get("start_line"), item.get("end_line")
            span = min(MAX_CODE_LINES, (end - start + 1) if isinstance(start, int) and isinstance(end, int) else 12)
            chunk = symbol_code(documents, item["file_path"], start, span)
            root = roots.get(item.get("repo") or "", dictionary.root) or dictionary.root
            symbols.append(
                {
                    **item,
                    "why_words": why_in_words(item.get("why") or []),
                    "code": {"start_line": chunk.start_line, "lines": list(chunk.lines), "language": chunk.language}
                    if chunk
                    else None,
                    "editor_path": str(PurePosixPath(root) / item["file_path"]) if root else None,
                }
            )
        return {**payload, "symbols": symbols}


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
