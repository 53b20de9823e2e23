"""The rewrite's data shape, the rule-based intent, and the dictionary-only rewrite.

`Rewrite` is what every mode produces and what retrieval consumes: `{rewritten, symbols, packages, intent}`.
The dictionary-only rewrite is deterministic and uses only hints, so it can never name an identifier that
does not exist.
"""

from __future__ import annotations

import re
from typing import Literal, get_args

from pydantic import BaseModel, Field

from ..core.identifiers import identifier_phrase
from .hints import Hint, evidence_kinds

Intent = Literal["locate_symbol", "explain_behavior", "how_to", "debug", "usage"]
INTENTS: tuple[str, ...] = get_args(Intent)

# First matching rule wins; ordered from the most specific signal to the least. `usage` (who calls or uses a name,
# what a change of it breaks) is answered from the reference graph (`core/graph_answers.py`) beside the search.
_INTENT_RULES: tuple[tuple[Intent, re.Pattern[str]], ...] = (
    (
        "usage",
        re.compile(
            r"\b(who (calls|uses|invokes|references|imports|instantiates|subclasses|depends on)|"
            r"what (calls|uses|invokes|references|depends on|would break|will break|breaks|is affected)|"
            r"(where|how often) (is|are|does|do) .{1,80}? (called|used|invoked|referenced|instantiated|imported)|"
            r"callers? of|call ?sites? of|usages of|uses of|(is|are) .{1,80}? (called|used) (anywhere|elsewhere)|"
            r"breaks? if|(impact|blast radius) of (changing|removing|renaming|a change)|affected (by|if))\b",
            re.I,
        ),
    ),
    (
        "debug",
        re.compile(
            r"\b(error|exception|traceback|stack ?trace|crash\w*|fail\w*|bug\w*|broken|raises?|thrown?|"
            r"doesn'?t work|not working|wrong|incorrect|unexpected\w*|regression|segfault|hang\w*|leak\w*|"
            r"warning|typeerror|valueerror|keyerror|attributeerror|nullpointer\w*|panic\w*|fix\w*)\b",
            re.I,
        ),
    ),
    ("how_to", re.compile(r"\b(how (do|can|should|would) (i|we|you)|how to|example of|usage of|best way)\b", re.I)),
    (
        "explain_behavior",
        re.compile(
            r"\b(what does|what is|why|explain\w*|how does|how do(es)? .* work|what happens|behaviou?r)\b", re.I
        ),
    ),
    ("locate_symbol", re.compile(r"\b(where|which (file|module|class|function)|find|locate|defined|helper)\b", re.I)),
)


class Rewrite(BaseModel):
    """The rewriter's answer; every mode produces this shape."""

    rewritten: str
    symbols: list[str] = Field(default_factory=list)
    packages: list[str] = Field(default_factory=list)
    intent: Intent = "locate_symbol"


def classify_intent(question: str) -> Intent:
    """
    Rule-based intent: `usage` for who calls / uses a name and what a change of it breaks, `debug` for errors and
    failures, `how_to` for "how do I", `explain_behavior` for "what/why/how does", otherwise `locate_symbol`.
    """
    for intent, pattern in _INTENT_RULES:
        if pattern.search(question):
            return intent
    return "locate_symbol"


STRONG_REASONS = ("exact", "fuzzy", "nickname", "alias")
# All the words of a two-word name (`value_from_object`) turn up in questions by chance; of three, rarely.
STRONG_ALL_WORDS = 3
#: A hint at least this confident (noisy-OR of its evidence, `rewriting.hints`) names its identifier specifically:
#: e.g. an identifier written out, a nickname, every word of a long name, or its words *and* a first retrieval
#: pass that found its definition.
STRONG_CONFIDENCE = 0.5


def _kinds(hint: Hint) -> set[str]:
    return evidence_kinds(hint.reasons)


def _is_strong(hint: Hint) -> bool:
    """Evidence that names this identifier specifically, not just shares a word with it."""
    kinds = _kinds(hint)
    if "all-words" in kinds and hint.name_words >= STRONG_ALL_WORDS:
        return True
    return bool(kinds & set(STRONG_REASONS)) or hint.confidence >= STRONG_CONFIDENCE


