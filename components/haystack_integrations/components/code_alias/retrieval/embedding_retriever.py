"""`CodeEmbeddingRetriever`: cosine search over the embedded store with one cached matrix.

Haystack's `InMemoryEmbeddingRetriever` rebuilds its arrays from every document's list of floats and copies
the documents on each query: about 2 s per question on a 10k-chunk index here. This retriever keeps one
normalised float32 matrix per store content (rebuilt only when the documents change) and answers with one
matrix-vector product.

Definition chunks shorter than `min_definition_lines` (default 2: one-line definitions) are left out of the
vector search. The chunker gives each definition a chunk and keeps each nested definition's first line in its
parent's chunk (and each top-level one's in the module remainder), so a one-line definition (a TypeScript
interface member or method signature, a `type` alias, a `.d.ts` declaration) repeats a line its parent's chunk
already holds. Its text is then mostly its path and name, which a sentence model finds close to any short
question on the topic: on the JS/TS set such chunks were 13-24 % of the code chunks (Python: under 0.5 %) and
took the embedding list's first place on questions whose answer was elsewhere (BENCHMARKS.md 8). They stay in
BM25 and in the rewrite's definitions list, so their symbols are still found.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from typing import Any

import numpy as np
from haystack import Document, component
from haystack.document_stores.in_memory import InMemoryDocumentStore

from ..indexing.store_cache import Building, Derived, best_first
from ..serialization import SerializedByInitParameters

# The unit-normalised vectors of each store's embedded documents, shared by every retriever instance.
# Rebuilt when chunks gain vectors (a progressive index: chunks without a vector yet are simply not in it).
_MATRICES: Derived[tuple[list[Document], np.ndarray]] = Derived("embedding matrix", vectors=True)


#: Definition chunks shorter than this (in lines) are not searched by vector: one-line definitions.
MIN_DEFINITION_LINES = 2


def short_definition(document: Document, min_definition_lines: int = MIN_DEFINITION_LINES) -> bool:
    """
    Whether a chunk is a definition shorter than `min_definition_lines` lines (module docstring), which the vector
    search leaves out; module remainders and chunks without a kind never are. The Elasticsearch kNN retriever
    applies the same rule to its hits.
    """
    kind = document.meta.get("kind")
    if min_definition_lines <= 1 or not kind or kind == "module":
        return False
    return (document.content or "").strip().count("\n") + 1 < min_definition_lines


def searched_by_vector(document: Document, min_definition_lines: int = MIN_DEFINITION_LINES) -> bool:
    """Whether a chunk takes part in the vector search: it has a vector and is not a `short_definition`."""
    return document.embedding is not None and not short_definition(document, min_definition_lines)


def _normalised_matrix(
    _key: str,
    documents: list[Document],
    _building: Building,
    min_definition_lines: int = MIN_DEFINITION_LINES,
    loaded: Mapping[str, tuple[Document, np.ndarray]] | None = None,
) -> tuple[list[Document], np.ndarray]:
    """
    :param loaded: The chunks' vectors as the index files hold them (`CodeIndexDocumentStore.loaded_vectors`):
        a chunk found there (the same object) takes its row instead of converting its list of floats.
    """
    embedded = [d for d in documents if searched_by_vector(d, min_definition_lines)]
    if not embedded:
        return [], np.zeros((0, 0), dtype=np.float32)
    known = loaded or {}
    rows = []
    for document in embedded:
        entry = known.get(document.id)
        rows.append(entry[1] if entry is not None and entry[0] is document else document.embedding)
    matrix = np.array(rows, dtype=np.float32).reshape(len(embedded), -1)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    matrix /= np.where(norms == 0.0, 1.0, norms)
    return embedded, matrix


@component
class CodeEmbeddingRetriever(SerializedByInitParameters):
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
    :param min_definition_lines: Definition chunks (meta `kind` other than "module") with fewer lines are not
        searched: a one-line definition repeats a line of its parent's chunk (module docstring). 1 searches all.
    """

    def __init__(
        self,
        *,
        document_store: InMemoryDocumentStore,
        top_k: int = 10,
        min_definition_lines: int = MIN_DEFINITION_LINES,
    ) -> None:
        if top_k <= 0:
            raise ValueError(f"top_k must be > 0, got {top_k}")
        if min_definition_lines < 1:
            raise ValueError(f"min_definition_lines must be >= 1, got {min_definition_lines}")
        self.document_store = document_store
        self.top_k = top_k
        self.min_definition_lines = min_definition_lines

    def warm_up(self) -> None:
        """Build (or reuse) the matrix of the store's current embeddings."""
        self._matrix()

    def _matrix(self) -> tuple[list[Document], np.ndarray]:
        lines = self.min_definition_lines
        return _MATRICES.get(
            self.document_store,
            # The rows as loaded: a build ahead of a swap (other chunk objects) converts their lists instead.
            functools.partial(
                _normalised_matrix,
                min_definition_lines=lines,
                loaded=getattr(self.document_store, "loaded_vectors", None),
            ),
            variant="" if lines == MIN_DEFINITION_LINES else f"min_definition_lines={lines}",
        )

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
