"""`CodeEmbeddingRetriever`: cosine search over the embedded store with one cached matrix.

Haystack's `InMemoryEmbeddingRetriever` rebuilds its arrays from every document's list of floats and copies
the documents on each query: about 2 s per question on a 10k-chunk index here. This retriever keeps one
normalised float32 matrix per store content (rebuilt only when the documents change) and answers with one
matrix-vector product.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
from haystack import Document, component, default_from_dict, default_to_dict
from haystack.document_stores.in_memory import InMemoryDocumentStore

from .store_cache import PerStoreCache, best_first

# The unit-normalised vectors of each store's embedded documents, shared by every retriever instance.
# Rebuilt when chunks gain vectors (a progressive index: chunks without a vector yet are simply not in it).
_MATRICES: PerStoreCache[tuple[list[Document], np.ndarray]] = PerStoreCache("embedding matrix", vectors=True)


def _normalised_matrix(_key: str, documents: list[Document]) -> tuple[list[Document], np.ndarray]:
    embedded = [d for d in documents if d.embedding is not None]
    if not embedded:
        return [], np.zeros((0, 0), dtype=np.float32)
    matrix = np.asarray([d.embedding for d in embedded], dtype=np.float32).reshape(len(embedded), -1)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    matrix /= np.where(norms == 0.0, 1.0, norms)
    return embedded, matrix


@component
class CodeEmbeddingRetriever:
    """
    Retrieves the chunks whose embeddings are closest (cosine) to the query embedding.

    Same inputs and outputs as Haystack's `InMemoryEmbeddingRetriever`.

    ### Usage example

    ```python
    from haystack_integrations.components.code_alias import CodeEmbeddingRetriever, CodeIndexDocumentStore

    retriever = CodeEmbeddingRetriever(document_store=CodeIndexDocumentStore(index_dir=".code-alias"), top_k=10)
    retriever.warm_up()
    documents = retriever.run(query_embedding=[0.1] * 384)["documents"]
    ```

    :param document_store: An `InMemoryDocumentStore` (e.g. `CodeIndexDocumentStore`) holding embedded chunks.
    :param top_k: Documents to return.
    """

    def __init__(self, *, document_store: InMemoryDocumentStore, top_k: int = 10) -> None:
        if top_k <= 0:
            raise ValueError(f"top_k must be > 0, got {top_k}")
        self.document_store = document_store
        self.top_k = top_k

    def warm_up(self) -> None:
        """Build (or reuse) the matrix of the store's current embeddings."""
        self._matrix()

    def _matrix(self) -> tuple[list[Document], np.ndarray]:
        return _MATRICES.get(self.document_store, _normalised_matrix)

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
        :param query_embedding: The query's embedding: a list of floats, or an array (`CodeTextEmbedder.vector`),
            which the pipeline copies far faster.
        :param filters: Haystack filters on document fields.
        :param top_k: Overrides the init `top_k`.
        :param scale_score: Map cosine similarity from [-1, 1] to [0, 1].
        :param return_embedding: Keep each document's embedding in the results.
        :returns: `documents`, most similar first, with `score` (cosine similarity).
        """
        top_k = top_k or self.top_k
        documents, matrix = self._matrix()
        if not documents:
            return {"documents": []}
        query = np.asarray(query_embedding, dtype=np.float32).reshape(-1)
        if query.shape[0] != matrix.shape[1]:
            raise ValueError(
                f"query embedding has {query.shape[0]} dimensions, the index {matrix.shape[1]}: "
                "index and query must use the same embedding model"
            )
        query = query / (np.linalg.norm(query) or 1.0)  # not in place: the caller's array stays as it was
        ranked = best_first(documents, matrix @ query, top_k=top_k, filters=filters)
        results = [
            dataclasses.replace(
                document,
                score=(score + 1.0) / 2.0 if scale_score else score,
                embedding=document.embedding if return_embedding else None,
            )
            for document, score in ranked
        ]
        return {"documents": results}

    @component.output_types(documents=list[Document])
    async def run_async(
        self,
        query_embedding: list[float] | np.ndarray,
        filters: dict[str, Any] | None = None,
        top_k: int | None = None,
        scale_score: bool | None = None,
        return_embedding: bool | None = None,
    ) -> dict[str, list[Document]]:
        return self.run(
            query_embedding=query_embedding,
            filters=filters,
            top_k=top_k,
            scale_score=scale_score,
            return_embedding=return_embedding,
        )

    def to_dict(self) -> dict[str, Any]:
        return default_to_dict(self, document_store=self.document_store.to_dict(), top_k=self.top_k)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CodeEmbeddingRetriever:
        """Deserialise; the nested store is rebuilt from its recorded type by `default_from_dict`."""
        return default_from_dict(cls, data)
