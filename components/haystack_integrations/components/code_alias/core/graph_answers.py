"""Answers from the reference graph as JSON-ready dicts, and as text: one shape for the CLI, REST, MCP, chat and page.

Framework-free. `callers_answer`, `callees_answer` and `impact_answer` take a `ReferenceGraph` and a name (a
definition's own name or its qualified name, as `code-alias dict show` takes it) and answer for every definition the
name stands for. `usage_kind` tells a usage question's sort ("what breaks if..." asks for impact, "who calls..." for
callers); `answer_text` (`graph_text.py`) prints any of the answers for a terminal.
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import CodeAliasError
from .graph import CALL_KINDS, Edge, ReferenceGraph
from .graph_scope import Definition
from .graph_text import answer_text

__all__ = [
    "DEFAULT_LIMIT",
    "MAX_TARGETS",
    "GraphNameError",
    "answer_text",
    "callees_answer",
    "callers_answer",
    "impact_answer",
    "usage_answer",
    "usage_kind",
]

DEFAULT_LIMIT = 50
MAX_TARGETS = 10
MAX_CANDIDATES_SHOWN = 5
_IMPACT_RE = re.compile(
    r"\b(break\w*|impact\w*|affect\w*|depend\w*|ripple|blast radius|change|chang(?:e|ing)|rename|remove|delete)\b", re.I
)


class GraphNameError(LookupError, CodeAliasError):
    """No definition has the name asked for (the message says so, with near names when there are some)."""


def _node(graph: ReferenceGraph, definition: Definition) -> dict[str, Any]:
    node: dict[str, Any] = {
        "qualified_name": definition.qualified_name,
        "name": definition.name,
        "kind": definition.kind,
        "file_path": definition.file_path,
        "start_line": definition.start_line,
        "end_line": definition.end_line,
        "test": definition.test,
    }
    if definition.repo is not None:
        node["repo"] = definition.repo
    return node


def _site(graph: ReferenceGraph, edge: Edge, *, target: bool = False) -> dict[str, Any]:
    """One use: where (`file_path:line`), by whom (the enclosing definition, or module code), what kind."""
    file = graph.file_scope(edge)
    site: dict[str, Any] = {"file_path": file.path, "line": edge.line, "kind": edge.kind, "status": edge.status}
    if file.repo is not None:
        site["repo"] = file.repo
    if edge.source is not None:
        site["caller"] = _node(graph, graph.definitions[edge.source])
    else:
        site["caller"] = {"qualified_name": file.module or file.path, "kind": "module", "test": file.test}
    site["test"] = bool(site["caller"].get("test"))
    if edge.status == "ambiguous":
        site["candidates"] = len(edge.targets)
        site["reason"] = edge.reason
    if target:
        site["name"] = edge.name
        if edge.qualifier:
            site["qualifier"] = edge.qualifier
    return site


def targets_for(
    graph: ReferenceGraph, name: str, *, file_path: str | None = None, repo: str | None = None
) -> list[Definition]:
    """
    The definitions `name` stands for (own name or qualified name, narrowed by `file_path` / `repo`).

    :raises GraphNameError: None has that name; the message lists up to five near names.
    """
    found = graph.find(name, file_path=file_path, repo=repo)
    if not found:
        lowered = name.lower()
        near = sorted({d.qualified_name for d in graph.definitions if d.name.lower() == lowered.rsplit(".", 1)[-1]})
        hint = f"; did you mean {', '.join(near[:5])}?" if near else ""
        where = f" in {file_path}" if file_path else ""
        raise GraphNameError(f"no definition named {name!r}{where} in the index{hint}")
    return found[:MAX_TARGETS]


def _answer(
    graph: ReferenceGraph, name: str, file_path: str | None, repo: str | None
) -> tuple[dict[str, Any], list[Definition]]:
    """The answer's head (how many definitions have the name) and the definitions it is given for."""
    found = len(graph.find(name, file_path=file_path, repo=repo))
    targets = targets_for(graph, name, file_path=file_path, repo=repo)
    return {"query": name, "dictionary_version": graph.version, "definitions": found, "targets": []}, targets


def callers_answer(
    graph: ReferenceGraph,
    name: str,
    *,
    limit: int = DEFAULT_LIMIT,
    file_path: str | None = None,
    repo: str | None = None,
) -> dict[str, Any]:
    """
    Who calls (or instantiates) each definition named `name`: `callers` (resolved: the scope rules chose this
    definition) and `ambiguous` (sites that may call it: the receiver's type is not known, or several definitions
    share the name), each at most `limit`, with their totals.
    """
    answer, targets = _answer(graph, name, file_path, repo)
    for definition in targets:
        edges = graph.callers(definition.id, kinds=CALL_KINDS)
        resolved = [e for e in edges if e.status == "resolved"]
        ambiguous = [e for e in edges if e.status == "ambiguous"]
        answer["targets"].append(
            {
                **_node(graph, definition),
                "callers": [_site(graph, e) for e in resolved[:limit]],
                "ambiguous": [_site(graph, e) for e in ambiguous[:limit]],
                "total": {"callers": len(resolved), "ambiguous": len(ambiguous)},
            }
        )
    return answer


