"""A lexical index of a tree with its query side in use and a warm indexer beside it (the push-sync set-up)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from haystack_integrations.components.code_alias.app.push_sync import WarmIndexer
from haystack_integrations.components.code_alias.app.search import CodeSearch


@contextmanager
def warm_indexed(tree: Path, index_dir: Path) -> Iterator[tuple[WarmIndexer, CodeSearch, Path]]:
    """`tree` indexed into `index_dir`, a search that has answered (so a sync hands its build over), a warm indexer."""
    CodeSearch(index_dir, lexical=True).index(tree)
    query = CodeSearch(index_dir, lexical=True)
    query.ask("charge card")  # the query side is in use: the sync hands its build over
    indexer = WarmIndexer(index_dir, lexical=True)
    try:
        yield indexer, query, index_dir
    finally:
        indexer.close()
        query.close()
