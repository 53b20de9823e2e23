"""Chat follow-ups: a question about the previous answer's symbol ("where is it tested?", "who calls it?").

A chat is stateless (each request carries the conversation), so the subject comes from the conversation itself:
the symbol the latest answer of ours led with (its first line names it in the first code span after a bold label),
or a symbol the question names itself ("where is `withStripeBackoff` tested?"). `route` picks the follow-up the
question asks for; `FOLLOW_UPS` is the one place that lists them. Each follow-up turns the subject into an answer
from the same index: ranked places (`FollowUpAnswer`: a heading, the places, the chunks they came from), or a reply
it writes itself (`WrittenReply`: the reference graph's call sites are lines of code, not ranked definitions), or
None when it has nothing to say (the chat then searches, as for any question).

The follow-ups: "tests" (the tests of the subject, from the search) and "usage" (a usage question, as the rewrite's
intent rules tell one: its callers, or what a change of it can break, from the reference graph, `graph_chat.py`).
"usage" finds its own subject when the route finds none (the graph knows names the dictionary's lookup of
code-shaped words does not: `Tax.apply`, `Session`), so a question such as "what breaks if I change Session?"
needs no earlier turn. To add one, write its `answer` function and append a `FollowUp` to `FOLLOW_UPS`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

from haystack import Document

from haystack_integrations.components.code_alias.answer_view import chunk_lines
from haystack_integrations.components.code_alias.core.identifiers import find_identifiers
from haystack_integrations.components.code_alias.core.testfiles import is_test_file
from haystack_integrations.components.code_alias.ranking.answer import document_evidence, why_strings
from haystack_integrations.components.code_alias.serving.graph_chat import is_usage_question, usage_reply
from haystack_integrations.components.code_alias.serving.service import AskResponse, CodeAliasService

#: Words by which a question points back at an earlier turn.
REFERRING = frozenset(
    [
        "it",
        "its",
        "it's",
        "this",
        "that",
        "these",
        "those",
        "them",
        "they",
        "their",
        "there",
        "same",
        "above",
        "previous",
        "former",
        "latter",
        "one",
    ]
)
_WORD_RE = re.compile(r"[A-Za-z']+")
#: The first line of an answer of ours names its subject in the first code span after a bold label.
_LEAD_RE = re.compile(r"\A\s*\*\*[^\n]*?`([^`\n]{1,200})`")
_IMPORT_RE = re.compile(r"\s*(?:import|from|using|use|require|#include)\b")
#: How deep a follow-up looks into the ranking for places that answer it.
SEARCH_DEPTH = 30


@dataclass(frozen=True)
class Subject:
    """
    What a follow-up is about: a symbol's name as the answers write it (`withStripeBackoff`, `Field.clean`).

    :param name: The name.
    :param source: Where it came from: "previous answer" or "question".
    """

    name: str
    source: str = "previous answer"

    @property
    def identifier(self) -> str:
        """The name as code writes it at a call or a mention: its last dotted part."""
        return self.name.rsplit(".", 1)[-1]


@dataclass(frozen=True)
class FollowUpContext:
    """
    What a follow-up answers from: the service, its subject (None only for a follow-up that finds its own), the
    request's `top_k`, `repo`, `package`, the question, and the names earlier turns wrote (`Conversation.references`).
    """

    service: CodeAliasService
    subject: Subject | None
    top_k: int
    repo: Any = None
    package: Any = None
    question: str = ""
    references: tuple[str, ...] = ()


@dataclass
class FollowUpAnswer:
    """
    A follow-up's answer: a heading (Markdown, naming the subject in backticks), the ranked places (`payload`, an
    ask answer whose `symbols` are the places), the chunks behind them, and what to say when there are none.
    """

    heading: str
    payload: AskResponse
    documents: list[Document] = field(default_factory=list)
    empty: str = ""


@dataclass(frozen=True)
class WrittenReply:
    """
    A follow-up's whole reply, as the follow-up writes it (Markdown), its subject's name and the metadata beside it.
    """

    text: str
    subject: str
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class FollowUp:
    """
    One kind of follow-up: what asks for it and how it is answered.

    :param kind: Its name (in the reply's metadata).
    :param asks: True (truthy) for a question that asks for it (a compiled pattern's `search`, say).
    :param answer: Answers it from a `FollowUpContext`; None when it has nothing to say (the chat then searches).
    :param finds_subject: It is asked even when the route finds no subject (`FollowUpContext.subject` is then
        None): its answer finds one itself, from the question and the earlier turns' names.
    """

    kind: str
    asks: Callable[[str], object]
    answer: Callable[[FollowUpContext], FollowUpAnswer | WrittenReply | None]
    finds_subject: bool = False


def _mentioning_line(identifier: str, document: Document) -> int | None:
    """The first line of a chunk whose code writes `identifier` as a whole word (its line number in the file)."""
    code = chunk_lines(document.content, document.meta)
    pattern = re.compile(rf"(?<![\w$]){re.escape(identifier)}(?![\w$])")
    if code is None:
        return None
    lines = [(number, text) for number, text in zip(code.numbers, code.texts, strict=True) if pattern.search(text)]
    uses = [number for number, text in lines if not _IMPORT_RE.match(text)]  # a use, before the import naming it
    found = uses or [number for number, _ in lines]
    return found[0] if found else None


def tests_of(context: FollowUpContext) -> FollowUpAnswer | None:
    """
    The tests of the subject: the chunks of test files, among those retrieved for "tests of NAME" (a question
    about tests keeps test files in place), whose code writes the name, in their retrieval order; each place is
    the test (or the test module) at the first line that names it. None without a subject.
    """
    if context.subject is None:
        return None
    name, identifier = context.subject.name, context.subject.identifier
    payload, documents = context.service.ask_with_chunks(
        f"tests of {name}", SEARCH_DEPTH, "dictionary", context.repo, context.package
    )
    places: list[dict[str, Any]] = []
    seen: set[tuple[Any, ...]] = set()
    for document in documents:
        meta = document.meta
        path = meta.get("file_path")
        key = (meta.get("repo"), path, meta.get("qualified_name"))
        if not isinstance(path, str) or key in seen or not is_test_file(path):
            continue
        line = _mentioning_line(identifier, document)
        if line is None:
            continue
        seen.add(key)
        evidence = document_evidence(document, [f"its code names {identifier}"])
        places.append(
            {
                "rank": len(places) + 1,
                "qualified_name": meta.get("qualified_name") or path.rsplit("/", 1)[-1],
                "symbol": meta.get("symbol"),
                "kind": "test module" if meta.get("kind") == "module" else meta.get("kind"),
                "file_path": path,
                "start_line": line,
                "end_line": meta.get("end_line"),
                "package": meta.get("package"),
                "score": document.score,
                "why": why_strings(evidence),
                "evidence": evidence,
                **({"repo": meta["repo"]} if meta.get("repo") is not None else {}),
            }
        )
        if len(places) == context.top_k:
            break
    answered = cast(AskResponse, {**payload, "symbols": places, "abstained": False})
    return FollowUpAnswer(
        heading=f"**Tests of `{name}`:**",
        payload=answered,
        documents=documents,
        empty=f"no test file in the index mentions `{identifier}`.",
    )


def usage_of(context: FollowUpContext) -> WrittenReply | None:
    """
    Who calls the subject, or what a change of it can break, from the reference graph (`graph_chat.usage_reply`):
    a name the question writes, else the route's subject, else one the earlier turns named. None when the graph
    knows none of them (or the index has no graph).
    """
    hint = () if context.subject is None else (context.subject.name,)
    names = tuple(dict.fromkeys((*hint, *context.references)))
    reply = usage_reply(context.service, context.question, names)
    if reply is None:
        return None
    text, meta = reply
    return WrittenReply(text, str(meta["symbol"]), meta)


#: The follow-ups, tried in order; the first whose `asks` matches the question answers it. Usage comes first: "what
#: tests break if I change it?" asks what a change breaks (tests marked as such), not where it is tested.
FOLLOW_UPS: tuple[FollowUp, ...] = (
    FollowUp("usage", is_usage_question, usage_of, finds_subject=True),
    FollowUp("tests", re.compile(r"\b(?:tested|tests?|testing|specs?|covered by)\b", re.IGNORECASE).search, tests_of),
)


def previous_subject(messages: list[Any], texts: list[str], before: int) -> Subject | None:
    """The symbol the latest assistant turn before message `before` led with (None when it led with none)."""
    for index in range(before - 1, -1, -1):
        message = messages[index]
        if isinstance(message, dict) and message.get("role") == "assistant":
            lead = _LEAD_RE.match(texts[index])
            return Subject(lead.group(1).strip()) if lead else None
    return None


def _code_shaped(token: str) -> bool:
    """A token that reads as a name of code, not a word of the sentence: `withStripeBackoff`, `mint_jwt`, `a.b`."""
    return len(token) > 2 and ("_" in token or "." in token or any(c.isupper() for c in token[1:]))


def route(
    question: str, previous: Subject | None, known: Callable[[str], bool]
) -> tuple[FollowUp, Subject | None] | None:
    """
    The follow-up a question asks for, and its subject: a symbol the question names (one `known` to the index),
    else the previous answer's when the question refers back to it (it, that, there...). Without either, only a
    follow-up that finds its own subject (`FollowUp.finds_subject`) is chosen, with None. None for any other question.

    :param known: Whether a name is a symbol of the index (the dictionary's lookup).
    """
    chosen = next((follow_up for follow_up in FOLLOW_UPS if follow_up.asks(question)), None)
    if chosen is None:
        return None
    named = [token for token in find_identifiers(question) if _code_shaped(token) and known(token)]
    if named:
        return chosen, Subject(named[0], source="question")
    if previous is not None and REFERRING & {word.lower() for word in _WORD_RE.findall(question)}:
        return chosen, previous
    return (chosen, None) if chosen.finds_subject else None
