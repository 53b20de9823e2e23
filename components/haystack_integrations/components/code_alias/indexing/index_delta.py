"""Deltas: a sync saves what changed in the dictionary and the documents, not the whole 8 MB + 10 MB again.

A build's dictionary and documents are each one base file plus a chain of deltas, named in order by the folder's
manifest (`index_files.Artifact.deltas`). A sync that knows what the current chain holds (this process wrote or
read it) writes only:

- for the dictionary, a JSON file with the symbols of the (repository, file) groups that changed, the `files`
  records (and each repository's) that changed or went, and the small fields (packages, nicknames, renames...)
  whole;
- for the documents, an `.npz` like the documents file (the added or changed chunks with their vectors) plus the
  ids of the chunks that went.

Each delta is written to a new file and fsynced, then one manifest replace makes it current together with the
other kind's: the same atomic step as a whole build, so a reader sees the chain before or after, and a sync
killed before the replace leaves the previous chain intact (its half-written delta is a temporary file, removed
by the next writer). A delta applies to exactly the chain it was computed against: the writer checks that the
manifest names that chain (and that it holds the lock), else it writes whole files.

Readers (`load_dictionary`, `load_documents`) apply the chain in order. The chain is compacted into whole files
(the ordinary full write) when it grows past `HARD_MAX_DELTAS` deltas or half the base's size, inline in the sync
that finds it so; a server compacts earlier (`compaction_due`), after a sync is recorded and when no other push
waits, off the request's path.
"""

from __future__ import annotations

import io
import json
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core.model import AliasDictionary, DictionaryError, FileRecord, RepositoryRecord, SymbolEntry
from ..paths import DICTIONARY_FILE
from . import documents_file
from .index_files import (
    Artifact,
    FolderFiles,
    IndexDamagedError,
    IndexManifest,
    current_manifest,
    rebuild_hint,
    resolve_dictionary_file,
    stage_delta,
)

if TYPE_CHECKING:
    from haystack import Document

# Compaction thresholds. Hard: the sync that finds the chain this long writes whole files itself. Soft: a
# server compacts after a sync, when idle.
HARD_MAX_DELTAS = 32
SOFT_MAX_DELTAS = 8
DELTA_FORMAT = 1
_SMALL_FIELDS = {"schema_version", "root", "packages", "nicknames", "abbreviations", "renamed", "skipped", "version"}


def hard_due(artifact: Artifact) -> bool:
    """Whether the next save of this kind must write the whole file (the chain is too long to extend)."""
    return len(artifact.deltas) >= HARD_MAX_DELTAS or artifact.delta_bytes * 2 >= max(artifact.bytes, 1 << 20)


def compaction_due(manifest: IndexManifest | None) -> bool:
    """Whether a server should compact the folder's chains now (after a sync, off its path)."""
    if manifest is None or manifest.legacy:
        return False
    for artifact in (manifest.dictionary, manifest.documents):
        if artifact is None or not artifact.deltas:
            continue
        if len(artifact.deltas) >= SOFT_MAX_DELTAS or artifact.delta_bytes * 8 >= max(artifact.bytes, 1 << 20):
            return True
    return False


def chain_stamp(folder: Path, artifact: Artifact) -> tuple[str, int]:
    """(the chain's files, the last one's modification time): changes whenever the chain does."""
    names = artifact.chain()
    last = folder / names[-1]
    return (str((folder / names[0]).resolve()) + "".join(f"+{n}" for n in names[1:]), last.stat().st_mtime_ns)


# ---- the dictionary ----------------------------------------------------------------------------------------
def remember_dictionary(folder: Path, artifact: Artifact | None, dictionary: AliasDictionary | None) -> None:
    """
    Record that `artifact` (the current chain, just committed or read) holds `dictionary`: on the folder's
    `FolderFiles`, which its `CodeIndex` holds.
    """
    FolderFiles.of(folder).remember_dictionary(artifact.chain() if artifact is not None else None, dictionary)


def dictionary_on_disk(folder: Path, artifact: Artifact | None) -> AliasDictionary | None:
    """The dictionary `artifact`'s chain holds, when this process knows it without reading it."""
    if artifact is None:
        return None
    known = FolderFiles.of(folder).dictionary(artifact.chain())
    return known if isinstance(known, AliasDictionary) else None


def stage_dictionary_delta(
    folder: Path, before: AliasDictionary, after: AliasDictionary, build: str, current: Artifact
) -> Artifact | None:
    """
    Write the delta from `before` (what `current` holds) to `after`; returns `current` with it appended, or None
    when nothing changed.
    """
    data = dictionary_delta(before, after)
    if data is None:
        return None
    delta = stage_delta(folder, "dictionary", data, build, count=len(after.symbols), version=after.version)
    return replace(current, deltas=(*current.deltas, delta), count=len(after.symbols), version=after.version)


