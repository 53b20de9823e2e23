"""
Which retrieval an index was built for: "hybrid" (BM25 + embeddings, the default) or "lexical" (BM25 only, no
model: `code-alias index --lexical`, `CodeSearch(lexical=True)`).

The choice is recorded in `<index dir>/retrieval.json` when a build starts, so that `code-alias ask` (and any
`CodeSearch` left at `lexical=None`) answers a lexical index with the lexical pipeline, without the flag and
without loading a model. An index keeps the retrieval it was built with: a refresh embeds only changed files, so
turning a lexical index into a hybrid one would leave most chunks without vectors; that request is refused with
the fix (another `--index-dir`, or delete the folder), and so is the opposite.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal, cast

from ..core.model import atomic_write_bytes, read_json_object
from ..errors import CodeAliasError

Retrieval = Literal["hybrid", "lexical"]
MODE_FILE = "retrieval.json"


class RetrievalMismatchError(ValueError, CodeAliasError):
    """A request for the other retrieval than the index was built for (hybrid on a lexical index, or the reverse)."""


def flag(retrieval: Retrieval) -> str:
    """How a user asks for a retrieval on the command line."""
    return "--lexical" if retrieval == "lexical" else "no --lexical"


def recorded_retrieval(folder: Path) -> Retrieval | None:
    """
    The retrieval recorded for the index in `folder`, or None (no record: a new index, or one built before the
    record existed, which were all hybrid unless built with `lexical=True`).
    """
    path = folder / MODE_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as error:
        raise RetrievalMismatchError(f"{path}: unreadable ({error}); delete it and index again") from error
    value = data.get("retrieval") if isinstance(data, dict) else None
    if value not in ("hybrid", "lexical"):
        raise RetrievalMismatchError(f"{path}: 'retrieval' must be 'hybrid' or 'lexical', got {value!r}")
    return cast(Retrieval, value)


def record_retrieval(folder: Path, retrieval: Retrieval) -> None:
    """Write the record (atomically) when it is missing or different."""
    if recorded_retrieval(folder) == retrieval:
        return
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(folder / MODE_FILE, json.dumps({"retrieval": retrieval}).encode("utf-8"))


def choose_for_query(folder: Path, lexical: bool | None) -> Retrieval:
    """
    The retrieval a question on the index in `folder` runs with.

    :param lexical: True: lexical (on any index: BM25 needs no vectors). None: what the index was built for.
        False: hybrid, which a lexical index cannot give (its chunks have no vectors).
    :raises RetrievalMismatchError: Hybrid asked of a lexical index.
    """
    if lexical:
        return "lexical"
    recorded = recorded_retrieval(folder) or "hybrid"
    if lexical is False and recorded == "lexical":
        raise RetrievalMismatchError(
            f"the index in {folder} was built with --lexical (BM25 only, no vectors), so it cannot answer with "
            f"hybrid retrieval; ask it lexically (`code-alias ask QUESTION --lexical`, CodeSearch(lexical=True) or "
            f"lexical=None to follow the index), or build a hybrid index in another folder: "
            f"`code-alias index PATH --index-dir OTHER`"
        )
    return recorded


def choose_for_build(folder: Path, lexical: bool | None, *, has_documents: bool) -> Retrieval:
    """
    The retrieval a build of the index in `folder` runs with.

    :param lexical: True / False: lexical / hybrid; None: the recorded one (a refresh), hybrid for a new index.
    :param has_documents: Whether the folder holds indexed chunks (an index without any may change retrieval).
    :raises RetrievalMismatchError: An existing index asked to change retrieval.
    """
    recorded = recorded_retrieval(folder) if has_documents else None
    wanted: Retrieval | None = None if lexical is None else ("lexical" if lexical else "hybrid")
    if recorded is None:
        return wanted or "hybrid"
    if wanted is None or wanted == recorded:
        return recorded
    raise RetrievalMismatchError(
        f"the index in {folder} was built for {recorded} retrieval ({flag(recorded)}); a refresh re-indexes only "
        f"changed files, so it cannot become {wanted}: index into another folder (`--index-dir OTHER`) or delete "
        f"{folder} first"
    )


def recorded_semantic_hints(folder: Path) -> bool | None:
    """Whether the index records symbol-card vectors for semantic hints (None: no record)."""
    data = read_json_object(folder / MODE_FILE)
    value = data.get("semantic_hints") if data is not None else None
    return value if isinstance(value, bool) else None


def choose_semantic_hints(folder: Path, retrieval: Retrieval, semantic_hints: bool | None) -> bool:
    """
    Whether a build makes symbol cards: as asked; else as recorded; else on for hybrid (the model is loaded
    anyway) and off for lexical (plain `--lexical` stays model-free; `--semantic-hints` turns them on).
    """
    if semantic_hints is not None:
        return semantic_hints
    recorded = recorded_semantic_hints(folder)
    return recorded if recorded is not None else retrieval == "hybrid"


def record_semantic_hints(folder: Path, on: bool) -> None:
    """Add the semantic-hints choice to the retrieval record (atomically; the retrieval must be recorded first)."""
    path = folder / MODE_FILE
    data = json.loads(path.read_text(encoding="utf-8"))
    if data.get("semantic_hints") == on:
        return
    data["semantic_hints"] = on
    atomic_write_bytes(path, json.dumps(data).encode("utf-8"))
