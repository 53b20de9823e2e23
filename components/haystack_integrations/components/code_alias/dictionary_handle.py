"""A loaded alias dictionary with its hint index, reloaded when the file on disk changes.

The rewriter, the faithfulness filter and autocomplete each need "the current dictionary"; they share one
handle per file so a server loads it once and sees a re-index without a restart.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, TypeVar

from .core.hints import HintIndex
from .core.model import AliasDictionary
from .index_files import resolve_dictionary_file
from .paths import DICTIONARY_FILE, resolve_index_dir

_HANDLES: dict[str, DictionaryHandle] = {}
_HANDLES_LOCK = threading.Lock()


def dictionary_file(dictionary_path: str | None, index_dir: str | None) -> Path:
    """`dictionary_path` if given, else `<index dir>/dictionary.json`."""
    return Path(dictionary_path) if dictionary_path else resolve_index_dir(index_dir) / DICTIONARY_FILE


class DictionaryHandle:
    """The dictionary at `path` and its hint index, kept current with the file's modification time."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._stamp: tuple[str, int] | None = None
        self._dictionary: AliasDictionary | None = None
        self._hints: HintIndex | None = None

    @classmethod
    def for_path(cls, path: Path) -> DictionaryHandle:
        key = str(path.resolve())
        with _HANDLES_LOCK:
            handle = _HANDLES.get(key)
            if handle is None:
                handle = _HANDLES[key] = cls(path)
            return handle

    def _current(self) -> tuple[AliasDictionary, HintIndex]:
        # `<index dir>/dictionary.json` names the index's current dictionary, whichever build file that is.
        path = resolve_dictionary_file(self.path)
        try:
            stamp: tuple[str, int] | None = (path.name, path.stat().st_mtime_ns)
        except FileNotFoundError:
            stamp = None
        with self._lock:
            if self._dictionary is None or stamp != self._stamp:
                dictionary = AliasDictionary.load(path)  # raises DictionaryError naming the file
                self._dictionary, self._hints, self._stamp = dictionary, HintIndex(dictionary), stamp
            assert self._hints is not None
            return self._dictionary, self._hints

    @property
    def dictionary(self) -> AliasDictionary:
        return self._current()[0]

    @property
    def hints(self) -> HintIndex:
        return self._current()[1]


class StaticDictionaryHandle(DictionaryHandle):
    """A handle around a dictionary object passed in directly (tests, notebooks, in-pipeline builds)."""

    def __init__(self, dictionary: AliasDictionary) -> None:
        super().__init__(Path("<in-memory>"))
        self._dictionary = dictionary
        self._hints = HintIndex(dictionary)

    def _current(self) -> tuple[AliasDictionary, HintIndex]:
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
    def from_dictionary(cls: type[_User], dictionary: AliasDictionary, **kwargs: Any) -> _User:
        """The component over a dictionary object (no file), e.g. in a notebook or a test."""
        user = cls(**kwargs)
        user._handle = StaticDictionaryHandle(dictionary)
        return user

    @property
    def handle(self) -> DictionaryHandle:
        if self._handle is None:
            self._handle = DictionaryHandle.for_path(dictionary_file(self.dictionary_path, self.index_dir))
        return self._handle
