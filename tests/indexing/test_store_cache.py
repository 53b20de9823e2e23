"""Derived values (`store_cache`) follow the store's documents, checked in O(1) where the store counts changes."""

from __future__ import annotations

from pathlib import Path

import pytest
from haystack import Document
from haystack.document_stores.in_memory import InMemoryDocumentStore

from haystack_integrations.components.code_alias.indexing import store_cache
from haystack_integrations.components.code_alias.indexing.store import CodeIndexDocumentStore
from haystack_integrations.components.code_alias.indexing.store_cache import Building, Derived, caches_of


@pytest.fixture
def fingerprints(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    real = store_cache.fingerprint

    def counting(store: InMemoryDocumentStore, *, vectors: bool = False) -> tuple[str, list[Document]]:
        calls.append(store.index)
        return real(store, vectors=vectors)

    monkeypatch.setattr(store_cache, "fingerprint", counting)
    return calls


def _count(_key: str, documents: list[Document], _building: Building) -> int:
    return len(documents)


def test_counted_store_is_not_rehashed_until_it_changes(tmp_path: Path, fingerprints: list[str]) -> None:
    store = CodeIndexDocumentStore(index_dir=str(tmp_path))
    store.write_documents([Document(content="a"), Document(content="b")])
    cache: Derived[int] = Derived("count")
    assert cache.get(store, _count) == 2 and len(fingerprints) == 1
    assert cache.get(store, _count) == 2 and len(fingerprints) == 1  # same generation: no hashing
    before = store.generation
    store.write_documents([Document(content="c")])
    assert store.generation > before
    assert cache.get(store, _count) == 3 and len(fingerprints) == 2
    store.delete_documents([Document(content="a").id])
    assert cache.get(store, _count) == 2
    # another instance of the same index sees the same counter, and the same values: the folder's `CodeIndex`'s
    twin = CodeIndexDocumentStore(index_dir=str(tmp_path))
    assert twin.derived is store.derived is caches_of(store) is store.code_index.derived
    assert twin.generation == store.generation and cache.get(twin, _count) == 2 and len(fingerprints) == 3
    store.derived.forget(store.index)
    assert store.index not in store.derived.stores(cache)
    # a writer's private copy has its values in the same place, under its own name, and drops them with its copy
    writer = CodeIndexDocumentStore(index_dir=str(tmp_path), writer="w")
    assert cache.get(writer, _count) == 0 and writer.index in store.derived.stores(cache)
    writer.discard()
    assert writer.index not in store.derived.stores(cache)


def test_a_store_without_a_counter_is_checked_by_contents(fingerprints: list[str]) -> None:
    store = InMemoryDocumentStore()
    store.write_documents([Document(content="a")])
    cache: Derived[int] = Derived("count")
    assert cache.get(store, _count) == 1 and cache.get(store, _count) == 1 and len(fingerprints) == 2
    store.write_documents([Document(content="b")])
    assert cache.get(store, _count) == 2
    assert cache.get(store, _count, variant="other") == 2 and len(caches_of(store).stores(cache)) == 1
    # a plain store carries its own caches: another instance builds its own values, and nothing is module-level
    other = InMemoryDocumentStore()
    assert caches_of(other) is not caches_of(store) and caches_of(store) is caches_of(store)


def test_values_built_ahead_of_a_swap_are_adopted_and_their_save_deferred(tmp_path: Path) -> None:
    store = CodeIndexDocumentStore(index_dir=str(tmp_path))
    store.write_documents([Document(content="a")])
    seen: list[bool] = []

    def counting(_key: str, documents: list[Document], building: Building) -> int:
        seen.append(building.ahead)
        if building.ahead:
            building.caches.defer(lambda: seen.append(True))
        return len(documents)

    cache: Derived[int] = Derived("count")
    assert cache.get(store, counting) == 1 and seen == [False]
    prepared = store.code_index.prepare_served([Document(content="a"), Document(content="b")])
    assert seen == [False, True] and [value for *_, value in prepared] == [2]
    assert store.derived.save_deferred() == 1 and seen == [False, True, True]
    assert store.derived.save_deferred() == 0


def test_best_first_orders_filters_stops_and_keeps_ties_in_document_order() -> None:
    import numpy as np

    from haystack_integrations.components.code_alias.indexing.store_cache import best_first

    languages = [("a", "py"), ("b", "go"), ("c", "py"), ("d", "py")]
    docs = [Document(content=content, meta={"lang": lang}) for content, lang in languages]
    scores = np.array([0.5, 0.9, 0.5, 0.0])
    assert [d.content for d, _ in best_first(docs, scores, top_k=10)] == ["b", "a", "c", "d"]
    assert [d.content for d, _ in best_first(docs, scores, top_k=10, positive_only=True)] == ["b", "a", "c"]
    py_only = {"field": "meta.lang", "operator": "==", "value": "py"}
    assert [(d.content, s) for d, s in best_first(docs, scores, top_k=2, filters=py_only)] == [("a", 0.5), ("c", 0.5)]


def test_a_loaded_index_skips_haystacks_bm25_statistics_until_they_are_used(tmp_path: Path) -> None:
    from haystack.components.retrievers.in_memory import InMemoryBM25Retriever

    writer = CodeIndexDocumentStore(index_dir=str(tmp_path))
    texts = ["def retry_with_backoff(): pass", "class SessionStore: pass", "def parse(text): pass", "x = 1", "y = 2"]
    writer.write_documents([Document(content=text) for text in texts])
    writer.persist()
    writer.release()
    reader = CodeIndexDocumentStore(index_dir=str(tmp_path))  # loads the saved file
    assert reader.count_documents() == 5
    assert reader._bm25_attr == {}  # nothing tokenised on load
    found = InMemoryBM25Retriever(document_store=reader).run(query="retry_with_backoff", top_k=1)["documents"]
    assert [d.content for d in found] == ["def retry_with_backoff(): pass"]  # computed on first use
    assert len(reader._bm25_attr) == 5
    reader.delete_documents([found[0].id])
    assert reader.count_documents() == 4 and len(reader._bm25_attr) == 4
