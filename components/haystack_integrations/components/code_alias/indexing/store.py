"""The embedded default document store: Haystack's InMemoryDocumentStore, persisted to one file."""

from __future__ import annotations

import dataclasses
import logging
import os
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from haystack import Document, component
from haystack.document_stores.in_memory import InMemoryDocumentStore
from haystack.document_stores.types import DuplicatePolicy

from ..core.model import AliasDictionary
from ..paths import resolve_index_dir
from ..serialization import SerializedByInitParameters
from . import index_delta
from .code_index import CodeIndex, DocumentSet, Generation, current_stamp
from .documents_file import IndexNotFoundError as IndexNotFoundError
from .documents_file import documents_file_bytes
from .documents_file import read_documents as read_documents
from .documents_file import write_documents_file as write_documents_file
from .index_files import (
    Artifact,
    IndexManifest,
    artifact_path,
    commit,
    current_manifest,
    new_build_id,
    stage,
    stage_delta,
    stage_dictionary,
)
from .store_cache import Prepared, StoreCaches, adopt_all

logger = logging.getLogger(__name__)


class CodeIndexDocumentStore(SerializedByInitParameters, InMemoryDocumentStore):
    """
    An `InMemoryDocumentStore` that loads from and saves to an index folder.

    Documents and their embeddings live in one `.npz` file per build, which the folder's manifest names together
    with that build's dictionary (`index_files`), so a reader never sees half an index or a mix of two builds.
    The chunks are held by the folder's `CodeIndex`: every store of one folder in a process reads the same ones
    (a writer's store its run's private copy, `writer`).

    ### Usage example

    ```python
    from haystack_integrations.components.code_alias import CodeIndexDocumentStore

    store = CodeIndexDocumentStore(index_dir=".code-alias")   # loads what `code-alias index` wrote
    print(store.count_documents())
    store.persist()                                           # after writing documents
    ```

    :param index_dir: The index folder; None means `$CODE_ALIAS_INDEX_DIR` or `./.code-alias`.
    :param embedding_similarity_function: "cosine" (default, right for MiniLM) or "dot_product".
    :param return_embedding: Return the chunks' vectors with retrieved chunks.
    :param writer: A writer's name (an indexing run, a vector fill): the store works on that writer's private
        copy of the chunks, loaded from disk, which queries of the same process do not see until it is saved and
        handed over (`serve_documents`), and which is lost with the run if it fails. Not serialised: it is
        bound when a run loads its pipeline.
    """

    _not_serialized = frozenset({"writer"})  # bound when a run loads its pipeline (see `writer`)

    def __init__(
        self,
        index_dir: str | None = None,
        embedding_similarity_function: str = "cosine",
        return_embedding: bool = False,
        *,
        writer: str | None = None,
    ) -> None:
        self.index_dir = index_dir
        self.writer = writer
        self._folder = resolve_index_dir(index_dir)
        self.code_index = CodeIndex.open(self._folder)
        self._own: DocumentSet = self.code_index.documents(writer)
        super().__init__(
            index=self._documents.name,
            shared=False,  # the chunks live on the folder's `CodeIndex` (the properties below), not in Haystack's
            embedding_similarity_function=embedding_similarity_function,  # type: ignore[arg-type]
            return_embedding=return_embedding,
        )
        self._load_if_changed()

    @property
    def _documents(self) -> DocumentSet:
        """
        The chunks this store reads: a writer's private copy; for the served chunks, the generation the current
        question pinned (`CodeIndex.pinned`), else what the folder serves now.
        """
        if self.writer is None:
            generation = self.code_index.pinned_generation()
            if generation is not None and generation.documents is not None:
                return generation.documents
        return self._own

    @property
    def derived(self) -> StoreCaches:
        """Where the values derived from the chunks live (`store_cache.caches_of`): the folder's `CodeIndex`."""
        return self.code_index.derived

    # `InMemoryDocumentStore` reads and writes its chunks and BM25 statistics through these four properties.
    @property
    def storage(self) -> dict[str, Document]:
        """The chunks, id -> Document (shared by every store of this folder and writer)."""
        return self._documents.storage

    @property
    def _bm25_attr(self) -> dict[str, Any]:
        return self._documents.bm25_stats

    @property
    def _avg_doc_len(self) -> float:
        return self._documents.average_length

    @_avg_doc_len.setter
    def _avg_doc_len(self, value: float) -> None:
        self._documents.average_length = value

    @property
    def _freq_vocab_for_idf(self) -> Counter[str]:
        return self._documents.vocabulary

    @property
    def documents_path(self) -> Path:
        """The current build's documents file (through the index manifest)."""
        return artifact_path(self._folder, "documents")

    @property
    def folder(self) -> Path:
        """The index folder."""
        return self._folder

    def _load_if_changed(self) -> None:
        if self.writer is None and self.code_index.pinned_generation() is not None:
            return  # a question reads the generation it pinned: nothing is reloaded under it (or under others)
        self.code_index.load(self._own, keep_lines=self.writer is not None)

    @property
    def loaded_vectors(self) -> dict[str, tuple[Document, np.ndarray]]:
        """Each loaded chunk's vector row, as read from the index files (`DocumentSet.vectors`)."""
        return self._documents.vectors

    def _ensure_bm25_statistics(self) -> None:
        """Haystack's BM25 statistics of the loaded documents, computed the first time they are needed."""
        documents = self._documents
        with self.code_index.lock:
            if not documents.stats_pending:
                return
            staging = InMemoryDocumentStore(shared=False)  # computes the statistics; its chunks are dropped
            staging.write_documents(list(documents.storage.values()))
            documents.bm25_stats = staging._bm25_attr
            documents.average_length = staging._avg_doc_len
            documents.vocabulary = staging._freq_vocab_for_idf
            documents.stats_pending = False

    def bm25_retrieval(
        self, query: str, filters: dict[str, Any] | None = None, top_k: int = 10, scale_score: bool = False
    ) -> list[Document]:
        """Haystack's in-memory BM25 (see `InMemoryDocumentStore.bm25_retrieval`); our pipelines use `bm25.py`."""
        self._ensure_bm25_statistics()
        return super().bm25_retrieval(query, filters=filters, top_k=top_k, scale_score=scale_score)

    @property
    def generation(self) -> Generation:
        """Changes whenever this index's documents do (a write, a delete, a reload); shared by its instances."""
        return self._documents.generation

    def _changed(self) -> None:
        self._documents.changed()

    def _before_write(self) -> None:
        """
        A write through a store of the served chunks (a pipeline that saves into the folder it serves) works on a
        new dict: questions that pinned the chunks before it (`IndexGeneration`) keep reading theirs unchanged.
        """
        if self.writer is None:
            with self.code_index.lock:
                self._own.storage = dict(self._own.storage)

    def write_documents(self, documents: list[Document], policy: DuplicatePolicy = DuplicatePolicy.NONE) -> int:
        """Write chunks (see `InMemoryDocumentStore.write_documents`)."""
        self._before_write()
        try:
            return super().write_documents(documents, policy)
        finally:
            self._changed()

    def delete_documents(self, document_ids: list[str]) -> None:
        """Delete chunks by id."""
        self._before_write()
        try:
            super().delete_documents(document_ids)
        finally:
            self._changed()

    def delete_all_documents(self) -> None:
        """Delete every chunk (in memory; the saved file changes on `persist`)."""
        with self.code_index.lock:
            self._documents.set_chunks({}, stats_pending=False)

    def delete_by_filter(self, filters: dict[str, Any]) -> int:
        """Delete the chunks that match `filters`."""
        self._before_write()
        try:
            return super().delete_by_filter(filters)
        finally:
            self._changed()

    def update_by_filter(self, filters: dict[str, Any], meta: dict[str, Any]) -> int:
        """Update the meta of the chunks that match `filters`."""
        self._documents.lines = None  # the meta changes in place: the chunks' saved lines no longer match them
        self._before_write()
        try:
            return super().update_by_filter(filters, meta)
        finally:
            self._changed()

    def set_embeddings(self, vectors: dict[str, list[float]]) -> int:
        """
        Give chunks their vectors in place (id -> vector), leaving their text and the BM25 statistics as they are;
        ids the store does not hold are ignored (a refresh replaced those chunks).

        :returns: How many chunks got a vector.
        """
        changed = 0
        self._before_write()
        with self.code_index.lock:
            storage = self.storage
            for document_id, vector in vectors.items():
                document = storage.get(document_id)
                if document is not None:
                    storage[document_id] = dataclasses.replace(document, embedding=list(vector))
                    changed += 1
        if changed:
            self._changed()
        return changed

    def reload(self) -> None:
        """Load the index again if another process rewrote it."""
        self._load_if_changed()

    @property
    def loaded_stamp(self) -> tuple[str, int] | None:
        """Which saved build (files and modification) this index holds, when it holds one it loaded or saved."""
        with self.code_index.lock:
            return self._documents.loaded

    def release(self) -> None:
        """
        Free this index's documents from process memory; the saved file stays and the next use loads it again
        (a process that visits many indexes, a benchmark over many corpora, lets each go after use).
        """
        with self.code_index.lock:
            self._documents.clear()

    def discard(self) -> None:
        """Forget this store's documents entirely (a writer's private copy, once its run is over)."""
        if self.writer is not None:
            self.code_index.discard(self.writer)
        else:
            self.release()

    def persist(self, dictionary: AliasDictionary | None = None, *, compact: bool = False) -> Path:
        """
        Save the documents (and embeddings), and `dictionary` when given, as the folder's new build: each file is
        written under a new name and one manifest replace makes them current together. What did not change since
        the last load or save is not written again.

        When this process knows what the current files hold (it saved or read them) and their chains of deltas
        are short, only what changed is written, as a delta appended to each chain (`index_delta`); otherwise,
        or with `compact`, whole files. Either way the new files are fsynced before the manifest names them, and
        a failure before that replace leaves the previous build current and complete.

        :param dictionary: The alias dictionary of the same build (the indexing pipeline passes it).
        :param compact: Write whole files even where a delta would do (folds the chains of deltas).
        :returns: The documents file of the current build (the base of its chain).
        :raises OSError: A write failed; the message names the file (e.g. a full disk).
        """
        self._folder.mkdir(parents=True, exist_ok=True)
        manifest = current_manifest(self._folder)
        fresh = manifest is not None and not manifest.legacy
        build = new_build_id()
        changes: dict[str, Any] = {}
        held = self._documents
        try:
            if dictionary is not None:
                current = manifest.dictionary if fresh and manifest is not None else None
                before = index_delta.dictionary_on_disk(self._folder, current)
                if current is not None and before is not None and not compact and not index_delta.hard_due(current):
                    extended = index_delta.stage_dictionary_delta(self._folder, before, dictionary, build, current)
                    if extended is not None:
                        changes["dictionary"] = extended
                else:
                    staged = stage_dictionary(self._folder, dictionary, build, None if compact else manifest)
                    if staged is not None:
                        changes["dictionary"] = staged
            with self.code_index.lock:
                generation = held.generation
                unchanged = (
                    not compact
                    and fresh
                    and manifest is not None
                    and manifest.documents is not None
                    and held.saved_generation == generation
                )
                documents = None if unchanged else list(self.storage.values())
            if documents is not None:
                changes.update(self._stage_documents(documents, manifest if fresh else None, build, compact))
            if changes:
                manifest = commit(self._folder, **changes, build=build)
        except BaseException:
            with self.code_index.lock:  # what the lines describe may not be on disk: the next save is whole
                held.lines = None
                held.on_disk = None
            raise
        if manifest is not None and "dictionary" in changes:
            index_delta.remember_dictionary(self._folder, manifest.dictionary, dictionary)
        return self._after_save(manifest, generation, wrote_documents="documents" in changes)

    def _stage_documents(
        self, documents: list[Document], manifest: IndexManifest | None, build: str, compact: bool
    ) -> dict[str, Artifact]:
        """The documents' new artefact: a delta appended to the current chain when possible, else a whole file."""
        current = manifest.documents if manifest is not None else None
        held = self._documents
        lines = held.lines
        if (
            current is not None
            and lines is not None
            and not compact
            and held.on_disk == current.chain()
            and not index_delta.hard_due(current)
        ):
            delta = index_delta.documents_delta(documents, lines)
            if delta is None:
                return {}
            data, updated, embedded = delta
            staged = stage_delta(self._folder, "documents", data, build, count=len(documents), embedded=embedded)
            lines.clear()
            lines.update(updated)  # undone by `persist` (dropping the lines) if the commit fails
            artifact = replace(current, deltas=(*current.deltas, staged), count=len(documents), embedded=embedded)
        else:
            if held.lines is None:
                held.lines = {}
            data = documents_file_bytes(documents, held.lines)
            embedded = sum(1 for d in documents if d.embedding is not None)
            artifact = stage(self._folder, "documents", data, build, count=len(documents), embedded=embedded)
        return {"documents": artifact}

    def _after_save(
        self, manifest: IndexManifest | None, generation: Generation, *, wrote_documents: bool = False
    ) -> Path:
        path = artifact_path(self._folder, "documents", manifest)
        artifact = manifest.documents if manifest is not None and not manifest.legacy else None
        held = self._documents
        if path.is_file():
            with self.code_index.lock:
                held.loaded = (
                    index_delta.chain_stamp(self._folder, artifact)
                    if artifact is not None
                    else (str(path.resolve()), path.stat().st_mtime_ns)
                )
                held.saved_generation = generation
                if wrote_documents and artifact is not None and held.lines is not None:
                    held.on_disk = artifact.chain()
        return path


