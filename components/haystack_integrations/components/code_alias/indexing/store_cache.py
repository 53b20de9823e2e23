"""Values derived from an in-memory store's documents (BM25 index, vector matrix, definition map), cached per store.

Each is rebuilt when the store's contents change (another process re-indexed: the store reloads first), shared by
every component instance reading that store, and held by the store's owner (`StoreCaches`: the folder's
`CodeIndex`, or a plain store itself), so it goes with it, or with `StoreCaches.forget` when a process lets the
store go. Nothing is kept at module level: `Derived` names a kind of value, it holds none.
`best_first` turns the scores the in-memory retrievers compute over those documents into their ranking.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import numpy as np
from haystack import Document
from haystack.document_stores.in_memory import InMemoryDocumentStore
from haystack.utils.filters import document_matches_filter

from .bm25_build import TermCache

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


@dataclass(frozen=True, eq=False)
class Derived(Generic[T]):
    """
    A kind of value derived from a store's documents (the BM25 index, the vector matrix...): a name only, no
    values. Where the values live is the store's owner (`caches_of`): the folder's `CodeIndex` for a
    `CodeIndexDocumentStore`, the store itself otherwise.

    :param name: What is cached, for messages.
    :param vectors: The value depends on which chunks have vectors, not only on which chunks there are.
    """

    name: str
    vectors: bool = False

    def get(self, store: InMemoryDocumentStore, build: Builder[T], variant: str = "") -> T:
        """`PerStoreCache.get` in the caches of the store's owner (`caches_of`)."""
        return caches_of(store).get(self, store, build, variant)


@dataclass(frozen=True)
class Building:
    """
    What a builder is told besides the documents.

    :param caches: The caches it builds for: their term cache, their deferred saves (`StoreCaches`).
    :param ahead: True when built ahead of a swap (`StoreCaches.prepare`, on a sync's path): a builder that also
        saves its value for other processes should leave that to `StoreCaches.defer`.
    """

    caches: StoreCaches
    ahead: bool = False


# Makes a value from the fingerprint, the documents in a stable order, and what it is built for.
Builder = Callable[[str, list[Document], Building], T]
# A value built ahead of a swap: (cache, slot, fingerprint, value).
Prepared = list[tuple["PerStoreCache[Any]", tuple[str, str], str, Any]]


class PerStoreCache(Generic[T]):
    """
    One derived value per (store, variant), rebuilt when the store's documents change: one kind's values in one
    `StoreCaches`.

    :param name: What is cached, for messages.
    :param vectors: The value depends on which chunks have vectors, not only on which chunks there are.
    :param keep: Whether a value of an earlier generation must stay (a question in flight reads it); None: only
        each slot's latest value is kept.
    """

    def __init__(self, name: str, *, vectors: bool = False, keep: Callable[[object], bool] | None = None) -> None:
        self.name = name
        self.vectors = vectors
        self._values: dict[tuple[str, str], tuple[str, T, object | None]] = {}
        # Values of earlier generations that questions in flight still read (`keep`), by slot: a question pinned
        # to the build before a swap finds its own, instead of rebuilding it over the current one.
        self._earlier: dict[tuple[str, str], list[tuple[str, T, object | None]]] = {}
        self._keep = keep
        # How each slot's value was last built, so a sync can build the next one before it swaps (`prepare`).
        self._builders: dict[tuple[str, str], Builder[T]] = {}
        self._lock = threading.Lock()

    def get(self, store: InMemoryDocumentStore, build: Builder[T], variant: str, building: Building) -> T:
        """
        The value for the store's current documents, built by `build(fingerprint, documents, building)` when
        missing or stale.

        :param store: The store; reloaded first when it can (`CodeIndexDocumentStore.reload`).
        :param build: Makes the value from the fingerprint and the documents in a stable order.
        :param variant: Separates values of one store built with different parameters.
        :param building: Passed to `build`.
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
            earlier = self._earlier.get(slot, [])
            for entry in earlier:
                if generation is not None and entry[2] == generation:
                    return entry[1]  # a question still on the build before the last swap
            key, documents = fingerprint(store, vectors=self.vectors)
            found = next((entry for entry in [cached, *earlier] if entry is not None and entry[0] == key), None)
            value = found[1] if found is not None else build(key, documents, building)
            self._install(slot, (key, value, generation))
            return value

    def _install(self, slot: tuple[str, str], entry: tuple[str, T, object | None]) -> None:
        """Make `entry` the slot's current value; the one it replaces stays while a question reads its generation."""
        previous = self._values.get(slot)
        if previous is not None and _newer(previous[2], entry[2]):
            previous, entry = entry, previous  # built for a question still on an older build: the newer stays
        self._values[slot] = entry
        kept = [e for e in self._earlier.get(slot, []) if e[2] != entry[2]]
        if previous is not None and previous[2] != entry[2]:
            kept.insert(0, previous)
        keep = self._keep
        kept = [e for e in kept if keep is not None and e[2] is not None and keep(e[2])]
        if kept:
            self._earlier[slot] = kept
        else:
            self._earlier.pop(slot, None)

    def prepare(
        self,
        index: str,
        documents: Iterable[Document],
        fingerprints: dict[bool, tuple[str, list[Document]]],
        building: Building,
    ) -> Prepared:
        """
        Build, for every variant used so far on the store named `index`, the value for `documents` (its next
        contents), without touching what serves now; `adopt` installs them once the documents are swapped in.

        :param fingerprints: `fingerprint_of` the same documents, by `vectors`, shared between caches.
        :param building: Passed to the builders (`ahead` set).
        """
        with self._lock:
            slots = [(slot, build) for slot, build in self._builders.items() if slot[0] == index]
        stored = list(documents)
        prepared: Prepared = []
        for slot, build in slots:
            if self.vectors not in fingerprints:
                fingerprints[self.vectors] = fingerprint_of(index, stored, vectors=self.vectors)
            key, ordered = fingerprints[self.vectors]
            with self._lock:
                cached = self._values.get(slot)
            value = cached[1] if cached is not None and cached[0] == key else build(key, list(ordered), building)
            prepared.append((self, slot, key, value))
        return prepared

    def retire(self, generation: object) -> None:
        """Drop the values of an earlier `generation` that no question reads any more (the current ones stay)."""
        with self._lock:
            for slot in list(self._earlier):
                kept = [entry for entry in self._earlier[slot] if entry[2] != generation]
                if kept:
                    self._earlier[slot] = kept
                else:
                    del self._earlier[slot]

    def forget(self, index: str) -> None:
        """Drop every value of the store named `index`."""
        with self._lock:
            for slot in [slot for slot in self._values if slot[0] == index]:
                del self._values[slot]
            for slot in [slot for slot in self._earlier if slot[0] == index]:
                del self._earlier[slot]
            for slot in [slot for slot in self._builders if slot[0] == index]:
                del self._builders[slot]

    def stores(self) -> set[str]:
        """The names of the stores that have a value here."""
        with self._lock:
            return {index for index, _variant in self._values}


