"""Query composition: one rewrite -> the text each retriever should see.

BM25 gets the user's question as written: the rewrite's symbols reach the ranking through their own list
(`SymbolDefinitionRetriever`, fused by reciprocal rank), which measured better than adding them to the BM25
text. `expand_bm25_query=True` adds them to the text: what a stock keyword retriever needs, having no definitions
list (the rewriter's `lexical_query`; BENCHMARKS.md 16). The embedder
gets the rewritten question. Filters from packages are optional: a wrong package filter loses the answer,
so it is off unless asked for.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..core.identifiers import identifier_phrase, unique


@dataclass(frozen=True)
class ComposedQuery:
    """What the retrievers receive."""

    bm25_query: str
    embedding_query: str
    symbols: list[str]
    packages: list[str]
    filters: dict[str, Any] | None


def compose_query(
    question: str,
    *,
    rewritten: str | None = None,
    symbols: list[str] | None = None,
    packages: list[str] | None = None,
    filter_by_package: bool = False,
    expand_bm25_query: bool = False,
) -> ComposedQuery:
    """
    Compose the BM25 and embedding texts.

    :param question: The raw question.
    :param rewritten: The rewritten question; the raw question when None or empty.
    :param symbols: Identifiers from the rewrite.
    :param packages: Package names from the rewrite.
    :param filter_by_package: Restrict retrieval to the rewrite's packages (Haystack filter syntax).
    :param expand_bm25_query: Append every symbol and package, with its word split, to the BM25 text.
    """
    symbols = unique(symbols or [])
    packages = unique(packages or [])
    parts = [question.strip()]
    for name in [*symbols, *packages] if expand_bm25_query else []:
        parts.append(name)
        phrase = identifier_phrase(name)
        if phrase and phrase != name.lower():
            parts.append(phrase)
    filters: dict[str, Any] | None = None
    if filter_by_package and packages:
        filters = {"field": "meta.package", "operator": "in", "value": packages}
    return ComposedQuery(
        bm25_query=" ".join(parts),
        embedding_query=(rewritten or "").strip() or question.strip(),
        symbols=symbols,
        packages=packages,
        filters=filters,
    )
