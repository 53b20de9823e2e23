"""`AliasDictionaryBuilder`: the Haystack component around `core.builder.DictionaryBuilder`."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from haystack import Document, component, logging
from haystack.utils import deserialize_component_inplace

from ..core.builder import DictionaryBuilder, SourceText, load_mapping_file
from ..core.cards import CARDS_PREFIX, cards_prefix
from ..core.model import AliasDictionary, DictionaryError
from ..core.repositories import check_repo_name, merge_part, part_of
from ..core.walker import DEFAULT_EXCLUDED_DIRS, WalkConfig
from ..paths import DICTIONARY_FILE, INDEX_DIR_ENV, index_dir_for_root, resolve_index_dir
from ..serialization import SerializedByInitParameters, from_init_parameters
from .card_vectors import component_embedder, embedder_identity, refresh_card_vectors
from .dictionary_handle import DictionaryHandle, dictionary_file
from .index_delta import load_index_dictionary
from .index_files import publish_dictionary, resolve_dictionary_file

logger = logging.getLogger(__name__)


@component
class AliasDictionaryBuilder(SerializedByInitParameters):
    """
    Builds the alias/symbol dictionary of a code tree, incrementally.

    Reads package manifests (package.json, pyproject.toml, setup.cfg, setup.py, Cargo.toml, go.mod), extracts
    defined and exported symbols with tree-sitter (Python, JavaScript, TypeScript, Go, Rust, Java), and gives
    every symbol its aliases: the word split of its name, the content words of its docstring or leading comment,
    nicknames from a YAML file, and names that a rename retired. When a dictionary already exists at
    `dictionary_path`, only changed files are re-read, and the result is saved back atomically.

    In an index folder (no `dictionary_path`) a saved dictionary becomes the folder's current one at once; the
    indexing pipelines instead pass it (`save=False`) to `DocumentStorePersister`, which makes it current together
    with the documents of the same build.

    ### Usage example

    ```python
    from haystack_integrations.components.code_alias import AliasDictionaryBuilder

    builder = AliasDictionaryBuilder()                  # saves into path/to/repo/.code-alias/
    result = builder.run(root="path/to/repo")
    dictionary = result["dictionary"]
    print(result["stats"], dictionary.resolve_symbol("withStripeBackoff"))
    ```

    With `embedder` (any Haystack document or text embedder: sentence-transformers, OpenAI, Ollama, fastembed...)
    it also embeds one short card per symbol (kind, name words, package, docstring words) and saves the vectors
    beside the dictionary with the embedder's identity, so that `ConstrainedQueryRewriter` can offer the symbols
    nearest in meaning to a question ("payments retry helper" -> `withStripeBackoff`) in any pipeline:

    ```python
    from haystack_integrations.components.embedders.sentence_transformers import (
        SentenceTransformersDocumentEmbedder,
    )

    builder = AliasDictionaryBuilder(
        index_dir="my-index",
        embedder=SentenceTransformersDocumentEmbedder(model="sentence-transformers/all-MiniLM-L6-v2"),
    )
    print(builder.run(root="path/to/repo")["cards"])   # {'cards': 25, 'embedded': 25, ...}
    ```

    :param dictionary_path: The dictionary file, where it is saved (and read back for an incremental refresh).
        None = the index folder's current dictionary: `<index dir>/dictionary.json` names it, and the build is
        written as `dictionary-<build>.json` beside the folder's manifest.
    :param index_dir: The index folder; None = `$CODE_ALIAS_INDEX_DIR`, else `<root>/.code-alias` of the tree
        being read (as `code-alias index ROOT` does; a tree that cannot be written gets a folder in the user
        cache), else, for `documents` alone, `./.code-alias`.
    :param nicknames_path: YAML `nickname: [Symbol, ...]` (symbols or packages). The repository's own
        `.code-alias-nicknames.yml` is read as well.
    :param abbreviations_path: YAML `abbreviation: [expansion, ...]`; None = the packaged table.
    :param exclude_dirs: Folder names never entered; None = vendored and generated folders.
    :param max_file_bytes: Larger files are skipped and reported.
    :param respect_gitignore: Leave out what the repository's `.gitignore` files ignore.
    :param save: Write the dictionary to `dictionary_path` after building.
    :param embedder: A Haystack embedder for the symbol cards (see above); None = no cards. The question must then
        be embedded by the same model (the rewriter checks).
    """

    def __init__(
        self,
        *,
        dictionary_path: str | None = None,
        index_dir: str | None = None,
        nicknames_path: str | None = None,
        abbreviations_path: str | None = None,
        exclude_dirs: list[str] | None = None,
        max_file_bytes: int = 1_000_000,
        respect_gitignore: bool = True,
        save: bool = True,
        embedder: Any | None = None,
    ) -> None:
        self.dictionary_path = dictionary_path
        self.index_dir = index_dir
        self.nicknames_path = nicknames_path
        self.abbreviations_path = abbreviations_path
        self.exclude_dirs = exclude_dirs
        self.max_file_bytes = max_file_bytes
        self.respect_gitignore = respect_gitignore
        self.save = save
        self.embedder = embedder

    def warm_up(self) -> None:
        """Warm the card embedder up (loads its model), when there is one."""
        if self.embedder is not None and hasattr(self.embedder, "warm_up"):
            self.embedder.warm_up()

    def _location(self, root: str | None) -> Path:
        """The dictionary's logical file (class docstring: `dictionary_path`, `index_dir`)."""
        if self.dictionary_path or self.index_dir or os.environ.get(INDEX_DIR_ENV):
            return dictionary_file(self.dictionary_path, self.index_dir)
        if root is None:
            return resolve_index_dir(None) / DICTIONARY_FILE  # `documents` alone: no tree to put it in
        folder, moved = index_dir_for_root(Path(root).resolve())
        if moved:
            logger.info("{moved}", moved=moved)
        return folder / DICTIONARY_FILE

    def _builder(self) -> DictionaryBuilder:
        walk_config = WalkConfig(
            exclude_dirs=frozenset(self.exclude_dirs) if self.exclude_dirs is not None else DEFAULT_EXCLUDED_DIRS,
            max_file_bytes=self.max_file_bytes,
            respect_gitignore=self.respect_gitignore,
        )
        return DictionaryBuilder(
            walk_config=walk_config,
            nicknames=load_mapping_file(self.nicknames_path) if self.nicknames_path else None,
            abbreviations=load_mapping_file(self.abbreviations_path) if self.abbreviations_path else None,
        )

    def _previous(self, path: Path, logical: Path) -> AliasDictionary | None:
        held = DictionaryHandle.for_path(logical).loaded()  # a server that just saved it holds it: no re-read
        if held is not None:
            return held
        if not path.is_file():
            return None
        try:
            return load_index_dictionary(logical)  # the manifest's file with its deltas applied
        except DictionaryError as error:
            logger.warning("Ignoring the previous dictionary, doing a full build: {error}", error=error)
            return None

    @component.output_types(
        dictionary=AliasDictionary, stats=dict[str, Any], skipped=list[dict[str, str]], cards=dict[str, Any]
    )
    def run(
        self,
        root: str | None = None,
        documents: list[Document] | None = None,
        repo: str | None = None,
        paths: list[str] | None = None,
    ) -> dict[str, Any]:
        """
        Build or refresh the dictionary.

        :param root: A repository folder to read.
        :param paths: With `root`: only these files (relative to it) may have changed, as a push says; the tree
            is not walked when they are files the last build read (`DictionaryBuilder.refresh_paths`), and is
            walked otherwise. None (default): walk the tree.
        :param documents: Or: Documents whose `meta.file_path` and `content` stand for the files.
        :param repo: The repository's name in an index of several: only its part of the dictionary is rebuilt
            (its symbols and packages carry `repo`), the other repositories' entries are kept. None = the
            dictionary is this one tree's alone.
        :returns: `dictionary`, `stats` (files read/parsed/reused, symbols, packages, seconds, renames, and `path`:
            the dictionary's file), `skipped` (path and reason for every file that was not used) and `cards` (with
            an `embedder`: cards, embedded, reused, seconds, file; else empty).
        """
        if root is None and documents is None:
            raise ValueError("AliasDictionaryBuilder needs `root` (a folder) or `documents`")
        started = time.perf_counter()
        path = self._location(root)
        combined = self._previous(resolve_dictionary_file(path) if self.dictionary_path is None else path, path)
        previous = combined if repo is None else part_of(combined, check_repo_name(repo))
        builder = self._builder()
        if root is not None:
            folder = Path(root)
            if not folder.is_dir():
                raise FileNotFoundError(f"{root}: not a folder")
            quick = builder.refresh_paths(folder, previous, paths) if paths is not None else None
            dictionary, stats = quick if quick is not None else builder.refresh(folder, previous)
        else:
            sources = [
                SourceText(rel_path=str(d.meta["file_path"]), text=d.content or "")
                for d in documents or []
                if d.meta.get("file_path")
            ]
            dictionary, stats = builder.build_from_texts(sources, previous)
        if repo is not None:
            dictionary = merge_part(combined, repo, dictionary)
        if self.save and self.dictionary_path is None:
            publish_dictionary(path.parent, dictionary)
        elif self.save:
            dictionary.save(path)
        report = {
            **stats.as_dict(),
            "seconds": round(time.perf_counter() - started, 4),
            "version": dictionary.version,
            "path": str(path),
        }
        skipped = [{"path": s.path, "reason": s.reason} for s in dictionary.skipped]
        return {"dictionary": dictionary, "stats": report, "skipped": skipped, "cards": self._cards(path, dictionary)}

    def _cards(self, path: Path, dictionary: AliasDictionary) -> dict[str, Any]:
        """The symbol cards of `dictionary`, embedded with `embedder` beside its file (only new card texts)."""
        if self.embedder is None:
            return {}
        prefix = cards_prefix(path) if self.dictionary_path else CARDS_PREFIX
        return refresh_card_vectors(
            path.parent,
            dictionary,
            component_embedder(self.embedder),
            embedder=embedder_identity(self.embedder),
            prefix=prefix,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AliasDictionaryBuilder:
        init_params = data.get("init_parameters", {})
        if init_params.get("embedder") is not None:
            deserialize_component_inplace(init_params, key="embedder")
        return from_init_parameters(cls, data)
