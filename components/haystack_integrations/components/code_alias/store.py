"""The embedded default document store: Haystack's InMemoryDocumentStore, persisted to one file."""

from __future__ import annotations

import io
import json
import logging
import os
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
from haystack import Document, component, default_from_dict, default_to_dict
from haystack.document_stores.in_memory import InMemoryDocumentStore
from haystack.document_stores.in_memory import document_store as _memory
from haystack.document_stores.types import DuplicatePolicy

from .core.model import atomic_write_bytes
from .paths import DOCUMENTS_FILE, resolve_index_dir

logger = logging.getLogger(__name__)

# Which file (and modification) each shared in-memory index was loaded from, so the several components of
# one pipeline that each deserialise "the" store load it once.
_LOADED: dict[str, tuple[str, int]] = {}
_LOAD_LOCK = threading.Lock()
# A counter per shared index, bumped by every change, so that what is derived from the documents (BM25 index,
# vector matrix, definition map) is checked in O(1) per query instead of by hashing every document id.
_GENERATIONS: dict[str, int] = {}


class IndexNotFoundError(FileNotFoundError):
    """No index at the configured folder (says how to build one)."""


class CodeIndexDocumentStore(InMemoryDocumentStore):
    """
    An `InMemoryDocumentStore` that loads from and saves to an index folder.

    Documents and their embeddings live in one `.npz` file written atomically, so a reader never sees half an
    index. Instances with the same folder share their documents within a process.

    ### Usage example

    ```python
    from haystack_integrations.components.code_alias import CodeIndexDocumentStore

    store = CodeIndexDocumentStore(index_dir=".code-alias")   # loads what `code-alias index` wrote
    print(store.count_documents())
    store.persist()                                           # after writing documents
    ```

    :param index_dir: The index folder; None means `$CODE_ALIAS_INDEX_DIR` or `./.code-alias`.
    :param embedding_similarity_function: "cosine" (default, right for MiniLM) or "dot_product".
    """

    def __init__(
        self,
        index_dir: str | None = None,
        embedding_similarity_function: str = "cosine",
        return_embedding: bool = False,
    ) -> None:
        self.index_dir = index_dir
        self._folder = resolve_index_dir(index_dir)
        super().__init__(
            index=f"code-alias:{self._folder.resolve()}",
            embedding_similarity_function=embedding_similarity_function,  # type: ignore[arg-type]
            return_embedding=return_embedding,
        )
        self._load_if_changed()

    @property
    def documents_path(self) -> Path:
        return self._folder / DOCUMENTS_FILE

    def to_dict(self) -> dict[str, Any]:
        return default_to_dict(
            self,
            index_dir=self.index_dir,
            embedding_similarity_function=self.embedding_similarity_function,
            return_embedding=self.return_embedding,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CodeIndexDocumentStore:
        return default_from_dict(cls, data)

    def _load_if_changed(self) -> None:
        path = self.documents_path
        if not path.is_file():
            return
        stamp = (str(path.resolve()), path.stat().st_mtime_ns)
        with _LOAD_LOCK:
            if _LOADED.get(self.index) == stamp:
                return
            self._swap_in(read_documents(path))
            _LOADED[self.index] = stamp

    def _swap_in(self, documents: list[Document]) -> None:
        """
        Replace the shared documents in one step, so a request running in another thread sees the old index or
        the new one, never an empty or half-written one (a plain delete-all + write would expose both).
        """
        staging = InMemoryDocumentStore(index=f"{self.index}:staging:{id(documents)}")
        staging.write_documents(documents)
        storages: tuple[dict[str, Any], ...] = (
            _memory._STORAGES,
            _memory._BM25_STATS_STORAGES,
            _memory._AVERAGE_DOC_LEN_STORAGES,
            _memory._FREQ_VOCAB_FOR_IDF_STORAGES,
        )
        for storage in storages:
            storage[self.index] = storage.pop(staging.index)
        self._changed()

    @property
    def generation(self) -> int:
        """Changes whenever this index's documents do (a write, a delete, a reload); shared by its instances."""
        return _GENERATIONS.get(self.index, 0)

    def _changed(self) -> None:
        _GENERATIONS[self.index] = _GENERATIONS.get(self.index, 0) + 1

    def write_documents(self, documents: list[Document], policy: DuplicatePolicy = DuplicatePolicy.NONE) -> int:
        """Write chunks (see `InMemoryDocumentStore.write_documents`)."""
        try:
            return super().write_documents(documents, policy)
        finally:
            self._changed()

    def delete_documents(self, document_ids: list[str]) -> None:
        """Delete chunks by id."""
        try:
            super().delete_documents(document_ids)
        finally:
            self._changed()

    def delete_all_documents(self) -> None:
        """Delete every chunk (in memory; the saved file changes on `persist`)."""
        try:
            super().delete_all_documents()
        finally:
            self._changed()

    def delete_by_filter(self, filters: dict[str, Any]) -> int:
        """Delete the chunks that match `filters`."""
        try:
            return super().delete_by_filter(filters)
        finally:
            self._changed()

    def update_by_filter(self, filters: dict[str, Any], meta: dict[str, Any]) -> int:
        """Update the meta of the chunks that match `filters`."""
        try:
            return super().update_by_filter(filters, meta)
        finally:
            self._changed()

    def reload(self) -> None:
        """Load the index again if another process rewrote it."""
        self._load_if_changed()

    def release(self) -> None:
        """
        Free this index's documents from process memory; the saved file stays and the next use loads it again.

        In-memory stores keep documents in process-global storage for the life of the process, so a process that
        visits many indexes (a benchmark over many corpora, a server switching repositories) must let go of them.
        """
        with _LOAD_LOCK:
            _memory._STORAGES[self.index] = {}
            _memory._BM25_STATS_STORAGES[self.index] = {}
            _memory._AVERAGE_DOC_LEN_STORAGES[self.index] = 0.0
            _memory._FREQ_VOCAB_FOR_IDF_STORAGES[self.index] = Counter()
            _LOADED.pop(self.index, None)
            self._changed()

    def persist(self) -> Path:
        """Save every document (and embedding) atomically to the index folder."""
        path = self.documents_path
        write_documents_file(path, list(self.storage.values()))
        with _LOAD_LOCK:
            _LOADED[self.index] = (str(path.resolve()), path.stat().st_mtime_ns)
        return path


def write_documents_file(path: Path, documents: list[Document]) -> None:
    """Documents as JSON lines plus one float32 matrix of embeddings, in one `.npz`, written atomically."""
    records = []
    dimension = next((len(d.embedding) for d in documents if d.embedding is not None), 0)
    matrix = np.zeros((len(documents), dimension), dtype=np.float32)
    has_embedding = np.zeros(len(documents), dtype=bool)
    for row, document in enumerate(documents):
        # Code chunks carry text and meta only; writing those fields directly is ~10x faster than to_dict().
        if document.blob is not None or document.sparse_embedding is not None:
            record = document.to_dict(flatten=False)
            record.pop("embedding", None)
            record.pop("score", None)
        else:
            record = {"id": document.id, "content": document.content, "meta": document.meta}
        records.append(record)
        if document.embedding is not None and len(document.embedding) == dimension:
            matrix[row] = document.embedding
            has_embedding[row] = True
    buffer = io.BytesIO()
    payload = "\n".join(json.dumps(r, ensure_ascii=False) for r in records).encode("utf-8")
    np.savez(
        buffer,
        documents=np.frombuffer(payload, dtype=np.uint8),
        embeddings=matrix,
        has_embedding=has_embedding,
    )
    atomic_write_bytes(path, buffer.getvalue())


def read_documents(path: Path) -> list[Document]:
    """Read what `write_documents_file` wrote; errors name the file."""
    try:
        with np.load(path, allow_pickle=False) as data:
            payload = data["documents"].tobytes().decode("utf-8")
            matrix = data["embeddings"]
            has_embedding = data["has_embedding"]
    except (OSError, ValueError, KeyError) as error:
        raise IndexNotFoundError(
            f"{path}: unreadable index file ({error}); rebuild it with `code-alias index`"
        ) from error
    documents = []
    for row, line in enumerate(payload.splitlines() if payload else []):
        record = json.loads(line)
        embedding = matrix[row].tolist() if has_embedding[row] else None
        if record.keys() <= {"id", "content", "meta"}:
            documents.append(
                Document(id=record["id"], content=record["content"], meta=record["meta"], embedding=embedding)
            )
        else:
            record["embedding"] = embedding
            documents.append(Document.from_dict(record))
    return documents


@component
class DocumentStorePersister:
    """
    Saves a `CodeIndexDocumentStore` to disk at the end of an indexing pipeline.

    It runs after the writer (its `stats` input is the writer's output), so the file on disk only ever holds
    a finished sync.

    :param document_store: The store to persist.
    """

    def __init__(self, *, document_store: CodeIndexDocumentStore) -> None:
        self.document_store = document_store

    @component.output_types(stats=dict[str, Any], path=str)
    def run(self, stats: dict[str, Any]) -> dict[str, Any]:
        """
        :param stats: The writer's statistics, passed through.
        :returns: `stats` and the `path` of the saved index.
        """
        path = self.document_store.persist()
        return {"stats": {**stats, "documents": self.document_store.count_documents()}, "path": os.fspath(path)}

    @component.output_types(stats=dict[str, Any], path=str)
    async def run_async(self, stats: dict[str, Any]) -> dict[str, Any]:
        return self.run(stats=stats)

    def to_dict(self) -> dict[str, Any]:
        return default_to_dict(self, document_store=self.document_store.to_dict())

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DocumentStorePersister:
        """Deserialise; the nested store is rebuilt from its recorded type by `default_from_dict`."""
        return default_from_dict(cls, data)
