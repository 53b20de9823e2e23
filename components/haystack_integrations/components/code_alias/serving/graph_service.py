"""The reference graph behind the server's `code_alias_callers` / `_callees` / `_impact` (REST and MCP) and chat.

A client of the service's index folder: the graph comes from the folder's `DictionaryHandle` (resolved once per
dictionary version and kept, `DictionaryHandle.graph`), the answers from `core/graph_answers.py`, the same functions
the CLI calls in-process. What this adds is what a server needs: the request checked field by field
(`app.requests.GraphRequest`: a 422 that names the field), a name the index does not define answered with a 404 that
says so, a missing index with how to build it.
"""

from __future__ import annotations

import logging
from typing import Any, Literal

from haystack_integrations.components.code_alias.app.requests import GraphRequest
from haystack_integrations.components.code_alias.core.graph import ReferenceGraph
from haystack_integrations.components.code_alias.core.graph_answers import (
    GraphNameError,
    callees_answer,
    callers_answer,
    impact_answer,
    usage_answer,
)
from haystack_integrations.components.code_alias.core.model import DictionaryError
from haystack_integrations.components.code_alias.indexing.dictionary_handle import DictionaryHandle
from haystack_integrations.components.code_alias.indexing.index_files import index_exists
from haystack_integrations.components.code_alias.paths import DICTIONARY_FILE
from haystack_integrations.components.code_alias.serving.service import (
    BUILD_HINT,
    CodeAliasService,
    bad_request,
    parse_request,
    plain,
)

logger = logging.getLogger(__name__)

Question = Literal["callers", "callees", "impact"]


def service_graph(service: CodeAliasService) -> ReferenceGraph:
    """The reference graph of the service's index (404 with how to build one when there is no index)."""
    folder = service.settings.index_dir
    try:
        return DictionaryHandle.for_path(folder / DICTIONARY_FILE).graph()
    except (DictionaryError, FileNotFoundError) as error:
        reason = f"no index at {folder}" if not index_exists(folder) else str(error)
        raise bad_request(f"{reason}; {BUILD_HINT}", status_code=404) from error


def graph_answer(
    service: CodeAliasService,
    question: Question,
    name: Any,
    *,
    limit: Any = 50,
    depth: Any = 3,
    file_path: Any = None,
    repo: Any = None,
    include_ambiguous: Any = False,
) -> dict[str, Any]:
    """
    Callers, callees or impact of the definitions named `name` (see `core/graph_answers.py` for the answers).

    :raises HTTPException: 422 on a bad field, 404 when no definition has the name (or there is no index).
    """
    request = parse_request(
        GraphRequest,
        {
            "name": name,
            "limit": limit,
            "depth": depth,
            "file_path": file_path,
            "repo": repo,
            "include_ambiguous": include_ambiguous,
        },
    )
    options: dict[str, Any] = {"limit": request.limit, "file_path": request.path, "repo": request.repo}
    graph = service_graph(service)
    try:
        if question == "callers":
            answer = callers_answer(graph, request.text, **options)
        elif question == "callees":
            answer = callees_answer(graph, request.text, **options)
        else:
            answer = impact_answer(
                graph, request.text, depth=request.depth, include_ambiguous=request.include_ambiguous, **options
            )
    except GraphNameError as error:
        raise bad_request(str(error), status_code=404) from None
    return plain(answer)


def attach_usage(service: CodeAliasService, payload: dict[str, Any]) -> dict[str, Any]:
    """
    `payload` (an ask answer) with `usage`, the graph's callers or impact of the symbol asked about, when the
    rewrite's intent is `usage` ("who calls X", "what breaks if I change X"). The search's answer stands either way:
    a graph that cannot be built is logged and left out.
    """
    rewrite = payload.get("rewrite") or {}
    if rewrite.get("intent") != "usage":
        return payload
    try:
        graph = DictionaryHandle.for_path(service.settings.index_dir / DICTIONARY_FILE).graph()
        question, named = str(payload.get("question", "")), list(rewrite.get("symbols") or [])
        usage = usage_answer(graph, question, named, list(payload.get("symbols") or []))
    except Exception as error:  # the ask answer must not fail for its graph part
        logger.warning("code-alias: no graph answer for a usage question: %s", error)
        return payload
    return payload if usage is None else {**payload, "usage": plain(usage)}
