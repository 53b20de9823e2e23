"""`CodeIndex`: one index folder's live state in this process.

An index folder (manifest, documents, dictionary, cards) is read by several components at once: the BM25 and
embedding retrievers, the definition lookup, the rewriter, the faithfulness filter, autocomplete. Each is built
from YAML on its own, yet they must share one copy of the chunks and of the dictionary, see a re-index at once,
and never see half of one. That state lives here, on one object per folder:

- the served chunks (`DocumentSet`) that queries read, and the private copies of writers (an indexing run, a
  vector fill, a warm sync) that stay invisible until they are saved and handed over (`serve`);
- the lock under which a load, a save or a handover happens (one per folder: two indexes never wait on each
  other);
- the dictionary handle (the dictionary and its hint index, kept current with the file), and what is known of
  the folder's files (`files`: the manifest as last read, checked hashes, the dictionary the current files hold);
- what the queries derive from the chunks (`derived`: BM25 indexes and their term cache, vector matrices,
  definition maps), for the served chunks and the writers' alike, so it goes when the folder's object does.

`CodeSearch` opens the folder's `CodeIndex` and keeps it; the stores its pipelines deserialise find that same
object by folder (`CodeIndex.open`), as Haystack's own in-memory stores find their documents by index name. The
registry holds its objects weakly: when no search, pipeline or store uses a folder any more, its memory goes.
"""

from __future__ import annotations

import itertools
import threading
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from haystack import Document

from ..paths import DICTIONARY_FILE
from .dictionary_handle import DictionaryHandle
from .index_files import FolderFiles
from .registry import WeakRegistry
from .store_cache import Prepared, StoreCaches

__all__ = ["CodeIndex", "DocumentSet", "Generation"]

# (which document set, its change count): unique in the process, so a value cached for one set is never
# mistaken for another's (a folder closed and opened again starts a new set, not the old count again).
Generation = tuple[int, int]


@dataclass(eq=False)
class DocumentSet:
    """
    One copy of an index's chunks in memory, with what is known about it: the served build, or a writer's.

    :param name: The store name its `CodeIndexDocumentStore`s carry (`store.index`): derived values are cached
        under it (`CodeIndex.derived`).
    """

    name: str
    serial: int
    storage: dict[str, Document] = field(default_factory=dict)
    # Haystack's BM25 statistics (`InMemoryDocumentStore`'s own BM25), computed on first use (`stats_pending`).
    bm25_stats: dict[str, Any] = field(default_factory=dict)
    average_length: float = 0.0
    vocabulary: Counter[str] = field(default_factory=Counter)
    stats_pending: bool = False
    changes: int = 0
    # Which saved build (files and modification) this set holds, when it loaded or saved one.
    loaded: tuple[str, int] | None = None
    # `generation` when the set last matched its saved file: equal now = nothing to save.
    saved_generation: Generation | None = None
    # The JSON line of each chunk as last written, and the documents chain those lines describe exactly: a save
    # whose manifest still names that chain writes only a delta against it (`index_delta`).
    lines: dict[str, tuple[Document, str]] | None = None
    on_disk: tuple[str, ...] | None = None
    # Each chunk's vector as the file it was loaded from holds it (id -> (chunk, float32 row)): the vector
    # retriever stacks these rows instead of converting 31,809 x 384 Python floats back (1.3 s on Django 3.0).
    # Only for the chunk objects loaded; any change of the chunks empties it (`changed`).
    vectors: dict[str, tuple[Document, np.ndarray]] = field(default_factory=dict)
    # Set while a sync of this process is saving the next build and will hand it over itself (`holding`): the
    # served set keeps what it holds instead of reading the new files back meanwhile.
    held: bool = False

    @property
    def generation(self) -> Generation:
        """Changes whenever the chunks do (a write, a delete, a reload, a handover)."""
        return (self.serial, self.changes)

    def changed(self) -> Generation:
        self.vectors = {}  # a chunk changed in place would otherwise keep the row it was loaded with
        self.changes += 1
        return self.generation

    def set_chunks(self, storage: dict[str, Document], *, stats_pending: bool) -> None:
        """Take `storage` as the chunks, in one step, with Haystack's BM25 statistics to compute again."""
        self.storage = storage
        self.bm25_stats, self.average_length, self.vocabulary = {}, 0.0, Counter()
        self.stats_pending = stats_pending
        self.changed()

    def replace(self, storage: dict[str, Document]) -> None:
        """Take `storage` as the chunks, in one step; statistics and saved lines no longer describe them."""
        self.lines = None
        self.on_disk = None
        self.set_chunks(storage, stats_pending=True)

    def clear(self) -> None:
        """Forget the chunks and what was known about them (the saved file stays)."""
        self.loaded = None
        self.saved_generation = None
        self.lines = None
        self.on_disk = None
        self.set_chunks({}, stats_pending=False)


