# long: the index folder's files: manifest, writer lock, atomic writes, legacy names
"""The files of an index folder: one manifest names the dictionary and documents of one build; one writer at a time.

Layout of an index folder::

    manifest.json               which build is current: {"dictionary": {...}, "documents": {...}, "build": ...}
    dictionary-<build>.json     the alias dictionary of a build
    documents-<build>.npz       the chunks (and embeddings) of a build
    embedding-cache/vectors.sqlite
    index.lock, index.lock.json the writers' lock and who holds it

A build writes its artefacts under new names, then replaces `manifest.json` (one atomic `os.replace`), so a
reader that reads the manifest first sees the old pair or the new pair, never a mix. The files of the previous
build are kept until the next one, for readers that read the old manifest a moment before the swap. Indexes
written before the manifest existed (`dictionary.json` + `documents.npz`) are read as they are and migrated by
the next `code-alias index`.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import json
import logging
import os
import shutil
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import EllipsisType
from typing import Any, ClassVar, Literal

from haystack.document_stores.errors import DocumentStoreError

from ..core.locks import LockTimeoutError, exclusive
from ..core.model import atomic_write_bytes
from ..errors import CodeAliasError
from ..paths import DICTIONARY_FILE, DOCUMENTS_FILE
from .registry import WeakRegistry

logger = logging.getLogger(__name__)

MANIFEST_FILE = "manifest.json"
MANIFEST_FORMAT = 1
# Written only by manifests whose artefacts carry deltas, so a version that cannot apply them refuses the index.
MANIFEST_FORMAT_DELTAS = 2
LOCK_FILE = "index.lock"
HOLDER_FILE = "index.lock.json"
Kind = Literal["dictionary", "documents"]
LEGACY_NAMES: dict[str, str] = {"dictionary": DICTIONARY_FILE, "documents": DOCUMENTS_FILE}
_PATTERNS: dict[str, tuple[str, str]] = {"dictionary": ("dictionary-", ".json"), "documents": ("documents-", ".npz")}


class IndexDamagedError(DocumentStoreError, CodeAliasError):
    """
    A persisted index file that cannot be used; the message names the file and the fix. A `DocumentStoreError`, so
    a server answers 503 (the store cannot be read) rather than 500.
    """


class IndexLockedError(TimeoutError, CodeAliasError):
    """Another `code-alias index` holds the index folder's lock (the message says who)."""


def rebuild_hint(folder: Path) -> str:
    return f"rebuild it with `code-alias index PATH --index-dir {folder}`"


# ---- the manifest ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Artifact:
    """One file of a build: its name in the folder, size and SHA-256 (checked before the file is trusted)."""

    file: str
    bytes: int = -1
    sha256: str = ""
    count: int | None = None  # documents: chunks; dictionary: symbols (with `deltas`: after the last one)
    version: str | None = None  # dictionary version (with `deltas`: after the last one)
    # Changes appended to this file since it was written, oldest first (`index_delta`): what the kind holds is
    # this file with each delta applied in turn. `count`/`version`/`embedded` describe that result.
    deltas: tuple[Artifact, ...] = ()
    embedded: int | None = None  # documents: chunks with a vector, when known

    def to_dict(self) -> dict[str, Any]:
        data = {k: v for k, v in self.__dict__.items() if v is not None and k != "deltas"}
        if self.deltas:
            data["deltas"] = [d.to_dict() for d in self.deltas]
        return data

    def chain(self) -> tuple[str, ...]:
        """The files that make up this artefact: the base file, then its deltas in order."""
        return (self.file, *(d.file for d in self.deltas))

    @property
    def delta_bytes(self) -> int:
        return sum(max(d.bytes, 0) for d in self.deltas)


