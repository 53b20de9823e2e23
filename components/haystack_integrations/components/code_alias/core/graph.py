# long: the graph's build, incremental refresh and caller / callee / impact walks over one structure
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
- `centrality()`: in-degree and PageRank per definition (file path + qualified name); tried as ranking features
  and not kept (BENCHMARKS.md 21: inside the seeds' spread, below it on JS/TS), so only benchmarks read it today.

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
_LINK_KINDS = frozenset({"import", "reexport", "inherit"})
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
    Graph evidence, a "much used" signal (not among the ranking's features: BENCHMARKS.md 21): per definition,
    `in_degree` (distinct definitions and modules that call, instantiate, subclass or name it in a resolved edge) and
    `pagerank` (over the resolved edges between definitions; ambiguous edges are not counted), both keyed by (file
    path, qualified name) and, in an index of several repositories, by the repository too (`features(..., repo=...)`).

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
        self.resolver = Resolver(self.scopes)
        self.edges: list[Edge] = []
        for file in self.scopes.files:
            self.edges.extend(self._file_edges(file))
        self.uses: dict[int, list[Edge]] = {}  # target -> its uses (resolved and ambiguous)
        self.made: dict[int, list[Edge]] = {}  # source (-1 - file index for module code) -> its uses of others
        for edge in self.edges:
            self._link(edge)
        self._by_name: dict[str, list[int]] = {}
        for definition in self.scopes.definitions:
            self._name(definition)
        self._centrality: Centrality | None = None
        self._files_by_name: dict[str, set[int]] | None = None
        self.seconds = time.perf_counter() - started
        self.refreshed_files: int | None = None  # a full build

    def _link(self, edge: Edge) -> None:
        for target in edge.targets:
            self.uses.setdefault(target, []).append(edge)
        self.made.setdefault(edge.source if edge.source is not None else -1 - edge.file, []).append(edge)

    def _name(self, definition: Definition) -> None:
        self._by_name.setdefault(definition.name, []).append(definition.id)
        if definition.qualified_name != definition.name:
            self._by_name.setdefault(definition.qualified_name, []).append(definition.id)

    @property
    def stats(self) -> dict[str, int]:
        """How many uses resolved, were ambiguous, named something outside the index, or nothing found."""
        counts = {"references": len(self.edges), "resolved": 0, "ambiguous": 0, "external": 0, "unresolved": 0}
        for edge in self.edges:
            counts[edge.status] += 1
        return counts

    @classmethod
    def refreshed(cls, previous: ReferenceGraph, dictionary: AliasDictionary) -> ReferenceGraph:
        """
        The graph of `dictionary`, a refresh of the dictionary `previous` was built from. The changed and new files'
        uses are resolved; elsewhere, a use is resolved again when it reached a definition of a changed file (that
        definition has a new id), or when its name is one a changed file now defines differently (a name added,
        removed, moved to another scope or kind) or imports, re-exports or inherits differently; every other edge,
        and every other definition's id, is kept. The same edges as a full build (`tests/core/test_graph.py` compares
        them on edit scenarios, `benchmarks/graph_cost.py` on Django). A full build when the packages changed, a
        class's bases changed, or more than `REFRESH_LIMIT` files did. `previous` is left as it was.
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
        scopes = old.updated(changed, removed)
        touched = _touched(old, scopes, changed, removed)
        graph = cls.__new__(cls)
        graph.version, graph.packages, graph.scopes = dictionary.version, list(dictionary.packages), scopes
        graph.resolver = Resolver(scopes)
        replaced = {old._file_index[key] for key in [*changed, *removed] if key in old._file_index}
        # What the previous resolver worked out per file depends on that file alone: kept for the files kept.
        graph.resolver.carry(previous.resolver, keep=lambda index: index not in replaced)
        dead = scopes.dead
        dropped: list[Edge] = []
        redo: dict[int, set[tuple[int, str]]] = {}  # uses that reached a replaced definition (`sum(...)` of `total`)
        for edge in previous.edges:
            if edge.file in replaced or edge.name in touched:
                dropped.append(edge)
            elif (edge.source is not None and edge.source in dead) or dead.intersection(edge.targets):
                redo.setdefault(edge.file, set()).add((edge.line, edge.name))
                dropped.append(edge)
        graph.uses = dict(previous.uses)
        graph.made = dict(previous.made)
        copied: set[tuple[str, int]] = set()
        for edge in dropped:
            graph._unlink(edge, copied)
        fresh = {scopes._file_index[key] for key in changed if key in scopes._file_index}
        added: list[Edge] = []
        for index in fresh:
            added.extend(graph._file_edges(scopes.files[index]))
        for index in _files_using(previous, touched, redo, replaced):
            added.extend(graph._file_edges(scopes.files[index], only=touched, sites=redo.get(index, set())))
        for edge in added:
            graph._link_copied(edge, copied)
        gone = set(dropped)
        graph.edges = [edge for edge in previous.edges if edge not in gone] + added
        graph._by_name = dict(previous._by_name)  # lists are replaced, never changed in place: shared safely
        for ident in scopes.dead - old.dead:
            definition = scopes.definitions[ident]
            for key in {definition.name, definition.qualified_name}:
                graph._by_name[key] = [other for other in graph._by_name[key] if other != ident]
        for definition in scopes.definitions[len(old.definitions) :]:
            for key in {definition.name, definition.qualified_name}:
                graph._by_name[key] = [*graph._by_name.get(key, ()), definition.id]
        graph._centrality = None
        graph._files_by_name = None
        if previous._files_by_name is not None:  # kept current: the replaced files' names out, the fresh ones' in
            table = {name: files - replaced for name, files in previous._files_by_name.items()}
            for index in fresh:
                for reference in scopes.files[index].references:
                    if reference.kind in _EDGE_KINDS:
                        table.setdefault(reference.name, set()).add(index)
            graph._files_by_name = table
        graph.seconds = time.perf_counter() - started
        graph.refreshed_files = len(changed) + len(removed)
        return graph

    def files_by_name(self) -> dict[str, set[int]]:
        """Which files use each name (the edge kinds'), for a refresh to find the uses it must resolve again."""
        if self._files_by_name is None:
            table: dict[str, set[int]] = {}
            for file in self.scopes.live_files():
                for reference in file.references:
                    if reference.kind in _EDGE_KINDS:
                        table.setdefault(reference.name, set()).add(file.index)
            self._files_by_name = table
        return self._files_by_name

    def _unlink(self, edge: Edge, copied: set[tuple[str, int]]) -> None:
        source = edge.source if edge.source is not None else -1 - edge.file
        for where, key in [*(("uses", target) for target in edge.targets), ("made", source)]:
            table = self.uses if where == "uses" else self.made
            if (where, key) not in copied:
                table[key] = list(table[key])
                copied.add((where, key))
            table[key].remove(edge)

    def _link_copied(self, edge: Edge, copied: set[tuple[str, int]]) -> None:
        source = edge.source if edge.source is not None else -1 - edge.file
        for where, key in [*(("uses", target) for target in edge.targets), ("made", source)]:
            table = self.uses if where == "uses" else self.made
            if (where, key) not in copied:
                table[key] = list(table.get(key, ()))
                copied.add((where, key))
            table[key].append(edge)

    def _file_edges(
        self,
        file: FileScope,
        only: set[str] | None = None,
        sites: AbstractSet[tuple[int, str]] = frozenset(),
    ) -> list[Edge]:
        """The edges of one file's uses (with `only`: of the uses of those names, and at those `sites`, alone)."""
        resolver = self.resolver
        callers = resolver.callers_of_references(file)
        edges: list[Edge] = []
        for reference, caller in zip(file.references, callers, strict=True):
            if reference.kind not in _EDGE_KINDS:
                continue
            if only is not None and reference.name not in only and (reference.line, reference.name) not in sites:
                continue
            resolution = resolver.resolve(file, reference, caller)
            targets = tuple(t for t in resolution.targets if t != caller)  # recursion is no caller of itself
            if not targets and resolution.status in ("resolved", "ambiguous"):
                continue
            edges.append(
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
        return edges

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
        edges = [edge for edge in self.uses.get(target, []) if edge.kind in wanted]
        return sorted(edges, key=lambda e: (e.status != "resolved", self.file_path(e), e.line))

    def callees(self, source: int, *, kinds: Iterable[str] = CALL_KINDS) -> list[Edge]:
        """The edges out of `source` (what it calls), resolved or not, in line order; nested definitions' own calls
        are theirs, not the enclosing definition's."""
        wanted = frozenset(kinds)
        return sorted((edge for edge in self.made.get(source, []) if edge.kind in wanted), key=lambda e: e.line)

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
            for edge in self.uses.get(node, []):
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


def _touched(
    old: Scopes, new: Scopes, changed: Mapping[tuple[str | None, str], Any], removed: list[tuple[str | None, str]]
) -> set[str]:
    """
    The names whose uses a refresh must resolve again (beside those that reached a replaced definition): all of a
    removed or added file's (`_names`); of an edited file, the names whose definitions differ (added, removed, or in
    another scope, kind or public name: not those that only moved lines), and when its imports, re-exports or bases
    differ, all of its names before and after.
    """
    names = _names(old, removed)
    for key in changed:
        before_index, after_index = old._file_index.get(key), new._file_index.get(key)
        if before_index is None or after_index is None:
            names |= _names(old, [key]) | _names(new, [key])
            continue
        before, after = old.files[before_index], new.files[after_index]
        names.update(name for name, *_ in _signature(old, before) ^ _signature(new, after))
        if _links(before) != _links(after):
            names |= _names(old, [key]) | _names(new, [key])
    return names


def _signature(scopes: Scopes, file: FileScope) -> set[tuple[str, tuple[str, ...], str, tuple[str, ...], int]]:
    """What a file defines, as name lookups see it (each definition with how many share its name and scope)."""
    seen: dict[tuple[str, tuple[str, ...], str, tuple[str, ...]], int] = {}
    for _, _, ident in file.spans:
        d = scopes.definitions[ident]
        key = (d.name, d.scopes, d.kind, d.aliases)
        seen[key] = seen.get(key, 0) + 1
    return {(*key, count) for key, count in seen.items()}


def _links(file: FileScope) -> list[tuple[str, str, str, str]]:
    """A file's imports, re-exports and bases, lines aside."""
    return sorted((r.kind, r.name, r.qualifier, r.binding) for r in file.references if r.kind in _LINK_KINDS)


def _files_using(
    previous: ReferenceGraph, touched: set[str], redo: Mapping[int, Any], replaced: set[int]
) -> list[int]:
    """The kept files with a use of one of the `touched` names, or a use to resolve again (`redo`)."""
    found = set(redo)
    by_name = previous.files_by_name()
    for name in touched:
        found.update(by_name.get(name, ()))
    return sorted(found - replaced)


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
