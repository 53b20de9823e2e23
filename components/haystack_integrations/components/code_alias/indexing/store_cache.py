"""Values derived from an in-memory store's documents (BM25 index, vector matrix, definition map), cached per store.

Each is rebuilt when the store's contents change (another process re-indexed: the store reloads first), shared by
every component instance reading that store, and dropped with `forget_store` when a process lets the store go.
`best_first` turns the scores the in-memory retrievers compute over those documents into their ranking.
"""

from __future__ import annotations

import contextvars
import hashlib
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any, ClassVar, Generic, TypeVar

import numpy as np
from haystack import Document
from haystack.document_stores.in_memory import InMemoryDocumentStore
from haystack.utils.filters import document_matches_filter

T = TypeVar("T")


def fingerprint(store: InMemoryDocumentStore, *, vectors: bool = False) -> tuple[str, list[Document]]:
    """
    A key that changes whenever the store's documents do, and the documents in a stable order.

    :param vectors: Also change when a chunk gains or loses its vector (a vector fill keeps the chunks' ids).
    """
    return fingerprint_of(store.index, store.storage.values(), vectors=vectors)


def fingerprint_of(index: str, stored: Iterable[Document], *, vectors: bool = False) -> tuple[str, list[Document]]:
    """`fingerprint` of documents about to become the contents of the store named `index`."""
    documents = sorted(stored, key=lambda d: d.id)
    if vectors:
        text = "\n".join(f"{d.id}{'+' if d.embedding is not None else '-'}" for d in documents)
    else:
        text = "\n".join(d.id for d in documents)
    digest = hashlib.sha1(text.encode()).hexdigest()
    return f"{index}:{digest}", documents


_PREPARING: contextvars.ContextVar[bool] = contextvars.ContextVar("code_alias_preparing", default=False)


def preparing() -> bool:
    """
    True while a value is built ahead of a swap (`PerStoreCache.prepare`, on a sync's path): a builder that
    also saves its value for other processes should do that off the sync's path.
    """
    return _PREPARING.get()


# A value built ahead of a swap: (cache, slot, fingerprint, value).
Prepared = list[tuple["PerStoreCache[Any]", tuple[str, str], str, Any]]


class PerStoreCache(Generic[T]):
    """
    One derived value per (store, variant), rebuilt when the store's documents change.

    :param name: What is cached, for messages.
    :param vectors: The value depends on which chunks have vectors, not only on which chunks there are.
    """

    _all: ClassVar[list[PerStoreCache[object]]] = []

    def __init__(self, name: str, *, vectors: bool = False) -> None:
        self.name = name
        self.vectors = vectors
        self._values: dict[tuple[str, str], tuple[str, T, object | None]] = {}
        # How each slot's value was last built, so a sync can build the next one before it swaps (`prepare`).
        self._builders: dict[tuple[str, str], Callable[[str, list[Document]], T]] = {}
        self._lock = threading.Lock()
        PerStoreCache._all.append(self)  # type: ignore[arg-type]

    def get(self, store: InMemoryDocumentStore, build: Callable[[str, list[Document]], T], variant: str = "") -> T:
        """
        The value for the store's current documents, built by `build(fingerprint, documents)` when missing or stale.

        :param store: The store; reloaded first when it can (`CodeIndexDocumentStore.reload`).
        :param build: Makes the value from the fingerprint and the documents in a stable order.
        :param variant: Separates values of one store built with different parameters.
        """
        reload = getattr(store, "reload", None)
        if callable(reload):
            reload()
        slot = (store.index, variant)
        # Stores with a change counter (CodeIndexDocumentStore) are checked in O(1); others by their contents.
        generation = getattr(store, "generation", None)
        with self._lock:
            self._builders[slot] = build
            cached = self._values.get(slot)
            if cached is not None and generation is not None and cached[2] == generation:
                return cached[1]
            key, documents = fingerprint(store, vectors=self.vectors)
            if cached is None or cached[0] != key:
                cached = (key, build(key, documents), generation)
            self._values[slot] = (cached[0], cached[1], generation)
            return cached[1]

    def prepare(
        self,
        index: str,
        documents: Iterable[Document],
        fingerprints: dict[bool, tuple[str, list[Document]]] | None = None,
    ) -> Prepared:
        """
        Build, for every variant used so far on the store named `index`, the value for `documents` (its next
        contents), without touching what serves now; `adopt` installs them once the documents are swapped in.

        :param fingerprints: `fingerprint_of` the same documents, by `vectors`, shared between caches.
        """
        with self._lock:
            slots = [(slot, build) for slot, build in self._builders.items() if slot[0] == index]
        stored = list(documents)
        prepared: Prepared = []
        token = _PREPARING.set(True)
        try:
            memo = fingerprints if fingerprints is not None else {}
            for slot, build in slots:
                if self.vectors not in memo:
                    memo[self.vectors] = fingerprint_of(index, stored, vectors=self.vectors)
                key, ordered = memo[self.vectors]
                with self._lock:
                    cached = self._values.get(slot)
                value = cached[1] if cached is not None and cached[0] == key else build(key, list(ordered))
                prepared.append((self, slot, key, value))
        finally:
            _PREPARING.reset(token)
        return prepared

    def forget(self, index: str) -> None:
        """Drop every value of the store named `index`."""
        with self._lock:
            for slot in [slot for slot in self._values if slot[0] == index]:
                del self._values[slot]
            for slot in [slot for slot in self._builders if slot[0] == index]:
                del self._builders[slot]

    def clear(self) -> None:
        """Drop every value."""
        with self._lock:
            self._values.clear()
            self._builders.clear()

    def stores(self) -> set[str]:
        """The names of the stores that have a value here."""
        with self._lock:
            return {index for index, _variant in self._values}


def prepare_all(index: str, documents: Iterable[Document]) -> Prepared:
    """`PerStoreCache.prepare` of every cache: the derived values of the next contents of store `index`."""
    stored = list(documents)
    fingerprints: dict[bool, tuple[str, list[Document]]] = {}  # the same sort and hash for every cache
    return [item for cache in list(PerStoreCache._all) for item in cache.prepare(index, stored, fingerprints)]


def adopt_all(prepared: Prepared, generation: object) -> None:
    """
    Install values built by `prepare_all` as current for the store's `generation` (call it right after the
    documents they were built from were swapped in, with the store's new generation).
    """
    for cache, slot, key, value in prepared:
        with cache._lock:
            cache._values[slot] = (key, value, generation)


def forget_store(index: str) -> None:
    """Drop what every cache holds for the store named `index` (see `CodeIndexDocumentStore.release`)."""
    for cache in PerStoreCache._all:
        cache.forget(index)


def best_first(
    documents: list[Document],
    scores: np.ndarray,
    *,
    top_k: int,
    filters: dict[str, Any] | None = None,
    positive_only: bool = False,
) -> Iterator[tuple[Document, float]]:
    """
    The documents with their scores, highest first (ties in document order), that pass `filters`: at most `top_k`.

    :param documents: The store's documents, aligned with `scores`.
    :param scores: One score per document.
    :param top_k: Most documents to yield.
    :param filters: Haystack filters on document fields.
    :param positive_only: Stop at the first score <= 0 (BM25: no query term matched).
    """
    taken = 0
    for position in np.argsort(-scores, kind="stable"):
        score = float(scores[position])
        if positive_only and score <= 0.0:
            return
        document = documents[position]
        if filters and not document_matches_filter(filters=filters, document=document):
            continue
        yield document, score
        taken += 1
        if taken >= top_k:
            return
