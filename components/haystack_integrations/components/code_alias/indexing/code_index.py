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

import dataclasses
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
from . import index_delta
from .dictionary_handle import DictionaryHandle
from .generation import IndexGeneration, pinned_generation, pinning
from .index_files import (
    Artifact,
    FolderFiles,
    IndexDamagedError,
    IndexManifest,
    check_artifact,
    current_manifest,
    rebuild_hint,
)
from .registry import WeakRegistry
from .store_cache import Prepared, StoreCaches

__all__ = ["CodeIndex", "DocumentSet", "Generation", "IndexGeneration"]

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
    # The manifest of the build this set holds (as loaded, or as handed over): a question pins it with the chunks.
    manifest: IndexManifest | None = None

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

    def snapshot(self) -> DocumentSet:
        """
        This set as it is now, for one question (`IndexGeneration`): the same chunk and vector objects, never
        copied. The set's own changes replace those objects (`replace`, `set_chunks`, `changed`) rather than edit
        them, so what the snapshot holds stays as it was; only a writer's set is edited in place, and writers'
        sets are never served.
        """
        return dataclasses.replace(self)

    def clear(self) -> None:
        """Forget the chunks and what was known about them (the saved file stays)."""
        self.loaded = None
        self.manifest = None
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
        # Questions in flight by the generation of the served chunks they pinned (`pinned`).
        self._live: Counter[Any] = Counter()
        # The values derived from the chunks (BM25 index, vector matrix, definition map), by store name; a value of
        # an older generation stays while a question in flight reads that generation.
        self.derived = StoreCaches(keep=self.live)

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

    # ---- loading and pinning the served build ----------------------------------------------------------------
    def load(self, documents: DocumentSet, *, keep_lines: bool = False) -> None:
        """
        Make `documents` (the served set, or a writer's copy) hold the folder's current build, reading it only when
        it changed; a set held by a sync of this process (`holding`) keeps what it has.

        The manifest is read under the lock: a sync of this process that saves a build and hands it over
        (`store.serve_documents`) does both under it, so no reader can load the build it replaced after that.

        :param keep_lines: Keep each chunk's saved JSON line (a writer's copy: its first save is a delta already).
        :raises IndexDamagedError: A missing or damaged file (named, with the fix).
        """
        with self.lock:
            if documents.held and documents.loaded is not None:
                return  # this process is handing a build over (`holding`): serve the old one until then
            stamped = current_stamp(self.folder)
            if stamped is None:
                return  # nothing saved yet: keep what this process holds (a first build in progress)
            stamp, artifact, manifest = stamped
            if documents.loaded == stamp:
                documents.manifest = manifest  # the same files (e.g. a vector count restamped): this manifest
                return
            lines: dict[str, tuple[Document, str]] | None = {} if keep_lines else None
            vectors: dict[str, tuple[Document, np.ndarray]] = {}
            loaded = [] if artifact is None else index_delta.load_documents(self.folder, artifact, lines, vectors)
            storage: dict[str, Document] = {}
            for document in loaded:
                if document.id in storage:
                    path = self.folder / (artifact.file if artifact is not None else "?")
                    raise IndexDamagedError(f"{path}: chunk id {document.id} twice; {rebuild_hint(self.folder)}")
                storage[document.id] = document
            # In one step, so a request in another thread sees the old chunks or the new ones, never half of them.
            documents.replace(storage)
            documents.vectors = vectors
            if lines is not None and artifact is not None and len(lines) == len(loaded):
                documents.lines = lines
                documents.on_disk = artifact.chain()
            documents.loaded = stamp
            documents.manifest = manifest
            documents.saved_generation = documents.generation

    def pinned_generation(self) -> IndexGeneration | None:
        """The generation this context (one question) pinned for this folder (`pinned`), if any."""
        return pinned_generation(str(self.folder))

    def current_generation(self, *, documents: bool = True) -> IndexGeneration:
        """
        What a question starting now reads: the served build's chunks, manifest, dictionary and hint index, all of
        one build. The served chunks are brought to the current build first (unless a sync of this process holds
        them to hand its build over itself), then the dictionary handle to the same manifest, under the folder's
        lock, so that no handover (which takes the lock) falls between the two.

        :param documents: Load and pin the chunks (False where they live elsewhere, e.g. Elasticsearch: then the
            manifest and the dictionary are pinned).
        :raises IndexDamagedError: A missing or damaged file.
        :raises DictionaryError: No dictionary, or a damaged one.
        """
        with self.lock:
            served: DocumentSet | None = None
            if documents:
                self.load(self.served)
                served = self.served.snapshot()
                manifest = (
                    served.manifest if served.loaded is not None else FolderFiles.of(self.folder).manifest(self.folder)
                )
            else:
                manifest = FolderFiles.of(self.folder).manifest(self.folder)
            dictionary, hints = self.dictionary.at(manifest)
            return IndexGeneration(
                folder=self.folder, manifest=manifest, documents=served, dictionary=dictionary, hints=hints
            )

    @contextmanager
    def pinned(self, *, documents: bool = True) -> Iterator[IndexGeneration]:
        """
        For the block, this context (one question) reads one generation of the index (`current_generation`, or the
        one an enclosing block already pinned: a question asked again narrowed stays on its build): every store,
        dictionary handle and derived cache of this folder reads it, and none of them reloads or swaps what other
        questions are served meanwhile.
        """
        outer = self.pinned_generation()
        if outer is not None:
            yield outer
            return
        generation = self.current_generation(documents=documents)
        key = generation.documents.generation if generation.documents is not None else None
        with self.lock:
            if key is not None:
                self._live[key] += 1
        try:
            with pinning(generation):
                yield generation
        finally:
            retired = False
            with self.lock:
                if key is not None:
                    self._live[key] -= 1
                    if self._live[key] <= 0:
                        del self._live[key]
                        retired = key != self.served.generation
            if retired:  # the last question on an older build: its derived values go (the current ones stay)
                self.derived.retire(key)

    def live(self, generation: object) -> bool:
        """Whether a question in flight reads the served chunks of `generation` (their derived values are kept)."""
        with self.lock:
            return generation in self._live

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


def current_stamp(folder: Path) -> tuple[tuple[str, int], Artifact | None, IndexManifest] | None:
    """(stamp, documents artefact, manifest) of the folder's current build; None before the first save."""
    manifest = current_manifest(folder)
    if manifest is None:
        return None
    artifact = manifest.documents
    if artifact is None:
        return (f"<no documents: build {manifest.build}>", 0), None, manifest
    if not manifest.legacy:
        check_artifact(folder, artifact)
    try:
        return index_delta.chain_stamp(folder, artifact), artifact, manifest
    except FileNotFoundError as error:
        raise IndexDamagedError(f"{folder / artifact.file}: missing; {rebuild_hint(folder)}") from error
