"""`IndexGeneration`: one generation of an index folder, as a question reads it from start to end.

A question reads the index several times: BM25 ranks the chunks, the rewriter looks the question up in the
dictionary's hint index, the definition lookup and the vector search read the chunks again, the faithfulness
filter checks names against the dictionary. A sync or a re-index may make a new build current between two of those
reads. Pinning the manifest alone does not make them agree: the chunks and the dictionary this process serves are
shared by every question in flight, so one question reloading its pinned build swapped them under another (a
rewrite that named a symbol of the new build while the chunks it then read were the old build's).

So a question takes the whole generation at its start (`CodeIndex.pinned`): the manifest, the chunks (the served
document set as it is then: later swaps replace the served set's contents, never the objects a generation holds),
the dictionary and its hint index, all of one build. While it is pinned, every store, dictionary handle and derived
cache of that folder in the same context reads it, and nothing they do reloads or swaps what other questions
serve. `to_dict` is what an answer reports, so a client can check that the rewrite and the files agree.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .index_files import IndexManifest, pinned_manifest

if TYPE_CHECKING:
    from ..core.model import AliasDictionary
    from ..rewriting.hints import HintIndex
    from .code_index import DocumentSet

__all__ = ["IndexGeneration", "pinned_generation", "pinning"]


@dataclass(frozen=True, eq=False)
class IndexGeneration:
    """
    One build of an index folder as this process serves it: its manifest, chunks, dictionary and hint index.

    :param folder: The index folder (resolved).
    :param manifest: The manifest of the build (None: nothing saved yet).
    :param documents: The served chunks of that build (a snapshot of the served `DocumentSet`; None where the
        chunks live elsewhere, e.g. Elasticsearch).
    :param dictionary: The build's alias dictionary (None: none saved yet).
    :param hints: The dictionary's hint index.
    """

    folder: Path
    manifest: IndexManifest | None
    documents: DocumentSet | None
    dictionary: AliasDictionary | None
    hints: HintIndex | None

    @property
    def build(self) -> str | None:
        """The manifest's build id (changes with every saved build, in every process)."""
        return self.manifest.build if self.manifest is not None else None

    def to_dict(self) -> dict[str, Any]:
        """
        What an answer reports of the generation it was computed from: the build id, the dictionary's version,
        the chunks served and how many of them have a vector.
        """
        chunks = None if self.documents is None else len(self.documents.storage)
        embedded = None
        if self.manifest is not None and self.manifest.documents is not None:
            embedded = self.manifest.documents.embedded
        return {
            "build": self.build,
            "dictionary_version": self.dictionary.version if self.dictionary is not None else None,
            "documents": chunks,
            "embedded": embedded,
        }


# The generation each folder has pinned in this context (one question). Module level, as Python requires of a
# context variable; its value is per context, not shared state.
_PINNED: contextvars.ContextVar[dict[str, IndexGeneration] | None] = contextvars.ContextVar(
    "code_alias_pinned_generations", default=None
)


def pinned_generation(folder_key: str) -> IndexGeneration | None:
    """The generation this context pinned for the folder whose resolved path is `folder_key`, if any."""
    pinned = _PINNED.get()
    return None if pinned is None else pinned.get(folder_key)


@contextmanager
def pinning(generation: IndexGeneration) -> Iterator[IndexGeneration]:
    """
    Within the block, every reader of the generation's folder in this context reads `generation`: the stores, the
    dictionary handles, the derived caches, and `index_files.current_manifest` (its manifest).
    """
    pinned = dict(_PINNED.get() or {})
    pinned[str(generation.folder)] = generation
    token = _PINNED.set(pinned)
    try:
        with pinned_manifest(generation.folder, generation.manifest):
            yield generation
    finally:
        _PINNED.reset(token)