@dataclass(frozen=True)
class IndexManifest:
    """Which dictionary and documents files form the current build of an index folder."""

    build: str
    dictionary: Artifact | None = None
    documents: Artifact | None = None
    previous: tuple[str, ...] = field(default_factory=tuple)  # files of the build before, kept one generation
    legacy: bool = False  # derived from a folder without a manifest

    def files(self) -> set[str]:
        return {name for a in (self.dictionary, self.documents) if a is not None for name in a.chain()}

    def artifact(self, kind: Kind) -> Artifact | None:
        return self.dictionary if kind == "dictionary" else self.documents

    def to_json(self) -> bytes:
        deltas = any(a is not None and a.deltas for a in (self.dictionary, self.documents))
        payload = {
            "format": MANIFEST_FORMAT_DELTAS if deltas else MANIFEST_FORMAT,
            "build": self.build,
            "dictionary": self.dictionary.to_dict() if self.dictionary else None,
            "documents": self.documents.to_dict() if self.documents else None,
            "previous": sorted(self.previous),
            "written_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        return json.dumps(payload, indent=1).encode("utf-8")

    @classmethod
    def from_json(cls, path: Path, raw: bytes) -> IndexManifest:
        """Parse and validate; a damaged or foreign file raises `IndexDamagedError` naming it."""
        try:
            data = json.loads(raw.decode("utf-8"))
            if not isinstance(data, dict):
                raise ValueError("not a JSON object")
            if data.get("format") not in (MANIFEST_FORMAT, MANIFEST_FORMAT_DELTAS):
                raise ValueError(
                    f"format {data.get('format')!r}, this version reads {MANIFEST_FORMAT} and {MANIFEST_FORMAT_DELTAS}"
                )
            artifacts: dict[str, Artifact | None] = {}
            for kind in ("dictionary", "documents"):
                entry = data.get(kind)
                if entry is None:
                    artifacts[kind] = None
                    continue
                deltas = entry.get("deltas") or []
                if not isinstance(deltas, list):
                    raise ValueError(f"{kind} deltas: not a list")
                artifacts[kind] = replace(
                    _parse_artifact(kind, entry), deltas=tuple(_parse_artifact(f"{kind} delta", d) for d in deltas)
                )
            previous = tuple(str(p) for p in data.get("previous", []) if isinstance(p, str) and "/" not in p)
            return cls(
                build=str(data["build"]),
                dictionary=artifacts["dictionary"],
                documents=artifacts["documents"],
                previous=previous,
            )
        except (ValueError, KeyError, TypeError, UnicodeDecodeError) as error:
            raise IndexDamagedError(f"{path}: damaged index manifest ({error}); {rebuild_hint(path.parent)}") from error


def _parse_artifact(kind: str, entry: Any) -> Artifact:
    name = entry["file"]
    if not isinstance(name, str) or "/" in name or "\\" in name or name.startswith("."):
        raise ValueError(f"bad {kind} file name {name!r}")
    return Artifact(
        file=name,
        bytes=int(entry.get("bytes", -1)),
        sha256=str(entry.get("sha256", "")),
        count=None if entry.get("count") is None else int(entry["count"]),
        version=entry.get("version"),
        embedded=None if entry.get("embedded") is None else int(entry["embedded"]),
    )


def manifest_path(folder: Path) -> Path:
    return folder / MANIFEST_FILE


def read_manifest(folder: Path) -> IndexManifest | None:
    """The folder's manifest; for a folder without one, what its legacy files make up; None when empty."""
    path = manifest_path(folder)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return _legacy_manifest(folder)
    except OSError as error:
        raise IndexDamagedError(f"{path}: cannot read the index manifest ({error})") from error
    return IndexManifest.from_json(path, raw)


def _legacy_manifest(folder: Path) -> IndexManifest | None:
    found = {kind: folder / name for kind, name in LEGACY_NAMES.items() if (folder / name).is_file()}
    if not found:
        return None
    artifacts = {kind: Artifact(file=path.name) for kind, path in found.items()}
    return IndexManifest(
        build="legacy", dictionary=artifacts.get("dictionary"), documents=artifacts.get("documents"), legacy=True
    )


class FolderFiles:
    """
    What this process knows of one index folder's files: its manifest as last read (read again when the file's
    `stat` changes), the files whose hash it checked, and the dictionary object the current chain holds
    (`index_delta`). Thread-safe.

    The folder's `CodeIndex` holds it (`CodeIndex.files`), so what it knows lasts while the folder is open and goes
    with it; functions given only a path find it by folder (`FolderFiles.of`), and with no folder open they get a
    fresh one that knows nothing (every read then goes to the files: the same answers, only slower).

    :param key: The folder, resolved.
    """

    # The folders open in this process (as `CodeIndex.open`'s, one level down, where the file readers below reach
    # it without importing `CodeIndex`): finds live objects, holds no values.
    _open: ClassVar[WeakRegistry[FolderFiles]] = WeakRegistry()
    # Files whose hash was checked, at most this many per folder (then it starts afresh).
    MAX_VERIFIED: ClassVar[int] = 256

    def __init__(self, key: str) -> None:
        self.key = key
        self._lock = threading.Lock()
        self._manifest: tuple[tuple[int, int, int], IndexManifest | None] | None = None
        # By (path, size, mtime, expected hash): a warm server's syncs do not hash the same unchanged 10 MB again
        # before every sync.
        self._verified: set[tuple[str, int, int, str]] = set()
        # (the chain's files, the dictionary they hold), as this process last wrote or read them.
        self._dictionary: tuple[tuple[str, ...], Any] | None = None

    @classmethod
    def of(cls, folder: Path) -> FolderFiles:
        """The folder's `FolderFiles`: the one a `CodeIndex` holds, else a new one."""
        key = str(folder.resolve())
        return cls._open.get_or_make(key, lambda: cls(key))

    def manifest(self, folder: Path) -> IndexManifest | None:
        """`read_manifest(folder)`, read again only when the manifest file changed (one `stat` per call)."""
        path = manifest_path(folder)
        try:
            info = path.stat()
            signature = (info.st_mtime_ns, info.st_size, info.st_ino)
        except FileNotFoundError:
            return _legacy_manifest(folder)
        with self._lock:
            cached = self._manifest
        if cached is not None and cached[0] == signature:
            return cached[1]
        manifest = read_manifest(folder)
        with self._lock:
            self._manifest = (signature, manifest)
        return manifest

    def verified(self, path: Path, sha256: str) -> bool:
        """Whether `path` has the hash `sha256` (hashed once per size and modification)."""
        info = path.stat()
        key = (str(path.absolute()), info.st_size, info.st_mtime_ns, sha256)
        with self._lock:
            if key in self._verified:
                return True
        if file_sha256(path) != sha256:
            return False
        with self._lock:
            if len(self._verified) >= self.MAX_VERIFIED:
                self._verified.clear()
            self._verified.add(key)
        return True

    def remember_dictionary(self, chain: tuple[str, ...] | None, dictionary: Any) -> None:
        """Record that the chain of files `chain` holds `dictionary` (None for either: nothing known)."""
        with self._lock:
            self._dictionary = None if chain is None or dictionary is None else (chain, dictionary)

    def dictionary(self, chain: tuple[str, ...]) -> Any:
        """The dictionary `chain` holds, when this process knows it without reading it; else None."""
        with self._lock:
            known = self._dictionary
        return known[1] if known is not None and known[0] == chain else None


# The manifests pinned by `pinned_manifest` in this context. Module level, as Python requires of a context
# variable; its value is per context (one query), not shared state.
_PINNED: contextvars.ContextVar[dict[str, IndexManifest | None] | None] = contextvars.ContextVar(
    "code_alias_pinned_manifests", default=None
)


def current_manifest(folder: Path) -> IndexManifest | None:
    """
    `read_manifest`, re-read only when the manifest file changed (`FolderFiles.manifest`), or the manifest pinned
    by `pinned_manifest` in this context.
    """
    pinned = _PINNED.get()
    if pinned is not None:
        key = str(folder.absolute())
        if key in pinned:
            return pinned[key]
    return FolderFiles.of(folder).manifest(folder)


def fresh_manifest(folder: Path) -> IndexManifest | None:
    """The folder's manifest as the file says now (`FolderFiles.manifest`), whatever this context pinned."""
    return FolderFiles.of(folder).manifest(folder)


@contextmanager
def pinned_manifest(
    folder: Path, manifest: IndexManifest | EllipsisType | None = ...
) -> Iterator[IndexManifest | None]:
    """
    Within the block, every reader of `folder` in this context sees one manifest: `manifest` when given, else the
    current one. `CodeIndex.pinned` pins the manifest of the generation it serves (its chunks and dictionary).
    """
    chosen = current_manifest(folder) if isinstance(manifest, EllipsisType) else manifest
    pinned = dict(_PINNED.get() or {})
    pinned[str(folder.absolute())] = chosen
    token = _PINNED.set(pinned)
    try:
        yield chosen
    finally:
        _PINNED.reset(token)


def artifact_path(folder: Path, kind: Kind, manifest: IndexManifest | None = None) -> Path:
    """The current file of `kind` (through the manifest); the legacy name when no manifest names one."""
    chosen = manifest if manifest is not None else current_manifest(folder)
    artifact = chosen.artifact(kind) if chosen is not None else None
    return folder / (artifact.file if artifact is not None else LEGACY_NAMES[kind])


def resolve_dictionary_file(path: Path) -> Path:
    """For `<index dir>/dictionary.json` (the logical name), the file the folder's manifest names."""
    if path.name != DICTIONARY_FILE:
        return path
    return artifact_path(path.parent, "dictionary")


def index_exists(folder: Path) -> bool:
    """Whether the folder holds an index (a manifest, or a legacy dictionary)."""
    return manifest_path(folder).is_file() or (folder / DICTIONARY_FILE).is_file()


def check_artifact(folder: Path, artifact: Artifact, *, full: bool = False) -> None:
    """
    Raise `IndexDamagedError` when a named file is missing, of the wrong size or (`full`) the wrong hash.

    :param full: Hash the file too (indexing does; loading relies on the size and the file's own parser).
    """
    for delta in artifact.deltas:
        check_artifact(folder, delta, full=full)
    path = folder / artifact.file
    try:
        size = path.stat().st_size
    except FileNotFoundError as error:
        raise IndexDamagedError(f"{path}: missing (the index manifest names it); {rebuild_hint(folder)}") from error
    if artifact.bytes >= 0 and size != artifact.bytes:
        raise IndexDamagedError(
            f"{path}: {size} bytes where the index manifest recorded {artifact.bytes} (truncated or overwritten); "
            f"{rebuild_hint(folder)}"
        )
    if full and artifact.sha256 and not FolderFiles.of(folder).verified(path, artifact.sha256):
        raise IndexDamagedError(f"{path}: content does not match the index manifest's hash; {rebuild_hint(folder)}")


def file_sha256(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


# ---- writing -----------------------------------------------------------------------------------------------
def new_build_id() -> str:
    return f"{time.strftime('%Y%m%dT%H%M%S', time.gmtime())}-{uuid.uuid4().hex[:8]}"


def stage(folder: Path, kind: Kind, data: bytes, build: str, **extra: Any) -> Artifact:
    """Write one artefact of a new build under its own name (invisible until `commit` names it)."""
    prefix, suffix = _PATTERNS[kind]
    path = folder / f"{prefix}{build}{suffix}"
    write_or_explain(path, data)
    return Artifact(file=path.name, bytes=len(data), sha256=hashlib.sha256(data).hexdigest(), **extra)


def stage_delta(folder: Path, kind: Kind, data: bytes, build: str, **extra: Any) -> Artifact:
    """
    Write one delta of `kind` under its own name (`<kind>-<build>.delta.<ext>`, invisible until a `commit` names
    it in the chain of the kind's artefact), written and fsynced like a whole file.
    """
    prefix, suffix = _PATTERNS[kind]
    path = folder / f"{prefix}{build}.delta{suffix}"
    write_or_explain(path, data)
    return Artifact(file=path.name, bytes=len(data), sha256=hashlib.sha256(data).hexdigest(), **extra)


def write_or_explain(path: Path, data: bytes) -> None:
    """`atomic_write_bytes`, with an error that names the file (full disk, read-only folder...)."""
    try:
        atomic_write_bytes(path, data)
    except OSError as error:
        raise OSError(error.errno, f"cannot write {path}: {error.strerror or error}") from error


_UNSET: Any = object()


def commit(
    folder: Path,
    *,
    dictionary: Artifact | None = _UNSET,
    documents: Artifact | None = _UNSET,
    build: str | None = None,
) -> IndexManifest:
    """
    Make a build current: write the manifest naming `dictionary` and `documents` (omitted ones stay as they
    are) with one atomic replace, then delete the files of builds older than the one before.
    """
    before = current_manifest(folder)
    kept_dictionary = before.dictionary if before is not None else None
    kept_documents = before.documents if before is not None else None
    manifest = IndexManifest(
        build=build or new_build_id(),
        dictionary=kept_dictionary if dictionary is _UNSET else dictionary,
        documents=kept_documents if documents is _UNSET else documents,
    )
    manifest = replace(manifest, previous=tuple(sorted((before.files() if before else set()) - manifest.files())))
    write_or_explain(manifest_path(folder), manifest.to_json())
    collect_garbage(folder, manifest)
    return manifest


def collect_garbage(folder: Path, manifest: IndexManifest) -> list[str]:
    """Delete artefacts named by neither the current nor the previous build (and dead writers' temporaries)."""
    keep = manifest.files() | set(manifest.previous)
    removed = []
    for entry in folder.iterdir():
        name = entry.name
        ours = any(name.startswith(p) and name.endswith(s) for p, s in _PATTERNS.values())
        legacy = name in LEGACY_NAMES.values()
        if (ours or legacy) and name not in keep and entry.is_file():
            entry.unlink(missing_ok=True)
            removed.append(name)
    return removed


def remove_temporaries(folder: Path) -> None:
    """Temporary files of killed writers (`.<name>.<random>.tmp`); call only while holding the lock."""
    for entry in folder.glob(".*.tmp"):
        entry.unlink(missing_ok=True)
    for entry in folder.glob(".bm25-*"):  # half-saved BM25 folders of the pre-manifest layout
        _remove_tree(entry)
    for entry in folder.glob("bm25-*"):  # query caches no longer live in the index folder
        _remove_tree(entry)


def _remove_tree(path: Path) -> None:

    shutil.rmtree(path, ignore_errors=True)


# ---- one writer at a time ----------------------------------------------------------------------------------
@contextmanager
def index_lock(
    folder: Path, *, timeout: float | None = None, on_wait: Callable[[str], None] | None = None
) -> Iterator[None]:
    """
    Hold the folder's writer lock for the block (`filelock`, an OS lock released when the process dies).

    :param timeout: Seconds to wait for another writer; None waits as long as it takes.
    :param on_wait: Called once with who holds the lock, when this call has to wait.
    :raises IndexLockedError: Still held after `timeout` (the message says by whom).
    """

    folder.mkdir(parents=True, exist_ok=True)
    with contextlib.ExitStack() as stack:
        try:
            waiting = None if on_wait is None else (lambda: on_wait(lock_holder(folder)))
            stack.enter_context(exclusive(folder / LOCK_FILE, timeout=timeout, on_wait=waiting))
        except LockTimeoutError as error:
            raise IndexLockedError(
                f"{folder / LOCK_FILE}: another `code-alias index` holds this index ({lock_holder(folder)}); "
                "wait for it to finish"
            ) from error
        note = {"pid": os.getpid(), "host": socket.gethostname(), "since": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        with contextlib.suppress(OSError):  # the lock is what counts; the note about its holder is a courtesy
            atomic_write_bytes(folder / HOLDER_FILE, json.dumps(note).encode("utf-8"))
        try:
            yield
        finally:
            (folder / HOLDER_FILE).unlink(missing_ok=True)


def lock_holder(folder: Path) -> str:
    """`pid N on HOST since TIME`, from the note the holder wrote (or "unknown holder")."""
    try:
        note = json.loads((folder / HOLDER_FILE).read_text(encoding="utf-8"))
        return f"pid {note['pid']} on {note['host']} since {note['since']}"
    except (OSError, ValueError, KeyError, TypeError):
        return "unknown holder"


# ---- building and repairing --------------------------------------------------------------------------------
def stage_dictionary(folder: Path, dictionary: Any, build: str, manifest: IndexManifest | None) -> Artifact | None:
    """
    Stage an `AliasDictionary` for the next commit; None when the current build already holds the same bytes.
    """
    data = dictionary.model_dump_json().encode("utf-8")
    current = manifest.dictionary if manifest is not None else None
    if current is not None and current.sha256 == hashlib.sha256(data).hexdigest() and (folder / current.file).is_file():
        return None
    return stage(folder, "dictionary", data, build, count=len(dictionary.symbols), version=dictionary.version)


def publish_dictionary(folder: Path, dictionary: Any) -> Path:
    """Make `dictionary` the folder's current dictionary (the documents stay); returns its file."""
    folder.mkdir(parents=True, exist_ok=True)
    manifest = current_manifest(folder)
    build = new_build_id()
    staged = stage_dictionary(folder, dictionary, build, manifest)
    if staged is not None:
        manifest = commit(folder, dictionary=staged, build=build)
    return artifact_path(folder, "dictionary", manifest)
