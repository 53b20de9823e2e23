"""Name resolution for the reference graph: which definition a use of a name refers to, by scope and imports.

Framework-free. `Scopes` indexes the definitions of a dictionary's files (by file, module or package, enclosing
class, and name) and resolves each `Reference` the way the language does, as far as the source alone tells:

1. a bare name: the enclosing definitions (nested functions; a Java class's members and its bases'), the file's
   own top-level definitions (a Go or Java package's too), its imports (`from .x import f as g`, `import {f} from
   './x'`, `use crate::x::f`, `import a.b.C`), its star imports, then the language's builtins (external);
2. a qualified name `q.f`: `q` is `self` / `this` / `cls` (the enclosing class, then its bases), `super`, an imported
   module or package (`utils.f`, `pkg.F`, `crate::x::f`), a class (`Foo.create`, `Foo::new`), or a variable whose
   class the code states (`x = Foo()`, `Foo x`, `x: Foo`, a Go receiver): then `f` is looked up in that module or
   class and its bases;
3. a re-export is followed (`from .models import Model` in a package's `__init__`, `export * from './x'`,
   `export { a as b } from './x'`), a few hops at most.

What none of this decides is never guessed: a method called on a receiver of unknown type (`obj.save()`), or a bare
name found nowhere in scope, gets every definition of that name in the same language as its candidates and the
status `ambiguous` (with one candidate too: it matched by name only); a name bound to something outside the index
(`os.path.join`, `fmt.Println`, a builtin) is `external`. `resolved` means the scope rules above chose it.
"""

from __future__ import annotations

import builtins
import posixpath
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import cache
from importlib import resources
from typing import Any, NamedTuple

import yaml

from .model import FileRecord, PackageEntry, Reference, SymbolDef
from .symbols import module_name_for
from .testfiles import is_fixture_file, is_test_file

__all__ = [
    "CLASS_KINDS",
    "Definition",
    "FileScope",
    "Resolution",
    "Scopes",
    "Target",
    "builtin_names",
    "is_super",
    "self_names",
]

FAMILIES = {
    "python": "python",
    "javascript": "ecmascript",
    "typescript": "ecmascript",
    "tsx": "ecmascript",
    "vue": "ecmascript",
    "go": "go",
    "rust": "rust",
    "java": "java",
}
CLASS_KINDS = frozenset({"class", "struct", "interface", "trait", "enum", "type", "module"})
_SELF = {
    "python": ("self", "cls"),
    "ecmascript": ("this",),
    "java": ("this",),
    "rust": ("self", "Self"),
    "go": (),
}
_SUPER = frozenset({"super", "super()"})
_MAX_HOPS = 5


class Definition(NamedTuple):
    """A node of the graph: one definition, with where it is and what encloses it."""

    id: int
    repo: str | None
    file_path: str
    language: str
    name: str
    qualified_name: str
    kind: str
    start_line: int
    end_line: int
    scopes: tuple[str, ...]
    exported: bool
    test: bool
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class Resolution:
    """What one reference refers to: `resolved` (one definition), `ambiguous` (candidates), `external`, `unresolved`."""

    status: str
    targets: tuple[int, ...] = ()
    reason: str = ""


@dataclass
class FileScope:
    """One source file: its definitions (innermost first for a line), module, imports and references."""

    index: int
    repo: str | None
    path: str
    language: str
    family: str
    module: str
    unit: str  # what shares top-level names: the module (Python, JS, Rust), the package folder (Go), package (Java)
    test: bool
    references: list[Reference]
    spans: list[tuple[int, int, int]] = field(default_factory=list)  # (start, end, id), by start line
    bindings: dict[str, list[Target]] | None = None
    stars: list[Target] | None = None
    reexported_stars: list[Target] | None = None


# What a name can be bound to: a module (its files), definitions, or something outside the index.
@dataclass(frozen=True)
class Target:
    kind: str  # "module", "symbols", "external"
    files: tuple[int, ...] = ()
    ids: tuple[int, ...] = ()


