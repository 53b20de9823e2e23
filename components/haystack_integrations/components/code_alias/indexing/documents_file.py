"""A documents file of an index folder: the chunks as JSON lines plus one float32 matrix of vectors, in an `.npz`.

`store.py` (the whole file a build writes) and `index_delta.py` (the deltas, the same layout plus removed ids) both
write and read this format; it lives here so that neither imports the other.
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import numpy as np
from haystack import Document

from ..errors import CodeAliasError
from .index_files import IndexDamagedError, rebuild_hint, write_or_explain


class IndexNotFoundError(FileNotFoundError, CodeAliasError):
    """No index at the configured folder (says how to build one)."""


def write_documents_file(path: Path, documents: list[Document]) -> None:
    """Documents as JSON lines plus one float32 matrix of embeddings, in one `.npz`, written atomically."""
    write_or_explain(path, documents_file_bytes(documents))


def documents_file_bytes(documents: list[Document], lines: dict[str, tuple[Document, str]] | None = None) -> bytes:
    """
    The `.npz` bytes of `write_documents_file`.

    :param lines: id -> (chunk, its JSON line) from the last call: reused for the same chunk objects, and
        updated to hold exactly `documents`.
    """
    known = lines if lines is not None else {}
    current: dict[str, tuple[Document, str]] = {}
    records: list[str] = []
    dimension = next((len(d.embedding) for d in documents if d.embedding is not None), 0)
    matrix = np.zeros((len(documents), dimension), dtype=np.float32)
    has_embedding = np.zeros(len(documents), dtype=bool)
    for row, document in enumerate(documents):
        line = record_line(document, known.get(document.id))
        current[document.id] = (document, line)
        records.append(line)
        if document.embedding is not None and len(document.embedding) == dimension:
            matrix[row] = document.embedding
            has_embedding[row] = True
    if lines is not None:
        lines.clear()
        lines.update(current)
    buffer = io.BytesIO()
    payload = "\n".join(records).encode("utf-8")
    np.savez(
        buffer,
        documents=np.frombuffer(payload, dtype=np.uint8),
        embeddings=matrix,
        has_embedding=has_embedding,
    )
    return buffer.getvalue()


def record_line(document: Document, known: tuple[Document, str] | None) -> str:
    """The saved JSON line of `document`: `known`'s line when `known` holds the same chunk."""
    # Compared by value too: a chunk read back from a file is another object with the same fields.
    if known is not None and (known[0] is document or same_record(known[0], document)):
        return known[1]
    # Code chunks carry text and meta only; writing those fields directly is ~10x faster than to_dict().
    if document.blob is not None or document.sparse_embedding is not None:
        record = document.to_dict(flatten=False)
        record.pop("embedding", None)
        record.pop("score", None)
    else:
        record = {"id": document.id, "content": document.content, "meta": document.meta}
    return json.dumps(record, ensure_ascii=False)


def same_record(old: Document, new: Document) -> bool:
    """Whether two chunks save as the same JSON line (text and meta equal, nothing else set); vectors aside."""
    return (
        old.content == new.content
        and old.meta == new.meta
        and old.blob is None
        and new.blob is None
        and old.sparse_embedding is None
        and new.sparse_embedding is None
    )


def read_documents(
    path: Path,
    lines_out: dict[str, tuple[Document, str]] | None = None,
    vectors_out: dict[str, tuple[Document, np.ndarray]] | None = None,
) -> list[Document]:
    """
    Read what `write_documents_file` wrote; a damaged file raises `IndexDamagedError` naming it and the fix.

    :param lines_out: Filled with id -> (chunk, its JSON line as saved), for a writer's next delta.
    :param vectors_out: Filled with id -> (chunk, its vector as a float32 row of the file's matrix).
    """
    try:
        with np.load(path, allow_pickle=False) as data:
            payload = data["documents"].tobytes().decode("utf-8")
            matrix = data["embeddings"]
            has_embedding = data["has_embedding"]
        documents = []
        lines = payload.splitlines() if payload else []
        if len(has_embedding) != len(lines) or (matrix.size and len(matrix) != len(lines)):
            raise ValueError(f"{len(lines)} documents but {len(has_embedding)} embedding rows")
        for row, line in enumerate(lines):
            record = json.loads(line)
            embedding = matrix[row].tolist() if has_embedding[row] else None
            if record.keys() <= {"id", "content", "meta"}:
                content, meta = record["content"], record["meta"]
                document = Document(id=record["id"], content=content, meta=meta, embedding=embedding)
            else:
                record["embedding"] = embedding
                document = Document.from_dict(record)
            documents.append(document)
            if lines_out is not None:
                lines_out[document.id] = (document, line)
            if vectors_out is not None and embedding is not None:
                vectors_out[document.id] = (document, matrix[row])
    except FileNotFoundError as error:
        raise IndexNotFoundError(f"{path}: no documents file; {rebuild_hint(path.parent)}") from error
    except (OSError, ValueError, KeyError, IndexError, TypeError, EOFError, zipfile.BadZipFile) as error:
        message = " ".join(str(error).split())[:200]
        raise IndexDamagedError(
            f"{path}: damaged documents file ({type(error).__name__}: {message}); {rebuild_hint(path.parent)}"
        ) from error
    return documents
