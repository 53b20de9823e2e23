"""Retrievers over an Elasticsearch index: identifier-aware BM25, and kNN with clear errors."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np
from haystack import Document, component, default_from_dict
from haystack.document_stores.types import FilterPolicy
from haystack.document_stores.types.filter_policy import apply_filter_policy
from haystack_integrations.components.retrievers.elasticsearch import ElasticsearchEmbeddingRetriever
from haystack_integrations.document_stores.elasticsearch import ElasticsearchDocumentStore

from ..retrieval.embedding_retriever import MIN_DEFINITION_LINES, short_definition
from ..serialization import SerializedByInitParameters
from .errors import translate_errors
from .query import QueryWeights, build_bm25_body

__all__ = ["CodeElasticsearchBM25Retriever", "CodeElasticsearchEmbeddingRetriever"]

# Same scaling as the integration's BM25 retrieval (expit(score / 8)).
BM25_SCALING_FACTOR = 8.0


def _as_floats(query_embedding: list[float] | np.ndarray) -> list[float]:
    """The Elasticsearch client sends JSON: an array (the query pipelines pass one) becomes a list of floats."""
    if isinstance(query_embedding, np.ndarray):
        return [float(value) for value in query_embedding.reshape(-1)]
    return query_embedding


def _hit_to_document(hit: dict[str, Any]) -> Document:
    """A search hit -> Document (the store indexes `Document.to_dict()`, meta flattened)."""
    data = dict(hit.get("_source", {}))
    data["score"] = hit.get("_score")
    data.setdefault("id", hit.get("_id"))
    return Document.from_dict(data)


def _errors_for(store: ElasticsearchDocumentStore) -> Any:
    translate = getattr(store, "translate_errors", None)
    if callable(translate):
        return translate()
    return translate_errors(hosts=getattr(store, "_hosts", None), index=getattr(store, "_index", "?"))


@component
class CodeElasticsearchBM25Retriever(SerializedByInitParameters):
    """
    BM25 over an Elasticsearch index with identifier-aware fields and boosted symbol and package matches.

    The run signature is the embedded `CodeBM25Retriever`'s, so a pipeline switches backend by switching the
    component. Best with `CodeElasticsearchDocumentStore` (its `code_identifier` analyzer splits identifiers);
    over an index made by the plain `ElasticsearchDocumentStore` the identifier fields do not exist and only
    `content` matches.

    ### Usage example

    ```python
    from haystack_integrations.components.code_alias.elasticsearch import (
        CodeElasticsearchBM25Retriever,
        CodeElasticsearchDocumentStore,
    )

    store = CodeElasticsearchDocumentStore(index="my-monorepo")     # $ELASTICSEARCH_URL
    retriever = CodeElasticsearchBM25Retriever(document_store=store, top_k=10)
    result = retriever.run(
        query="where is the payments retry helper withStripeBackoff with stripe backoff",
        symbols=["withStripeBackoff"],
        packages=["@acme/payments-core"],
    )
    for document in result["documents"]:
        print(document.meta["file_path"], document.meta.get("symbol"), document.score)
    ```

    :param document_store: An `ElasticsearchDocumentStore` (normally `CodeElasticsearchDocumentStore`).
    :param top_k: How many Documents to return.
    :param filters: Haystack filters applied to every query (see `query.convert_filters`; `prefix` on a
        keyword field such as `meta.file_path` is supported too).
    :param filter_policy: How run-time filters combine with `filters` (replace or merge).
    :param symbol_boost: Weight of a rewrite symbol's words (as in `CodeBM25Retriever`).
    :param package_boost: Weight of a rewrite package's words.
    :param exact_symbol_boost: Weight of an exact hit on the chunk's own symbol or qualified name.
    :param exact_package_boost: Weight of an exact hit on the chunk's package.
    :param fuzziness: Elasticsearch fuzziness for the question's words; None (exact) suits identifiers.
    :param scale_score: Map scores to (0, 1) with expit(score / 8), like the integration.
    """

    def __init__(
        self,
        *,
        document_store: ElasticsearchDocumentStore,
        top_k: int = 10,
        filters: dict[str, Any] | None = None,
        filter_policy: str | FilterPolicy = FilterPolicy.REPLACE,
        symbol_boost: float = 2.0,
        package_boost: float = 0.5,
        exact_symbol_boost: float = 10.0,
        exact_package_boost: float = 2.0,
        fuzziness: str | None = None,
        scale_score: bool = False,
    ) -> None:
        if not isinstance(document_store, ElasticsearchDocumentStore):
            raise ValueError("document_store must be an ElasticsearchDocumentStore")
        if top_k <= 0:
            raise ValueError(f"top_k must be > 0, got {top_k}")
        self.document_store = document_store
        self.top_k = top_k
        self.filters = filters or {}
        self.filter_policy = FilterPolicy.from_str(filter_policy) if isinstance(filter_policy, str) else filter_policy
        self.symbol_boost = symbol_boost
        self.package_boost = package_boost
        self.exact_symbol_boost = exact_symbol_boost
        self.exact_package_boost = exact_package_boost
        self.fuzziness = fuzziness
        self.scale_score = scale_score

    @property
    def weights(self) -> QueryWeights:
        """The query boosts."""
        return QueryWeights(
            symbol_boost=self.symbol_boost,
            package_boost=self.package_boost,
            exact_symbol_boost=self.exact_symbol_boost,
            exact_package_boost=self.exact_package_boost,
        )

    def _body(
        self,
        query: str,
        symbols: list[str] | None,
        packages: list[str] | None,
        filters: dict[str, Any] | None,
        top_k: int | None,
    ) -> dict[str, Any]:
        return build_bm25_body(
            query,
            top_k=top_k or self.top_k,
            symbols=symbols,
            packages=packages,
            filters=apply_filter_policy(self.filter_policy, self.filters, filters) or None,
            weights=self.weights,
            fuzziness=self.fuzziness,
        )

    def _documents(self, response: Any) -> list[Document]:
        documents = [_hit_to_document(hit) for hit in response["hits"]["hits"]]
        if self.scale_score:
            documents = [
                replace(d, score=1.0 / (1.0 + math.exp(-d.score / BM25_SCALING_FACTOR))) if d.score is not None else d
                for d in documents
            ]
        return documents

    @component.output_types(documents=list[Document], term_coverage=float | None)
    def run(
        self,
        query: str,
        symbols: list[str] | None = None,
        packages: list[str] | None = None,
        filters: dict[str, Any] | None = None,
        top_k: int | None = None,
    ) -> dict[str, Any]:
        """
        Retrieve chunks for a query.

        :param query: The BM25 text (question plus expansions).
        :param symbols: Identifiers from the rewrite: matched whole and by their words, boosted.
        :param packages: Package names from the rewrite, boosted.
        :param filters: Haystack filters; combined with the init filters by `filter_policy`.
        :param top_k: Overrides the init `top_k`.
        :returns: `documents`, best first, with `score` (without embeddings), and `term_coverage` (None: the share
            of the query's terms the index holds is not known here; the ranking stage treats it as missing).
        :raises CodeAliasBackendError: The server is unreachable, refuses the key, or the index is unusable.
        """
        if not (query or "").strip() and not symbols and not packages:
            return {"documents": [], "term_coverage": None}
        body = self._body(query, symbols, packages, filters, top_k)
        store = self.document_store
        with _errors_for(store):
            response = store.client.search(index=store._index, **body)
        return {"documents": self._documents(response), "term_coverage": None}

    @component.output_types(documents=list[Document], term_coverage=float | None)
    async def run_async(
        self,
        query: str,
        symbols: list[str] | None = None,
        packages: list[str] | None = None,
        filters: dict[str, Any] | None = None,
        top_k: int | None = None,
    ) -> dict[str, Any]:
        """Asynchronous `run` (same parameters and result)."""
        if not (query or "").strip() and not symbols and not packages:
            return {"documents": [], "term_coverage": None}
        body = self._body(query, symbols, packages, filters, top_k)
        store = self.document_store
        with _errors_for(store):
            await store._ensure_initialized_async()
            response = await store.async_client.search(index=store._index, **body)
        return {"documents": self._documents(response), "term_coverage": None}

    def close(self) -> None:
        """Release the store's synchronous client."""
        self.document_store.close()

    async def close_async(self) -> None:
        """Release the store's asynchronous client."""
        await self.document_store.close_async()


@component
class CodeElasticsearchEmbeddingRetriever(ElasticsearchEmbeddingRetriever):
    """
    The integration's `ElasticsearchEmbeddingRetriever`, deserialisable with any `ElasticsearchDocumentStore`
    subclass, with vector sizes checked and client failures raised as `CodeAliasBackendError`.

    (The integration's `from_dict` always rebuilds a plain `ElasticsearchDocumentStore`, which refuses the
    serialised `CodeElasticsearchDocumentStore`.)

    ### Usage example

    ```python
    from haystack_integrations.components.code_alias.elasticsearch import (
        CodeElasticsearchDocumentStore,
        CodeElasticsearchEmbeddingRetriever,
    )

    retriever = CodeElasticsearchEmbeddingRetriever(document_store=CodeElasticsearchDocumentStore(), top_k=10)
    documents = retriever.run(query_embedding=[0.1] * 384)["documents"]
    ```

    :param document_store: An `ElasticsearchDocumentStore`.
    :param filters: Haystack filters applied during the kNN search.
    :param top_k: How many Documents to return.
    :param num_candidates: kNN candidates per shard (default top_k * 10).
    :param filter_policy: How run-time filters combine with `filters`.
    :param min_definition_lines: Definition chunks with fewer lines are left out of the results, as
        `CodeEmbeddingRetriever` leaves them out of its search (a one-line definition repeats a line of its
        parent's chunk); twice `top_k` hits are fetched to make up for them. 1 keeps all.
    """

    def __init__(
        self,
        *,
        document_store: ElasticsearchDocumentStore,
        filters: dict[str, Any] | None = None,
        top_k: int = 10,
        num_candidates: int | None = None,
        filter_policy: str | FilterPolicy = FilterPolicy.REPLACE,
        min_definition_lines: int = MIN_DEFINITION_LINES,
    ) -> None:
        if min_definition_lines < 1:
            raise ValueError(f"min_definition_lines must be >= 1, got {min_definition_lines}")
        ElasticsearchEmbeddingRetriever.__init__(
            self,
            document_store=document_store,
            filters=filters,
            top_k=top_k,
            num_candidates=num_candidates,
            filter_policy=filter_policy,
        )
        self.min_definition_lines = min_definition_lines

    def to_dict(self) -> dict[str, Any]:
        """Serialise, `min_definition_lines` included."""
        data = ElasticsearchEmbeddingRetriever.to_dict(self)
        data["init_parameters"]["min_definition_lines"] = self.min_definition_lines
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CodeElasticsearchEmbeddingRetriever:
        """Deserialise; the nested store is rebuilt from its recorded type."""
        params = dict(data.get("init_parameters", {}))
        if isinstance(params.get("filter_policy"), str):
            params["filter_policy"] = FilterPolicy.from_str(params["filter_policy"])
        return default_from_dict(cls, {**data, "init_parameters": params})

    def _check(self, query_embedding: list[float]) -> None:
        check = getattr(self._document_store, "check_query_embedding", None)
        if callable(check):
            with _errors_for(self._document_store):
                self._document_store._ensure_initialized()
            check(query_embedding)

    def _fetch_k(self, top_k: int | None) -> int:
        """Hits to ask for: twice `top_k` when short definitions are dropped afterwards."""
        wanted = top_k or self._top_k
        return wanted * 2 if self.min_definition_lines > 1 else wanted

    def _adjust(
        self,
        documents: list[Document],
        scale_score: bool | None,
        return_embedding: bool | None,
        top_k: int | None = None,
    ) -> list[Document]:
        """
        Drop short definitions (`min_definition_lines`), keep `top_k`, and apply the `InMemoryEmbeddingRetriever`
        options, so the two retrievers take the same inputs and give the same kind of list.
        """
        cosine = getattr(self._document_store, "_embedding_similarity_function", "cosine") == "cosine"
        kept = [d for d in documents if not short_definition(d, self.min_definition_lines)]
        adjusted = []
        for document in kept[: top_k or self._top_k]:
            changes: dict[str, Any] = {}
            if scale_score is False and cosine and document.score is not None:
                changes["score"] = 2.0 * document.score - 1.0  # Elasticsearch reports (1 + cos) / 2
            if return_embedding is False and document.embedding is not None:
                changes["embedding"] = None
            adjusted.append(replace(document, **changes) if changes else document)
        return adjusted

    @component.output_types(documents=list[Document])
    def run(
        self,
        query_embedding: list[float] | np.ndarray,
        filters: dict[str, Any] | None = None,
        top_k: int | None = None,
        scale_score: bool | None = None,
        return_embedding: bool | None = None,
    ) -> dict[str, list[Document]]:
        """
        Retrieve the chunks nearest to a query embedding.

        :param query_embedding: The query vector: a list of floats, or an array (`CodeTextEmbedder.vector`).
        :param filters: Haystack filters; combined with the init filters by `filter_policy`.
        :param top_k: Overrides the init `top_k`.
        :param scale_score: As in `InMemoryEmbeddingRetriever`: None or True keep Elasticsearch's score, which for
            cosine is already scaled to (1 + cos) / 2; False returns the raw cosine.
        :param return_embedding: False drops the vectors from the results (None or True keep them).
        :returns: `documents`, nearest first.
        :raises CodeAliasBackendError: Unreachable server, refused key, or a vector of the wrong size.
        """
        query_embedding = _as_floats(query_embedding)
        self._check(query_embedding)
        with _errors_for(self._document_store):
            # Explicit base call: @component rebuilds the class, so a zero-argument super() would not resolve.
            result = ElasticsearchEmbeddingRetriever.run(
                self, query_embedding=query_embedding, filters=filters, top_k=self._fetch_k(top_k)
            )
        return {"documents": self._adjust(result["documents"], scale_score, return_embedding, top_k)}

    @component.output_types(documents=list[Document])
    async def run_async(
        self,
        query_embedding: list[float] | np.ndarray,
        filters: dict[str, Any] | None = None,
        top_k: int | None = None,
        scale_score: bool | None = None,
        return_embedding: bool | None = None,
    ) -> dict[str, list[Document]]:
        """Asynchronous `run` (same parameters and result)."""
        query_embedding = _as_floats(query_embedding)
        with _errors_for(self._document_store):
            await self._document_store._ensure_initialized_async()
        check = getattr(self._document_store, "check_query_embedding", None)
        if callable(check):
            check(query_embedding)
        with _errors_for(self._document_store):
            result = await ElasticsearchEmbeddingRetriever.run_async(
                self, query_embedding=query_embedding, filters=filters, top_k=self._fetch_k(top_k)
            )
        return {"documents": self._adjust(result["documents"], scale_score, return_embedding, top_k)}