class Scopes:
    """
    The definitions of a dictionary's files, indexed for resolution; `resolve` answers one reference.

    :param parts: (repository name or None, its file records) for each tree of the index.
    :param packages: The dictionary's packages (npm, Cargo and Go module names map to their folders).
    """

    def __init__(self, parts: Iterable[tuple[str | None, Mapping[str, FileRecord]]], packages: list[PackageEntry]):
        self.definitions: list[Definition] = []
        self.files: list[FileScope] = []
        self.records: dict[tuple[str | None, str], FileRecord] = {}
        self._file_index: dict[tuple[str | None, str], int] = {}
        self._units: dict[tuple[str | None, str, str], list[int]] = {}  # (repo, family, unit) -> files
        self._top: dict[tuple[str | None, str, str], dict[str, list[int]]] = {}  # unit -> name -> ids
        self._members: dict[tuple[str | None, str, str, tuple[str, ...]], dict[str, list[int]]] = {}
        self._by_name: dict[tuple[str, str], list[int]] = {}  # (family, name) -> ids
        self._packages = packages
        self._own: set[int] | None = None  # copy-on-write bookkeeping of a refreshed index (`_list`)
        self.dead: set[int] = set()  # definitions of files a refresh replaced or removed (ids stay stable)
        self.sha256: dict[tuple[str | None, str], str] = {}  # the content each file's records were read from
        for repo, files in parts:
            for path in sorted(files):
                record = files[path]
                if self.wanted(path, record):
                    self._add_file(repo, path, record)
        self._paths_by_repo: dict[str | None, dict[str, int]] = {}
        self._index_paths()

    def _index_paths(self) -> None:
        self._paths_by_repo = {}
        for (repo, path), index in self._file_index.items():
            self._paths_by_repo.setdefault(repo, {})[path] = index

    def live_files(self) -> list[FileScope]:
        """The files of the index now (a refresh leaves the files it replaced in `files`, unreachable)."""
        return [self.files[index] for index in sorted(self._file_index.values())]

    @staticmethod
    def wanted(path: str, record: FileRecord) -> bool:
        """Whether a file takes part in the graph (a language it reads, and no test fixture data)."""
        return record.language is not None and record.language in FAMILIES and not is_fixture_file(path)

    def updated(
        self,
        changed: Mapping[tuple[str | None, str], FileRecord],
        removed: Iterable[tuple[str | None, str]],
    ) -> Scopes:
        """
        A new index in which the files of `changed` (new or edited) are read again and those of `removed` are gone;
        every other file and definition keeps its index and id, so edges resolved before can be kept. This index is
        left as it was (a server may still answer from it).
        """
        new = object.__new__(Scopes)
        new.definitions = list(self.definitions)
        new.records = dict(self.records)
        new.sha256 = dict(self.sha256)
        new._file_index = dict(self._file_index)
        # Shallow copies: an inner list or mapping is copied the first time this index writes to it (`_writable`).
        new._units, new._top, new._members = dict(self._units), dict(self._top), dict(self._members)
        new._by_name = dict(self._by_name)
        new._own = set()
        new._packages = self._packages
        new.dead = set(self.dead)
        # The files kept get fresh copies: what a resolver memoised on them (bindings) belongs to the old index.
        new.files = [replace(scope, bindings=None, stars=None, reexported_stars=None) for scope in self.files]
        for key in [*removed, *changed]:
            index = new._file_index.pop(key, None)
            if index is None:
                continue
            old = new.files[index]
            new._list(new._units, (old.repo, old.family, old.unit)).remove(index)
            for _, _, ident in old.spans:
                new._forget(old, new.definitions[ident])
            new.records.pop(key, None)
            new.sha256.pop(key, None)
        for (repo, path), record in sorted(changed.items(), key=lambda item: (item[0][0] or "", item[0][1])):
            if self.wanted(path, record):
                new._add_file(repo, path, record)
        new._index_paths()
        return new

    def _forget(self, scope: FileScope, definition: Definition) -> None:
        self.dead.add(definition.id)
        if definition.scopes:
            owner = (definition.scopes[-1],) if scope.family == "rust" else definition.scopes
            unit = self._crate(scope) if scope.family == "rust" else scope.unit
            self._ids(self._members, (scope.repo, scope.family, unit, owner), definition.name).remove(definition.id)
        else:
            for name in dict.fromkeys((definition.name, *definition.aliases)):
                self._ids(self._top, (scope.repo, scope.family, scope.unit), name).remove(definition.id)
        self._list(self._by_name, (scope.family, definition.name)).remove(definition.id)

    # Copy-on-write: a refreshed index shares its inner lists and mappings with the index it came from until it
    # writes to one (`_own` holds the ids of those it made or copied; None: it made them all).
    def _list(self, table: dict[Any, list[int]], key: Any) -> list[int]:
        """`table[key]` (created empty when missing), writable by this index."""
        value = table.get(key)
        if value is None:
            value = table[key] = []
        elif self._own is not None and id(value) not in self._own:
            value = table[key] = list(value)
        if self._own is not None:
            self._own.add(id(value))
        return value

    def _ids(self, table: dict[Any, dict[str, list[int]]], key: Any, name: str) -> list[int]:
        """`table[key][name]` (created when missing), writable by this index."""
        inner = table.get(key)
        if inner is None:
            inner = table[key] = {}
        elif self._own is not None and id(inner) not in self._own:
            inner = table[key] = dict(inner)
        if self._own is not None:
            self._own.add(id(inner))
        return self._list(inner, name)

    # ---- indexing -------------------------------------------------------------------------------------------------
    def _add_file(self, repo: str | None, path: str, record: FileRecord) -> None:
        language = record.language or ""
        family = FAMILIES[language]
        module = _module_of(path, language, record.symbols)
        unit = posixpath.dirname(path) if family == "go" else module
        if family == "rust":
            unit = f"{self._crate_root(repo, path)}::{module}"
        scope = FileScope(
            index=len(self.files),
            repo=repo,
            path=path,
            language=language,
            family=family,
            module=module,
            unit=unit,
            test=is_test_file(path),
            references=record.references,
        )
        self.files.append(scope)
        self._file_index[(repo, path)] = scope.index
        self.records[(repo, path)] = record
        self.sha256[(repo, path)] = record.sha256
        self._list(self._units, (repo, family, unit)).append(scope.index)
        for symbol in record.symbols:
            if symbol.reexport_from is not None:
                continue  # a re-export record: followed as an import, not a definition
            self._add_definition(scope, symbol, module)
        scope.spans.sort()

    def _add_definition(self, scope: FileScope, symbol: SymbolDef, module: str) -> None:
        local = symbol.qualified_name
        if module and local.startswith(module + "."):
            local = local[len(module) + 1 :]
        parts = tuple(local.split("."))
        scopes = parts[:-1] if parts and parts[-1] == symbol.name else ()
        definition = Definition(
            id=len(self.definitions),
            repo=scope.repo,
            file_path=scope.path,
            language=scope.language,
            name=symbol.name,
            qualified_name=symbol.qualified_name,
            kind=symbol.kind,
            start_line=symbol.start_line,
            end_line=symbol.end_line,
            scopes=scopes,
            exported=symbol.exported,
            test=scope.test,
            aliases=symbol.aliases,
        )
        self.definitions.append(definition)
        scope.spans.append((symbol.start_line, symbol.end_line, definition.id))
        key = (scope.repo, scope.family, scope.unit)
        if scopes:
            # Rust: `impl Type` blocks may sit in any module of the crate, so a type's members are the crate's.
            owner = (scopes[-1],) if scope.family == "rust" else scopes
            unit = self._crate(scope) if scope.family == "rust" else scope.unit
            self._ids(self._members, (scope.repo, scope.family, unit, owner), symbol.name).append(definition.id)
        else:
            self._ids(self._top, key, symbol.name).append(definition.id)
            for alias in symbol.aliases:  # the public name a renamed export gives it
                self._ids(self._top, key, alias).append(definition.id)
        self._list(self._by_name, (scope.family, symbol.name)).append(definition.id)

    def _crate_root(self, repo: str | None, path: str) -> str:
        best = ""
        for package in self._packages:
            if package.ecosystem != "cargo" or (package.repo is not None and package.repo != repo):
                continue
            root = package.root.rstrip("/")
            if (not root or path.startswith(root + "/")) and len(root) >= len(best):
                best = root
        return best

    def _crate(self, scope: FileScope) -> str:
        return scope.unit.split("::", 1)[0]

    def member_key(self, definition: Definition) -> tuple[str | None, str, str, tuple[str, ...]]:
        """The key of the members a class-like definition holds (its methods, nested classes)."""
        scope = self.files[self._file_index[(definition.repo, definition.file_path)]]
        if scope.family == "rust":
            return (scope.repo, "rust", self._crate(scope), (definition.name,))
        return (scope.repo, scope.family, scope.unit, (*definition.scopes, definition.name))

    def file_of(self, definition: Definition) -> FileScope:
        return self.files[self._file_index[(definition.repo, definition.file_path)]]

    def enclosing(self, scope: FileScope) -> list[int | None]:
        """
        For each of the file's references, the innermost definition whose lines hold it (None: module-level code),
        in one sweep over the references by line with a stack of the open definitions (spans nest).
        """
        order = sorted(range(len(scope.references)), key=lambda i: scope.references[i].line)
        spans = sorted(scope.spans, key=lambda span: (span[0], -span[1]))
        result: list[int | None] = [None] * len(scope.references)
        stack: list[tuple[int, int, int]] = []
        position = 0
        for index in order:
            line = scope.references[index].line
            while position < len(spans) and spans[position][0] <= line:
                while stack and stack[-1][1] < spans[position][0]:
                    stack.pop()
                stack.append(spans[position])
                position += 1
            while stack and stack[-1][1] < line:
                stack.pop()
            result[index] = stack[-1][2] if stack else None
        return result

    # ---- lookups ---------------------------------------------------------------------------------------------------
    def unit_files(self, repo: str | None, family: str, unit: str) -> list[int]:
        return self._units.get((repo, family, unit), [])

    def top(self, repo: str | None, family: str, unit: str, name: str) -> list[int]:
        """The top-level definitions named `name` (or given it as a public name) of a module / package."""
        return self._top.get((repo, family, unit), {}).get(name, [])

    def members(self, definition: Definition, name: str) -> list[int]:
        """The members named `name` that a class-like definition holds (methods, nested classes, constants)."""
        return self._members.get(self.member_key(definition), {}).get(name, [])

    def scope_members(self, scope: FileScope, scopes: tuple[str, ...], name: str) -> list[int]:
        """The definitions named `name` nested in the local scope `scopes` of `scope`'s module (a function's)."""
        unit = self._crate(scope) if scope.family == "rust" else scope.unit
        key = (scope.repo, scope.family, unit, (scopes[-1],) if scope.family == "rust" else scopes)
        return self._members.get(key, {}).get(name, [])

    def named(self, family: str, name: str) -> list[int]:
        """Every definition of a name in a language family (the candidates of a use by name only)."""
        return self._by_name.get((family, name), [])

    def file_at(self, repo: str | None, path: str) -> int | None:
        return self._paths_by_repo.get(repo, {}).get(path)

    def paths(self, repo: str | None) -> dict[str, int]:
        return self._paths_by_repo.get(repo, {})

    def packages(self, ecosystem: str, repo: str | None) -> list[PackageEntry]:
        return [p for p in self._packages if p.ecosystem == ecosystem and (p.repo is None or p.repo == repo)]

    def crate_of(self, scope: FileScope) -> str:
        return self._crate(scope)


def _module_of(path: str, language: str, symbols: list[SymbolDef]) -> str:
    """The module a file's definitions are qualified with (Java: the package its declarations state)."""
    if language == "java":
        for symbol in symbols:
            if symbol.parent is None and symbol.qualified_name.endswith("." + symbol.name):
                return symbol.qualified_name[: -len(symbol.name) - 1]
            if symbol.parent is None and symbol.qualified_name == symbol.name:
                return ""
    return module_name_for(path, language)


@cache
def builtin_names(family: str) -> frozenset[str]:
    """The names a file of `family` uses without defining or importing them (`len`, `console`, `println`), from
    `config/graph_builtins.yaml` (Python's: the interpreter's `builtins` module too)."""
    text = resources.files("haystack_integrations.components.code_alias").joinpath("config/graph_builtins.yaml")
    names = frozenset(str(name) for name in (yaml.safe_load(text.read_text(encoding="utf-8")) or {}).get(family) or [])
    return names | frozenset(dir(builtins)) if family == "python" else names


def self_names(family: str) -> tuple[str, ...]:
    """The receivers that name the enclosing class (`self`, `cls`, `this`, `Self`)."""
    return _SELF.get(family, ())


def is_super(qualifier: str) -> bool:
    return qualifier in _SUPER
