"""The reference graph of an index: who calls, instantiates, subclasses or names each definition, and from where.

Framework-free. The dictionary keeps, per file, the uses of names its extraction found (`FileRecord.references`,
refreshed with the file: a changed file's uses are replaced, a removed file's go with its record, all in the same
atomic save as the rest of the dictionary). `ReferenceGraph(dictionary)` resolves every use against the current
definitions (`graph_resolve.py`; resolution depends on every file, so it is redone for each dictionary version, in
memory) into edges from the enclosing definition (the caller; module-level code when there is none) to what it
refers to, and answers:

- `callers(target)`: the call sites (calls and instantiations) of a definition, `path:line` and caller;
- `callees(source)`: what a definition calls, resolved or not;
- `impact(target, depth)`: everything that reaches it through calls, instantiations, inheritance and type uses,
  transitively, nearest first, with test files marked;
- `centrality()`: in-degree and PageRank per definition (file path + qualified name), for the ranking stage.

Each edge is `resolved` (the scope rules chose one definition) or `ambiguous` (candidates that share the name; the
receiver's type or the name's origin is unknown): ambiguous edges are listed as such, never as a caller.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from .graph_resolve import Resolver
from .graph_scope import Definition, FileScope, Scopes
from .model import AliasDictionary

__all__ = ["CALL_KINDS", "USE_KINDS", "Centrality", "Edge", "ReferenceGraph"]

#: Uses that are calls of the definition (`callers`, `callees`).
CALL_KINDS = frozenset({"call", "new"})
#: Uses that a change of the definition can break (`impact`): calls, instantiations, subclasses, type uses.
USE_KINDS = frozenset({"call", "new", "inherit", "type"})
_EDGE_KINDS = frozenset({"call", "new", "inherit", "type", "import"})
#: A refresh of more files than this resolves the whole graph again (cheaper than finding what they touch).
REFRESH_LIMIT = 200
#: PageRank's damping factor and its iteration bounds (power iteration until the L1 change is below the tolerance).
DAMPING = 0.85
_TOLERANCE = 1e-9
_MAX_ITERATIONS = 100


class Edge(NamedTuple):
    """
    One use of a name: from `source` (the enclosing definition; None: module-level code of `file_path`) to
    `targets` (one definition when `status` is "resolved"; the candidates when "ambiguous"; none when "external" or
    "unresolved").
    """

    source: int | None
    file: int
    line: int
    kind: str
    name: str
    qualifier: str
    status: str
    targets: tuple[int, ...]
    reason: str


@dataclass(frozen=True)
class Centrality:
    """
    Graph evidence for the ranking stage: per definition, `in_degree` (distinct definitions and modules that call,
    instantiate, subclass or name it in a resolved edge) and `pagerank` (over the resolved edges between
    definitions; ambiguous edges are not counted), both keyed by (file path, qualified name) and, in an index of
    several repositories, by the repository too (`features(..., repo=...)`).

    ### Usage example

    ```python
    centrality = ReferenceGraph(dictionary).centrality()
    centrality.features("src/payments/retry.py", "payments.retry.with_stripe_backoff")
    # {"in_degree": 7, "pagerank": 0.0031, "pagerank_rank": 0.992}
    ```
    """

    in_degree: dict[tuple[str | None, str, str], int]
    pagerank: dict[tuple[str | None, str, str], float]
    rank_share: dict[tuple[str | None, str, str], float] = field(default_factory=dict)

    def features(self, file_path: str, qualified_name: str, repo: str | None = None) -> dict[str, float]:
        """
        The graph features of one definition: `in_degree`, `pagerank` (sums to 1 over the graph) and
        `pagerank_rank` (the share of definitions with a lower PageRank: 0-1, comparable across indexes of
        different sizes). A definition the graph does not hold (not in the dictionary) gets zeros.
        """
        key = (repo, file_path, qualified_name)
        return {
            "in_degree": float(self.in_degree.get(key, 0)),
            "pagerank": float(self.pagerank.get(key, 0.0)),
            "pagerank_rank": float(self.rank_share.get(key, 0.0)),
        }


class ReferenceGraph:
    """
    The resolved reference graph of one dictionary version.

    :param dictionary: The alias dictionary (its files' references and definitions).
    """

    def __init__(self, dictionary: AliasDictionary) -> None:
        started = time.perf_counter()
        self.version = dictionary.version
        self.packages = list(dictionary.packages)
        self.scopes = Scopes(_parts(dictionary), dictionary.packages)
        resolver = Resolver(self.scopes)
        self.edges: list[Edge] = []
        for file in self.scopes.files:
            self._add_file(resolver, file)
        self._index()
        self.seconds = time.perf_counter() - started
        self.refreshed_files: int | None = None  # a full build

    @classmethod
    def refreshed(cls, previous: ReferenceGraph, dictionary: AliasDictionary) -> ReferenceGraph:
        """
        The graph of `dictionary`, a refresh of the dictionary `previous` was built from: the changed and new files'
        references are resolved, and so is every reference elsewhere whose name a changed file defines, defined, or
        imports (those are the only ones whose answer can change); every other edge is kept as it was. The same
        edges as a full build (`tests/test_graph.py` compares them). A full build when the packages changed or more
        than `REFRESH_LIMIT` files did. `previous` is left as it was.
        """
        started = time.perf_counter()
        records = {(repo, path): record for repo, files in _parts(dictionary) for path, record in files.items()}
        old = previous.scopes
        changed = {
            key: record
            for key, record in records.items()
            if old.sha256.get(key) != record.sha256 and (key in old.sha256 or Scopes.wanted(key[1], record))
        }
        removed = [key for key in old.sha256 if key not in records]
        if (
            list(dictionary.packages) != previous.packages
            or len(changed) + len(removed) > REFRESH_LIMIT
            or _bases_changed(old, changed)
        ):
            return cls(dictionary)
        touched = _names(old, [*changed, *removed])
        scopes = old.updated(changed, removed)
        touched |= _names(scopes, changed)
        graph = cls.__new__(cls)
        graph.version, graph.packages, graph.scopes = dictionary.version, list(dictionary.packages), scopes
        resolver = Resolver(scopes)
        replaced = {old._file_index[key] for key in [*changed, *removed] if key in old._file_index}
        dead = scopes.dead
        graph.edges = []
        redo: dict[int, set[tuple[int, str]]] = {}  # uses that reached a replaced definition under another name
        for edge in previous.edges:
            if edge.file in replaced or edge.name in touched:
                continue
            if (edge.source is not None and edge.source in dead) or dead.intersection(edge.targets):
                redo.setdefault(edge.file, set()).add((edge.line, edge.name))  # `sum(...)` of `total as sum`
                continue
            graph.edges.append(edge)
        fresh = {scopes._file_index[key] for key in changed if key in scopes._file_index}
        for file in scopes.live_files():
            if file.index in fresh:
                graph._add_file(resolver, file)
            else:
                graph._add_file(resolver, file, only=touched, sites=redo.get(file.index, set()))
        graph._index()
        graph.seconds = time.perf_counter() - started
        graph.refreshed_files = len(changed) + len(removed)
        return graph

    def _index(self) -> None:
        """The lookups over `edges`: by target, by source, by name; and the counts."""
        self.uses: dict[int, list[int]] = {}  # target -> edges (resolved and ambiguous)
        self.made: dict[int, list[int]] = {}  # source (-1 - file for module code) -> edges
        self.stats = {"references": len(self.edges), "resolved": 0, "ambiguous": 0, "external": 0, "unresolved": 0}
        for index, edge in enumerate(self.edges):
            self.stats[edge.status] += 1
            for target in edge.targets:
                self.uses.setdefault(target, []).append(index)
            self.made.setdefault(edge.source if edge.source is not None else -1 - edge.file, []).append(index)
        self._by_name: dict[str, list[int]] = {}
        dead = self.scopes.dead
        for definition in self.scopes.definitions:
            if definition.id not in dead:
                self._by_name.setdefault(definition.name, []).append(definition.id)
                self._by_name.setdefault(definition.qualified_name, []).append(definition.id)
        self._centrality: Centrality | None = None

    def _add_file(
        self,
        resolver: Resolver,
        file: FileScope,
        only: set[str] | None = None,
        sites: AbstractSet[tuple[int, str]] = frozenset(),
    ) -> None:
        """The edges of one file's uses (with `only`: of the uses of those names, and at those `sites`, alone)."""
        callers = resolver.callers_of_references(file)
        for reference, caller in zip(file.references, callers, strict=True):
            if reference.kind not in _EDGE_KINDS:
                continue
            if only is not None and reference.name not in only and (reference.line, reference.name) not in sites:
                continue
            resolution = resolver.resolve(file, reference, caller)
            targets = tuple(t for t in resolution.targets if t != caller)  # recursion is no caller of itself
            if not targets and resolution.status in ("resolved", "ambiguous"):
                continue
            self.edges.append(
                Edge(
                    source=caller,
                    file=file.index,
                    line=reference.line,
                    kind=reference.kind,
                    name=reference.name,
                    qualifier=reference.qualifier,
                    status=resolution.status,
                    targets=targets,
                    reason=resolution.reason,
                )
            )

    # ---- lookups ----------------------------------------------------------------------------------------------------
    @property
    def definitions(self) -> list[Definition]:
        """Every definition by id (after a refresh, those of replaced files too: `live_definitions` has the rest)."""
        return self.scopes.definitions

    def live_definitions(self) -> list[Definition]:
        dead = self.scopes.dead
        return [d for d in self.scopes.definitions if d.id not in dead]

    def find(self, name: str, *, file_path: str | None = None, repo: str | None = None) -> list[Definition]:
        """
        The definitions a name stands for: its qualified name, or its own name (`withStripeBackoff`,
        `Session.request` as the end of a qualified name), narrowed to one file and repository when given.
        """
        ids = list(self._by_name.get(name, []))
        if not ids and "." in name:
            ids = [d.id for d in self.live_definitions() if d.qualified_name.endswith("." + name)]
        found = [self.definitions[i] for i in dict.fromkeys(ids)]
        if file_path is not None:
            found = [d for d in found if d.file_path == file_path]
        if repo is not None:
            found = [d for d in found if d.repo == repo]
        return found

    def file_path(self, edge: Edge) -> str:
        return self.scopes.files[edge.file].path

    def file_scope(self, edge: Edge) -> FileScope:
        return self.scopes.files[edge.file]

    # ---- answers ----------------------------------------------------------------------------------------------------
    def callers(self, target: int, *, kinds: Iterable[str] = CALL_KINDS) -> list[Edge]:
        """The edges into `target` of the given kinds (calls and instantiations by default), in file/line order."""
        wanted = frozenset(kinds)
        edges = [self.edges[i] for i in self.uses.get(target, []) if self.edges[i].kind in wanted]
        return sorted(edges, key=lambda e: (e.status != "resolved", self.file_path(e), e.line))

    def callees(self, source: int, *, kinds: Iterable[str] = CALL_KINDS) -> list[Edge]:
        """The edges out of `source` (what it calls), resolved or not, in line order; nested definitions' own calls
        are theirs, not the enclosing definition's."""
        wanted = frozenset(kinds)
        return sorted(
            (self.edges[i] for i in self.made.get(source, []) if self.edges[i].kind in wanted), key=lambda e: e.line
        )

    def impact(self, target: int, *, depth: int = 3, include_ambiguous: bool = False) -> list[tuple[int, int, Edge]]:
        """
        What reaches `target`, breadth first: (depth, definition or -1 for module-level code, the edge that reached
        it), nearest first. Follows resolved uses of `USE_KINDS`; ambiguous ones are listed at their depth but
        followed only with `include_ambiguous`.
        """
        seen: set[int] = {target}
        found: list[tuple[int, int, Edge]] = []
        frontier: deque[tuple[int, int]] = deque([(target, 0)])
        while frontier:
            node, level = frontier.popleft()
            if level >= depth:
                continue
            for index in self.uses.get(node, []):
                edge = self.edges[index]
                if edge.kind not in USE_KINDS:
                    continue
                source = edge.source if edge.source is not None else -1 - edge.file
                if source in seen:
                    continue
                seen.add(source)
                found.append((level + 1, source, edge))
                if edge.source is not None and (edge.status == "resolved" or include_ambiguous):
                    frontier.append((edge.source, level + 1))
        return found

    # ---- centrality -------------------------------------------------------------------------------------------------
    def centrality(self) -> Centrality:
        """In-degree and PageRank of every definition over the resolved edges (computed once per graph)."""
        if self._centrality is None:
            self._centrality = self._compute_centrality()
        return self._centrality

    def _compute_centrality(self) -> Centrality:
        count = len(self.definitions)
        callers: dict[int, set[int]] = {}
        sources: list[int] = []
        targets: list[int] = []
        for edge in self.edges:
            if edge.status != "resolved" or edge.kind not in USE_KINDS:
                continue
            target = edge.targets[0]
            callers.setdefault(target, set()).add(edge.source if edge.source is not None else -1 - edge.file)
            if edge.source is not None:
                sources.append(edge.source)
                targets.append(target)
        rank = pagerank(count, np.asarray(sources, dtype=np.int64), np.asarray(targets, dtype=np.int64))
        order = np.argsort(rank, kind="stable")
        share = np.empty(count, dtype=np.float64)
        share[order] = np.arange(count, dtype=np.float64) / max(count - 1, 1)
        in_degree: dict[tuple[str | None, str, str], int] = {}
        ranks: dict[tuple[str | None, str, str], float] = {}
        shares: dict[tuple[str | None, str, str], float] = {}
        for definition in self.live_definitions():
            key = (definition.repo, definition.file_path, definition.qualified_name)
            in_degree[key] = max(in_degree.get(key, 0), len(callers.get(definition.id, ())))
            ranks[key] = max(ranks.get(key, 0.0), float(rank[definition.id]))
            shares[key] = max(shares.get(key, 0.0), float(share[definition.id]))
        return Centrality(in_degree, ranks, shares)

    def summary(self) -> dict[str, Any]:
        """Counts for status reports and benchmarks."""
        return {
            "version": self.version,
            "definitions": len(self.live_definitions()),
            "files": len(self.scopes.live_files()),
            "edges": len(self.edges),
            **self.stats,
            "seconds": round(self.seconds, 3),
            "refreshed_files": self.refreshed_files,
        }


def _parts(dictionary: AliasDictionary) -> list[tuple[str | None, Any]]:
    """(repository name or None, its file records) of each tree of a dictionary."""
    parts: list[tuple[str | None, Any]] = [(None, dictionary.files)] if dictionary.files else []
    return parts + [(name, record.files) for name, record in sorted(dictionary.repositories.items())]


def _names(scopes: Scopes, keys: Iterable[tuple[str | None, str]]) -> set[str]:
    """
    The names whose uses a change of these files can answer differently: every name they define (and the public
    names they give), every name they import, re-export or inherit from (a package's `__init__` that re-exports `f`
    answers `from pkg import f` elsewhere), every name of a module they import or re-export wholesale (`export *
    from './orders'`, followed a few hops), and their module's own name.
    """
    names: set[str] = set()
    resolver = Resolver(scopes)
    stars: list[int] = []
    for key in keys:
        index = scopes._file_index.get(key)
        if index is None:
            continue
        file = scopes.files[index]
        names.add(file.module.rsplit(".", 1)[-1])  # a module appears or goes: `from pkg import module` answers anew
        names.add(file.path.rsplit("/", 1)[-1].split(".", 1)[0])
        _defined(scopes, file, names)
        for reference in file.references:
            if reference.kind in ("import", "reexport", "inherit"):
                names.update(name for name in (reference.name, reference.binding) if name and name != "*")
            if reference.kind in ("import", "reexport") and reference.name == "*":
                target = resolver.module_target(file, reference.qualifier)
                stars.extend(target.files if target is not None else ())
    seen: set[int] = set()
    for _ in range(5):  # `export *` chains
        stars = [index for index in stars if index not in seen]
        if not stars:
            break
        seen.update(stars)
        following: list[int] = []
        for index in stars:
            file = scopes.files[index]
            _defined(scopes, file, names)
            for reference in file.references:
                if reference.kind in ("import", "reexport"):
                    names.update(name for name in (reference.name, reference.binding) if name and name != "*")
                    if reference.name == "*":
                        target = resolver.module_target(file, reference.qualifier)
                        following.extend(target.files if target is not None else ())
        stars = following
    return names


def _defined(scopes: Scopes, file: FileScope, names: set[str]) -> None:
    for _, _, ident in file.spans:
        definition = scopes.definitions[ident]
        names.add(definition.name)
        names.update(definition.aliases)


def _bases_changed(scopes: Scopes, changed: Mapping[tuple[str | None, str], Any]) -> bool:
    """Whether an edited file changed what a class inherits from (then a refresh resolves everything again: a
    method found through the old bases may be found elsewhere now, under a name the file never wrote)."""
    for key, record in changed.items():
        index = scopes._file_index.get(key)
        before = scopes.files[index].references if index is not None else []
        if sorted(r for r in before if r.kind == "inherit") != sorted(
            r for r in record.references if r.kind == "inherit"
        ):
            return True
    return False


def pagerank(count: int, sources: np.ndarray, targets: np.ndarray, damping: float = DAMPING) -> np.ndarray:
    """
    PageRank by power iteration over `count` nodes and the directed edges `sources[i] -> targets[i]` (duplicates
    weigh more); a node without out-edges spreads its rank evenly (the usual dangling-node rule, as networkx's).

    :returns: One score per node, summing to 1 (all zeros for an empty graph).
    """
    if count == 0:
        return np.zeros(0)
    out = np.bincount(sources, minlength=count).astype(np.float64)
    weights = 1.0 / out[sources] if len(sources) else np.zeros(0)
    dangling = out == 0
    rank = np.full(count, 1.0 / count)
    for _ in range(_MAX_ITERATIONS):
        spread = np.bincount(targets, weights=rank[sources] * weights, minlength=count)
        new = (1.0 - damping) / count + damping * (spread + rank[dangling].sum() / count)
        change = float(np.abs(new - rank).sum())
        rank = new
        if change < _TOLERANCE * count:
            break
    return rank / rank.sum()
