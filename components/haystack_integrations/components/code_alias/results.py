"""`FileRanker`: ranked chunks -> ranked files, each with its best symbols and line ranges."""

from __future__ import annotations

from typing import Any

from haystack import Document, component, default_from_dict, default_to_dict


def rank_files(documents: list[Document], top_k: int | None = None) -> list[dict[str, Any]]:
    """
    Group ranked chunks by file: a file ranks by its best chunk; its chunks are listed best first.

    :param documents: Chunks, best first, with `meta.file_path`.
    :param top_k: Most files to return.
    """
    files: dict[str, dict[str, Any]] = {}
    for rank, document in enumerate(documents, 1):
        meta = document.meta
        path = meta.get("file_path")
        if not path:
            continue
        entry = files.setdefault(path, {"file_path": path, "score": document.score or 0.0, "rank": rank, "hits": []})
        entry["hits"].append(
            {
                "symbol": meta.get("symbol"),
                "qualified_name": meta.get("qualified_name"),
                "kind": meta.get("kind"),
                "start_line": meta.get("start_line"),
                "end_line": meta.get("end_line"),
                "score": document.score,
            }
        )
    ranked = sorted(files.values(), key=lambda f: f["rank"])
    return ranked[:top_k] if top_k else ranked


@component
class FileRanker:
    """
    Turns a chunk ranking into a file ranking for display and file-level evaluation.

    ### Usage example

    ```python
    from haystack_integrations.components.code_alias import FileRanker

    files = FileRanker(top_k=5).run(documents=retrieved_documents)["files"]
    for f in files:
        print(f["file_path"], [h["symbol"] for h in f["hits"]])
    ```

    :param top_k: Most files to return.
    """

    def __init__(self, *, top_k: int = 10) -> None:
        self.top_k = top_k

    @component.output_types(files=list[dict[str, Any]], documents=list[Document])
    def run(self, documents: list[Document], top_k: int | None = None) -> dict[str, Any]:
        """
        :param documents: Ranked chunks.
        :param top_k: Overrides the init `top_k`.
        :returns: `files` (file_path, score, rank, hits with symbol and lines) and the `documents` unchanged.
        """
        return {"files": rank_files(documents, top_k or self.top_k), "documents": documents}

    @component.output_types(files=list[dict[str, Any]], documents=list[Document])
    async def run_async(self, documents: list[Document], top_k: int | None = None) -> dict[str, Any]:
        return self.run(documents=documents, top_k=top_k)

    def to_dict(self) -> dict[str, Any]:
        return default_to_dict(self, top_k=self.top_k)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FileRanker:
        return default_from_dict(cls, data)
