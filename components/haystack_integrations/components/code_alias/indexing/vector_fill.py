"""
Progressive indexing on the embedded default: chunk vectors come after the lexical index, in resumable rounds.

`CodeSearch.index` builds the dictionary and the BM25 index first (`indexing_lexical.yml`), so questions are
answered at once with the lexical pipeline plus the rewrite; then `VectorFiller` computes the missing chunk
vectors, most-likely-asked code first (`chunk_priority`: non-test definitions that are exported or documented,
then other definitions, then module remainders, then test files), and saves them as new builds of the index
every `checkpoint_seconds`. A question on a partly-vectorised index fuses the vectors that exist (a chunk without
one is only missing from the embedding list); a hybrid index with no vector yet answers lexically.

Interrupting never loses a finished batch: the chunk embedder writes every batch to its vector cache
(`embedders.EmbeddingCache`) before the next one starts, and the next fill (`code-alias embed`, or `code-alias
index` again) takes those vectors from the cache instead of computing them again. The index lock is held only
while a round is saved, so a refresh of the index can run between two rounds; the fill re-reads the index then.

`vectors.json` in the index folder says how the last fill went (running with its pid, done, interrupted, failed);
`vector_count` reads how far the served build is from the build's own documents file.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from haystack import Document

from ..core.locks import exclusive
from ..core.model import atomic_write_bytes, read_json_object
from ..core.processes import process_alive
from ..core.testfiles import is_test_file
from ..paths import DICTIONARY_FILE
from . import index_files
from .index_delta import load_index_dictionary
from .index_mode import recorded_retrieval
from .store import CodeIndexDocumentStore

logger = logging.getLogger(__name__)

STATUS_FILE = "vectors.json"
FILL_LOCK_FILE = "vectors.lock"
LOG_FILE = "vectors.log"
# Seconds of embedding between two saves of the index (what a question sees of the progress, and what a killed
# fill without a vector cache would compute again).
CHECKPOINT_SECONDS = 30.0
# Chunks handed to the embedder at once (it sorts them by length, so a larger round pads less).
ROUND_BATCHES = 8


@dataclass(frozen=True)
class VectorCount:
    """How many chunks of a build have a vector."""

    embedded: int
    total: int

    @property
    def fraction(self) -> float:
        """Share of chunks with a vector (1.0 for an empty build)."""
        return self.embedded / self.total if self.total else 1.0

    @property
    def complete(self) -> bool:
        return self.embedded >= self.total

    def text(self) -> str:
        """`3,200 / 10,103 (32 %)`."""
        return f"{self.embedded:,} / {self.total:,} ({int(self.fraction * 100)} %)"

    def to_dict(self) -> dict[str, Any]:
        return {"embedded": self.embedded, "total": self.total, "percent": round(self.fraction * 100, 1)}


def vector_count(folder: Path) -> VectorCount | None:
    """
    Chunks with a vector in the current build of the index in `folder` (reads one small array of its documents
    file), or None when there is no documents file.

    :raises index_files.IndexDamagedError: The documents file cannot be read.
    """
    manifest = index_files.current_manifest(folder)
    if manifest is None or manifest.documents is None:
        return None
    if manifest.documents.embedded is not None and manifest.documents.count is not None:
        return VectorCount(embedded=manifest.documents.embedded, total=manifest.documents.count)
    path = folder / manifest.documents.file
    try:
        with np.load(path, allow_pickle=False) as data:
            has_embedding = data["has_embedding"]
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError) as error:
        raise index_files.IndexDamagedError(
            f"{path}: damaged documents file ({error}); {index_files.rebuild_hint(folder)}"
        ) from error
    return VectorCount(embedded=int(has_embedding.sum()), total=int(has_embedding.size))


# ---- which chunks first ------------------------------------------------------------------------------------
def chunk_priority(document: Document, symbols: dict[tuple[str, str], Any] | None = None) -> tuple[int, int, str, int]:
    """
    The order chunks get their vectors in, most-likely-asked first: (test file, tier, path, line).

    Tier 0: a definition that is exported or documented (per the dictionary's entry when given, else a name without
    a leading underscore / a docstring or leading comment in the chunk); 1: another definition; 2: a module
    remainder. Test files come after every other file.

    :param document: A chunk (meta `file_path`, `qualified_name`, `symbol`, `start_line`).
    :param symbols: (file_path, qualified_name) -> the dictionary's `SymbolEntry`, when known.
    """
    meta = document.meta
    path = str(meta.get("file_path") or "")
    qualified = meta.get("qualified_name")
    line = int(meta.get("start_line") or 0)
    test = int(is_test_file(path))
    if not qualified:
        return (test, 2, path, line)
    entry = symbols.get((path, str(qualified))) if symbols else None
    if entry is not None:
        prominent = bool(entry.exported or entry.doc_words)
    else:
        name = str(meta.get("symbol") or str(qualified).rsplit(".", 1)[-1])
        text = document.content or ""
        prominent = not name.startswith("_") or '"""' in text or "/**" in text
    return (test, 0 if prominent else 1, path, line)