def _group_symbols(symbols: list[SymbolEntry]) -> dict[tuple[str | None, str], list[SymbolEntry]]:
    groups: dict[tuple[str | None, str], list[SymbolEntry]] = {}
    for entry in symbols:
        groups.setdefault((entry.repo, entry.file_path), []).append(entry)
    return groups


def _same(a: Any, b: Any) -> bool:
    return a is b or a == b


def _map_delta(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any] | None:
    changed = {k: v.model_dump(mode="json") for k, v in after.items() if k not in before or not _same(before[k], v)}
    removed = [k for k in before if k not in after]
    return {"set": changed, "removed": removed} if changed or removed else None


def dictionary_delta(before: AliasDictionary, after: AliasDictionary) -> bytes | None:
    """The JSON bytes that turn `before` into `after` (`apply_dictionary_delta`); None when they are equal."""
    old_groups, new_groups = _group_symbols(before.symbols), _group_symbols(after.symbols)
    groups = [
        key
        for key in dict.fromkeys([*old_groups, *new_groups])
        if len(old_groups.get(key, ())) != len(new_groups.get(key, ()))
        or not all(_same(a, b) for a, b in zip(old_groups.get(key, ()), new_groups.get(key, ()), strict=True))
    ]
    files = _map_delta(before.files, after.files)
    repositories: dict[str, Any] = {}
    for name, record in after.repositories.items():
        old = before.repositories.get(name)
        if old is not None and _same(old, record):
            continue
        repositories[name] = {
            "fields": record.model_dump(mode="json", exclude={"files"}),
            "files": _map_delta(old.files if old is not None else {}, record.files),
            "replace": old is None,
        }
    gone = [name for name in before.repositories if name not in after.repositories]
    small_before = before.model_dump(mode="json", include=_SMALL_FIELDS)
    small = after.model_dump(mode="json", include=_SMALL_FIELDS)
    if not groups and files is None and not repositories and not gone and small == small_before:
        return None
    payload = {
        "format": DELTA_FORMAT,
        "from_version": before.version,
        "symbols": {
            "groups": [list(key) for key in groups],
            "entries": [e.model_dump(mode="json") for key in groups for e in new_groups.get(key, ())],
        },
        "files": files,
        "repositories": {"set": repositories, "removed": gone},
        "small": small,
    }
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _apply_map(base: dict[str, Any], change: dict[str, Any] | None, model: Any) -> dict[str, Any]:
    if change is None:
        return base
    result = dict(base)
    for key in change["removed"]:
        result.pop(key, None)
    for key, value in change["set"].items():
        result[key] = model.model_validate(value)
    return result


def apply_dictionary_delta(base: AliasDictionary, raw: bytes, path: Path) -> AliasDictionary:
    """`base` with the delta file `path` (its bytes `raw`) applied; a damaged delta raises `DictionaryError`."""
    try:
        data = json.loads(raw.decode("utf-8"))
        if data.get("format") != DELTA_FORMAT:
            raise ValueError(f"delta format {data.get('format')!r}, this version reads {DELTA_FORMAT}")
        if data["from_version"] != base.version:
            raise ValueError(f"applies to dictionary version {data['from_version']}, the chain holds {base.version}")
        groups = {(g[0], g[1]) for g in data["symbols"]["groups"]}
        symbols = [s for s in base.symbols if (s.repo, s.file_path) not in groups]
        symbols.extend(SymbolEntry.model_validate(e) for e in data["symbols"]["entries"])
        symbols.sort(key=lambda s: (s.file_path, s.start_line, s.qualified_name))
        files = _apply_map(base.files, data["files"], FileRecord)
        repositories = dict(base.repositories)
        for name in data["repositories"]["removed"]:
            repositories.pop(name, None)
        for name, change in data["repositories"]["set"].items():
            old = repositories.get(name)
            kept = old.files if old is not None and not change["replace"] else {}
            record = RepositoryRecord.model_validate({**change["fields"], "files": {}})
            repositories[name] = record.model_copy(update={"files": _apply_map(kept, change["files"], FileRecord)})
        fields = {**data["small"], "symbols": symbols, "files": files, "repositories": repositories}
        return AliasDictionary.model_validate(fields)
    except (ValueError, KeyError, TypeError, IndexError, UnicodeDecodeError) as error:
        message = " ".join(str(error).split())[:200]
        raise DictionaryError(f"{path}: damaged dictionary delta ({type(error).__name__}: {message})") from error