def callees_answer(
    graph: ReferenceGraph,
    name: str,
    *,
    limit: int = DEFAULT_LIMIT,
    file_path: str | None = None,
    repo: str | None = None,
) -> dict[str, Any]:
    """
    What each definition named `name` calls: `callees` (resolved, with the definition), `ambiguous` (the
    candidates, at most five named) and `external` (names defined outside the index: library calls, builtins).
    """
    answer, targets = _answer(graph, name, file_path, repo)
    for definition in targets:
        edges = graph.callees(definition.id, kinds=CALL_KINDS)
        callees, ambiguous, external = [], [], []
        for edge in edges:
            site = _site(graph, edge, target=True)
            site.pop("caller", None)
            if edge.status == "resolved":
                site["callee"] = _node(graph, graph.definitions[edge.targets[0]])
                callees.append(site)
            elif edge.status == "ambiguous":
                site["candidate_names"] = [graph.definitions[t].qualified_name for t in edge.targets][
                    :MAX_CANDIDATES_SHOWN
                ]
                ambiguous.append(site)
            else:
                site.pop("test", None)
                external.append(site)
        answer["targets"].append(
            {
                **_node(graph, definition),
                "callees": callees[:limit],
                "ambiguous": ambiguous[:limit],
                "external": external[:limit],
                "total": {"callees": len(callees), "ambiguous": len(ambiguous), "external": len(external)},
            }
        )
    return answer


def impact_answer(
    graph: ReferenceGraph,
    name: str,
    *,
    depth: int = 3,
    limit: int = DEFAULT_LIMIT * 2,
    include_ambiguous: bool = False,
    file_path: str | None = None,
    repo: str | None = None,
) -> dict[str, Any]:
    """
    What a change of each definition named `name` can break: everything that reaches it through calls,
    instantiations, subclasses and type uses, up to `depth` hops, nearest first; `tests` are the test files'
    definitions among them (the tests that reach it). Ambiguous uses are listed (marked) but followed only with
    `include_ambiguous`.
    """
    answer, targets = _answer(graph, name, file_path, repo)
    answer["depth"] = depth
    for definition in targets:
        reached = graph.impact(definition.id, depth=depth, include_ambiguous=include_ambiguous)
        rows = []
        for level, _source, edge in reached:
            site = _site(graph, edge)
            site["depth"] = level
            site["via"] = graph.definitions[edge.targets[0]].qualified_name if edge.status == "resolved" else edge.name
            rows.append(site)
        tests = [row for row in rows if row["test"]]
        answer["targets"].append(
            {
                **_node(graph, definition),
                "impact": rows[:limit],
                "tests": tests[:limit],
                "total": {
                    "reached": len(rows),
                    "tests": len(tests),
                    "ambiguous": sum(row["status"] == "ambiguous" for row in rows),
                },
            }
        )
    return answer


def usage_answer(
    graph: ReferenceGraph, question: str, rewrite_symbols: list[str], ranked: list[dict[str, Any]]
) -> dict[str, Any] | None:
    """
    The graph's answer to a usage question (the rewrite's intent `usage`: "who calls X", "what breaks if I change
    X"): callers, or impact for a question about a change, of the definition the question is about. That is the
    best-ranked answer symbol the rewrite named, else the first symbol the rewrite named, else the best-ranked
    answer symbol; None when none of them is a definition of the graph.

    :param rewrite_symbols: The rewrite's `symbols`, in its order.
    :param ranked: The answer's ranked symbols (`qualified_name`, `file_path`, `symbol` each).
    """
    named = set(rewrite_symbols)
    choice: tuple[str, str | None] | None = None
    for item in ranked:
        if item.get("symbol") in named or item.get("qualified_name") in named:
            choice = (str(item["qualified_name"]), item.get("file_path"))
            break
    if choice is None and rewrite_symbols and graph.find(rewrite_symbols[0]):
        choice = (rewrite_symbols[0], None)
    if choice is None and ranked:
        choice = (str(ranked[0]["qualified_name"]), ranked[0].get("file_path"))
    if choice is None or not graph.find(choice[0], file_path=choice[1]):
        return None
    kind = usage_kind(question)
    if kind == "impact":
        answer = impact_answer(graph, choice[0], depth=2, limit=30, file_path=choice[1])
    else:
        answer = callers_answer(graph, choice[0], limit=30, file_path=choice[1])
    answer["targets"] = answer["targets"][:1]
    return {"kind": kind, **answer}


def usage_kind(question: str) -> str:
    """ "impact" for a question about what a change breaks ("what breaks if I change X"), else "callers"."""
    return "impact" if _IMPACT_RE.search(question) else "callers"