class CodeIndex:
    """
    The live state of one index folder in this process: its served chunks, its writers' private copies, its
    load lock and its dictionary handle. Thread-safe; obtain it with `CodeIndex.open(folder)`.

    ### Usage example

    ```python
    from haystack_integrations.components.code_alias import CodeIndex

    index = CodeIndex.open(".code-alias")
    print(len(index.served.storage), index.dictionary.path)   # chunks held, the dictionary's file
    with index.holding():                                     # a sync's save: queries keep the old build
        ...
    ```

    :param folder: The index folder.
    """

    # The folders open in this process: finds live objects, holds no values (a folder nobody uses is let go).
    _open: ClassVar[WeakRegistry[CodeIndex]] = WeakRegistry()
    _serials: ClassVar[Iterator[int]] = itertools.count(1)

    def __init__(self, folder: Path) -> None:
        self.folder = folder.resolve()
        self.lock = threading.RLock()
        self.served = self._new_set(self.served_name(self.folder))
        self._writers: dict[str, DocumentSet] = {}
        # What is known of the folder's files (manifest, checked hashes, the dictionary on disk): first, so the
        # dictionary handle's reads below find it.
        self.files = FolderFiles.of(self.folder)
        self.dictionary = DictionaryHandle.for_path(self.folder / DICTIONARY_FILE)
        # The values derived from the chunks (BM25 index, vector matrix, definition map), by store name.
        self.derived = StoreCaches()

    @staticmethod
    def served_name(folder: Path) -> str:
        """The store name of a folder's served chunks (`store.index`), under which derived values are cached."""
        return f"code-alias:{folder.resolve()}"

    @classmethod
    def open(cls, folder: str | Path) -> CodeIndex:
        """This process's `CodeIndex` of `folder`: the one already open, else a new one."""
        key = str(Path(folder).resolve())
        return cls._open.get_or_make(key, lambda: cls(Path(key)))

    @classmethod
    def opened(cls, folder: str | Path) -> CodeIndex | None:
        """The `CodeIndex` of `folder` when this process has it open (nothing is created)."""
        return cls._open.get(str(Path(folder).resolve()))

    def _new_set(self, name: str) -> DocumentSet:
        return DocumentSet(name=name, serial=next(CodeIndex._serials))

    def documents(self, writer: str | None = None) -> DocumentSet:
        """The served chunks, or the private copy of the writer named `writer` (created on first use)."""
        if writer is None:
            return self.served
        with self.lock:
            documents = self._writers.get(writer)
            if documents is None:
                documents = self._writers[writer] = self._new_set(f"{self.served.name}:writer:{writer}")
            return documents

    def discard(self, writer: str) -> None:
        """Forget a writer's private copy (its run is over) and what was derived from it."""
        with self.lock:
            documents = self._writers.pop(writer, None)
        if documents is not None:
            self.derived.forget(documents.name)

    def prepare_served(self, documents: Iterable[Document]) -> Prepared:
        """
        What the queries derive from the served chunks, built for `documents` (the build about to be handed over,
        `store.serve_documents`), while the current values keep serving.
        """
        return self.derived.prepare(self.served.name, documents)

    def writers(self) -> list[str]:
        """The writers with a private copy now."""
        with self.lock:
            return sorted(self._writers)

    @contextmanager
    def holding(self) -> Iterator[None]:
        """
        For the block (a sync's save and handover, a compaction): the served chunks stay what they are, even once
        the manifest names the new files, instead of being read back (seconds on a large index, with the lock
        held, while the sync is about to hand the same build over). When the block ends without a handover, the
        next query compares stamps and loads what is current.
        """
        with self.lock:
            self.served.held = True
        try:
            yield
        finally:
            with self.lock:
                self.served.held = False

    def __repr__(self) -> str:
        return f"CodeIndex({str(self.folder)!r})"
