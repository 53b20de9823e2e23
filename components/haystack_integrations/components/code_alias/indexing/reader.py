"""`CodeFileReader`: a repository folder -> one Document per source file (safely walked)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from haystack import Document, component

from ..core.model import AliasDictionary, Skipped
from ..core.symbols import LANGUAGE_BY_EXTENSION, language_for_path
from ..core.walker import DEFAULT_EXCLUDED_DIRS, WalkConfig, read_text_file, walk_repository
from ..progress import progress_bar
from ..serialization import SerializedByInitParameters


def _is_source(rel_path: str) -> bool:
    dot = rel_path.rfind(".")
    return dot > rel_path.rfind("/") + 1 and rel_path[dot:] in LANGUAGE_BY_EXTENSION


def source_document(
    rel_path: str, text: str, digest: str, dictionary: AliasDictionary | None, repo: str | None
) -> Document:
    """The file Document `CodeFileReader` makes of one source file (also used by a sync of pushed paths)."""
    return Document(
        content=text,
        meta={
            "file_path": rel_path,
            "language": language_for_path(rel_path),
            "file_sha256": digest,
            "package": dictionary.package_for_file(rel_path, repo) if dictionary else None,
            **({"repo": repo} if repo is not None else {}),
        },
    )


def is_source_path(rel_path: str) -> bool:
    """Whether `CodeFileReader` reads a file of this name (a language it splits)."""
    return _is_source(rel_path)


@component
class CodeFileReader(SerializedByInitParameters):
    """
    Reads the source files of a repository into Documents, skipping what should not be indexed.

    Vendored and generated folders, binary and non-UTF-8 files, files over the size limit, symlink loops and
    links that leave the root are skipped and reported, never fatal.

    ### Usage example

    ```python
    from haystack_integrations.components.code_alias import CodeFileReader

    result = CodeFileReader().run(root="path/to/repo")
    print(len(result["documents"]), result["skipped"][:3])
    ```

    :param exclude_dirs: Folder names never entered; None = vendored and generated folders.
    :param max_file_bytes: Larger files are skipped.
    :param respect_gitignore: Leave out what the repository's `.gitignore` files ignore.
    :param progress_bar: Show a progress bar while reading.
    """

    def __init__(
        self,
        *,
        exclude_dirs: list[str] | None = None,
        max_file_bytes: int = 1_000_000,
        respect_gitignore: bool = True,
        progress_bar: bool = True,
    ) -> None:
        self.exclude_dirs = exclude_dirs
        self.max_file_bytes = max_file_bytes
        self.respect_gitignore = respect_gitignore
        self.progress_bar = progress_bar

    @component.output_types(documents=list[Document], skipped=list[dict[str, str]], root=str)
    def run(self, root: str, dictionary: AliasDictionary | None = None, repo: str | None = None) -> dict[str, Any]:
        """
        :param root: The repository folder.
        :param dictionary: When given, each file's `package` comes from it.
        :param repo: The repository's name in an index of several; set as each Document's `meta.repo`.
        :returns: `documents` (content = file text; meta file_path, language, file_sha256, package), `skipped`
            (path, reason), and the resolved `root`.
        """
        folder = Path(root)
        if not folder.is_dir():
            raise FileNotFoundError(f"{root}: not a folder")
        config = WalkConfig(
            exclude_dirs=frozenset(self.exclude_dirs) if self.exclude_dirs is not None else DEFAULT_EXCLUDED_DIRS,
            max_file_bytes=self.max_file_bytes,
            respect_gitignore=self.respect_gitignore,
        )
        walk = walk_repository(folder, config, wanted=_is_source)
        skipped: list[Skipped] = list(walk.skipped)
        documents: list[Document] = []
        for entry in progress_bar(walk.files, desc="Reading files", unit="file", enabled=self.progress_bar):
            read = read_text_file(entry, max_bytes=self.max_file_bytes)
            if isinstance(read, Skipped):
                skipped.append(read)
                continue
            text, digest = read
            documents.append(source_document(entry.rel_path, text, digest, dictionary, repo))
        return {
            "documents": documents,
            "skipped": [{"path": s.path, "reason": s.reason} for s in skipped],
            "root": str(folder.resolve()),
        }
