"""`WeakRegistry`: this process's live objects by key (an index folder, a dictionary file), held weakly.

`CodeIndex.open`, `FolderFiles.of` and `DictionaryHandle.for_path` give every component the same object for one
folder or file while any of them holds it, and let it go when none does: a registry of live objects, not a cache
of values.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["WeakRegistry"]

V = TypeVar("V")


class WeakRegistry(Generic[V]):
    """Objects by key, held weakly; thread-safe."""

    def __init__(self) -> None:
        self._open: weakref.WeakValueDictionary[str, V] = weakref.WeakValueDictionary()
        self._lock = threading.Lock()

    def get(self, key: str) -> V | None:
        """The live object of `key`, if any (nothing is created)."""
        with self._lock:
            return self._open.get(key)

    def get_or_make(self, key: str, make: Callable[[], V]) -> V:
        """The live object of `key`, else `make()`, registered under `key` (in one step: two callers get one)."""
        with self._lock:
            found = self._open.get(key)
            if found is None:
                found = self._open[key] = make()
            return found
