"""Incremental index sync (`IndexSyncPlanner` + `IndexSyncWriter`) over Haystack's InMemoryDocumentStore."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from haystack import Document, Pipeline
from haystack.document_stores.in_memory import InMemoryDocumentStore
from haystack.document_stores.types import DuplicatePolicy

from haystack_integrations.components.code_alias.core.chunking import CHUNKER_VERSION
from haystack_integrations.components.code_alias.indexing.sync import (
    FileState,
    IndexSyncPlanner,
    IndexSyncWriter,
    read_file_states,
)
from tests.support.sync_docs import REPO, expected, file_documents, split


def sync(store: InMemoryDocumentStore, repo: dict[str, list[tuple[str, str]]]) -> dict[str, Any]:
    planner = IndexSyncPlanner(document_store=store)
    writer = IndexSyncWriter(document_store=store, batch_size=2, progress_bar=False)
    plan = planner.run(documents=file_documents(repo))
    result = writer.run(
        documents=split(plan["changed"], repo), removed_files=plan["removed_files"], changed_files=plan["changed_files"]
    )
    return {**plan, **result}


def stored(store: InMemoryDocumentStore) -> dict[str, list[str]]:
    """file_path -> sorted chunk contents in the store."""
    contents: dict[str, list[str]] = {}
    for document in store.filter_documents():
        contents.setdefault(document.meta["file_path"], []).append(document.content or "")
    return {path: sorted(items) for path, items in sorted(contents.items())}


def test_first_sync_writes_everything() -> None:
    store = InMemoryDocumentStore()
    result = sync(store, REPO)
    assert sorted(result["changed_files"]) == sorted(REPO)
    assert result["written"] == 5 and result["deleted"] == 0 and result["files_indexed"] == 3
    assert result["stats"] == {"written": 5, "deleted": 0, "files_indexed": 3}
    assert stored(store) == expected(REPO)


def test_rerun_writes_nothing() -> None:
    store = InMemoryDocumentStore()
    sync(store, REPO)
    again = sync(store, REPO)
    assert again["changed"] == [] and again["removed_files"] == []
    assert sorted(again["unchanged_files"]) == sorted(REPO)
    assert again["written"] == 0 and again["deleted"] == 0 and again["files_indexed"] == 0


def test_changed_file_is_the_only_one_rewritten() -> None:
    store = InMemoryDocumentStore()
    sync(store, REPO)
    untouched = {d.id for d in store.filter_documents() if d.meta["file_path"] != "pay/retry.py"}
    edited = {**REPO, "pay/retry.py": [("withStripeBackoff", "def withStripeBackoff(fn, tries=5):\n    ...")]}
    result = sync(store, edited)
    assert result["changed_files"] == ["pay/retry.py"]
    assert result["written"] == 1 and result["deleted"] == 2 and result["files_indexed"] == 1
    assert stored(store) == expected(edited)
    assert untouched <= {d.id for d in store.filter_documents()}


def test_removed_file_is_deleted() -> None:
    store = InMemoryDocumentStore()
    sync(store, REPO)
    smaller = {k: v for k, v in REPO.items() if k != "auth/gate.py"}
    result = sync(store, smaller)
    assert result["removed_files"] == ["auth/gate.py"] and result["changed"] == []
    assert result["deleted"] == 2 and result["written"] == 0
    assert stored(store) == expected(smaller)


def test_file_that_now_yields_no_chunk_loses_its_old_ones() -> None:
    store = InMemoryDocumentStore()
    sync(store, REPO)
    emptied = {**REPO, "pay/client.py": []}
    planner = IndexSyncPlanner(document_store=store)
    plan = planner.run(documents=file_documents(emptied))
    assert plan["changed_files"] == ["pay/client.py"]
    writer = IndexSyncWriter(document_store=store, progress_bar=False)
    result = writer.run(documents=[], removed_files=plan["removed_files"], changed_files=plan["changed_files"])
    assert result["deleted"] == 1
    assert "pay/client.py" not in stored(store)


def test_interrupted_write_is_completed_by_a_rerun() -> None:
    store = InMemoryDocumentStore()
    # A first sync that died after writing half of auth/gate.py's chunks (and nothing else).
    gate = split(file_documents({"auth/gate.py": REPO["auth/gate.py"]}), REPO)
    store.write_documents(gate[:1], policy=DuplicatePolicy.OVERWRITE)
    result = sync(store, REPO)
    assert "auth/gate.py" in result["changed_files"]
    assert stored(store) == expected(REPO)
    assert sync(store, REPO)["changed"] == []


def test_interruption_between_write_and_delete_is_completed_by_a_rerun() -> None:
    store = InMemoryDocumentStore()
    sync(store, REPO)
    edited = {**REPO, "pay/retry.py": [("withStripeBackoff", "def withStripeBackoff(fn, tries=5):\n    ...")]}
    # The new chunk was written, then the process died before the old chunks were deleted.
    plan = IndexSyncPlanner(document_store=store).run(documents=file_documents(edited))
    store.write_documents(split(plan["changed"], edited), policy=DuplicatePolicy.OVERWRITE)
    assert len(stored(store)["pay/retry.py"]) == 3
    result = sync(store, edited)
    assert result["changed_files"] == ["pay/retry.py"] and result["deleted"] == 2
    assert stored(store) == expected(edited)


def test_interrupted_removal_is_completed_by_a_rerun() -> None:
    store = InMemoryDocumentStore()
    sync(store, REPO)
    smaller = {k: v for k, v in REPO.items() if k != "auth/gate.py"}
    # The first of the file's two chunks was deleted, then the process died.
    first = next(d for d in store.filter_documents() if d.meta["file_path"] == "auth/gate.py")
    store.delete_documents([first.id])
    assert sync(store, smaller)["removed_files"] == ["auth/gate.py"]
    assert stored(store) == expected(smaller)


def test_chunks_cut_by_an_older_chunker_are_resplit() -> None:
    """An index built before a chunking change (no or another `chunker`) re-splits those files on the next sync."""
    store = InMemoryDocumentStore()
    sync(store, REPO)
    older = [
        Document(id=d.id, content=d.content, meta={k: v for k, v in d.meta.items() if k != "chunker"})
        for d in store.filter_documents()
        if d.meta["file_path"] == "pay/retry.py"
    ]
    store.write_documents(older, policy=DuplicatePolicy.OVERWRITE)
    again = sync(store, REPO)
    assert again["changed_files"] == ["pay/retry.py"]
    assert all(d.meta.get("chunker") == CHUNKER_VERSION for d in store.filter_documents())
    assert sync(store, REPO)["changed_files"] == []


def test_surplus_chunks_make_a_file_out_of_sync() -> None:
    state = FileState()
    for _ in range(3):
        state.add("h", 2)
    assert not state.in_sync_with("h")
    state = FileState()
    state.add("h", 2)
    state.add("old", 2)
    assert not state.in_sync_with("h")
    state = FileState()
    state.add("h", 2, chunker=CHUNKER_VERSION)
    state.add("h", 2, chunker=CHUNKER_VERSION)
    assert state.in_sync_with("h") and not state.in_sync_with("other")
    state.add("h", 2)  # a chunk of an older chunker (and a surplus one)
    assert not state.in_sync_with("h")


def test_read_file_states_groups_by_path() -> None:
    store = InMemoryDocumentStore()
    sync(store, REPO)
    states = read_file_states(store)
    assert sorted(states) == sorted(REPO)
    assert states["auth/gate.py"].stored == 2 and states["auth/gate.py"].declared_counts == {2}


def test_planner_rejects_files_without_hash() -> None:
    planner = IndexSyncPlanner(document_store=InMemoryDocumentStore())
    with pytest.raises(ValueError, match="file_sha256"):
        planner.run(documents=[Document(content="x", meta={"file_path": "a.py"})])
    with pytest.raises(ValueError, match="file_path"):
        planner.run(documents=[Document(content="x", meta={"file_sha256": "h"})])


def test_writer_rejects_chunks_without_path_and_bad_batch_size() -> None:
    with pytest.raises(ValueError, match="batch_size"):
        IndexSyncWriter(document_store=InMemoryDocumentStore(), batch_size=0)
    with pytest.raises(ValueError, match="file_path"):
        IndexSyncWriter(document_store=InMemoryDocumentStore()).run(documents=[Document(content="x")])


def test_async_run_matches_sync_run() -> None:
    store = InMemoryDocumentStore()
    planner = IndexSyncPlanner(document_store=store)
    writer = IndexSyncWriter(document_store=store, batch_size=2, progress_bar=False)

    async def go(repo: dict[str, list[tuple[str, str]]]) -> dict[str, Any]:
        plan = await planner.run_async(documents=file_documents(repo))
        written = await writer.run_async(
            documents=split(plan["changed"], repo),
            removed_files=plan["removed_files"],
            changed_files=plan["changed_files"],
        )
        return {**plan, **written}

    first = asyncio.run(go(REPO))
    assert first["written"] == 5
    edited = {k: v for k, v in REPO.items() if k != "auth/gate.py"}
    edited["pay/client.py"] = [("StripeClient", "class StripeClient:\n    timeout = 3")]
    second = asyncio.run(go(edited))
    assert second["removed_files"] == ["auth/gate.py"] and second["changed_files"] == ["pay/client.py"]
    assert second["written"] == 1 and second["deleted"] == 3
    assert stored(store) == expected(edited)


def test_round_trip_serialisation() -> None:
    store = InMemoryDocumentStore(bm25_algorithm="BM25Plus")
    for component_ in (
        IndexSyncPlanner(document_store=store),
        IndexSyncWriter(document_store=store, batch_size=7, progress_bar=False),
    ):
        data = component_.to_dict()
        assert data["init_parameters"]["document_store"] == store.to_dict()
        again = type(component_).from_dict(data)
        assert again.to_dict() == data
        assert isinstance(again.document_store, InMemoryDocumentStore)
    writer = IndexSyncWriter.from_dict(IndexSyncWriter(document_store=store, batch_size=7).to_dict())
    assert writer.batch_size == 7
    assert isinstance(writer.document_store, InMemoryDocumentStore)
    assert writer.document_store.bm25_algorithm == "BM25Plus"


def test_components_run_in_a_pipeline_and_survive_yaml() -> None:
    store = InMemoryDocumentStore()
    pipeline = Pipeline()
    pipeline.add_component("planner", IndexSyncPlanner(document_store=store))
    pipeline.add_component("writer", IndexSyncWriter(document_store=store, progress_bar=False))
    pipeline.connect("planner.removed_files", "writer.removed_files")
    pipeline.connect("planner.changed_files", "writer.changed_files")
    loaded = Pipeline.loads(pipeline.dumps())
    assert loaded.to_dict() == pipeline.to_dict()
    files = file_documents(REPO)
    result = pipeline.run({"planner": {"documents": files}, "writer": {"documents": split(files, REPO)}})
    assert result["writer"]["written"] == 5
