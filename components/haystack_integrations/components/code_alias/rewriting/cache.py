"""The rewrite cache: identical questions cost no second LLM call.

Keys are `(normalised question, dictionary version, rewriter config)`: a re-index that changes the dictionary
changes its version, so every older entry stops matching; a different generator, template or mode is a different
config. Values are JSON text, so the in-process LRU and the persistent cache store the same thing and a hit hands
back fresh objects nobody else holds.

Two stores: an in-process LRU (the default, thread-safe) and, for a server that restarts or runs several
workers, a persistent one on `diskcache` (SQLite underneath; the optional `[cache]` extra).
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any


def normalise_question(question: str) -> str:
    """Case-folded, whitespace-collapsed question: what counts as "the same question" for the cache."""
    return " ".join(question.casefold().split())


def cache_key(question: str, dictionary_version: str, config_fingerprint: str) -> str:
    """The cache key of a question under one dictionary version and one rewriter configuration."""
    payload = json.dumps([normalise_question(question), dictionary_version, config_fingerprint], ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def config_fingerprint(config: dict[str, Any]) -> str:
    """A short stable hash of a JSON-able configuration (values that are not JSON are hashed by `str`)."""
    blob = json.dumps(config, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]


class RewriteCache:
    """
    Base of the rewrite caches: JSON values, hit/miss counters, thread-safe.

    ### Usage example

    ```python
    from haystack_integrations.components.code_alias.rewriting.cache import LRURewriteCache, cache_key

    cache = LRURewriteCache(max_size=1000)
    key = cache_key("Where is the retry helper?", "6bae6e882785224a", "config-hash")
    if cache.get(key) is None:
        cache.set(key, {"rewritten": "...", "symbols": ["withStripeBackoff"]})
    print(cache.stats())   # {'hits': 0, 'misses': 1, 'size': 1, 'backend': 'memory'}
    ```
    """

    backend = "none"

    def __init__(self) -> None:
        self._stats_lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, key: str) -> dict[str, Any] | None:
        """The cached value of `key` (a fresh copy), or None; counts a hit or a miss."""
        text = self._get(key)
        value: dict[str, Any] | None = None
        if text is not None:
            try:
                loaded = json.loads(text)
            except ValueError:
                loaded = None
            value = loaded if isinstance(loaded, dict) else None
        with self._stats_lock:
            if value is None:
                self.misses += 1
            else:
                self.hits += 1
        return value

    def set(self, key: str, value: dict[str, Any]) -> None:
        """Store `value` (JSON-able) under `key`."""
        self._set(key, json.dumps(value, ensure_ascii=False, default=str))

    def stats(self) -> dict[str, Any]:
        """Hits, misses, entries and the backend's name."""
        with self._stats_lock:
            return {"hits": self.hits, "misses": self.misses, "size": len(self), "backend": self.backend}

    def reset_stats(self) -> None:
        with self._stats_lock:
            self.hits = self.misses = 0

    def clear(self) -> None:
        """Drop every entry (the counters stay)."""
        raise NotImplementedError

    def close(self) -> None:
        """Release what the store holds open."""

    def __len__(self) -> int:
        raise NotImplementedError

    def _get(self, key: str) -> str | None:
        raise NotImplementedError

    def _set(self, key: str, text: str) -> None:
        raise NotImplementedError


class LRURewriteCache(RewriteCache):
    """
    In-process least-recently-used cache, safe to share between threads.

    ### Usage example

    ```python
    from haystack_integrations.components.code_alias.rewriting.cache import LRURewriteCache

    cache = LRURewriteCache(max_size=2)
    cache.set("a", {"x": 1}); cache.set("b", {"x": 2}); cache.get("a"); cache.set("c", {"x": 3})
    print(cache.get("b"))   # None: the least recently used entry was evicted
    ```

    :param max_size: Most entries kept.
    """

    backend = "memory"

    def __init__(self, *, max_size: int = 1024) -> None:
        super().__init__()
        if max_size <= 0:
            raise ValueError(f"max_size must be > 0, got {max_size}")
        self.max_size = max_size
        self._lock = threading.Lock()
        self._entries: OrderedDict[str, str] = OrderedDict()

    def _get(self, key: str) -> str | None:
        with self._lock:
            text = self._entries.get(key)
            if text is not None:
                self._entries.move_to_end(key)
            return text

    def _set(self, key: str, text: str) -> None:
        with self._lock:
            self._entries[key] = text
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_size:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)


class DiskRewriteCache(RewriteCache):
    """
    Persistent cache on `diskcache` (a SQLite file plus a folder), shared by threads and processes.

    Needs the optional dependency: `pip install "code-alias-haystack[cache]"`.

    ### Usage example

    ```python
    from haystack_integrations.components.code_alias.rewriting.cache import DiskRewriteCache

    cache = DiskRewriteCache(path=".code-alias/rewrite-cache")
    cache.set("key", {"rewritten": "..."})
    print(cache.get("key"))   # survives a restart
    ```

    :param path: The cache folder (created when missing).
    :param size_limit_bytes: Most bytes kept on disk; past it the least recently used entries are evicted.
    """

    backend = "disk"

    def __init__(self, *, path: str | Path, size_limit_bytes: int = 256 * 2**20) -> None:
        super().__init__()
        try:
            import diskcache
        except ImportError as error:  # pragma: no cover - the extra is installed in development
            raise ImportError(
                "a persistent rewrite cache needs diskcache: pip install 'code-alias-haystack[cache]'"
            ) from error
        self.path = Path(path)
        self.size_limit_bytes = size_limit_bytes
        self._cache = diskcache.Cache(
            str(self.path), size_limit=size_limit_bytes, eviction_policy="least-recently-used"
        )

    def _get(self, key: str) -> str | None:
        value = self._cache.get(key)
        return value if isinstance(value, str) else None

    def _set(self, key: str, text: str) -> None:
        self._cache.set(key, text)

    def clear(self) -> None:
        self._cache.clear()

    def close(self) -> None:
        self._cache.close()

    def __len__(self) -> int:
        return len(self._cache)


def make_rewrite_cache(*, cache_path: str | None, cache_size: int) -> RewriteCache | None:
    """
    The LRU of `cache_size` entries (no path), a persistent cache (a path; bounded by bytes, not entries), or
    None when `cache_size` is 0 (caching off).
    """
    if cache_size <= 0:
        return None
    if cache_path:
        return DiskRewriteCache(path=cache_path)
    return LRURewriteCache(max_size=cache_size)
