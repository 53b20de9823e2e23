"""`CodeSplitter`: file Documents -> one Document per definition plus the module remainder."""

from __future__ import annotations

from haystack import Document, component

from ..core.chunking import CHUNKER_VERSION, MAX_CHUNK_LINES, TEXT_ONLY, chunk_file, too_many_definitions
from ..core.model import AliasDictionary
from ..core.symbols import extract_symbols, language_for_path
from ..serialization import SerializedByInitParameters


@component
class CodeSplitter(SerializedByInitParameters):
    """
    Splits source files into retrieval chunks along their definitions (tree-sitter).

    Each chunk's meta: `file_path`, `language`, `symbol`, `qualified_name`, `kind`, `package`, `start_line`,
    `end_line`, plus `file_sha256` and `file_chunk_count` from the file (so an index sync can tell a complete
    file from a half-written one), and `chunker` (`CHUNKER_VERSION`: a file cut by an older release is re-split).
    A JavaScript / TypeScript definition's chunk whose text starts with its doc comment also has `comment_lines`, the
    comment's lines above `start_line` (the text reads from `start_line - comment_lines`). A chunk whose text is not
    the one run of lines from its first line to `end_line` (a class outline of its members' signature lines, the
    first part of a long chunk) has `line_runs`, the file's number of each of its lines (`core.line_runs`).
    When the alias dictionary is given, its parsed symbols are reused instead of parsing again.

    ### Usage example

    ```python
    from haystack import Document
    from haystack_integrations.components.code_alias import CodeSplitter

    file = Document(content="def withStripeBackoff(fn):\\n    return fn()\\n", meta={"file_path": "pay/retry.py"})
    for chunk in CodeSplitter().run(documents=[file])["documents"]:
        print(chunk.meta["qualified_name"], chunk.meta["start_line"], chunk.meta["end_line"])
    ```

    :param max_chunk_lines: Longest chunk in lines; longer definitions are cut.
    """

    def __init__(self, *, max_chunk_lines: int = MAX_CHUNK_LINES) -> None:
        self.max_chunk_lines = max_chunk_lines

    @component.output_types(documents=list[Document])
    def run(self, documents: list[Document], dictionary: AliasDictionary | None = None) -> dict[str, list[Document]]:
        """
        :param documents: One Document per file (content = file text, `meta.file_path` set).
        :param dictionary: Optional; supplies parsed symbols and each file's package.
        :returns: `documents`, the chunks.
        """
        chunks: list[Document] = []
        for document in documents:
            file_path = document.meta.get("file_path")
            if not file_path:
                raise ValueError(f"CodeSplitter: document {document.id} has no meta.file_path")
            language = document.meta.get("language") or language_for_path(file_path)
            if not language or document.content is None:
                continue
            repo = document.meta.get("repo")
            record = dictionary.file_record(file_path, repo) if dictionary is not None else None
            digest = document.meta.get("file_sha256")
            same = record is not None and (digest is None or record.sha256 == digest)
            if same and record is not None and (record.error is None or record.error.endswith(TEXT_ONLY)):
                symbols = record.symbols  # none for a file of too many definitions: chunked as text
            else:
                symbols = extract_symbols(document.content, language, file_path)
                if too_many_definitions(len(symbols)):
                    symbols = []
            package = document.meta.get("package")
            if package is None and dictionary is not None:
                package = dictionary.package_for_file(file_path, repo)
            pieces = chunk_file(document.content, symbols, max_lines=self.max_chunk_lines)
            for piece in pieces:
                chunks.append(
                    Document(
                        content=piece.content,
                        meta={
                            "file_path": file_path,
                            "language": language,
                            "symbol": piece.symbol,
                            "qualified_name": piece.qualified_name,
                            "kind": piece.kind,
                            "package": package,
                            "start_line": piece.start_line,
                            "end_line": piece.end_line,
                            "file_sha256": digest,
                            "file_chunk_count": len(pieces),
                            "chunker": CHUNKER_VERSION,
                            **({"repo": repo} if repo is not None else {}),
                            # Only where there is one: other chunks keep the meta (and so the ids) they had.
                            **({"comment_lines": piece.comment_lines} if piece.comment_lines else {}),
                            **({"line_runs": piece.line_runs} if piece.line_runs else {}),
                        },
                    )
                )
        return {"documents": chunks}