def load_dictionary(folder: Path, artifact: Artifact, *, cached: bool = True) -> AliasDictionary:
    """
    The dictionary an index folder's manifest names (`artifact`): its base file with its deltas applied in order;
    remembered as what that chain holds (the next sync's delta is computed against it).

    :param cached: Return the object this process already knows that chain holds (and remember the one read),
        instead of reading the files only.
    :raises DictionaryError: A missing or damaged file (named).
    """
    known = dictionary_on_disk(folder, artifact) if cached else None
    if known is not None:
        return known
    dictionary = AliasDictionary.load(folder / artifact.file)
    for delta in artifact.deltas:
        path = folder / delta.file
        try:
            raw = path.read_bytes()
        except OSError as error:
            hint = rebuild_hint(folder)
            raise DictionaryError(f"{path}: cannot read the dictionary delta ({error}); {hint}") from error
        dictionary = apply_dictionary_delta(dictionary, raw, path)
    if cached:
        remember_dictionary(folder, artifact, dictionary)
    return dictionary


# ---- the documents -----------------------------------------------------------------------------------------
def documents_delta(
    documents: list[Document], lines: dict[str, tuple[Document, str]]
) -> tuple[bytes, dict[str, tuple[Document, str]], int] | None:
    """
    The `.npz` bytes that turn the chunks `lines` describes (id -> (chunk, JSON line), what the chain on disk
    holds) into `documents`, the updated `lines`, and how many of `documents` have a vector; None when equal.
    """
    current: dict[str, tuple[Document, str]] = {}
    added: list[tuple[Document, str]] = []
    embedded = 0
    for document in documents:
        known = lines.get(document.id)
        if document.embedding is not None:
            embedded += 1
        if known is not None and (
            known[0] is document
            or (documents_file.same_record(known[0], document) and known[0].embedding == document.embedding)
        ):
            current[document.id] = (document, known[1])
            continue
        line = documents_file.record_line(document, None)
        current[document.id] = (document, line)
        added.append((document, line))
    removed = [document_id for document_id in lines if document_id not in current]
    if not added and not removed:
        return None
    dimension = next((len(d.embedding) for d, _ in added if d.embedding is not None), 0)
    matrix = np.zeros((len(added), dimension), dtype=np.float32)
    has_embedding = np.zeros(len(added), dtype=bool)
    for row, (document, _) in enumerate(added):
        if document.embedding is not None and len(document.embedding) == dimension:
            matrix[row] = document.embedding
            has_embedding[row] = True
    buffer = io.BytesIO()
    np.savez(
        buffer,
        documents=np.frombuffer("\n".join(line for _, line in added).encode("utf-8"), dtype=np.uint8),
        embeddings=matrix,
        has_embedding=has_embedding,
        removed=np.frombuffer(json.dumps(removed).encode("utf-8"), dtype=np.uint8),
    )
    return buffer.getvalue(), current, embedded


def load_documents(
    folder: Path,
    artifact: Artifact,
    lines: dict[str, tuple[Document, str]] | None = None,
    vectors: dict[str, tuple[Document, np.ndarray]] | None = None,
) -> list[Document]:
    """
    The chunks an index folder's manifest names (`artifact`): the base documents file with its deltas applied in
    order (a changed chunk moves to the end, as the store's own writes put it).

    :param lines: Filled with id -> (chunk, its saved JSON line) of the result (`documents_file.read_documents`).
    :param vectors: Filled with id -> (chunk, its vector row) of the result's chunks that have one.
    :raises IndexDamagedError: A damaged file (named, with the fix).
    """
    base = documents_file.read_documents(folder / artifact.file, lines, vectors)
    if not artifact.deltas:
        return base
    chunks = {d.id: d for d in base}
    for delta in artifact.deltas:
        path = folder / delta.file
        added = documents_file.read_documents(path, lines, vectors)
        try:
            with np.load(path, allow_pickle=False) as data:
                removed = json.loads(data["removed"].tobytes().decode("utf-8"))
        except (OSError, ValueError, KeyError) as error:
            raise IndexDamagedError(f"{path}: damaged documents delta ({error}); {rebuild_hint(folder)}") from error
        for document_id in removed:
            chunks.pop(document_id, None)
            if lines is not None:  # a delta's removed ids and its added chunks are disjoint
                lines.pop(document_id, None)
            if vectors is not None:
                vectors.pop(document_id, None)
        for document in added:
            chunks.pop(document.id, None)
            chunks[document.id] = document
            if vectors is not None and document.embedding is None:
                vectors.pop(document.id, None)  # its earlier version's vector describes it no longer
    return list(chunks.values())


def load_index_dictionary(path: Path) -> AliasDictionary:
    """
    `AliasDictionary.load` for `<index dir>/dictionary.json` (the logical name) or a dictionary file: through the
    folder's manifest, with the chain's deltas applied; any other path is read as it is.

    :raises DictionaryError: A missing or damaged file (named).
    """
    folder = path.parent
    manifest = current_manifest(folder) if path.name == DICTIONARY_FILE else None
    if manifest is not None and not manifest.legacy and manifest.dictionary is not None:
        return load_dictionary(folder, manifest.dictionary)
    return AliasDictionary.load(resolve_dictionary_file(path))
