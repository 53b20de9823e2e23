"""A small repository as the sync sees it (files and their chunks, made by hand), shared by the in-memory and the
Elasticsearch sync tests."""

from __future__ import annotations

import hashlib

from haystack import Document

from haystack_integrations.components.code_alias.core.chunking import CHUNKER_VERSION

REPO: dict[str, list[tuple[str, str]]] = {
    "pay/retry.py": [("withStripeBackoff", "def withStripeBackoff(fn):\n    return retry(fn)"), ("", "import time")],
    "pay/client.py": [("StripeClient", "class StripeClient:\n    pass")],
    "auth/gate.py": [("AccessGate", "class AccessGate:\n    pass"), ("allow", "def allow(user):\n    return True")],
}


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def file_text(chunks: list[tuple[str, str]]) -> str:
    return "\n\n".join(body for _, body in chunks)


def file_documents(repo: dict[str, list[tuple[str, str]]]) -> list[Document]:
    """What CodeFileReader yields: one Document per file."""
    return [
        Document(
            content=file_text(chunks),
            meta={"file_path": path, "language": "python", "file_sha256": sha(file_text(chunks))},
        )
        for path, chunks in repo.items()
    ]


def split(files: list[Document], repo: dict[str, list[tuple[str, str]]]) -> list[Document]:
    """What CodeSplitter yields for `files`: one chunk per definition, with the file's hash and chunk count."""
    chunks: list[Document] = []
    for file in files:
        path = file.meta["file_path"]
        parts = repo[path]
        for number, (symbol, body) in enumerate(parts, start=1):
            chunks.append(
                Document(
                    content=body,
                    meta={
                        "file_path": path,
                        "language": "python",
                        "symbol": symbol or None,
                        "qualified_name": f"{path[:-3].replace('/', '.')}.{symbol}" if symbol else None,
                        "kind": "function" if symbol else "module",
                        "package": None,
                        "start_line": number,
                        "end_line": number,
                        "file_sha256": file.meta["file_sha256"],
                        "file_chunk_count": len(parts),
                        "chunker": CHUNKER_VERSION,
                    },
                )
            )
    return chunks


def expected(repo: dict[str, list[tuple[str, str]]]) -> dict[str, list[str]]:
    return {path: sorted(body for _, body in chunks) for path, chunks in sorted(repo.items())}
