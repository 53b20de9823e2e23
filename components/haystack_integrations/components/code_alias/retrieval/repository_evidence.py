"""Per-repository term statistics from the embedded BM25 index, for `retrieval.repository_selection` (issue 11).

The BM25 index already holds, for every word, the chunks that contain it (bm25s's sparse score matrix, one
column of chunk ids per word); counting those chunks per repository gives CORI its document frequencies without
a second index. The chunk -> repository array is computed once per loaded BM25 index.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .bm25 import CodeBM25Retriever

__all__ = ["RepositoryTerms", "repository_terms"]


@dataclass(frozen=True)
class _Repositories:
    names: list[str]
    of_chunk: np.ndarray  # chunk -> index into names, -1 for a chunk of no named repository
    chunks: dict[str, int]


@dataclass(frozen=True)
class RepositoryTerms:
    """What `select_repository` needs: word -> repository -> chunks containing it, and repository -> chunks."""

    term_documents: dict[str, dict[str, int]]
    documents: dict[str, int]


def _repositories(index: Any) -> _Repositories:
    """The chunk -> repository map of a BM25 index (`index.memo(_repositories)`: once per index)."""
    names: dict[str, int] = {}
    of_chunk = np.fromiter(
        (
            names.setdefault(str(repo), len(names)) if (repo := d.meta.get("repo")) is not None else -1
            for d in index.documents
        ),
        dtype=np.int64,
        count=len(index.documents),
    )
    ordered = sorted(names, key=names.__getitem__)
    counts = np.bincount(of_chunk[of_chunk >= 0], minlength=len(ordered))
    return _Repositories(ordered, of_chunk, {name: int(counts[i]) for i, name in enumerate(ordered)})


def _bm25_retriever(pipeline: Any) -> CodeBM25Retriever | None:
    for _, instance in pipeline.walk():
        if isinstance(instance, CodeBM25Retriever):
            return instance
    return None


def repository_terms(pipeline: Any, terms: Iterable[str]) -> RepositoryTerms | None:
    """
    Per-repository document frequencies of `terms` in the query pipeline's BM25 index.

    :param pipeline: A query pipeline with a `CodeBM25Retriever` (the embedded default).
    :param terms: The question's words, `code_tokenize`d.
    :returns: The statistics, or None when the pipeline has no such retriever (Elasticsearch) or its index
        holds fewer than two repositories.
    """
    retriever = _bm25_retriever(pipeline)
    if retriever is None:
        return None
    index = retriever._index()
    repos = index.memo(_repositories)
    if len(repos.names) < 2:
        return None
    scores = index.model.scores
    indptr, indices = scores["indptr"], scores["indices"]
    found: dict[str, dict[str, int]] = {}
    for term in dict.fromkeys(terms):
        column = index.vocabulary.get(term)
        if column is None:
            continue
        owners = repos.of_chunk[np.asarray(indices[indptr[column] : indptr[column + 1]])]
        counts = np.bincount(owners[owners >= 0], minlength=len(repos.names))
        found[term] = {name: int(counts[i]) for i, name in enumerate(repos.names) if counts[i]}
    return RepositoryTerms(term_documents=found, documents=dict(repos.chunks))
