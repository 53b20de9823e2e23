"""What a store holds of each source file, and which chunks a sync of one repository owns.

Shared by the sync (`sync.py`) and the Elasticsearch reader of the same states (`elasticsearch/files.py`), which
the sync imports only when the store is an Elasticsearch one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..core.chunking import CHUNKER_VERSION


@dataclass
class FileState:
    """What a store holds of one source file: its chunks' hashes, declared chunk counts, and how many there are."""

    hashes: set[str] = field(default_factory=set)
    declared_counts: set[int] = field(default_factory=set)
    stored: int = 0
    repos: set[str | None] = field(default_factory=set)
    chunkers: set[Any] = field(default_factory=set)

    def add(self, sha256: Any, chunk_count: Any, repo: Any = None, chunker: Any = None) -> None:
        """Record one stored chunk (of repository `repo`, None when untagged; cut by `chunker`'s version)."""
        self.stored += 1
        self.chunkers.add(chunker)
        self.repos.add(repo if isinstance(repo, str) else None)
        self.hashes.add(str(sha256) if sha256 is not None else "")
        try:
            self.declared_counts.add(int(chunk_count))
        except (TypeError, ValueError):
            self.declared_counts.add(-1)

    def in_sync_with(self, sha256: str, repo: str | None = None) -> bool:
        """
        Every chunk has this hash, they agree on the chunk count, and exactly that many are stored; with `repo`,
        every chunk is tagged with it too (untagged chunks of an index built before names get re-tagged); and
        today's chunker cut them (a release that cuts files differently re-splits them on the next sync).
        """
        if repo is not None and self.repos != {repo}:
            return False
        if self.chunkers != {CHUNKER_VERSION}:
            return False
        return self.hashes == {sha256} and self.declared_counts == {self.stored}


def in_repo_scope(stored: Any, repo: str | None) -> bool:
    """Whether a chunk tagged `stored` belongs to a sync of `repo`: its own, or untagged; everything when None."""
    return repo is None or stored is None or stored == repo


def repo_scope_filter(repo: str) -> dict[str, Any]:
    """A Haystack filter on the chunks a sync of `repo` owns: tagged with it, or untagged (`in_repo_scope`)."""
    return {
        "operator": "OR",
        "conditions": [
            {"field": "meta.repo", "operator": "==", "value": repo},
            {"field": "meta.repo", "operator": "==", "value": None},
        ],
    }