def serve_documents(store: CodeIndexDocumentStore, prepared: Prepared | None = None) -> bool:
    """
    Hand a writer store's documents, just saved by `persist`, to this process's queries of the same folder, so
    they serve the new build at once instead of reading the file back (and rebuilding what derives from it).

    One step under the folder's lock: a query sees the old build or the new one. Nothing happens when the
    folder's current build is not the one `store` saved (another writer got in between): queries then load it
    themselves.

    :param store: A writer's store (`writer=...`) after its `persist`.
    :param prepared: Values derived from its documents (`CodeIndex.prepare_served`), adopted
        with the swap so the first query after it does not rebuild them.
    :returns: Whether the documents were handed over.
    """
    index = store.code_index
    served = index.served
    with index.lock:
        stamped = current_stamp(store.folder)
        saved = store.generation == store._documents.saved_generation  # nothing written since its save
        if stamped is None or store.loaded_stamp != stamped[0] or store.writer is None or not saved:
            return False
        served.replace(dict(store.storage))
        served.loaded = stamped[0]
        served.manifest = stamped[2]
        served.saved_generation = served.generation
        if prepared:
            adopt_all(prepared, served.generation)
    return True


@contextmanager
def holding_served(folder: Path) -> Iterator[None]:
    """
    For the block (a sync's save and `serve_documents`, a compaction): the queries of this process on the index
    `folder` keep serving what they hold (`CodeIndex.holding`).
    """
    with CodeIndex.open(folder).holding():
        yield