def priority_order(documents: list[Document], symbols: dict[tuple[str, str], Any] | None = None) -> list[Document]:
    """`documents` sorted by `chunk_priority`."""
    return sorted(documents, key=lambda d: chunk_priority(d, symbols))


def dictionary_symbols(folder: Path) -> dict[tuple[str, str], Any]:
    """(file_path, qualified_name) -> `SymbolEntry` of the index's dictionary; empty when it cannot be read."""

    try:
        dictionary = load_index_dictionary(folder / DICTIONARY_FILE)
    except Exception as error:  # the order is a heuristic: without the dictionary, the chunk's own meta decides
        logger.debug("code-alias: no dictionary for the vector order in %s: %s", folder, error)
        return {}
    return {(s.file_path, s.qualified_name): s for s in dictionary.symbols}


# ---- the fill's record -------------------------------------------------------------------------------------
def read_fill_status(folder: Path) -> dict[str, Any] | None:
    """The last fill's record (`vectors.json`), with state "interrupted" when a running fill's process is gone."""
    record = read_json_object(folder / STATUS_FILE)
    if record is None:
        return None
    if record.get("state") == "running" and not process_alive(record.get("pid")):
        record["state"] = "interrupted"
    return record


def record_fill_started(folder: Path, pid: int) -> None:
    """
    Record a fill as running in process `pid` as soon as it is started, so that `code-alias status` right after
    `index --background` names it (the fill writes its own record once its imports are done).
    """
    _write_fill_status(folder, {"state": "running", "pid": pid, "started_at": _now(), "error": None})


def _write_fill_status(folder: Path, record: dict[str, Any]) -> None:
    try:
        atomic_write_bytes(folder / STATUS_FILE, json.dumps(record, indent=1).encode("utf-8"))
    except OSError as error:  # the vectors are what matters; say why the record is stale
        logger.warning("code-alias: could not record the vector fill in %s: %s", folder / STATUS_FILE, error)


def vector_status(folder: Path) -> dict[str, Any]:
    """
    What `code-alias status` and the server report about vectors: the served build's count and the last fill.

    :returns: `{"retrieval", "vectors": {embedded, total, percent} | None, "text", "fill": record | None}`.
    """

    try:
        retrieval = recorded_retrieval(folder)
    except ValueError:
        retrieval = None
    try:
        count = vector_count(folder)
    except index_files.IndexDamagedError as error:
        return {"retrieval": retrieval, "vectors": None, "text": str(error), "fill": read_fill_status(folder)}
    fill = read_fill_status(folder)
    if retrieval == "lexical":
        text = "none (lexical index)"
    elif count is None:
        text = "-"
    else:
        text = count.text()
        state = (fill or {}).get("state")
        if state == "running":
            text += f", filling (pid {fill['pid']})" if fill else ""
        elif not count.complete:
            text += "; resume with `code-alias embed`"
    return {"retrieval": retrieval, "vectors": count.to_dict() if count else None, "text": text, "fill": fill}


# ---- the fill ----------------------------------------------------------------------------------------------
@contextmanager
def fill_lock(folder: Path, on_wait: Callable[[str], None] | None = None) -> Iterator[None]:
    """One vector fill per index folder at a time (a second one waits, then finds little or nothing to do)."""

    folder.mkdir(parents=True, exist_ok=True)

    def waiting() -> None:
        if on_wait is not None:
            record = read_fill_status(folder) or {}
            on_wait(f"pid {record.get('pid', '?')}")

    with exclusive(folder / FILL_LOCK_FILE, on_wait=waiting):
        yield


