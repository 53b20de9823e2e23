"""Identifier word splitting and the code-aware tokenizer shared by the dictionary, hints and BM25.

One implementation of "what words does this identifier or text contain", so the dictionary, the hint
lookup and every BM25 backend agree on it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

# Words that carry no retrieval signal in questions, docstrings or identifiers.
STOP_WORDS: frozenset[str] = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "been",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "for",
        "from",
        "had",
        "has",
        "have",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "my",
        "no",
        "not",
        "of",
        "on",
        "or",
        "our",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "too",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "whats",
        "wheres",
        "hows",
        "use",
        "uses",
        "used",
        "using",
        "does",
        "don",
        "doesn",
        "isn",
        "t",
        "s",
        "d",
        "ll",
        "ve",
        "re",
        "m",
    ]
)

# A question word that is also a common identifier prefix ("with", "get", "set") must still split out of
# identifiers; only free text drops it.
_IDENTIFIER_RE = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*(?:[-.][A-Za-z_$][A-Za-z0-9_$]*)*|[0-9]+")
_WORD_PIECE_RE = re.compile(
    r"""
    [A-Z]+(?=[A-Z][a-z])    # acronym before a capitalised word: HTTP in HTTPResponse
    | [A-Z]?[a-z]+          # lower or capitalised word
    | [A-Z]+                # trailing acronym or SCREAMING word
    | [0-9]+                # digits
    """,
    re.VERBOSE,
)
_TOKEN_RE = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*|[0-9]+")


@lru_cache(maxsize=200_000)
def split_identifier(identifier: str) -> tuple[str, ...]:
    """
    Split an identifier of any style into its lower-cased words.

    `withStripeBackoff` -> ("with", "stripe", "backoff"); `parseHTTPResponse` -> ("parse", "http", "response");
    `MAX_RETRY_COUNT` -> ("max", "retry", "count"); `payments-core` -> ("payments", "core");
    `sha256sum` -> ("sha", "256", "sum").

    :param identifier: An identifier, package name or path segment.
    :returns: The words, lower-cased, in order; empty for an identifier with no letters or digits.
    """
    words: list[str] = []
    for chunk in re.split(r"[^A-Za-z0-9]+", identifier):
        words.extend(piece.lower() for piece in _WORD_PIECE_RE.findall(chunk))
    return tuple(words)


def identifier_phrase(identifier: str) -> str:
    """`withStripeBackoff` -> "with stripe backoff"."""
    return " ".join(split_identifier(identifier))


def find_identifiers(text: str) -> list[str]:
    """The identifier-like tokens of free text, in order (dotted and kebab names kept whole)."""
    return _IDENTIFIER_RE.findall(text)


def text_words(text: str, *, drop_stop_words: bool = True) -> list[str]:
    """
    The lower-cased words of free text, identifiers split, stop-words dropped.

    :param text: A question, docstring or comment.
    :param drop_stop_words: Whether to drop `STOP_WORDS`.
    """
    words: list[str] = []
    for token in _TOKEN_RE.findall(text):
        for word in split_identifier(token):
            if not drop_stop_words or word not in STOP_WORDS:
                words.append(word)
    return words


def code_tokenize(text: str) -> list[str]:
    """
    Tokenise code or a question for BM25: every identifier both whole (lower-cased) and split into its words.

    `def withStripeBackoff(fn)` -> ["def", "withstripebackoff", "with", "stripe", "backoff", "fn"]. Keeping the
    whole identifier lets an exact symbol match outscore a match on its parts. Stop-words are kept out of the
    word splits but not out of whole identifiers of more than one word.

    :param text: Any text.
    :returns: Tokens for a bag-of-words index.
    """
    tokens: list[str] = []
    for token in _TOKEN_RE.findall(text):
        tokens.extend(_token_terms(token))
    return tokens


@lru_cache(maxsize=500_000)
def _token_terms(token: str) -> tuple[str, ...]:
    """The BM25 terms of one token (code repeats its identifiers, so this is cached)."""
    words = split_identifier(token.strip("_$"))
    if not words:
        return ()
    terms = ["".join(words)] if len(words) > 1 else []
    terms.extend(w for w in words if w not in STOP_WORDS and (len(w) > 1 or w.isdigit()))
    return tuple(terms)


def normalise(text: str) -> str:
    """Lower-case and collapse whitespace: the key under which two spellings of a question are the same."""
    return " ".join(text.lower().split())


def unique(items: Iterable[str]) -> list[str]:
    """Order-preserving de-duplication."""
    return list(dict.fromkeys(items))
