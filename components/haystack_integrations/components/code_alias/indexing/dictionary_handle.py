"""A loaded alias dictionary with its hint index, reloaded when the file on disk changes.

The rewriter, the faithfulness filter and autocomplete each need "the current dictionary"; they share one
handle per file so a server loads it once and sees a re-index without a restart.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from ..core.cards import CardsError, SymbolCards, cards_prefix, newest_cards_file
from ..core.graph import ReferenceGraph
from ..core.model import AliasDictionary, DictionaryError
from ..paths import DICTIONARY_FILE, INDEX_DIR_ENV, find_index_dir, resolve_index_dir
from ..rewriting.hints import HintIndex
from .generation import IndexGeneration, pinned_generation
from .index_delta import chain_stamp, load_dictionary
from .index_files import Artifact, IndexManifest, current_manifest, pinned_manifest, resolve_dictionary_file
from .registry import WeakRegistry

logger = logging.getLogger(__name__)


def dictionary_file(dictionary_path: str | None, index_dir: str | None) -> Path:
    """
    `dictionary_path` if given, else `<index dir>/dictionary.json`: `index_dir`, else `$CODE_ALIAS_INDEX_DIR`, else
    the index of the current folder found as git finds its repository (a `.code-alias` here or in a parent, or the
    folder this tree was indexed into), else `./.code-alias`.
    """
    if dictionary_path:
        return Path(dictionary_path)
    if index_dir or os.environ.get(INDEX_DIR_ENV):
        return resolve_index_dir(index_dir) / DICTIONARY_FILE
    return (find_index_dir(Path.cwd()) or resolve_index_dir(None)) / DICTIONARY_FILE


class DictionaryHandle:
    """
    The dictionary at `path` and its hint index, kept current with the file's modification time.

    `for_path` gives every component of the process the same handle for one file while any of them holds it
    (an index folder's `CodeIndex` holds its own), held weakly: a file nobody reads any more is let go.
    """

    _open: ClassVar[WeakRegistry[DictionaryHandle]] = WeakRegistry()  # finds live handles, holds no values

    def __init__(self, path: Path) -> None:
        self.path = path
        # The index folder this handle serves the current dictionary of (`<index dir>/dictionary.json`): a question
        # that pinned a generation of it reads that generation's dictionary (`generation.pinning`).
        self._folder_key = str(path.parent.resolve()) if path.name == DICTIONARY_FILE else None
        self._lock = threading.Lock()
        self._stamp: tuple[str, int] | None = None
        self._dictionary: AliasDictionary | None = None
        self._hints: HintIndex | None = None
        self._held = 0  # > 0: a sync of this process is saving and will `install` the next dictionary itself
        self._cards: tuple[tuple[str, int] | None, SymbolCards | None] = (None, None)
        self._graph: ReferenceGraph | None = None
        self._graph_lock = threading.Lock()  # one build at a time; questions meanwhile keep the lock-free fields

    @classmethod
    def for_path(cls, path: Path) -> DictionaryHandle:
        return cls._open.get_or_make(str(path.resolve()), lambda: cls(path))

    def _stamp_now(self) -> tuple[Path, tuple[str, int] | None, Artifact | None]:
        # `<index dir>/dictionary.json` names the index's current dictionary, whichever build file (and chain of
        # deltas, `index_delta`) that is; one manifest read decides both the stamp and what to load.
        artifact: Artifact | None = None
        if self.path.name == DICTIONARY_FILE:
            manifest = current_manifest(self.path.parent)
            if manifest is not None and not manifest.legacy:
                artifact = manifest.dictionary
        path = self.path.parent / artifact.file if artifact is not None else resolve_dictionary_file(self.path)
        try:
            if artifact is not None and artifact.deltas:
                return path, chain_stamp(self.path.parent, artifact), artifact
            return path, (path.name, path.stat().st_mtime_ns), artifact
        except FileNotFoundError:
            return path, None, artifact

    def _load(self, path: Path, artifact: Artifact | None) -> AliasDictionary:
        if artifact is not None:
            return load_dictionary(self.path.parent, artifact)  # raises DictionaryError naming the file
        return AliasDictionary.load(path)

    def loaded(self) -> AliasDictionary | None:
        """The dictionary this handle holds when it is still the current one on disk (None: it must be read)."""
        _, stamp, _ = self._stamp_now()
        with self._lock:
            return self._dictionary if self._dictionary is not None and stamp == self._stamp else None

    def install(self, dictionary: AliasDictionary, hints: HintIndex | None = None) -> bool:
        """
        Make `dictionary`, which a sync of this process has just saved as the current one, what the handle serves,
        without reading it back; `hints` is its hint index when already built (else it is built on first use).

        :returns: False (and nothing changes) when the current file on disk is not of that dictionary's version.
        """
        path, stamp, recorded = self._stamp_now()
        if stamp is None or recorded is None or recorded.file != path.name or recorded.version != dictionary.version:
            return False
        with self._lock:
            if hints is None and dictionary is self._dictionary:
                hints = self._hints  # the same dictionary under a new stamp (a compaction): its hints still hold
            self._dictionary, self._hints, self._stamp = dictionary, hints, stamp  # hints None: built on first use
        return True

    @contextmanager
    def holding(self) -> Iterator[None]:
        """
        For the block (a sync's save and `install`): questions keep the dictionary and hints this handle holds,
        even once the manifest names a new file, instead of reading it back and rebuilding the hints meanwhile.
        """
        with self._lock:
            self._held += 1
        try:
            yield
        finally:
            with self._lock:
                self._held -= 1

    def held(self) -> tuple[AliasDictionary | None, HintIndex | None]:
        """The dictionary and hint index this handle holds now (None: not loaded or not built), reading nothing."""
        with self._lock:
            return self._dictionary, self._hints

    @property
    def serving(self) -> bool:
        """Whether questions have used this handle (its hint index is built): worth preparing the next one."""
        with self._lock:
            return self._hints is not None

    def _pinned(self) -> IndexGeneration | None:
        """The generation the current question pinned for this handle's folder, when it holds a dictionary."""
        if self._folder_key is None:
            return None
        generation = pinned_generation(self._folder_key)
        return generation if generation is not None and generation.dictionary is not None else None

    def at(self, manifest: IndexManifest | None) -> tuple[AliasDictionary | None, HintIndex | None]:
        """
        The dictionary and hint index of the build `manifest` names, made what this handle serves (read when the
        handle holds another). `CodeIndex.current_generation` calls it with the manifest of the chunks it serves,
        so that a question's dictionary and chunks are of one build.

        :returns: (None, None) when the build has no readable dictionary (the question then says why, as before).
        """
        if manifest is None or self._folder_key is None:
            return None, None
        try:
            with pinned_manifest(self.path.parent, manifest):
                return self._current(follow_hold=False)
        except (DictionaryError, OSError):
            return None, None

    def _current(self, *, follow_hold: bool = True) -> tuple[AliasDictionary, HintIndex]:
        pinned = self._pinned()
        if pinned is not None and pinned.dictionary is not None and pinned.hints is not None:
            return pinned.dictionary, pinned.hints
        with self._lock:
            if follow_hold and self._held and self._dictionary is not None and self._hints is not None:
                return self._dictionary, self._hints
        path, stamp, artifact = self._stamp_now()
        with self._lock:
            if self._dictionary is None or stamp != self._stamp:
                dictionary = self._load(path, artifact)  # raises DictionaryError naming the file
                self._dictionary, self._hints, self._stamp = dictionary, HintIndex(dictionary), stamp
            elif self._hints is None:
                self._hints = HintIndex(self._dictionary)
            assert self._hints is not None
            return self._dictionary, self._hints

    def cards(self) -> SymbolCards | None:
        """
        The index folder's symbol cards (`indexing.card_vectors`): those of the current dictionary version, else
        the newest (a sync changed the dictionary and the cards follow; names that went are ignored), reloaded when
        the file changes. None: no cards (a plain `--lexical` index, or one built before cards existed) or an
        unreadable file (logged; the hints then have no semantic evidence, nothing fails). Beside a dictionary file
        of another name, its own cards (`<stem>.cards-<version>.npz`, as `AliasDictionaryBuilder(embedder=...)`
        writes them).
        """
        dictionary = self.dictionary
        path = newest_cards_file(self.path.parent, dictionary.version, cards_prefix(self.path))
        try:
            stamp = (path.name, path.stat().st_mtime_ns) if path is not None else None
        except FileNotFoundError:
            stamp = None
        with self._lock:
            if stamp == self._cards[0]:
                return self._cards[1]
        loaded: SymbolCards | None = None
        if path is not None and stamp is not None:
            try:
                loaded = SymbolCards.load(path)
            except (CardsError, FileNotFoundError) as error:
                logger.warning("symbol cards not used: %s", error)
        with self._lock:
            self._cards = (stamp, loaded)
        return loaded

    def graph(self) -> ReferenceGraph:
        """
        The reference graph of the current dictionary (`core/graph.py`): resolved once per dictionary version, on
        first use, and kept with the handle, so a server answers callers and impact from memory. After a sync the
        next graph question refreshes it from the previous one (`ReferenceGraph.refreshed`: only the uses a changed
        file can affect are resolved again).
        """
        dictionary = self.dictionary
        graph = self._graph
        if graph is not None and graph.version == dictionary.version:
            return graph
        with self._graph_lock:
            graph = self._graph
            if graph is None:
                graph = self._graph = ReferenceGraph(dictionary)
            elif graph.version != dictionary.version:
                graph = self._graph = ReferenceGraph.refreshed(graph, dictionary)
        return graph

    @property
    def dictionary(self) -> AliasDictionary:
        return self._current()[0]

    @property
    def hints(self) -> HintIndex:
        return self._current()[1]


class StaticDictionaryHandle(DictionaryHandle):
    """A handle around a dictionary object passed in directly (tests, notebooks, in-pipeline builds)."""

    def __init__(self, dictionary: AliasDictionary, cards: SymbolCards | None = None) -> None:
        super().__init__(Path("<in-memory>"))
        self._dictionary = dictionary
        self._hints = HintIndex(dictionary)
        self._static_cards = cards

    def cards(self) -> SymbolCards | None:
        return self._static_cards

    def _current(self, *, follow_hold: bool = True) -> tuple[AliasDictionary, HintIndex]:
        assert self._dictionary is not None and self._hints is not None
        return self._dictionary, self._hints


_User = TypeVar("_User", bound="UsesDictionary")


class UsesDictionary:
    """
    For components that read the alias dictionary: from `dictionary_path` / `index_dir` (shared, reloaded when
    the file changes), or from a dictionary object given with `from_dictionary`.
    """

    dictionary_path: str | None
    index_dir: str | None
    _handle: DictionaryHandle | None = None

    @classmethod
    def from_dictionary(
        cls: type[_User], dictionary: AliasDictionary, *, cards: SymbolCards | None = None, **kwargs: Any
    ) -> _User:
        """The component over a dictionary object (no file), e.g. in a notebook or a test; `cards`: its symbol cards."""
        user = cls(**kwargs)
        user._handle = StaticDictionaryHandle(dictionary, cards)
        return user

    @property
    def handle(self) -> DictionaryHandle:
        if self._handle is None:
            self._handle = DictionaryHandle.for_path(dictionary_file(self.dictionary_path, self.index_dir))
        return self._handle
