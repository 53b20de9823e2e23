"""Deltas (`index_delta`): a sync appends what changed to the dictionary and the documents instead of rewriting them."""

from __future__ import annotations

import itertools
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from haystack_integrations.components.code_alias.app.push_sync import WarmIndexer
from haystack_integrations.components.code_alias.app.search import CodeSearch
from haystack_integrations.components.code_alias.core.builder import DictionaryBuilder
from haystack_integrations.components.code_alias.core.model import DictionaryError
from haystack_integrations.components.code_alias.indexing import documents_file, index_delta, index_files
from haystack_integrations.components.code_alias.indexing import store as store_module
from haystack_integrations.components.code_alias.indexing.dictionary_handle import DictionaryHandle
from haystack_integrations.components.code_alias.paths import DICTIONARY_FILE
from tests.support.indexes import warm_indexed
from tests.support.repos import SHOP_FILES, write_tree


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = write_tree(tmp_path / "shop", SHOP_FILES)
    return root


@pytest.fixture
def indexed(tree: Path, tmp_path: Path) -> Iterator[tuple[WarmIndexer, CodeSearch, Path]]:
    with warm_indexed(tree, tmp_path / "index") as made:
        yield made


def rename(tree: Path, old: str, new: str, path: str = "pkg/payments.py") -> None:
    target = tree / path
    target.write_text(target.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")


def manifest_of(index_dir: Path) -> index_files.IndexManifest:
    manifest = index_files.read_manifest(index_dir)
    assert manifest is not None and manifest.dictionary is not None and manifest.documents is not None
    return manifest


def on_disk(index_dir: Path) -> tuple[dict[str, Any], dict[str, tuple[str | None, dict[str, Any]]]]:
    """The dictionary and the chunks as a reader with nothing in memory gets them from the files."""
    manifest = manifest_of(index_dir)
    assert manifest.dictionary is not None and manifest.documents is not None
    dictionary = index_delta.load_dictionary(index_dir, manifest.dictionary, cached=False)
    chunks = index_delta.load_documents(index_dir, manifest.documents)
    return dictionary.model_dump(), {d.id: (d.content, d.meta) for d in chunks}


def served(query: CodeSearch) -> dict[str, tuple[str | None, dict[str, Any]]]:
    store = store_module.CodeIndexDocumentStore(index_dir=str(query.index_dir))
    return {d.id: (d.content, d.meta) for d in store.storage.values()}


# ---- the dictionary's delta, on its own ------------------------------------------------------------------------
def test_a_dictionary_delta_turns_the_old_dictionary_into_the_new_one(tree: Path, tmp_path: Path) -> None:
    builder = DictionaryBuilder()
    before, _ = builder.refresh(tree, None)
    rename(tree, "charge_card", "charge_with_retry")
    (tree / "pkg/old.py").unlink()
    (tree / "pkg/refunds.py").write_text("def refund(amount):\n    return -amount\n", encoding="utf-8")
    after, _ = builder.refresh(tree, before)
    data = index_delta.dictionary_delta(before, after)
    assert data is not None and len(data) < len(after.model_dump_json())
    applied = index_delta.apply_dictionary_delta(before, data, tmp_path / "d.json")
    assert applied.model_dump() == after.model_dump()
    assert applied.renamed == {"charge_card": "charge_with_retry"}
    assert index_delta.dictionary_delta(after, after) is None
    with pytest.raises(DictionaryError, match="applies to dictionary version"):
        index_delta.apply_dictionary_delta(after, data, tmp_path / "d.json")  # the wrong base: refused
    with pytest.raises(DictionaryError, match="damaged dictionary delta"):
        index_delta.apply_dictionary_delta(before, data[: len(data) // 2], tmp_path / "d.json")


# ---- through the warm sync -------------------------------------------------------------------------------------
def test_syncs_append_deltas_that_a_fresh_reader_applies(
    indexed: tuple[WarmIndexer, CodeSearch, Path], tree: Path
) -> None:
    indexer, query, index_dir = indexed
    base = manifest_of(index_dir)
    base_files = {base.dictionary.file, base.documents.file}  # type: ignore[union-attr]
    for step, (old, new) in enumerate([("charge_card", "charge_twice"), ("charge_twice", "charge_thrice")], 1):
        rename(tree, old, new)
        indexer.sync(tree, paths=["pkg/payments.py"])
        manifest = manifest_of(index_dir)
        assert manifest.dictionary is not None and manifest.documents is not None
        # the same base files, one more delta each; the counts and version describe the result
        assert {manifest.dictionary.file, manifest.documents.file} == base_files
        assert len(manifest.dictionary.deltas) == step and len(manifest.documents.deltas) == step
        # the delta holds the pushed file's chunks only
        added = store_module.read_documents(index_dir / manifest.documents.deltas[-1].file)
        assert added and {d.meta["file_path"] for d in added} == {"pkg/payments.py"}
        handle = DictionaryHandle.for_path(index_dir / DICTIONARY_FILE)
        assert manifest.dictionary.version == handle.dictionary.version
        assert manifest.documents.count == len(served(query))
    dictionary, chunks = on_disk(index_dir)
    assert chunks == served(query), "what the files hold must be what the server serves"
    assert dictionary == DictionaryHandle.for_path(index_dir / DICTIONARY_FILE).dictionary.model_dump()
    assert dictionary["renamed"] == {"charge_card": "charge_thrice", "charge_twice": "charge_thrice"}
    # and a fresh reader, with no dictionary or store of this process, reads the same build: status and ask
    status = CodeSearch(index_dir, lexical=True)
    status.check_index()


def test_a_new_process_reads_the_deltas(indexed: tuple[WarmIndexer, CodeSearch, Path], tree: Path) -> None:
    indexer, _, index_dir = indexed
    rename(tree, "charge_card", "charge_with_retry")
    indexer.sync(tree, paths=["pkg/payments.py"])
    assert manifest_of(index_dir).documents.deltas  # type: ignore[union-attr]
    script = textwrap.dedent(
        """
        import json, sys
        from haystack_integrations.components.code_alias.app.search import CodeSearch
        search = CodeSearch(sys.argv[1], lexical=True)
        new = search.ask("where is charge_with_retry?")
        old = search.ask("where is charge_card?")
        print(json.dumps([new.rewrite["symbols"], old.files[0]["file_path"]]))
        """
    )
    run = subprocess.run([sys.executable, "-c", script, str(index_dir)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    symbols, first_file = __import__("json").loads(run.stdout.strip().splitlines()[-1])
    assert "charge_with_retry" in symbols
    assert first_file == "pkg/payments.py"  # the old name is an alias of the new one


def test_compaction_folds_the_chains_and_the_server_reloads_nothing(
    indexed: tuple[WarmIndexer, CodeSearch, Path], tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    indexer, query, index_dir = indexed
    assert indexer.compact() is None  # nothing to fold
    for old, new in [("charge_card", "charge_twice"), ("charge_twice", "charge_thrice")]:
        rename(tree, old, new)
        indexer.sync(tree, paths=["pkg/payments.py"])
    before = on_disk(index_dir)
    chained = manifest_of(index_dir)
    assert indexer.compact() is None  # under the soft limit
    handle = DictionaryHandle.for_path(index_dir / DICTIONARY_FILE)
    hints = handle.hints
    generation = store_module.CodeIndexDocumentStore(index_dir=str(index_dir)).generation

    def no_read(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the server read the compacted files back")

    stats = indexer.compact(force=True)
    assert stats is not None and stats["deltas"] == 4
    compacted = manifest_of(index_dir)
    assert compacted.dictionary is not None and compacted.documents is not None
    assert not compacted.dictionary.deltas and not compacted.documents.deltas
    assert compacted.dictionary.version == chained.dictionary.version  # type: ignore[union-attr]
    assert on_disk(index_dir) == before
    monkeypatch.setattr(index_delta, "load_documents", no_read)
    monkeypatch.setattr(index_delta, "load_dictionary", no_read)
    assert "charge_thrice" in set(query.ask("where is charge_thrice?").rewrite["symbols"])
    assert store_module.CodeIndexDocumentStore(index_dir=str(index_dir)).generation == generation
    assert handle.hints is hints
    monkeypatch.undo()
    rename(tree, "charge_thrice", "charge_again")  # and the next sync appends to the compacted files
    indexer.sync(tree, paths=["pkg/payments.py"])
    after = manifest_of(index_dir)
    assert after.documents is not None and after.documents.file == compacted.documents.file
    assert len(after.documents.deltas) == 1
    assert on_disk(index_dir)[1] == served(query)


def test_a_long_chain_is_compacted_by_the_sync_itself(
    indexed: tuple[WarmIndexer, CodeSearch, Path], tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    indexer, query, index_dir = indexed
    monkeypatch.setattr(index_delta, "HARD_MAX_DELTAS", 2)
    names = ["charge_card", "charge_a", "charge_b", "charge_c"]
    lengths = []
    for old, new in itertools.pairwise(names):
        rename(tree, old, new)
        indexer.sync(tree, paths=["pkg/payments.py"])
        lengths.append(len(manifest_of(index_dir).documents.deltas))  # type: ignore[union-attr]
    assert lengths == [1, 2, 0]
    assert on_disk(index_dir)[1] == served(query)
    assert "charge_c" in set(query.ask("where is charge_c?").rewrite["symbols"])


@pytest.mark.parametrize("fail", ["dictionary-delta", "documents-delta", "manifest"])
def test_a_sync_failing_mid_persist_leaves_a_whole_readable_build(
    fail: str, indexed: tuple[WarmIndexer, CodeSearch, Path], tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    indexer, query, index_dir = indexed
    rename(tree, "charge_card", "charge_twice")
    indexer.sync(tree, paths=["pkg/payments.py"])  # a chain exists: the failing save appends to it
    before_manifest = manifest_of(index_dir)
    before = on_disk(index_dir)
    rename(tree, "charge_twice", "charge_thrice")
    owner, name = {
        "dictionary-delta": (index_delta, "stage_delta"),
        "documents-delta": (store_module, "stage_delta"),  # after the dictionary's delta was written
        "manifest": (store_module, "commit"),  # both deltas written, the manifest not replaced
    }[fail]

    def boom(*args: Any, **kwargs: Any) -> Any:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(owner, name, boom)
    with pytest.raises(OSError, match="No space"):
        indexer.sync(tree, paths=["pkg/payments.py"])
    monkeypatch.undo()
    assert manifest_of(index_dir) == before_manifest
    assert on_disk(index_dir) == before, "the files must read as the build before"
    assert "charge_twice" in set(query.ask("where is charge_twice?").rewrite["symbols"])  # the old build serves
    indexer.sync(tree, paths=["pkg/payments.py"])  # the next sync completes, from the state on disk
    assert "charge_thrice" in set(query.ask("where is charge_thrice?").rewrite["symbols"])
    fresh = CodeSearch(index_dir.parent / "fresh", lexical=True)
    fresh.index(tree)
    assert set(on_disk(index_dir)[1]) == set(on_disk(fresh.index_dir)[1])  # the same chunks as a clean build
    assert on_disk(index_dir)[1] == served(query)


def test_a_damaged_delta_is_named_and_repaired_by_the_next_sync(
    indexed: tuple[WarmIndexer, CodeSearch, Path], tree: Path
) -> None:
    indexer, query, index_dir = indexed
    rename(tree, "charge_card", "charge_twice")
    indexer.sync(tree, paths=["pkg/payments.py"])
    delta = manifest_of(index_dir).documents.deltas[0]  # type: ignore[union-attr]
    path = index_dir / delta.file
    path.write_bytes(path.read_bytes()[:-10])
    with pytest.raises(index_files.IndexDamagedError, match=delta.file):
        CodeSearch(index_dir, lexical=True).check_index()
    indexer.close()
    rename(tree, "charge_twice", "charge_thrice")
    stats = indexer.sync(tree)  # a walk: repairs the dropped documents by a full re-split
    assert stats["repaired"] and delta.file in stats["repaired"][0]
    assert "charge_thrice" in set(query.ask("where is charge_thrice?").rewrite["symbols"])
    assert on_disk(index_dir)[1] == served(query)


def test_asks_between_the_save_and_the_handover_keep_the_old_build_without_reading_the_files(
    indexed: tuple[WarmIndexer, CodeSearch, Path], tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    indexer, query, _ = indexed
    indexer.sync(tree, paths=["pkg/payments.py"])  # warm
    persister = indexer._components().get_component("persister")
    original = persister.run
    seen: list[set[str]] = []

    def no_read(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a query read the new files back before the handover")

    def persist_then_ask(**kwargs: Any) -> Any:
        out = original(**kwargs)  # the manifest names the new build now; the handover has not happened
        with monkeypatch.context() as patch:
            patch.setattr(index_delta, "load_documents", no_read)
            patch.setattr(index_delta, "load_dictionary", no_read)
            patch.setattr(documents_file, "read_documents", no_read)
            seen.append(set(query.ask("where is charge_twice?").rewrite["symbols"]))
        return out

    monkeypatch.setattr(persister, "run", persist_then_ask)
    rename(tree, "charge_card", "charge_twice")
    indexer.sync(tree, paths=["pkg/payments.py"])
    assert seen and "charge_twice" not in seen[0]  # the old build answered, whole
    assert "charge_twice" in set(query.ask("where is charge_twice?").rewrite["symbols"])  # then the new one


def test_the_bm25_index_a_sync_builds_is_saved_for_other_processes_once_idle(
    indexed: tuple[WarmIndexer, CodeSearch, Path], tree: Path
) -> None:
    from haystack_integrations.components.code_alias.retrieval import bm25

    indexer, query, _ = indexed
    indexer.sync(tree, paths=["pkg/payments.py"])  # warm
    derived = query.code_index.derived  # the folder's caches: the indexer's and the queries' alike
    assert derived is indexer.search.code_index.derived
    derived.save_deferred()
    cache = bm25.bm25_cache_dir()
    before = set(cache.glob("bm25-*"))
    new = f"charge_{uuid.uuid4().hex[:8]}"  # chunks no other test indexed: their BM25 index is not cached yet
    rename(tree, "charge_card", new)
    indexer.sync(tree, paths=["pkg/payments.py"])
    assert set(cache.glob("bm25-*")) == before, "nothing is saved on the sync's path"
    assert new in set(query.ask(f"where is {new}?").rewrite["symbols"])
    indexer.idle()
    saved = set(cache.glob("bm25-*")) - before
    assert len(saved) == 1 and (saved.pop() / "document_ids.json").is_file()
    assert derived.save_deferred() == 0  # saved once
