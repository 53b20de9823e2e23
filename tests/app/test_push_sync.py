"""The warm sync of pushed paths (`push_sync.WarmIndexer`): only the pushed files are read, the rest is reused."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from haystack import Document
from haystack.document_stores.in_memory import InMemoryDocumentStore

from haystack_integrations.components.code_alias.app.push_sync import WarmIndexer
from haystack_integrations.components.code_alias.app.search import CodeSearch
from haystack_integrations.components.code_alias.indexing import documents_file
from haystack_integrations.components.code_alias.indexing import store as store_module
from haystack_integrations.components.code_alias.indexing.dictionary_handle import DictionaryHandle
from haystack_integrations.components.code_alias.indexing.index_files import current_manifest
from haystack_integrations.components.code_alias.indexing.sync import IndexSyncPlanner
from haystack_integrations.components.code_alias.paths import DICTIONARY_FILE
from tests.support.indexes import warm_indexed
from tests.support.repos import SHOP_FILES, write_tree


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = write_tree(tmp_path / "shop", SHOP_FILES)
    (root / ".gitignore").write_text("generated/\n", encoding="utf-8")
    return root


@pytest.fixture
def indexed(tree: Path, tmp_path: Path) -> Iterator[tuple[WarmIndexer, CodeSearch, Path]]:
    with warm_indexed(tree, tmp_path / "index") as made:
        yield made


def files_in(query: CodeSearch) -> set[str]:
    store = store_module.CodeIndexDocumentStore(index_dir=str(query.index_dir))
    return {str(d.meta["file_path"]) for d in store.storage.values()}


def symbols_in(query: CodeSearch, question: str) -> set[str]:
    return set(query.ask(question).rewrite["symbols"])


def test_pushed_paths_are_the_only_files_read(
    indexed: tuple[WarmIndexer, CodeSearch, Path], tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    indexer, query, _ = indexed
    payments = tree / "pkg/payments.py"
    payments.write_text(payments.read_text().replace("charge_card", "charge_with_retry"), encoding="utf-8")
    orders = tree / "pkg/orders.py"  # changed too, but not pushed: a push-driven sync must not look at it
    orders.write_text(orders.read_text().replace("place_order", "submit_order"), encoding="utf-8")
    from haystack_integrations.components.code_alias.app import push_sync
    from haystack_integrations.components.code_alias.core import builder

    read: list[str] = []
    for module in (push_sync, builder):
        original = module.read_text_file

        def spy(entry: Any, *, max_bytes: int, original: Any = original) -> Any:
            read.append(str(getattr(entry, "rel_path", entry)))
            return original(entry, max_bytes=max_bytes)

        monkeypatch.setattr(module, "read_text_file", spy)
    stats = indexer.sync(tree, paths=["pkg/payments.py"])
    assert stats["files_changed"] == 1 and stats["files"] == 1 and stats["served"] is True
    assert {Path(p).name for p in read} == {"payments.py"}, read
    assert "charge_with_retry" in symbols_in(query, "where is charge_with_retry?")
    # the old name is kept as an alias of the new one
    assert query.ask("where is charge_card?").files[0]["file_path"] == "pkg/payments.py"
    assert "place_order" in symbols_in(query, "where is place_order?")  # orders.py as the last build read it
    assert "submit_order" not in symbols_in(query, "where is submit_order?")


def test_the_new_build_serves_without_reading_the_documents_back(
    indexed: tuple[WarmIndexer, CodeSearch, Path], tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    indexer, query, index_dir = indexed
    indexer.sync(tree, paths=["pkg/payments.py"])  # warm: the first sync loads the index into its writer store
    before = current_manifest(index_dir)
    payments = tree / "pkg/payments.py"
    payments.write_text(payments.read_text().replace("charge_card", "bill_card"), encoding="utf-8")

    def no_read(path: Path) -> list[Document]:
        raise AssertionError(f"{path} was read back")

    monkeypatch.setattr(documents_file, "read_documents", no_read)
    indexer.sync(tree, paths=["pkg/payments.py"])
    after = current_manifest(index_dir)
    assert before is not None and after is not None and after.build != before.build
    assert "bill_card" in symbols_in(query, "where is bill_card?")
    handle = DictionaryHandle.for_path(index_dir / DICTIONARY_FILE)
    assert after.dictionary is not None and handle.dictionary.version == after.dictionary.version


def test_removed_paths_are_removed(indexed: tuple[WarmIndexer, CodeSearch, Path], tree: Path) -> None:
    indexer, query, _ = indexed
    (tree / "pkg/old.py").unlink()
    stats = indexer.sync(tree, paths=["pkg/old.py"])
    assert stats["files_removed"] == 1
    assert "pkg/old.py" not in files_in(query)
    assert "legacy_helper" not in symbols_in(query, "where is legacy_helper?")
    assert "pkg/payments.py" in files_in(query)  # the files the push did not name stay


def test_paths_outside_the_root_are_refused(
    indexed: tuple[WarmIndexer, CodeSearch, Path], tree: Path, tmp_path: Path
) -> None:
    indexer, query, _ = indexed
    secret = tmp_path / "outside.py"
    secret.write_text("def leaked_secret_function():\n    return 'token'\n", encoding="utf-8")
    orders = tree / "pkg/orders.py"  # an indexed file becomes a symlink that leads out of the root
    orders.unlink()
    os.symlink(secret, orders)
    stats = indexer.sync(tree, paths=["pkg/orders.py", "../outside.py"])
    refused = {r["path"] for r in stats["refused"]}
    assert refused == {"pkg/orders.py", "../outside.py"}, stats["refused"]
    assert "pkg/orders.py" not in files_in(query)  # what the index held of it is gone, nothing outside came in
    assert all("leaked_secret_function" not in (d.content or "") for d in query.ask("leaked secret function").documents)


def test_an_added_file_is_admitted_only_where_a_walk_would_list_it(
    indexed: tuple[WarmIndexer, CodeSearch, Path], tree: Path
) -> None:
    indexer, query, _ = indexed
    (tree / "pkg/refunds.py").write_text("def refund_payment():\n    return 0\n", encoding="utf-8")
    (tree / "generated").mkdir()
    (tree / "generated/stubs.py").write_text("def generated_stub():\n    return 0\n", encoding="utf-8")
    stats = indexer.sync(tree, paths=["pkg/refunds.py", "generated/stubs.py", "README.md"])
    assert stats["files_changed"] == 1
    assert "pkg/refunds.py" in files_in(query) and "generated/stubs.py" not in files_in(query)
    assert "refund_payment" in symbols_in(query, "where is refund_payment?")


def test_without_paths_the_tree_is_walked(indexed: tuple[WarmIndexer, CodeSearch, Path], tree: Path) -> None:
    indexer, query, _ = indexed
    orders = tree / "pkg/orders.py"
    orders.write_text(orders.read_text().replace("place_order", "submit_order"), encoding="utf-8")
    (tree / "pkg/old.py").unlink()
    stats = indexer.sync(tree)
    assert stats["paths"] is None and stats["files_changed"] == 1 and stats["files_removed"] == 1
    assert "submit_order" in symbols_in(query, "where is submit_order?")
    assert "pkg/old.py" not in files_in(query)


def test_a_failed_sync_leaves_the_previous_build_serving(
    indexed: tuple[WarmIndexer, CodeSearch, Path], tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    indexer, query, index_dir = indexed
    before = current_manifest(index_dir)
    payments = tree / "pkg/payments.py"
    payments.write_text(payments.read_text().replace("charge_card", "charge_twice"), encoding="utf-8")
    splitter = indexer._components().get_component("splitter")

    def broken(**_: Any) -> dict[str, Any]:
        raise RuntimeError("splitter died")

    monkeypatch.setattr(splitter, "run", broken)
    with pytest.raises(RuntimeError, match="splitter died"):
        indexer.sync(tree, paths=["pkg/payments.py"])
    after = current_manifest(index_dir)
    assert before is not None and after is not None and after.build == before.build
    assert "charge_card" in symbols_in(query, "where is charge_card?")
    monkeypatch.undo()
    indexer.sync(tree, paths=["pkg/payments.py"])  # the warm state was dropped; the next sync starts clean
    assert "charge_twice" in symbols_in(query, "where is charge_twice?")


def test_a_build_saved_by_another_process_is_taken_in(
    indexed: tuple[WarmIndexer, CodeSearch, Path], tree: Path
) -> None:
    indexer, query, index_dir = indexed
    indexer.sync(tree, paths=["pkg/payments.py"])  # warm
    orders = tree / "pkg/orders.py"
    orders.write_text(orders.read_text().replace("place_order", "queue_order"), encoding="utf-8")
    CodeSearch(index_dir, lexical=True).index(tree)  # `code-alias sync` from cron, meanwhile
    payments = tree / "pkg/payments.py"
    payments.write_text(payments.read_text().replace("charge_card", "charge_later"), encoding="utf-8")
    indexer.sync(tree, paths=["pkg/payments.py"])
    assert "queue_order" in symbols_in(query, "where is queue_order?")  # the cron build was not lost
    assert "charge_later" in symbols_in(query, "where is charge_later?")


def test_planner_with_paths_leaves_other_files_alone() -> None:
    store = InMemoryDocumentStore()
    chunks = [
        Document(content=f"def {n}(): ...", meta={"file_path": f"{n}.py", "file_sha256": n, "file_chunk_count": 1})
        for n in ("a", "b", "c")
    ]
    store.write_documents(chunks)
    planner = IndexSyncPlanner(document_store=store)
    changed = Document(content="def a(): pass", meta={"file_path": "a.py", "file_sha256": "a2"})
    plan = planner.run(documents=[changed], paths=["a.py", "c.py"])
    assert plan["changed_files"] == ["a.py"] and plan["removed_files"] == ["c.py"]  # b.py: not named, kept
    with pytest.raises(ValueError, match=r"b\.py"):
        planner.run(documents=[Document(content="x", meta={"file_path": "b.py", "file_sha256": "b"})], paths=["a.py"])


class FakeChunkEmbedder:
    """Stands in for the chunk embedder: a 4-number vector per chunk, and a count of what it embedded."""

    def __init__(self) -> None:
        self.embedded = 0

    def run(self, documents: list[Document]) -> dict[str, list[Document]]:
        self.embedded += len(documents)
        vectors = [[float(len(d.content or "") % 7), 1.0, 0.5, float(i % 3)] for i, d in enumerate(documents)]
        return {
            "documents": [
                Document(content=d.content, meta=d.meta, embedding=v) for d, v in zip(documents, vectors, strict=True)
            ]
        }


def test_a_hybrid_index_answers_the_new_chunks_at_once_and_gets_their_vectors_after(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from haystack_integrations.components.code_alias.indexing.vector_fill import vector_count

    embedder = FakeChunkEmbedder()
    monkeypatch.setattr(CodeSearch, "chunk_embedder", lambda self: embedder)
    index_dir = tmp_path / "index"
    CodeSearch(index_dir).index(tree)  # hybrid, progressive: every chunk gets its vector
    first = embedder.embedded
    served = store_module.CodeIndexDocumentStore(index_dir=str(index_dir))
    indexer = WarmIndexer(index_dir)
    try:
        payments = tree / "pkg/payments.py"
        payments.write_text(payments.read_text().replace("charge_card", "charge_wallet"), encoding="utf-8")
        indexer.sync(tree, paths=["pkg/payments.py"])
        fresh = [d for d in served.storage.values() if d.meta["file_path"] == "pkg/payments.py"]
        assert fresh and all(d.embedding is None for d in fresh)  # served (lexically) before any vector
        result = indexer.fill_vectors()
        assert result is not None and result["embedded"] == len(fresh) == embedder.embedded - first
        assert all(d.embedding is not None for d in served.storage.values())
        count = vector_count(index_dir)
        assert count is not None and count.complete
    finally:
        indexer.close()


def test_settle_freezes_what_is_held_and_unfreezes_now_and_then(
    indexed: tuple[WarmIndexer, CodeSearch, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    import gc

    from haystack_integrations.components.code_alias.app import push_sync

    indexer, _, _ = indexed
    monkeypatch.setattr(push_sync, "UNFREEZE_EVERY", 2)
    unfrozen: list[int] = []
    real_unfreeze = gc.unfreeze
    monkeypatch.setattr(push_sync.gc, "unfreeze", lambda: (unfrozen.append(1), real_unfreeze())[1])
    try:
        indexer.settle()
        assert gc.get_freeze_count() > 0 and not unfrozen
        indexer.settle()
        assert unfrozen == [1] and gc.get_freeze_count() > 0
    finally:
        real_unfreeze()