class VectorFiller:
    """
    Computes the missing chunk vectors of an embedded index, most-likely-asked first, and saves them every
    `checkpoint_seconds` as a new build (so questions fuse them as they arrive).

    :param index_dir: The index folder.
    :param embedder: A chunk embedder (`run(documents=...)` -> `{"documents": [... with embedding]}`), e.g. the
        `CodeDocumentEmbedder` of `indexing.yml`; its vector cache is what makes an interrupted fill resume.
    :param checkpoint_seconds: Seconds of embedding between two saves.
    :param lock_timeout: Seconds to wait for the index lock when saving; None waits.
    :param on_progress: Called with (chunks with a vector, chunks) after every round.
    :param round_size: Chunks per call of the embedder; None = 8 of its batches.
    """

    def __init__(
        self,
        index_dir: Path,
        *,
        embedder: Any,
        checkpoint_seconds: float = CHECKPOINT_SECONDS,
        lock_timeout: float | None = None,
        on_progress: Callable[[int, int], None] | None = None,
        round_size: int | None = None,
    ) -> None:
        self.index_dir = Path(index_dir)
        self.embedder = embedder
        self.checkpoint_seconds = checkpoint_seconds
        self.lock_timeout = lock_timeout
        self.on_progress = on_progress
        self.round_size = round_size or max(1, int(getattr(embedder, "batch_size", 32)) * ROUND_BATCHES)

    def run(self) -> dict[str, Any]:
        """
        Fill every missing vector (resuming what an interrupted fill left).

        Ctrl-C saves the vectors computed so far before it stops the fill.

        :returns: `{"embedded": vectors computed (or taken from the cache) now, "vectors": {...}, "saves": n,
            "seconds": s}`.
        """

        started = time.perf_counter()
        folder = self.index_dir
        record: dict[str, Any] = {"state": "running", "pid": os.getpid(), "started_at": _now(), "error": None}
        store = CodeIndexDocumentStore(index_dir=str(folder), writer=f"vectors-{index_files.new_build_id()}")
        self._record, self._done, self._saves = record, 0, 0
        pending: dict[str, list[float]] = {}
        try:
            _write_fill_status(folder, {**record, **self._count(store).to_dict()})
            self._fill(store, pending)
            if pending:
                self._save(store, pending)
            record["state"] = "done"
        except KeyboardInterrupt:
            record["state"] = "interrupted"
            if pending:  # keep what was computed (it is also in the vector cache, should this save be cut short)
                self._save(store, pending)
            raise
        except BaseException as error:
            record.update(state="failed", error=f"{type(error).__name__}: {error}")
            raise
        finally:
            count = self._count(store)
            _write_fill_status(folder, {**record, "finished_at": _now(), **count.to_dict()})
            store.discard()
        seconds = round(time.perf_counter() - started, 3)
        return {"embedded": self._done, "vectors": count.to_dict(), "saves": self._saves, "seconds": seconds}

    def _fill(self, store: Any, pending: dict[str, list[float]]) -> None:
        symbols = dictionary_symbols(self.index_dir)
        while True:  # one pass per save: the order is taken again from what the saved index holds
            order = priority_order([d for d in store.storage.values() if d.embedding is None], symbols)
            if not order:
                return
            total = store.count_documents()
            last_save = time.perf_counter()
            for start in range(0, len(order), self.round_size):
                part = order[start : start + self.round_size]
                out = self.embedder.run(documents=part)["documents"]
                fresh = {d.id: list(v.embedding) for d, v in zip(part, out, strict=True) if v.embedding is not None}
                if len(fresh) < len(part):
                    raise RuntimeError(f"the embedder returned {len(fresh)} vectors for {len(part)} chunks")
                pending.update(fresh)
                self._done += len(fresh)
                if self.on_progress is not None:
                    self.on_progress(total - len(order) + start + len(part), total)
                if time.perf_counter() - last_save >= self.checkpoint_seconds:
                    break
            self._save(store, pending)
            pending.clear()
            _write_fill_status(self.index_dir, {**self._record, **self._count(store).to_dict()})

    @staticmethod
    def _count(store: Any) -> VectorCount:
        documents = list(store.storage.values())
        return VectorCount(embedded=sum(d.embedding is not None for d in documents), total=len(documents))

    def _save(self, store: Any, vectors: dict[str, list[float]]) -> None:
        """Under the index lock: take in a refresh another writer saved meanwhile, attach the vectors, save."""
        with index_files.index_lock(self.index_dir, timeout=self.lock_timeout):
            store.reload()
            store.set_embeddings(vectors)
            store.persist()
        self._saves += 1


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")