class StoreCaches:
    """
    The values derived from the documents of one owner's stores, every kind (`Derived`) together, with what their
    builders share: the terms of the chunks tokenised so far (`TermCache`, so a rebuild after a sync tokenises only
    the changed chunks), and the save a sync's build left for later (`defer`). Thread-safe.

    A `CodeIndex` owns one for its folder (served chunks and writers' copies, told apart by store name); a plain
    `InMemoryDocumentStore` gets its own (`caches_of`).
    """

    def __init__(self, *, keep: Callable[[object], bool] | None = None) -> None:
        self.terms = TermCache()
        self._caches: dict[Derived[Any], PerStoreCache[Any]] = {}
        self._deferred: list[Callable[[], None]] = []
        self._lock = threading.Lock()
        # Whether a value of an earlier generation is still read (`CodeIndex.live`); None: only the latest is kept.
        self._keep = keep

    def cache(self, kind: Derived[T]) -> PerStoreCache[T]:
        """The values of `kind` (made on first use)."""
        with self._lock:
            found = self._caches.get(kind)
            if found is None:
                found = self._caches[kind] = PerStoreCache(kind.name, vectors=kind.vectors, keep=self._keep)
            return found

    def get(self, kind: Derived[T], store: InMemoryDocumentStore, build: Builder[T], variant: str = "") -> T:
        """`PerStoreCache.get` of `kind`'s values."""
        return self.cache(kind).get(store, build, variant, Building(self))

    def prepare(self, index: str, documents: Iterable[Document]) -> Prepared:
        """`PerStoreCache.prepare` of every kind: the derived values of the next contents of store `index`."""
        stored = list(documents)
        fingerprints: dict[bool, tuple[str, list[Document]]] = {}  # the same sort and hash for every kind
        with self._lock:
            caches = list(self._caches.values())
        building = Building(self, ahead=True)
        return [item for cache in caches for item in cache.prepare(index, stored, fingerprints, building)]

    def retire(self, generation: object) -> None:
        """`PerStoreCache.retire` of every kind: the last question reading `generation` has ended."""
        with self._lock:
            caches = list(self._caches.values())
        for cache in caches:
            cache.retire(generation)

    def forget(self, index: str) -> None:
        """Drop what every kind holds for the store named `index` (see `CodeIndexDocumentStore.release`)."""
        with self._lock:
            caches = list(self._caches.values())
        for cache in caches:
            cache.forget(index)

    def stores(self, kind: Derived[Any]) -> set[str]:
        """The names of the stores that have a value of `kind` here."""
        with self._lock:
            found = self._caches.get(kind)
        return found.stores() if found is not None else set()

    def defer(self, save: Callable[[], None]) -> None:
        """Keep `save` (of a value built ahead of a swap) for `save_deferred`; only the latest one is kept."""
        with self._lock:
            self._deferred[:] = [save]

    def save_deferred(self) -> int:
        """
        Run the save `defer` kept, if one waits (a server does it once idle, off the syncs' path).

        :returns: How many ran (0 or 1).
        """
        with self._lock:
            pending = list(self._deferred)
            self._deferred.clear()
        for save in pending:
            save()
        return len(pending)


_ATTACHED = "_code_alias_caches"  # where a plain store carries its own `StoreCaches`


def caches_of(store: InMemoryDocumentStore) -> StoreCaches:
    """
    Where the values derived from `store`'s documents live: its owner's caches (`store.derived`, the folder's
    `CodeIndex` for a `CodeIndexDocumentStore`), else caches carried by the store instance itself.
    """
    owned = getattr(store, "derived", None)
    if isinstance(owned, StoreCaches):
        return owned
    attached = vars(store).get(_ATTACHED)
    if attached is None:
        attached = vars(store).setdefault(_ATTACHED, StoreCaches())
    return attached


def _newer(first: object, second: object) -> bool:
    """Whether generation `first` is a later state of the same document set than `second` (`CodeIndex`'s
    `(serial, changes)` pairs); False when they cannot be compared."""
    if not (isinstance(first, tuple) and isinstance(second, tuple) and len(first) == len(second) == 2):
        return False
    return bool(first[0] == second[0] and first[1] > second[1])


def adopt_all(prepared: Prepared, generation: object) -> None:
    """
    Install values built by `StoreCaches.prepare` as current for the store's `generation` (call it right after
    the documents they were built from were swapped in, with the store's new generation).
    """
    for cache, slot, key, value in prepared:
        with cache._lock:
            cache._install(slot, (key, value, generation))


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
