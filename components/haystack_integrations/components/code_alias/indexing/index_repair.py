"""Before a build: repair what a killed or failed writer left in an index folder.

Apart from `index_files.py` because checking a legacy documents file reads it (`documents_file.py`), which itself
writes through `index_files`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..core.model import AliasDictionary
from .documents_file import read_documents
from .index_files import (
    MANIFEST_FILE,
    IndexDamagedError,
    Kind,
    check_artifact,
    commit,
    manifest_path,
    read_manifest,
    remove_temporaries,
)


def prepare_for_indexing(folder: Path) -> list[str]:
    """
    Before a build (holding the lock): drop what a killed or failed writer left and what no longer reads, so the
    build starts from the intact part of the index. Returns one note per repair.

    A damaged manifest is moved aside (the build starts empty; vectors still come from the embedding cache); a
    damaged dictionary or documents file is dropped from the manifest (a full dictionary build, or a full re-split).
    """
    notes: list[str] = []
    if not folder.is_dir():
        return notes
    remove_temporaries(folder)
    try:
        manifest = read_manifest(folder)
    except IndexDamagedError as error:
        aside = manifest_path(folder).with_name(f"{MANIFEST_FILE}.damaged")
        os.replace(manifest_path(folder), aside)
        notes.append(f"{error} (moved aside to {aside.name}; rebuilding)")
        manifest = None
    if manifest is None:
        return notes
    dropped: dict[str, Any] = {}
    kinds: tuple[Kind, ...] = ("dictionary", "documents")
    for kind in kinds:
        artifact = manifest.artifact(kind)
        if artifact is None:
            continue
        try:
            if manifest.legacy:
                _load_legacy(folder / artifact.file, kind)
            else:
                check_artifact(folder, artifact, full=True)
        except (IndexDamagedError, OSError) as error:
            notes.append(f"{str(error).splitlines()[0]} (rebuilding it)")
            dropped[kind] = None
        except Exception as error:  # a legacy file that its own reader rejects
            notes.append(f"{folder / artifact.file}: unreadable ({type(error).__name__}: {error}) (rebuilding it)")
            dropped[kind] = None
    if dropped:
        commit(folder, **dropped)
    return notes


def _load_legacy(path: Path, kind: str) -> None:
    if kind == "dictionary":
        AliasDictionary.load(path)
    else:
        read_documents(path)
