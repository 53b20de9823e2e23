# long: incremental sync: change detection, batched writes, recovery from an interruption
"""Incremental index sync over any Haystack DocumentStore: write only what changed, and survive interruption.

Two components sit around the splitter and the embedder in an indexing pipeline:

    file Documents -> IndexSyncPlanner --changed--> CodeSplitter -> embedder -> IndexSyncWriter
                                    \\--removed_files / changed_files ---------------^

`IndexSyncPlanner` compares each file's `file_sha256` with what the store holds and passes on only the
files that must be (re)indexed; `IndexSyncWriter` writes their chunks and removes what is stale. They
use only the DocumentStore protocol (`filter_documents`, `write_documents`, `delete_documents`,
`count_documents`, plus `delete_by_filter` where the store has it), so the embedded store and
Elasticsearch behave the same. For Elasticsearch the planner reads three small fields per chunk instead
of whole documents (`elasticsearch/files.py`).

Why a rerun always completes an interrupted sync (the invariant both components keep):

* A file counts as in sync only when *every* stored chunk of it carries the file's current `file_sha256`,
  they all declare the same `file_chunk_count`, and exactly that many are stored (or, for a blank file, which
  yields no chunk, when none is stored). Anything else (no
  chunks, some chunks, old and new chunks side by side, duplicates) makes the planner pass it on again.
* The writer first writes all new chunks of a file (DuplicatePolicy.OVERWRITE, so rewriting is
  idempotent), and only then deletes that file's chunks whose ids are not among the ones just written.
  Stopped during the writes, the store holds fewer than `file_chunk_count` new chunks, or new chunks
  next to old ones (old hash, or a surplus): not in sync. Stopped before or during the deletes, the
  surplus old chunks are still there: not in sync. So the rerun redoes the file, and the end state is the
  same as an uninterrupted run.
* A removed file's chunks are deleted by `file_path`; until that delete has happened the file is still in
  the store and still missing from the input, so the rerun plans its removal again.
* Nothing is deleted before its replacement exists, so a search running during a sync finds the old or the
  new version of a file, never neither.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Any

from haystack import Document, component
from haystack.document_stores.in_memory import InMemoryDocumentStore
from haystack.document_stores.types import DocumentStore, DuplicatePolicy
from tqdm import tqdm

from ..progress import progress_bar
from ..serialization import SerializedByInitParameters
from .file_states import FileState as FileState
from .file_states import in_repo_scope as in_repo_scope
from .file_states import repo_scope_filter as repo_scope_filter

logger = logging.getLogger(__name__)

__all__ = [
    "FileState",
    "IndexSyncPlanner",
    "IndexSyncWriter",
    "in_repo_scope",
    "read_file_states",
    "read_file_states_async",
    "repo_scope_filter",
]

# Bounds of one delete-by-filter request: files in its `in` list and chunk ids kept.
_DELETE_BATCH_FILES = 500
_DELETE_BATCH_IDS = 10_000


def _file_path(document: Document, what: str) -> str:
    path = document.meta.get("file_path")
    if not isinstance(path, str) or not path:
        raise ValueError(f"{what} Document {document.id} has no meta['file_path']")
    return path


def _yields_no_chunks(document: Document) -> bool:
    """A file the splitter turns into no chunk at all: no text, or only whitespace."""
    return document.content is None or not document.content.strip()


def _states_from_documents(documents: Iterable[Document], repo: str | None = None) -> dict[str, FileState]:
    states: dict[str, FileState] = {}
    for document in documents:
        path = document.meta.get("file_path")
        stored = document.meta.get("repo")
        if isinstance(path, str) and path and in_repo_scope(stored, repo):
            states.setdefault(path, FileState()).add(
                document.meta.get("file_sha256"),
                document.meta.get("file_chunk_count"),
                stored,
                document.meta.get("chunker"),
            )
    return states


def _is_elasticsearch(store: Any) -> bool:
    # An Elasticsearch store's class is imported already: a store whose classes come from elsewhere is not one, and
    # the optional extra is not imported for it (0.6 s of `code-alias index` on the embedded default).
    package = "haystack_integrations.document_stores.elasticsearch"
    if not any(kind.__module__.startswith(package) for kind in type(store).__mro__):
        return False
    try:
        from haystack_integrations.document_stores.elasticsearch import ElasticsearchDocumentStore
    except ImportError:
        return False
    return isinstance(store, ElasticsearchDocumentStore)


def read_file_states(store: DocumentStore, repo: str | None = None) -> dict[str, FileState]:
    """
    file_path -> `FileState` for everything the store holds (of repository `repo`, when named).

    Uses the store's own `read_file_states()` when it has one (and takes `repo` when one is named), a narrow
    paged read for Elasticsearch, and `filter_documents()` otherwise.

    :param store: Any DocumentStore.
    :param repo: Only the chunks of this repository and untagged ones (`in_repo_scope`); None = all.
    """
    own = getattr(store, "read_file_states", None)
    if callable(own) and repo is None:
        return dict(own())
    if callable(own) and _accepts(own, "repo"):
        return dict(own(repo=repo))
    if _is_elasticsearch(store):
        from ..elasticsearch.files import read_file_states as read_elasticsearch  # the optional elasticsearch extra

        return read_elasticsearch(store, repo=repo)  # type: ignore[arg-type]
    return _states_from_documents(store.filter_documents(), repo)


async def read_file_states_async(store: DocumentStore, repo: str | None = None) -> dict[str, FileState]:
    """Asynchronous `read_file_states`."""
    own = getattr(store, "read_file_states_async", None)
    if callable(own) and repo is None:
        return dict(await own())
    if callable(own) and _accepts(own, "repo"):
        return dict(await own(repo=repo))
    if _is_elasticsearch(store):
        from ..elasticsearch.files import read_file_states_async as read_elasticsearch_async  # optional extra

        return await read_elasticsearch_async(store, repo=repo)  # type: ignore[arg-type]
    documents = await _call_async(store, "filter_documents")
    return _states_from_documents(documents, repo)


async def _call_async(store: Any, name: str, *args: Any, **kwargs: Any) -> Any:
    """`store.<name>_async(...)` when the store has it, else `store.<name>(...)` in a worker thread."""
    method = getattr(store, f"{name}_async", None)
    if callable(method):
        return await method(*args, **kwargs)
    return await asyncio.to_thread(getattr(store, name), *args, **kwargs)


def _accepts(method: Any, parameter: str) -> bool:
    try:
        return parameter in inspect.signature(method).parameters
    except (TypeError, ValueError):
        return False


@component
class IndexSyncPlanner(SerializedByInitParameters):
    """
    Decides which source files an index sync must (re)index, which it must remove, and which it can skip.

    A file is passed on (`changed`) when the store holds no chunks of it, chunks with another `file_sha256`,
    or an incomplete or surplus set of chunks (so a sync that was interrupted is completed by the next one).

    ### Usage example

    ```python
    from haystack import Document
    from haystack.document_stores.in_memory import InMemoryDocumentStore
    from haystack_integrations.components.code_alias.indexing.sync import IndexSyncPlanner

    planner = IndexSyncPlanner(document_store=InMemoryDocumentStore())
    files = [Document(content="def f(): ...", meta={"file_path": "pkg/a.py", "file_sha256": "ab12..."})]
    plan = planner.run(documents=files)
    print(plan["changed_files"], plan["removed_files"], plan["unchanged_files"])
    ```

    :param document_store: The store the index lives in (any DocumentStore).
    """

    def __init__(self, *, document_store: DocumentStore) -> None:
        self.document_store = document_store

    def _plan(
        self,
        documents: list[Document],
        states: dict[str, FileState],
        repo: str | None = None,
        paths: list[str] | None = None,
    ) -> dict[str, Any]:
        if paths is not None:  # the documents stand for these paths only; the rest of the store is left alone
            scope = set(paths)
            outside = [_file_path(d, "file") for d in documents if _file_path(d, "file") not in scope]
            if outside:
                raise ValueError(f"file Document for {outside[0]} is not among the paths planned")
            states = {path: state for path, state in states.items() if path in scope}
        changed: list[Document] = []
        unchanged: list[str] = []
        seen: set[str] = set()
        for document in documents:
            path = _file_path(document, "file")
            if path in seen:
                logger.warning("IndexSyncPlanner: %s appears twice in the input; the first one is used", path)
                continue
            seen.add(path)
            sha256 = document.meta.get("file_sha256")
            if not isinstance(sha256, str) or not sha256:
                raise ValueError(f"file Document for {path} has no meta['file_sha256'] (use CodeFileReader)")
            state = states.get(path)
            in_sync = state is not None and state.in_sync_with(sha256, repo)
            if in_sync or (state is None and _yields_no_chunks(document)):
                # A blank file (an empty `__init__.py`) has no chunks to store: with none stored it is in sync.
                unchanged.append(path)
            else:
                changed.append(document)
        removed = sorted(set(states) - seen)
        return {
            "changed": changed,
            "changed_files": [_file_path(d, "file") for d in changed],
            "removed_files": removed,
            "unchanged_files": unchanged,
        }

    @component.output_types(
        changed=list[Document], changed_files=list[str], removed_files=list[str], unchanged_files=list[str]
    )
    def run(self, documents: list[Document], repo: str | None = None, paths: list[str] | None = None) -> dict[str, Any]:
        """
        Plan a sync.

        :param documents: One Document per source file, with meta `file_path` and `file_sha256`.
        :param repo: The repository synced, in an index of several: only its chunks (and untagged ones) are
            compared and can be planned for removal; the other repositories' chunks are left alone.
        :param paths: Plan only these files (a push named them): `documents` hold those of them that exist, a
            listed path without a Document is planned for removal, and every other file of the store is left as
            it is. None (default): `documents` are the whole tree.
        :returns:
            - `changed`: the file Documents to (re)index, in input order;
            - `changed_files`: their paths (give them to `IndexSyncWriter.changed_files`, so a file that now
              yields no chunks still loses its old ones);
            - `removed_files`: paths the store holds that are no longer in the input;
            - `unchanged_files`: paths already in sync.
        :raises ValueError: A file Document without `file_path` or `file_sha256`, or (with `paths`) one whose
            path is not listed.
        """
        return self._plan(documents, self._states(repo, paths), repo, paths)

    def _states(self, repo: str | None, paths: list[str] | None) -> dict[str, FileState]:
        store = self.document_store
        if paths is not None and isinstance(store, InMemoryDocumentStore):
            # A few files out of thousands: one pass over the stored chunks, no copy of each (filter_documents).
            scope = set(paths)
            return _states_from_documents((d for d in store.storage.values() if d.meta.get("file_path") in scope), repo)
        return read_file_states(store, repo)

    @component.output_types(
        changed=list[Document], changed_files=list[str], removed_files=list[str], unchanged_files=list[str]
    )
    async def run_async(
        self, documents: list[Document], repo: str | None = None, paths: list[str] | None = None
    ) -> dict[str, Any]:
        """Asynchronous `run` (same input and outputs)."""
        if paths is not None and isinstance(self.document_store, InMemoryDocumentStore):
            return self._plan(documents, self._states(repo, paths), repo, paths)
        return self._plan(documents, await read_file_states_async(self.document_store, repo), repo, paths)


@component
class IndexSyncWriter(SerializedByInitParameters):
    """
    Writes the chunks of changed files and removes stale ones: old chunks of changed files and every chunk of
    removed files.

    New chunks are written first (DuplicatePolicy.OVERWRITE, in batches, with a progress bar); then, per
    changed file, the stored chunks whose ids were not just written are deleted; then removed files' chunks.
    See the module docstring for why an interruption at any point is completed by the next sync.

    ### Usage example

    ```python
    from haystack import Document
    from haystack.document_stores.in_memory import InMemoryDocumentStore
    from haystack_integrations.components.code_alias.indexing.sync import IndexSyncWriter

    store = InMemoryDocumentStore()
    writer = IndexSyncWriter(document_store=store, batch_size=256)
    chunk = Document(
        content="def f(): ...",
        meta={"file_path": "pkg/a.py", "file_sha256": "ab12...", "file_chunk_count": 1, "symbol": "f"},
    )
    print(writer.run(documents=[chunk], removed_files=["pkg/old.py"]))
    # {'written': 1, 'deleted': 0, 'files_indexed': 1, 'stats': {...}}
    ```

    :param document_store: The store the index lives in (any DocumentStore).
    :param batch_size: Chunks per write request.
    :param progress_bar: Show a tqdm progress bar while writing.
    """

    def __init__(self, *, document_store: DocumentStore, batch_size: int = 500, progress_bar: bool = True) -> None:
        if batch_size <= 0:
            raise ValueError(f"batch_size must be > 0, got {batch_size}")
        self.document_store = document_store
        self.batch_size = batch_size
        self.progress_bar = progress_bar

    # ---- planning the requests -----------------------------------------------------------------------------
    @staticmethod
    def _group(documents: list[Document]) -> dict[str, list[Document]]:
        groups: dict[str, list[Document]] = defaultdict(list)
        for document in documents:
            groups[_file_path(document, "chunk")].append(document)
        for path, chunks in groups.items():
            declared = {c.meta.get("file_chunk_count") for c in chunks}
            if declared != {len(chunks)}:
                # The planner will see this file as incomplete and pass it on again next time.
                logger.warning(
                    "IndexSyncWriter: %s has %d chunks but they declare file_chunk_count %s",
                    path,
                    len(chunks),
                    declared,
                )
        return dict(groups)

    def _batches(self, groups: dict[str, list[Document]]) -> list[list[Document]]:
        ordered = [chunk for chunks in groups.values() for chunk in chunks]
        return [ordered[i : i + self.batch_size] for i in range(0, len(ordered), self.batch_size)]

    @staticmethod
    def _stale_filters(
        groups: dict[str, list[Document]], changed_files: list[str], repo: str | None = None
    ) -> list[dict[str, Any]]:
        """Filters matching stored chunks of changed files whose ids were not just written (batched)."""
        keep: dict[str, list[str]] = {path: [c.id for c in chunks] for path, chunks in groups.items()}
        for path in changed_files:
            keep.setdefault(path, [])
        filters: list[dict[str, Any]] = []
        paths: list[str] = []
        ids: list[str] = []

        def flush() -> None:
            if not paths:
                return
            conditions: list[dict[str, Any]] = [{"field": "meta.file_path", "operator": "in", "value": list(paths)}]
            if ids:
                conditions.append(
                    {"operator": "NOT", "conditions": [{"field": "id", "operator": "in", "value": list(ids)}]}
                )
            if repo is not None:
                conditions.append(repo_scope_filter(repo))
            filters.append({"operator": "AND", "conditions": conditions})
            paths.clear()
            ids.clear()

        for path in sorted(keep):
            if paths and (len(paths) >= _DELETE_BATCH_FILES or len(ids) + len(keep[path]) > _DELETE_BATCH_IDS):
                flush()
            paths.append(path)
            ids.extend(keep[path])
        flush()
        return filters

    @staticmethod
    def _removed_filters(removed_files: list[str], repo: str | None = None) -> list[dict[str, Any]]:
        paths = sorted(set(removed_files))
        filters: list[dict[str, Any]] = [
            {"field": "meta.file_path", "operator": "in", "value": paths[i : i + _DELETE_BATCH_FILES]}
            for i in range(0, len(paths), _DELETE_BATCH_FILES)
        ]
        if repo is None:
            return filters
        return [{"operator": "AND", "conditions": [f, repo_scope_filter(repo)]} for f in filters]

    def _write_kwargs(self, last: bool) -> dict[str, Any]:
        # Elasticsearch: skip the per-batch refresh wait except for the last batch (the deletes refresh too).
        if _accepts(self.document_store.write_documents, "refresh"):
            return {"refresh": "wait_for" if last else False}
        return {}

    def _progress(self, total: int) -> tqdm:
        return progress_bar(total=total, desc="Indexing chunks", unit="chunk", enabled=self.progress_bar and total > 0)

    # ---- deleting ------------------------------------------------------------------------------------------
    def _delete(self, filters: dict[str, Any]) -> int:
        store: Any = self.document_store
        predicate = _set_predicate(filters) if isinstance(store, InMemoryDocumentStore) else None
        if predicate is not None:
            # Haystack's generic in-memory filter compares every document with every listed value (and tries to
            # parse each as a date): quadratic, minutes on a 10k-chunk index. Set lookups do it in one pass.
            ids = [d.id for d in store.storage.values() if predicate(d)]
            if ids:
                store.delete_documents(ids)
            return len(ids)
        delete_by_filter = getattr(store, "delete_by_filter", None)
        if callable(delete_by_filter):
            if _accepts(delete_by_filter, "refresh"):
                return int(delete_by_filter(filters, refresh=True))
            return int(delete_by_filter(filters))
        ids = [d.id for d in store.filter_documents(filters=filters)]
        if ids:
            store.delete_documents(ids)
        return len(ids)

    async def _delete_async(self, filters: dict[str, Any]) -> int:
        store: Any = self.document_store
        if callable(getattr(store, "delete_by_filter_async", None)):
            if _accepts(store.delete_by_filter_async, "refresh"):
                return int(await store.delete_by_filter_async(filters, refresh=True))
            return int(await store.delete_by_filter_async(filters))
        if callable(getattr(store, "delete_by_filter", None)):
            return await asyncio.to_thread(self._delete, filters)
        documents = await _call_async(store, "filter_documents", filters=filters)
        ids = [d.id for d in documents]
        if ids:
            await _call_async(store, "delete_documents", ids)
        return len(ids)

    @staticmethod
    def _result(written: int, deleted: int, files_indexed: int) -> dict[str, Any]:
        stats = {"written": written, "deleted": deleted, "files_indexed": files_indexed}
        return {**stats, "stats": dict(stats)}

    # ---- running -------------------------------------------------------------------------------------------
    @component.output_types(written=int, deleted=int, files_indexed=int, stats=dict[str, int])
    def run(
        self,
        documents: list[Document],
        removed_files: list[str] | None = None,
        changed_files: list[str] | None = None,
        repo: str | None = None,
    ) -> dict[str, Any]:
        """
        Apply a sync plan.

        :param documents: The chunks of every changed file (meta `file_path`, `file_sha256`, `file_chunk_count`).
        :param removed_files: Paths whose chunks must go (`IndexSyncPlanner.removed_files`).
        :param changed_files: Paths that were (re)indexed (`IndexSyncPlanner.changed_files`); optional, the
            chunks' own paths always count, this adds files that now yield no chunk at all.
        :param repo: The repository synced, in an index of several: deletes touch only its chunks (and
            untagged ones), never a same-named file of another repository.
        :returns: `written` chunks, `deleted` chunks, `files_indexed` (files whose chunks were written), and
            the same three as `stats`.
        :raises ValueError: A chunk without `file_path`.
        """
        groups = self._group(documents)
        store = self.document_store
        written = 0
        batches = self._batches(groups)
        with self._progress(len(documents)) as progress:
            for number, batch in enumerate(batches, start=1):
                count = store.write_documents(
                    batch, policy=DuplicatePolicy.OVERWRITE, **self._write_kwargs(number == len(batches))
                )
                written += count if isinstance(count, int) else len(batch)
                progress.update(len(batch))
        deleted = 0
        for filters in self._stale_filters(groups, list(changed_files or []), repo):
            deleted += self._delete(filters)
        for filters in self._removed_filters(list(removed_files or []), repo):
            deleted += self._delete(filters)
        return self._result(written, deleted, len(groups))

    @component.output_types(written=int, deleted=int, files_indexed=int, stats=dict[str, int])
    async def run_async(
        self,
        documents: list[Document],
        removed_files: list[str] | None = None,
        changed_files: list[str] | None = None,
        repo: str | None = None,
    ) -> dict[str, Any]:
        """Asynchronous `run` (same inputs and outputs)."""
        groups = self._group(documents)
        written = 0
        batches = self._batches(groups)
        with self._progress(len(documents)) as progress:
            for number, batch in enumerate(batches, start=1):
                count = await _call_async(
                    self.document_store,
                    "write_documents",
                    batch,
                    policy=DuplicatePolicy.OVERWRITE,
                    **self._write_kwargs(number == len(batches)),
                )
                written += count if isinstance(count, int) else len(batch)
                progress.update(len(batch))
        deleted = 0
        for filters in self._stale_filters(groups, list(changed_files or []), repo):
            deleted += await self._delete_async(filters)
        for filters in self._removed_filters(list(removed_files or []), repo):
            deleted += await self._delete_async(filters)
        return self._result(written, deleted, len(groups))


def _set_predicate(filters: dict[str, Any]) -> Callable[[Document], bool] | None:
    """
    A fast predicate for the filter shapes this module builds (AND / NOT of `in` and `==` on `id` and
    `meta.*`), or None for anything else (then the store's own filtering is used).
    """
    operator = filters.get("operator")
    if operator in ("AND", "OR", "NOT"):
        parts = [_set_predicate(c) for c in filters.get("conditions", [])]
        if not parts or any(p is None for p in parts):
            return None
        checks = [p for p in parts if p is not None]
        if operator == "AND":
            return lambda d: all(check(d) for check in checks)
        if operator == "OR":
            return lambda d: any(check(d) for check in checks)
        return lambda d: not all(check(d) for check in checks)
    field_name = filters.get("field")
    if operator not in ("in", "==") or not isinstance(field_name, str):
        return None
    values = filters.get("value")
    wanted = set(values) if operator == "in" and isinstance(values, list) else {values}
    if not all(isinstance(v, str | int | float | bool) or v is None for v in wanted):
        return None
    if field_name == "id":
        return lambda d: d.id in wanted
    if field_name.startswith("meta."):
        key = field_name[len("meta.") :]
        return lambda d: d.meta.get(key) in wanted
    return None
