"""`QueryComposer`: a rewrite -> the BM25 text, the embedding text and optional filters."""

from __future__ import annotations

from typing import Any

from haystack import component

from ..serialization import SerializedByInitParameters
from .compose import compose_query
from .hints import SymbolEvidence


@component
class QueryComposer(SerializedByInitParameters):
    """
    Turns a rewrite into what each retriever needs.

    BM25 text = the question as the user wrote it (optionally + every symbol and package with its word split);
    embedding text = the rewritten question; symbols (and every other symbol hint) go on to
    `SymbolDefinitionRetriever`, whose definitions the ranking stage weighs with the other lists; filters (optional)
    restrict retrieval to the rewrite's packages.

    Which wiring for which retriever: with this project's pipelines (`CodeBM25Retriever`,
    `SymbolDefinitionRetriever`, `CodeRanker`) keep `expand_bm25_query` off: the rewrite's symbols reach the ranking
    through their definitions list, which measured better than expanding the text (BENCHMARKS.md 2d). With a stock
    keyword retriever (`InMemoryBM25Retriever`, `ElasticsearchBM25Retriever`, ...) there is no definitions list:
    turn it on (or connect the rewriter's `lexical_query`, the same text), which is where the rewrite's gain comes
    from in a stock pipeline (BENCHMARKS.md 16); a stock embedder gets `embedding_query` either way.

    ### Usage example

    ```python
    from haystack_integrations.components.code_alias import QueryComposer

    out = QueryComposer().run(question="payments retry helper?", rewritten="payments retry helper? withStripeBackoff",
                              symbols=["withStripeBackoff"], packages=["@acme/payments-core"])
    print(out["bm25_query"])   # payments retry helper?
    print(out["symbols"])      # ['withStripeBackoff']
    ```

    :param filter_by_package: Restrict retrieval to the packages the rewrite names.
    :param use_rewrite: False turns the rewrite off (the raw question goes to both retrievers), for ablations.
    :param expand_bm25_query: Append the rewrite's symbols and packages (and their word splits) to the BM25 text;
        off by default, for this project's retrievers (see above); on for a stock keyword retriever.
    """

    def __init__(
        self, *, filter_by_package: bool = False, use_rewrite: bool = True, expand_bm25_query: bool = False
    ) -> None:
        self.filter_by_package = filter_by_package
        self.use_rewrite = use_rewrite
        self.expand_bm25_query = expand_bm25_query

    @component.output_types(
        bm25_query=str,
        embedding_query=str,
        symbols=list[str],
        packages=list[str],
        filters=dict[str, Any] | None,
        hint_symbols=list[str],
        symbol_evidence=SymbolEvidence | None,
    )
    def run(
        self,
        question: str,
        rewritten: str | None = None,
        symbols: list[str] | None = None,
        packages: list[str] | None = None,
        use_rewrite: bool | None = None,
        filters: dict[str, Any] | None = None,
        symbol_evidence: SymbolEvidence | None = None,
    ) -> dict[str, Any]:
        """
        :param question: The raw question.
        :param rewritten: The rewritten question.
        :param symbols: The rewrite's symbols.
        :param packages: The rewrite's packages.
        :param use_rewrite: Per-call override of the init setting.
        :param filters: The caller's own Haystack filters (e.g. on `meta.repo`), ANDed with the package filter.
        :param symbol_evidence: The rewriter's hints (`ConstrainedQueryRewriter.symbol_evidence`), passed on to the
            ranking stage only when the rewrite is used.
        :returns: `bm25_query`, `embedding_query`, `symbols`, `packages`, `filters`, `hint_symbols` (the rewrite's
            symbols, then every other symbol hint: whose definitions the ranking stage weighs) and `symbol_evidence`
            (None when the rewrite is off).
        """
        active = self.use_rewrite if use_rewrite is None else use_rewrite
        composed = compose_query(
            question,
            rewritten=rewritten if active else None,
            symbols=symbols if active else None,
            packages=packages if active else None,
            filter_by_package=self.filter_by_package,
            expand_bm25_query=self.expand_bm25_query,
        )
        evidence = symbol_evidence if active else None
        return {
            "bm25_query": composed.bm25_query,
            "embedding_query": composed.embedding_query,
            "symbols": composed.symbols,
            "packages": composed.packages,
            "filters": _and_filters(composed.filters, filters),
            "hint_symbols": list(dict.fromkeys([*composed.symbols, *(evidence or {})])),
            "symbol_evidence": evidence,
        }


def _and_filters(first: dict[str, Any] | None, second: dict[str, Any] | None) -> dict[str, Any] | None:
    """Both filters (AND), either one alone, or None."""
    if first is None or second is None:
        return first if second is None else second
    return {"operator": "AND", "conditions": [first, second]}
