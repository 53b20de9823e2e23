"""The alias dictionary's data model: symbols, packages, per-file records, and its JSON persistence.

Framework-free. Pydantic validates what is loaded from disk, so a damaged dictionary file fails with an
error that names the file and the field instead of a KeyError deep in a lookup.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from functools import cached_property
from pathlib import Path
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import CodeAliasError

SCHEMA_VERSION = 1
# Bump when extraction or alias derivation changes what a file yields, so cached versions differ.
# 3: `import { a } from "./x"; export { a as b }` is a re-export record; 4: references (the reference graph), each
# definition's leading comment line, Go / Rust / Java definitions from tag queries.
EXTRACTOR_VERSION = 4

SymbolKind = Literal[
    "function", "method", "class", "interface", "struct", "enum", "trait", "type", "constant", "variable", "module"
]


class Reference(NamedTuple):
    """
    One use of a name in a source file, as the tag queries find it (`core/references.py`); the reference graph
    (`core/graph.py`) resolves it to a definition.

    `kind` is one of:

    - `call`: a call of `name` (`f()`, `obj.f()`, a decorator, a JSX element, a macro); `new`: `new Name()`, Java's
      `new Name()` and Rust's `Name { .. }` (an instance made);
    - `type`: `name` used as a type (annotations, declarations); `inherit`: a base class or an implemented interface
      or trait;
    - `import`: the file binds `binding` to `name` of the module `qualifier` (`name` "" = the module itself, "*" =
      all its names); `reexport`: the file exports `name` of the module `qualifier` as `binding` ("*" = all);
    - `bind`: the variable `name` holds a `qualifier` (`x = Foo()`, `Foo x`, `x: Foo`, a Go receiver), so that
      `x.f()` can be resolved to `Foo.f`.

    `qualifier` of a call or type is the receiver or path written before the name, dot-separated (`self`,
    `utils`, `a.b`, `crate.util`; "?" when it is an expression such as a call's result); "" when there is none.
    """

    kind: str
    name: str
    line: int
    qualifier: str = ""
    binding: str = ""


class DictionaryError(CodeAliasError):
    """A dictionary file that cannot be read or does not match the schema."""


class SymbolDef(BaseModel):
    """One definition found in a source file (what an extractor yields)."""

    model_config = ConfigDict(frozen=True)

    name: str
    kind: SymbolKind
    qualified_name: str = Field(description="module path + enclosing scopes + name, dot-separated")
    file_path: str = Field(description="POSIX path relative to the repository root")
    language: str
    start_line: int = Field(ge=1, description="1-based, inclusive")
    end_line: int = Field(ge=1, description="1-based, inclusive")
    exported: bool = True
    docstring: str = ""
    parent: str | None = None
    body_hash: str = Field(default="", description="hash of the definition's text without its name, for renames")
    aliases: tuple[str, ...] = Field(
        default=(), description="other names the code gives it: the public name of a renamed export"
    )
    reexport_from: str | None = Field(
        default=None,
        description="a re-export (`export { a as b } from './x'`): the module specifier; the definition's own name "
        "is the first alias, and the dictionary links the public name to the definition when it resolves",
    )
    comment_line: int | None = Field(
        default=None,
        description="1-based first line of the comment block directly above the definition (outside its span: a "
        "JSDoc, `///`, Javadoc, Go doc comment or a `#` block above a decorator), which its chunk includes",
    )


class PackageInfo(BaseModel):
    """A package declared by a manifest (package.json, pyproject.toml, setup.cfg, setup.py, Cargo.toml, go.mod)."""

    model_config = ConfigDict(frozen=True)

    name: str = Field(description="the declared name: '@acme/payments-core', 'scikit-learn', 'github.com/x/y'")
    ecosystem: Literal["npm", "python", "cargo", "go"]
    root: str = Field(description="folder of the manifest, POSIX, relative to the repository root ('' = root)")
    manifest: str = Field(description="path of the manifest file, relative to the repository root")
    aliases: tuple[str, ...] = Field(default=(), description="other names: short npm name, import names, ...")
    import_names: tuple[str, ...] = ()
    version: str | None = None


class Skipped(BaseModel):
    """A file the builder did not use, and why (binary, too large, malformed manifest, symlink loop...)."""

    model_config = ConfigDict(frozen=True)

    path: str
    reason: str


class FileRecord(BaseModel):
    """What the dictionary remembers of one source file, so a refresh can skip it when unchanged."""

    sha256: str
    size: int
    mtime_ns: int
    language: str | None = None
    symbols: list[SymbolDef] = Field(default_factory=list)
    error: str | None = Field(default=None, description="why the file was skipped, if it was")
    extractor: int = Field(
        default=0, description="the EXTRACTOR_VERSION that parsed it (0: a build older than this field)"
    )
    references: list[Reference] = Field(
        default_factory=list, description="the uses of names in the file (calls, types, imports...), for the graph"
    )

    @property
    def current(self) -> bool:
        """Parsed by today's extractor: only then may a refresh reuse it for unchanged content."""
        return self.extractor == EXTRACTOR_VERSION


class SymbolEntry(BaseModel):
    """A symbol as the dictionary serves it: the definition plus everything it can be called by."""

    model_config = ConfigDict(frozen=True)

    name: str
    kind: SymbolKind
    qualified_name: str
    file_path: str
    language: str
    start_line: int
    end_line: int
    exported: bool
    package: str | None = None
    repo: str | None = Field(default=None, description="the repository it belongs to (several in one index)")
    words: tuple[str, ...] = Field(default=(), description="word split of the name")
    doc_words: tuple[str, ...] = Field(default=(), description="content words of the docstring / leading comment")
    aliases: tuple[str, ...] = Field(default=(), description="nicknames and names retired by a rename")


class PackageEntry(BaseModel):
    """A package as the dictionary serves it."""

    model_config = ConfigDict(frozen=True)

    name: str
    ecosystem: str
    root: str
    manifest: str
    aliases: tuple[str, ...] = ()
    import_names: tuple[str, ...] = ()
    words: tuple[str, ...] = ()
    repo: str | None = None


class RepositoryRecord(BaseModel):
    """
    What an index of several repositories keeps of one of them: its files (for its incremental refresh), its
    renames and nicknames (when it was last synced is in the index folder's `repositories.json`, so an unchanged
    repository leaves the dictionary's bytes unchanged). Its symbols and packages sit in the dictionary's lists,
    tagged with the repository's name.
    """

    root: str = Field(description="the folder it was indexed from")
    files: dict[str, FileRecord] = Field(default_factory=dict)
    nicknames: dict[str, list[str]] = Field(default_factory=dict)
    renamed: dict[str, str] = Field(default_factory=dict)
    skipped: list[Skipped] = Field(default_factory=list)
    version: str = Field(default="", description="content hash of this repository's part")


class AliasDictionary(BaseModel):
    """
    The alias/symbol dictionary of one indexed code tree.

    `version` is a content hash of what lookups see (symbols, packages, nicknames, abbreviations), so caches
    keyed by it are invalidated exactly when an answer could change.
    """

    schema_version: int = SCHEMA_VERSION
    root: str = ""
    symbols: list[SymbolEntry] = Field(default_factory=list)
    packages: list[PackageEntry] = Field(default_factory=list)
    nicknames: dict[str, list[str]] = Field(default_factory=dict, description="nickname -> symbol/package names")
    abbreviations: dict[str, list[str]] = Field(default_factory=dict, description="abbreviation -> expansions")
    renamed: dict[str, str] = Field(default_factory=dict, description="retired name -> its new name")
    files: dict[str, FileRecord] = Field(default_factory=dict)
    skipped: list[Skipped] = Field(default_factory=list)
    repositories: dict[str, RepositoryRecord] = Field(
        default_factory=dict, description="name -> record, for an index of named repositories (files live here)"
    )
    version: str = ""

    def __deepcopy__(self, memo: dict[int, Any] | None = None) -> AliasDictionary:
        # Sealed dictionaries are treated as immutable (refreshes build new ones); Haystack deep-copies every
        # component input, which for a 10k-symbol dictionary costs seconds per hop.
        return self

    def compute_version(self) -> str:
        """
        Content hash of everything a lookup can observe (not file stats, not the skip report).

        Symbols are a pure function of each file's content, the packages (which decide membership) and the
        alias inputs, so hashing those is equivalent to hashing every symbol, and much cheaper.
        """
        payload = {
            "schema": self.schema_version,
            "extractor": EXTRACTOR_VERSION,
            "files": sorted((path, record.sha256) for path, record in self.files.items()),
            "repositories": sorted(
                (name, repo.root, path, record.sha256)
                for name, repo in self.repositories.items()
                for path, record in repo.files.items()
            ),
            "symbols": len(self.symbols),
            "packages": [p.model_dump(mode="json") for p in self.packages],
            "nicknames": self.nicknames,
            "abbreviations": self.abbreviations,
            "renamed": self.renamed,
        }
        if not self.files and not self.repositories:  # built from symbols alone (tests, hand-made dictionaries)
            payload["symbols"] = [s.model_dump(mode="json") for s in self.symbols]
        blob = json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()
        return hashlib.sha256(blob).hexdigest()[:16]

    def seal(self) -> AliasDictionary:
        """Sort for determinism and stamp the version. Returns self."""
        self.symbols.sort(key=lambda s: (s.file_path, s.start_line, s.qualified_name))
        self.packages.sort(key=lambda p: (p.root, p.name))
        self.version = self.compute_version()
        self.__dict__.pop("_symbol_index", None)
        self.__dict__.pop("_package_index", None)
        return self

    # ---- lookups -------------------------------------------------------------------------------------------
    @cached_property
    def _symbol_index(self) -> dict[str, list[SymbolEntry]]:
        index: dict[str, list[SymbolEntry]] = {}
        for entry in self.symbols:
            for key in {entry.name, entry.qualified_name}:
                index.setdefault(key, []).append(entry)
        return index

    @cached_property
    def _package_index(self) -> dict[str, PackageEntry]:
        index: dict[str, PackageEntry] = {}
        for package in self.packages:
            for key in (package.name, *package.aliases, *package.import_names):
                index.setdefault(key, package)
        return index

    def symbols_named(self, name: str) -> list[SymbolEntry]:
        """Entries whose name or qualified name is exactly `name`."""
        return self._symbol_index.get(name, [])

    def resolve_symbol(self, name: str) -> str | None:
        """
        The canonical spelling of a symbol name, or None when it does not exist.

        Exact names win; otherwise a unique case-insensitive match; a retired (renamed) name resolves to its
        new name.
        """
        if name in self._symbol_index:
            return name
        if name in self.renamed:
            return self.renamed[name]
        folded = [key for key in self._lower_symbol_keys.get(name.lower(), [])]
        return folded[0] if len(folded) == 1 else None

    @cached_property
    def _lower_symbol_keys(self) -> dict[str, list[str]]:
        keys: dict[str, list[str]] = {}
        for key in self._symbol_index:
            keys.setdefault(key.lower(), []).append(key)
        return keys

    def resolve_package(self, name: str) -> str | None:
        """The declared name of the package known as `name` (its name, short name or import name), or None."""
        package = self._package_index.get(name)
        if package is None:
            matches = {p.name for key, p in self._package_index.items() if key.lower() == name.lower()}
            return matches.pop() if len(matches) == 1 else None
        return package.name

    def file_record(self, file_path: str, repo: str | None = None) -> FileRecord | None:
        """What the dictionary holds of one file: of repository `repo` when named, else of the (only) tree."""
        if repo is not None and repo in self.repositories:
            return self.repositories[repo].files.get(file_path)
        record = self.files.get(file_path)
        if record is None and repo is None and len(self.repositories) == 1:
            return next(iter(self.repositories.values())).files.get(file_path)
        return record

    def file_count(self) -> int:
        """Source files known to the dictionary, over all its repositories."""
        return len(self.files) + sum(len(repo.files) for repo in self.repositories.values())

    def package_for_file(self, file_path: str, repo: str | None = None) -> str | None:
        """The package whose root folder is the deepest ancestor of `file_path` (among `repo`'s, when named)."""
        best: PackageEntry | None = None
        for package in self.packages:
            if repo is not None and package.repo is not None and package.repo != repo:
                continue
            root = package.root.rstrip("/")
            if (not root or file_path == root or file_path.startswith(root + "/")) and (
                best is None or len(root) > len(best.root.rstrip("/"))
            ):
                best = package
        return best.name if best else None

    # ---- persistence ---------------------------------------------------------------------------------------
    def save(self, path: str | Path) -> Path:
        """Write the dictionary as JSON atomically (temp file + rename): a crash never leaves half a file."""
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(target, self.model_dump_json())
        return target

    @classmethod
    def load(cls, path: str | Path) -> AliasDictionary:
        """
        Read a dictionary written by `save`.

        :raises DictionaryError: The file is missing, not JSON, or does not match the schema (names the file).
        """
        source = Path(path)
        try:
            text = source.read_text(encoding="utf-8")
        except FileNotFoundError as error:
            raise DictionaryError(
                f"{source}: no alias dictionary here; build one with "
                f"`AliasDictionaryBuilder(index_dir='{source.parent}').run(root=PATH)` in a pipeline, "
                f"or `code-alias index PATH --index-dir {source.parent}`"
            ) from error
        except (OSError, UnicodeDecodeError) as error:
            raise DictionaryError(f"{source}: cannot read the alias dictionary: {error}") from error
        try:
            dictionary = cls.model_validate_json(text)
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "(top level)"
            raise DictionaryError(f"{source}: invalid alias dictionary at {where}: {first['msg']}") from error
        if dictionary.schema_version != SCHEMA_VERSION:
            raise DictionaryError(
                f"{source}: schema version {dictionary.schema_version}, expected {SCHEMA_VERSION}; rebuild the index"
            )
        return dictionary


def read_json_object(path: Path) -> dict[str, Any] | None:
    """
    The JSON object in `path`; None when the file is missing, unreadable, not JSON or not an object.

    For the index's and caches' small record files, where a damaged or absent record reads as no record.
    """
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def atomic_write_text(path: Path, text: str, *, shared: bool = False) -> None:
    """Write `text` to `path` through a temporary file in the same folder and an atomic rename."""
    atomic_write_bytes(path, text.encode("utf-8"), shared=shared)


def atomic_write_bytes(path: Path, data: bytes, *, shared: bool = False) -> None:
    """
    Write `data` to `path` through a temporary file in the same folder, fsync, and an atomic rename.

    :param shared: Give the file the mode a plain `open` would (0666 less the umask) instead of the temporary
        file's private 0600: for data meant to be read by others (a shipped model file).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if shared:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