def restamp_serving(store: CodeIndexDocumentStore, before: tuple[str, int] | None) -> bool:
    """
    After `store` (a writer) saved the same documents under new files (a compaction), let this process's queries
    of its folder keep what they hold, when it is what `before` (the writer's stamp before the save) named:
    they take the new stamp instead of reading the files back and rebuilding what derives from them.

    :returns: Whether the queries' index was restamped.
    """
    index = store.code_index
    with index.lock:
        stamped = current_stamp(store.folder)
        if before is None or stamped is None or index.served.loaded != before or store.loaded_stamp != stamped[0]:
            return False
        index.served.loaded = stamped[0]
        index.served.manifest = stamped[2]
    return True


@component
class DocumentStorePersister(SerializedByInitParameters):
    """
    Saves a `CodeIndexDocumentStore` to disk at the end of an indexing pipeline.

    It runs after the writer (its `stats` input is the writer's output), so the file on disk only ever holds
    a finished sync.

    :param document_store: The store to persist.
    """

    def __init__(self, *, document_store: CodeIndexDocumentStore) -> None:
        self.document_store = document_store

    @component.output_types(stats=dict[str, Any], path=str)
    def run(self, stats: dict[str, Any], dictionary: AliasDictionary | None = None) -> dict[str, Any]:
        """
        :param stats: The writer's statistics, passed through.
        :param dictionary: The alias dictionary built in the same run: saved with the documents, and made current
            together with them.
        :returns: `stats` and the `path` of the saved documents.
        """
        path = self.document_store.persist(dictionary=dictionary)
        return {"stats": {**stats, "documents": self.document_store.count_documents()}, "path": os.fspath(path)}