def select_hints(
    hints: list[Hint],
    *,
    max_symbols: int,
    max_packages: int,
    min_relative_score: float,
    weak_relative_score: float = 0.6,
) -> list[Hint]:
    """
    Keep the hints strong enough to put into the rewrite.

    A hint must score at least `min_relative_score` of the best one's word evidence and have evidence in the
    question itself (a hint only a retrieval pass found adds nothing the retrievers do not already have); a
    confident semantic candidate (its card near the question) counts its semantic score too. Hints backed only by
    shared words (a one-word name such as `data`) must also match docstring words and reach
    `weak_relative_score`: a wrong identifier in the rewrite costs more than a missing one. Dunder names
    (`__init__`) and symbols defined only in tests enter only when written out.
    """
    if not hints:
        return []
    # Relative to the question's own words: a retrieval pass's credit and a card's nearness order the list but do
    # not raise the bar (a near card must not push out the package the question names).
    best = max(hint.lexical_score for hint in hints)
    chosen: list[Hint] = []
    symbols = packages = 0
    for hint in hints:
        kinds = _kinds(hint)
        # A confident semantic candidate competes with its whole score: it may share no word with the question.
        semantic = "semantic" in kinds and hint.confidence >= STRONG_CONFIDENCE
        own = hint.lexical_score + (hint.semantic_score if semantic else 0.0)
        if own < best * min_relative_score:
            continue
        if not kinds - {"retrieved"}:
            continue
        # Without specific evidence, a hint needs two independent signals (its name's words and its
        # docstring's) and a score close to the best.
        if not _is_strong(hint) and (
            own < best * weak_relative_score or (hint.kind == "symbol" and not {"words", "doc"} <= kinds)
        ):
            continue
        if (hint.name.startswith("__") or hint.in_tests) and "exact" not in kinds:
            continue  # dunders and test helpers only when the question writes them out
        if not identifier_phrase(hint.name):
            continue  # `_` and the like name nothing a search could use
        if hint.kind == "symbol" and symbols < max_symbols:
            symbols += 1
            chosen.append(hint)
        elif hint.kind == "package" and packages < max_packages:
            packages += 1
            chosen.append(hint)
    return chosen


def dictionary_rewrite(
    question: str,
    hints: list[Hint],
    *,
    max_symbols: int = 6,
    max_packages: int = 3,
    min_relative_score: float = 0.35,
) -> Rewrite:
    """
    Rewrite a question from dictionary hints alone.

    The rewritten text keeps the question and appends the chosen identifiers with their word splits, so an
    embedding of it sees both the user's words and the code's words.

    :param question: The user's question.
    :param hints: Ranked hints from `HintIndex.lookup`.
    :param max_symbols: Most symbols to put in the rewrite.
    :param max_packages: Most packages to put in the rewrite.
    :param min_relative_score: Hints scoring below this fraction of the best are left out.
    """
    chosen = select_hints(
        hints, max_symbols=max_symbols, max_packages=max_packages, min_relative_score=min_relative_score
    )
    symbols = [h.name for h in chosen if h.kind == "symbol"]
    packages = [h.name for h in chosen if h.kind == "package"]
    return Rewrite(
        rewritten=compose_rewritten(question, symbols, packages),
        symbols=symbols,
        packages=packages,
        intent=classify_intent(question),
    )


def compose_rewritten(question: str, symbols: list[str], packages: list[str]) -> str:
    """
    The rewritten text for chosen identifiers: the question, then each symbol with its word split and each package.

    What the dictionary rewrite writes, and what an LLM rewrite writes when the model is not asked for the text.

    :param question: The user's question.
    :param symbols: The chosen symbols, best first.
    :param packages: The chosen packages, best first.
    """
    expansions = [f"{name} ({identifier_phrase(name)})" for name in symbols]
    expansions += [f"package {name}" for name in packages]
    rewritten = question.strip()
    if expansions:
        rewritten = f"{rewritten} | {'; '.join(expansions)}"
    return rewritten
