"""The chat's usage follow-ups: "who calls it?" after an answer, "what breaks if I change parse_url?" at any time.

The "usage" entry of the chat's follow-ups (`follow_ups.FOLLOW_UPS`, tried first) asks `usage_reply`: when the last
user message is a usage question (`is_usage_question`: the rewrite's intent rules, `rewriting.rewrite.classify_intent`,
say `usage`) about a definition the reference graph knows, the reply is the graph's answer for it (callers, or
impact for a question about a change, `core/graph_answers.py`), written as Markdown with `path:line` for every site.
The definition is one the question names, else, when the question refers back ("who calls *it*?"), the first one
the earlier turns named (the symbol the previous answer led with, then `read_conversation`'s references). Anything
else returns None and the chat answers by searching, as before.
"""

from __future__ import annotations

import re
from typing import Any

from haystack_integrations.components.code_alias.core.graph import ReferenceGraph
from haystack_integrations.components.code_alias.core.graph_answers import (
    GraphNameError,
    callers_answer,
    impact_answer,
    usage_kind,
)
from haystack_integrations.components.code_alias.core.identifiers import find_identifiers
from haystack_integrations.components.code_alias.rewriting.rewrite import classify_intent
from haystack_integrations.components.code_alias.serving.graph_service import service_graph
from haystack_integrations.components.code_alias.serving.service import CodeAliasService

MAX_SITES = 15
# Words of usage questions themselves, never the definition asked about.
_QUESTION_WORDS = frozenset(
    re.findall(
        r"\w+",
        """who what where which how often calls call called caller callers uses use used usages usage invokes
        invoked references referenced imports imported instantiates instantiated subclasses depends depend affected
        affect breaks break broken would will change changing changed rename renaming remove removing delete impact
        site sites the this that these those its it is are does did anywhere elsewhere function method class code""",
    )
)
_CODE_SHAPED = re.compile(r"[_.]|[a-z][A-Z]|^[A-Z][a-z]+[A-Z]")


def _subject(graph: ReferenceGraph, question: str, references: tuple[str, ...]) -> str | None:
    """
    The definition a usage question is about: a name it writes out (code-shaped ones first: `merge_setting`,
    `Session.request`, `parseUrl`; then other words, the question's own vocabulary left out), else one an earlier
    turn named.
    """
    words = [word for word in find_identifiers(question) if word.lower() not in _QUESTION_WORDS and len(word) > 2]
    shaped = [word for word in words if _CODE_SHAPED.search(word)]
    for name in [*shaped, *(word for word in words if word not in shaped), *references]:
        if graph.find(name):
            return name
    return None


def is_usage_question(question: str) -> bool:
    """Whether a question asks about usage (who calls or uses a name, what a change of it breaks)."""
    return classify_intent(question) == "usage"


def usage_reply(
    service: CodeAliasService, question: str, references: tuple[str, ...]
) -> tuple[str, dict[str, Any]] | None:
    """
    The Markdown reply and its metadata for a usage question, or None when it is not one (or names nothing the
    graph knows, or the index has no graph): the chat then answers by searching.
    """
    if not is_usage_question(question):
        return None
    try:
        graph = service_graph(service)
    except Exception:  # no index yet: the search path says how to build one
        return None
    name = _subject(graph, question, references)
    if name is None:
        return None
    kind = usage_kind(question)
    try:
        if kind == "impact":
            answer = impact_answer(graph, name, depth=3, limit=MAX_SITES)
        else:
            answer = callers_answer(graph, name, limit=MAX_SITES)
    except GraphNameError:
        return None
    meta = {"mode": "graph", "question": question, "symbol": name, "kind": kind, "references": list(references)}
    return markdown_usage(answer, kind), meta


def markdown_usage(answer: dict[str, Any], kind: str) -> str:
    """A callers or impact answer as Markdown: one section per definition, each site `path:line` in backticks."""
    parts: list[str] = []
    for target in answer["targets"]:
        head = f"`{target['qualified_name']}` ({target['kind']}, `{target['file_path']}:{target['start_line']}`)"
        if kind == "impact":
            total = target["total"]
            parts.append(
                f"**What a change of {head} can break** ({total['reached']} within {answer['depth']} hops, "
                f"{total['tests']} in tests):"
            )
            rows = target["impact"]
        else:
            total = target["total"]
            parts.append(f"**Who calls {head}** ({total['callers']} callers, {total['ambiguous']} ambiguous):")
            rows = target["callers"]
        for site in rows:
            test = " (test)" if site.get("test") else ""
            parts.append(f"- `{site['file_path']}:{site['line']}` in `{site['caller']['qualified_name']}`{test}")
        if kind != "impact" and target["ambiguous"]:
            parts.append("May call it (the receiver's type is not known from the code):")
            parts += [
                f"- `{s['file_path']}:{s['line']}` in `{s['caller']['qualified_name']}`" for s in target["ambiguous"]
            ]
        if not rows and not (kind != "impact" and target["ambiguous"]):
            parts.append("- nothing in the index uses it")
    parts.append("\n_From the reference graph of the index (calls resolved through imports and scope)._")
    return "\n".join(parts)
