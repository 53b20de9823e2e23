# long: one reader per package-manifest format (Python, JS / TS, Go, Rust, ...), side by side
"""Package manifests: the names a repository's packages are published and imported under.

Framework-free. Reads ``package.json``, ``pyproject.toml``, ``setup.cfg``, ``setup.py``, ``Cargo.toml`` and
``go.mod`` into :class:`~.model.PackageInfo` records. Nothing is ever executed: ``setup.py`` is read with
:mod:`ast` and only literal values (or module constants holding literals) are used.

Names a package is known by:

- npm: the declared name; a scoped name ``@acme/payments-core`` also has the alias ``payments-core``, and a
  package in its own folder has the folder's name as an alias (``@vue/compat`` in ``packages/vue-compat``:
  ``vue-compat``). Workspace members come from ``workspaces`` (npm, yarn; in any ``package.json``),
  ``pnpm-workspace.yaml`` and ``lerna.json`` (at the root); a ``package.json`` inside test code or fixtures
  (:mod:`.testfiles`: babel's ``packages/*/test/fixtures/**/package.json``) is test data and declares no
  package, unless a workspace glob names its folder.
- Python: the distribution name, its normalised spelling (``scikit-learn`` -> ``scikit_learn``), and the import
  names (``sklearn``), taken from the manifest's package declarations or, failing those, from the source
  files: top-level folders with an ``__init__.py`` (flat layout) or below ``src/`` (src layout).
- Cargo: the crate name and its import name (``serde-json`` -> ``serde_json``, or ``[lib].name``).
- Go: the module path and its package name (``github.com/acme/pay/v2`` -> ``pay``).

``aliases`` holds every other name, import names included (as :class:`~.model.PackageInfo` documents);
``import_names`` holds only what code writes to import the package.
"""

from __future__ import annotations

import ast
import bisect
import configparser
import contextlib
import fnmatch
import json
import posixpath
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

import yaml

from haystack_integrations.components.code_alias.core.model import PackageInfo, Skipped
from haystack_integrations.components.code_alias.core.package_names import is_alias_name, package_name_problem
from haystack_integrations.components.code_alias.core.testfiles import is_test_file
from haystack_integrations.components.code_alias.core.walker import (
    UnsafePathError,
    read_text_file,
    resolve_inside,
)
from haystack_integrations.components.code_alias.errors import CodeAliasError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10 needs the backport
    import tomli as tomllib

Ecosystem = Literal["npm", "python", "cargo", "go"]

MANIFEST_NAMES: frozenset[str] = frozenset(
    {"package.json", "pyproject.toml", "setup.cfg", "setup.py", "Cargo.toml", "go.mod"}
)

# Manifests are small; a bigger file named like one is not worth parsing.
MAX_MANIFEST_BYTES = 2_000_000

# setuptools' automatic discovery leaves these out of a flat layout; so do we, or every repository would
# "export" packages named tests, docs and examples.
_FLAT_EXCLUDED_PACKAGES: tuple[str, ...] = (
    "ci", "bin", "debian", "doc", "docs", "documentation", "manpages", "news", "newsfragments", "changelog",
    "test", "tests", "unit_test", "unit_tests", "example", "examples", "scripts", "tools", "util", "utils",
    "python", "build", "dist", "venv", "env", "requirements", "tasks", "fabfile", "site_scons", "benchmark",
    "benchmarks", "exercise", "exercises", "htmlcov", "[._]*",
)  # fmt: skip
_FLAT_EXCLUDED_MODULES: tuple[str, ...] = (
    "setup", "conftest", "test", "tests", "example", "examples", "build", "toxfile", "noxfile", "pavement",
    "dodo", "tasks", "fabfile", "[Ss][Cc]onstruct", "conanfile", "manage", "benchmark", "benchmarks",
    "exercise", "exercises", "[._]*", "*_test", "test_*",
)  # fmt: skip
_GO_MAJOR_RE = re.compile(r"v[0-9]+")
_GOPKG_VERSION_RE = re.compile(r"\.v[0-9]+$")


class ManifestError(ValueError, CodeAliasError):
    """
    A manifest that cannot be used. The message starts with the manifest's path and says why.

    :param path: The manifest's path relative to the repository root.
    :param reason: What is wrong, without the path.
    """

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


# ---- source-file index, for import-name inference ----------------------------------------------------------
class _SourceIndex:
    """
    The repository's file paths, sorted, so a folder's files are one contiguous, bisectable run.

    Sorted on first use only: most manifests (npm, Cargo, Go, Python ones that declare their packages) never
    need it, and a caller may pass the full file list to every :func:`parse_manifest` call.
    """

    def __init__(self, paths: Iterable[str]) -> None:
        self._paths = paths

    @classmethod
    def of(cls, paths: Iterable[str]) -> _SourceIndex:
        return cls(paths)

    @cached_property
    def files(self) -> list[str]:
        return sorted(set(self._paths))

    def under(self, prefix: str) -> Iterable[str]:
        """Paths starting with `prefix` ('' = all), with the prefix removed."""
        start = bisect.bisect_left(self.files, prefix)
        for index in range(start, len(self.files)):
            path = self.files[index]
            if not path.startswith(prefix):
                break
            yield path[len(prefix) :]

    def has_file(self, path: str) -> bool:
        position = bisect.bisect_left(self.files, path)
        return position < len(self.files) and self.files[position] == path

    def has_dir(self, prefix: str) -> bool:
        return next(iter(self.under(prefix)), None) is not None


def _top_level_python(
    index: _SourceIndex, base: str, *, flat: bool, include: Sequence[str] = (), exclude: Sequence[str] = ()
) -> list[str]:
    """
    Import names at the top of folder `base` (POSIX, '' = repository root, no trailing slash).

    Folders with an ``__init__.py`` are packages; in a src layout (``flat=False``) any folder holding Python
    files counts (PEP 420 namespace packages). Single ``.py`` files are modules. Names are filtered like
    setuptools' ``find_packages(include=..., exclude=...)`` and, for a flat layout, its default exclusions.
    """
    prefix = base + "/" if base else ""
    packages: dict[str, None] = {}
    modules: dict[str, None] = {}
    for rest in index.under(prefix):
        head, sep, tail = rest.partition("/")
        if not sep:
            if head.endswith((".py", ".pyi")):
                modules[head.rsplit(".", 1)[0]] = None
            continue
        if tail in ("__init__.py", "__init__.pyi") or (not flat and tail.endswith((".py", ".pyi"))):
            packages[head] = None
    names = [name for name in packages if name.isidentifier()]
    excluded_packages: Sequence[str] = _FLAT_EXCLUDED_PACKAGES if flat else ()
    names = [n for n in names if not any(fnmatch.fnmatchcase(n, p) for p in (*excluded_packages, *exclude))]
    module_names = [m for m in modules if m.isidentifier() and m not in packages]
    excluded_modules: Sequence[str] = _FLAT_EXCLUDED_MODULES if flat else ()
    module_names = [
        m for m in module_names if not any(fnmatch.fnmatchcase(m, p) for p in (*excluded_modules, *exclude))
    ]
    found = sorted(names) + sorted(module_names)
    if include:
        found = [n for n in found if any(fnmatch.fnmatchcase(n, p) for p in include)]
    return found


def _infer_import_names(index: _SourceIndex, manifest_dir: str, bases: Sequence[str] = ()) -> list[str]:
    """Import names from the files below a Python manifest: the given bases, else src layout, else flat."""
    join = _join
    if bases:
        found: list[str] = []
        for base in bases:
            found += _top_level_python(index, join(manifest_dir, base), flat=base in ("", "."))
        return _unique(found)
    src = join(manifest_dir, "src")
    if index.has_dir(src + "/"):
        names = _top_level_python(index, src, flat=False)
        if names:
            return names
    return _top_level_python(index, manifest_dir, flat=True)


def _join(folder: str, sub: str) -> str:
    sub = sub.strip().strip("/")
    if sub in ("", "."):
        return folder
    joined = posixpath.normpath(posixpath.join(folder, sub)) if folder else posixpath.normpath(sub)
    return "" if joined == "." else joined


# ---- public API --------------------------------------------------------------------------------------------
def parse_manifest(root: Path, rel_path: str, *, source_files: Sequence[str] = ()) -> list[PackageInfo]:
    """
    Read one manifest.

    :param root: The repository root.
    :param rel_path: The manifest's POSIX path relative to `root`.
    :param source_files: The repository's file paths (relative, POSIX); Python import names are inferred from
        them when the manifest does not declare its packages. Without them no import name is inferred.
    :returns: The packages it declares: usually one; none for a manifest that declares no package (a private
        npm root without a name, a Cargo virtual workspace, a pyproject.toml holding only tool settings).
    :raises ManifestError: Unreadable, malformed, or holding values of the wrong type.
    """
    return _parse(Path(root), rel_path, _SourceIndex.of(source_files))


def discover_packages(root: Path, rel_paths: Iterable[str]) -> tuple[list[PackageInfo], list[Skipped]]:
    """
    Read every manifest among `rel_paths` and merge what they declare.

    Manifests of one folder that declare the same package (a ``pyproject.toml`` and a ``setup.py`` of one
    distribution) merge into one record: key (ecosystem, normalised name, folder); the first manifest in the
    order pyproject.toml, setup.cfg, setup.py provides the declared name and manifest path, aliases and import
    names are united. The same name in two folders stays two records, so each folder's files keep their owner.
    Never raises: a bad manifest becomes a :class:`Skipped`; a ``setup.py`` whose name cannot be read
    statically is not reported when another manifest of its folder names the distribution.

    :param root: The repository root.
    :param rel_paths: Every file path of the walk (POSIX, relative); manifests are picked by file name, all
        paths serve import-name inference.
    :returns: Packages sorted by (root, name), and the manifests skipped with the reason.
    """
    paths = list(rel_paths)
    index = _SourceIndex.of(paths)
    manifests = sorted(
        (p for p in set(paths) if posixpath.basename(p) in MANIFEST_NAMES),
        key=lambda p: (posixpath.dirname(p), _MANIFEST_ORDER.get(posixpath.basename(p), 99), p),
    )
    merged: dict[tuple[str, str, str], PackageInfo] = {}
    pending_skips: list[Skipped] = []
    for rel_path in manifests:
        try:
            found = _parse(Path(root), rel_path, index)
        except ManifestError as error:
            pending_skips.append(Skipped(path=rel_path, reason=error.reason))
            continue
        except Exception as error:  # a parser bug must not cost the whole build
            pending_skips.append(Skipped(path=rel_path, reason=f"unexpected error: {type(error).__name__}: {error}"))
            continue
        for package in found:
            key = (package.ecosystem, _merge_name(package), package.root)
            merged[key] = _merge(merged[key], package) if key in merged else package
    members = workspace_member_patterns(Path(root), manifests)
    for test_key in [k for k, p in merged.items() if _npm_test_data(p, members)]:
        del merged[test_key]  # a fixture's package.json is test input, not a package of the project
    python_roots = {package.root for package in merged.values() if package.ecosystem == "python"}
    skipped = [
        skip
        for skip in pending_skips
        if not (posixpath.basename(skip.path) == "setup.py" and posixpath.dirname(skip.path) in python_roots)
    ]
    packages = sorted(merged.values(), key=lambda p: (p.root, p.name, p.ecosystem))
    return packages, sorted(skipped, key=lambda s: s.path)


def _npm_test_data(package: PackageInfo, members: WorkspaceMembers) -> bool:
    return package.ecosystem == "npm" and is_test_file(package.manifest) and not members.matches(package.root)


_MANIFEST_ORDER = {"pyproject.toml": 0, "setup.cfg": 1, "setup.py": 2}


def _merge_name(package: PackageInfo) -> str:
    return python_normalised(package.name) if package.ecosystem == "python" else package.name


def _merge(first: PackageInfo, second: PackageInfo) -> PackageInfo:
    import_names = _unique([*first.import_names, *second.import_names])
    aliases = _unique(a for a in (*first.aliases, *second.aliases, *import_names) if a != first.name)
    return first.model_copy(
        update={
            "aliases": tuple(aliases),
            "import_names": tuple(import_names),
            "version": first.version or second.version,
        }
    )


def python_normalised(name: str) -> str:
    """PEP 503 normalisation: ``Scikit_Learn`` -> ``scikit-learn``."""
    return re.sub(r"[-_.]+", "-", name).lower()


# ---- dispatch and reading ----------------------------------------------------------------------------------
def _parse(root: Path, rel_path: str, index: _SourceIndex) -> list[PackageInfo]:
    name = posixpath.basename(rel_path)
    parser = _PARSERS.get(name)
    if parser is None:
        raise ManifestError(rel_path, f"not a manifest this tool reads (one of {', '.join(sorted(MANIFEST_NAMES))})")
    text = _read(root, rel_path)
    folder = posixpath.dirname(rel_path)
    return parser(_Context(rel_path=rel_path, folder=folder, index=index, root=root), text)


def _read(root: Path, rel_path: str) -> str:
    try:
        path = resolve_inside(root, rel_path)
    except UnsafePathError as error:
        raise ManifestError(rel_path, f"unsafe path: {error}") from error
    result = read_text_file(path, max_bytes=MAX_MANIFEST_BYTES)
    if not isinstance(result, tuple):
        raise ManifestError(rel_path, result.reason)
    return result[0]


@dataclass(frozen=True)
class _Context:
    rel_path: str
    folder: str
    index: _SourceIndex
    root: Path

    def error(self, reason: str) -> ManifestError:
        return ManifestError(self.rel_path, reason)

    def toml(self, text: str) -> dict[str, Any]:
        """The manifest's TOML document; a `ManifestError` naming the file when it is not valid TOML."""
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as error:
            raise self.error(f"invalid TOML: {error}") from error

    def package(
        self,
        name: str,
        ecosystem: Ecosystem,
        *,
        aliases: Iterable[str] = (),
        import_names: Iterable[str] = (),
        version: str | None = None,
    ) -> PackageInfo:
        problem = package_name_problem(name, ecosystem)
        if problem is not None:  # no registry would publish it: no package, and no candidate for the LLM
            shown = name if len(name) <= 80 else name[:77] + "..."
            raise self.error(f"name {shown!r} is {problem}")
        imports = tuple(_unique(i for i in import_names if is_alias_name(i)))
        aliases = [a for a in aliases if is_alias_name(a)]  # a folder's name can hold anything a file system allows
        return PackageInfo(
            name=name,
            ecosystem=ecosystem,
            root=self.folder,
            manifest=self.rel_path,
            aliases=tuple(_unique(a for a in (*aliases, *imports) if a and a != name)),
            import_names=imports,
            version=version,
        )


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _type_name(value: object) -> str:
    return {
        bool: "a boolean",
        int: "a number",
        float: "a number",
        str: "a string",
        list: "an array",
        dict: "a table/object",
        type(None): "null",
    }.get(type(value), type(value).__name__)


def _optional_str(ctx: _Context, table: dict[str, Any], key: str, where: str) -> str | None:
    value = table.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ctx.error(f"{where}{key} must be a string, got {_type_name(value)} ({value!r})")
    return value


def _required_name(ctx: _Context, table: dict[str, Any], where: str) -> str:
    name = _optional_str(ctx, table, "name", where)
    if name is None:
        raise ctx.error(f"{where}name is missing")
    if not name.strip():
        raise ctx.error(f"{where}name is empty")
    return name.strip()


def _str_list(ctx: _Context, value: object, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ctx.error(f"{where} must be an array of strings, got {_type_name(value)} ({value!r})")
    return list(value)


def _table(ctx: _Context, document: dict[str, Any], *keys: str) -> dict[str, Any]:
    """The nested table at `keys`, {} when absent; an error when something other than a table sits there."""
    current: Any = document
    for depth, key in enumerate(keys):
        current = current.get(key, {})
        if not isinstance(current, dict):
            where = "[" + ".".join(keys[: depth + 1]) + "]"
            raise ctx.error(f"{where} must be a table, got {_type_name(current)}")
    return dict(current)


# ---- npm ---------------------------------------------------------------------------------------------------
def _parse_package_json(ctx: _Context, text: str) -> list[PackageInfo]:
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise ctx.error(f"invalid JSON at line {error.lineno}, column {error.colno}: {error.msg}") from error
    if not isinstance(document, dict):
        raise ctx.error(f"the top level must be an object, got {_type_name(document)}")
    _workspace_globs(ctx, document)  # validated even for a nameless root, which is where workspaces live
    name = _optional_str(ctx, document, "name", "")
    if name is None or not name.strip():
        return []  # a private workspace root: its members have their own package.json
    name = name.strip()
    version = _optional_str(ctx, document, "version", "")
    aliases: list[str] = []
    if name.startswith("@") and "/" in name:
        aliases.append(name.split("/", 1)[1])
    folder_name = posixpath.basename(ctx.folder)
    if folder_name and folder_name.lower() not in _GENERIC_FOLDER_NAMES:
        aliases.append(folder_name)  # `@vue/compat` lives in `packages/vue-compat`: people say both
    return [ctx.package(name, "npm", aliases=aliases, import_names=[name], version=version)]


# Folder names that say nothing about the package they hold.
_GENERIC_FOLDER_NAMES = frozenset(
    {"src", "lib", "dist", "app", "package", "packages", "pkg", "source", "js", "ts", "template", "templates"}
)


@dataclass(frozen=True)
class WorkspaceMembers:
    """
    The folders a repository's workspace declarations name as packages (globs relative to the repository root).

    :param patterns: POSIX globs (``packages/*``, ``packages/**``); ``*`` stays inside one folder name.
    :param excluded: Negated globs (pnpm's ``!**/test/**``).
    """

    patterns: tuple[str, ...] = ()
    excluded: tuple[str, ...] = ()

    @cached_property
    def _regexes(self) -> tuple[re.Pattern[str] | None, re.Pattern[str] | None]:
        def compile_all(globs: tuple[str, ...]) -> re.Pattern[str] | None:
            return re.compile("|".join(f"(?:{_glob_regex(g)})" for g in globs)) if globs else None

        return compile_all(self.patterns), compile_all(self.excluded)

    def matches(self, folder: str) -> bool:
        """Whether a folder (POSIX, relative to the root) is a declared workspace member."""
        included, excluded = self._regexes
        if included is None or not included.fullmatch(folder):
            return False
        return excluded is None or not excluded.fullmatch(folder)


def _glob_regex(glob: str) -> str:
    """A workspace glob as a regular expression over folder paths: `**` spans folders, `*` / `?` do not."""
    glob = glob.strip().strip("/")
    while glob.startswith("./"):
        glob = glob[2:]
    out: list[str] = []
    index = 0
    while index < len(glob):
        if glob.startswith("**/", index):
            out.append("(?:.*/)?")
            index += 3
        elif glob.startswith("**", index):
            out.append(".*")
            index += 2
        elif glob[index] == "*":
            out.append("[^/]*")
            index += 1
        elif glob[index] == "?":
            out.append("[^/]")
            index += 1
        else:
            out.append(re.escape(glob[index]))
            index += 1
    return "".join(out)


def workspace_member_patterns(root: Path, manifests: Iterable[str]) -> WorkspaceMembers:
    """
    Every workspace declaration of a repository: ``workspaces`` of each ``package.json`` among `manifests`
    (relative to its folder), and ``packages`` of the root's ``pnpm-workspace.yaml`` and ``lerna.json``.
    Unreadable or malformed declarations are ignored here (the package.json parser reports those).

    :param root: The repository root.
    :param manifests: Manifest paths (POSIX, relative); only the ``package.json`` ones are read.
    """
    globs: list[str] = []

    def add(folder: str, values: object) -> None:
        if isinstance(values, dict):
            values = values.get("packages")
        if isinstance(values, list):
            globs.extend(
                _join(folder, v) if not v.startswith("!") else "!" + _join(folder, v[1:])
                for v in values
                if isinstance(v, str) and v.strip()
            )

    for rel_path in manifests:
        if posixpath.basename(rel_path) != "package.json":
            continue
        with contextlib.suppress(ManifestError, ValueError):
            document = json.loads(_read(root, rel_path))
            if isinstance(document, dict):
                add(posixpath.dirname(rel_path), document.get("workspaces"))
    for name, load in (("pnpm-workspace.yaml", yaml.safe_load), ("lerna.json", json.loads)):
        if (root / name).is_file():
            with contextlib.suppress(ManifestError, ValueError, yaml.YAMLError):
                document = load(_read(root, name))
                if isinstance(document, dict):
                    add("", document.get("packages"))
    return WorkspaceMembers(
        patterns=tuple(_unique(g for g in globs if not g.startswith("!"))),
        excluded=tuple(_unique(g[1:] for g in globs if g.startswith("!"))),
    )


def _workspace_globs(ctx: _Context, document: dict[str, Any]) -> list[str]:
    """`workspaces` as an array, or as {packages: [...]} (Yarn classic); the members are found as manifests."""
    workspaces = document.get("workspaces")
    if workspaces is None:
        return []
    if isinstance(workspaces, dict):
        packages = workspaces.get("packages", [])
        return _str_list(ctx, packages, "workspaces.packages")
    return _str_list(ctx, workspaces, "workspaces")


# ---- Python ------------------------------------------------------------------------------------------------
def _python_package(
    ctx: _Context, name: str, import_names: Sequence[str], version: str | None, *, infer: bool = True
) -> PackageInfo:
    imports = list(import_names)
    if not imports and infer:
        imports = _infer_import_names(ctx.index, ctx.folder)
    underscored = re.sub(r"[-_.]+", "_", name).lower()
    return ctx.package(name, "python", aliases=[underscored], import_names=imports, version=version)


def _top_segments(dotted: Iterable[str]) -> list[str]:
    """``["sympy", "sympy.core"]`` -> ``["sympy"]``; path-like entries (``src/pkg``) keep their last segment."""
    names: list[str] = []
    for entry in dotted:
        entry = entry.strip()
        if not entry:
            continue
        if "/" in entry:
            entry = entry.rstrip("/").rsplit("/", 1)[-1]
            entry = entry.removesuffix(".py")
        names.append(entry.split(".", 1)[0])
    return _unique(n for n in names if n.isidentifier())


def _parse_pyproject(ctx: _Context, text: str) -> list[PackageInfo]:
    document = ctx.toml(text)
    project = _table(ctx, document, "project")
    poetry = _table(ctx, document, "tool", "poetry")
    if project:
        name = _required_name(ctx, project, "[project].")
        version = _optional_str(ctx, project, "version", "[project].")
    elif "name" in poetry:
        name = _required_name(ctx, poetry, "[tool.poetry].")
        version = _optional_str(ctx, poetry, "version", "[tool.poetry].")
    else:
        return []  # tool settings only (ruff, black, a build-system for setup.py)
    if version is None and project and poetry.get("version") is not None:
        version = _optional_str(ctx, poetry, "version", "[tool.poetry].")
    return [_python_package(ctx, name, _pyproject_import_names(ctx, document), version)]


def _pyproject_import_names(ctx: _Context, document: dict[str, Any]) -> list[str]:
    """Import names a pyproject.toml declares, for each build backend that lets one declare them."""
    names: list[str] = []
    setuptools = _table(ctx, document, "tool", "setuptools")
    packages = setuptools.get("packages")
    package_dir = setuptools.get("package-dir", {})
    if not isinstance(package_dir, dict) or not all(isinstance(v, str) for v in package_dir.values()):
        raise ctx.error("[tool.setuptools].package-dir must be a table of strings")
    if isinstance(packages, dict):
        find = packages.get("find", packages.get("find-namespace", {}))
        if not isinstance(find, dict):
            raise ctx.error("[tool.setuptools.packages.find] must be a table")
        names += _find_packages(ctx, find, package_dir.get("", ""), "[tool.setuptools.packages.find].")
    elif packages is not None:
        names += _top_segments(_str_list(ctx, packages, "[tool.setuptools].packages"))
    if "py-modules" in setuptools:
        names += _str_list(ctx, setuptools["py-modules"], "[tool.setuptools].py-modules")
    wheel = _table(ctx, document, "tool", "hatch", "build", "targets", "wheel")
    if "packages" in wheel:
        names += _top_segments(_str_list(ctx, wheel["packages"], "[tool.hatch.build.targets.wheel].packages"))
    poetry_packages = _table(ctx, document, "tool", "poetry").get("packages")
    if poetry_packages is not None:
        if not isinstance(poetry_packages, list) or not all(isinstance(p, dict) for p in poetry_packages):
            raise ctx.error("[tool.poetry].packages must be an array of tables ({include = ...})")
        for entry in poetry_packages:
            include = entry.get("include")
            if not isinstance(include, str):
                raise ctx.error(f"[tool.poetry].packages: include must be a string, got {_type_name(include)}")
            head = include.strip("/").split("/", 1)[0].removesuffix(".py")
            if head.isidentifier():
                names.append(head)
    flit_module = _table(ctx, document, "tool", "flit", "module")
    if "name" in flit_module:
        names += _top_segments([_required_name(ctx, flit_module, "[tool.flit.module].")])
    maturin = _table(ctx, document, "tool", "maturin")
    if "module-name" in maturin:
        module = _optional_str(ctx, maturin, "module-name", "[tool.maturin].") or ""
        names += _top_segments([module])
    elif "python-source" in maturin and not names:
        source = _optional_str(ctx, maturin, "python-source", "[tool.maturin].") or ""
        names += _infer_import_names(ctx.index, ctx.folder, [source])
    return _unique(names)


def _find_packages(ctx: _Context, find: dict[str, Any], default_where: str, where_label: str) -> list[str]:
    """setuptools' `find:` (where / include / exclude) applied to the source files."""
    where = find.get("where", [default_where or "."])
    if isinstance(where, str):
        where = [where]
    where = _str_list(ctx, where, f"{where_label}where")
    include = _str_list(ctx, find.get("include", []), f"{where_label}include")
    exclude = _str_list(ctx, find.get("exclude", []), f"{where_label}exclude")
    names: list[str] = []
    for base in where:
        folder = _join(ctx.folder, base)
        names += _top_level_python(
            ctx.index,
            folder,
            flat=folder == ctx.folder,
            include=[p.split(".", 1)[0] for p in include],
            exclude=[p for p in exclude if "." not in p],
        )
    return _unique(names)


def _parse_setup_cfg(ctx: _Context, text: str) -> list[PackageInfo]:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text, source=ctx.rel_path)
    except configparser.Error as error:
        message = " ".join(str(error).split())
        raise ctx.error(f"invalid INI: {message}") from error
    if not parser.has_option("metadata", "name"):
        return []  # tool settings only (flake8, isort, tool:pytest)
    name = parser.get("metadata", "name").strip()
    if not name:
        raise ctx.error("[metadata] name is empty")
    version = parser.get("metadata", "version", fallback="").strip()
    if version.startswith(("attr:", "file:")) or not version:
        version = ""  # read from code at build time; we do not execute it
    names: list[str] = []
    package_dir = _cfg_mapping(parser.get("options", "package_dir", fallback=""))
    packages = parser.get("options", "packages", fallback="").strip()
    if packages.startswith(("find:", "find_namespace:")):
        find: dict[str, Any] = {}
        if parser.has_section("options.packages.find"):
            section = parser["options.packages.find"]
            for key in ("where", "include", "exclude"):
                if key in section:
                    find[key] = _cfg_list(section[key])
        names += _find_packages(ctx, find, package_dir.get("", ""), "[options.packages.find] ")
    elif packages:
        names += _top_segments(_cfg_list(packages))
    names += _cfg_list(parser.get("options", "py_modules", fallback=""))
    return [_python_package(ctx, name, _unique(names), version or None)]


def _cfg_list(value: str) -> list[str]:
    """setup.cfg lists: one per line or comma-separated."""
    return [item.strip() for item in re.split(r"[,\n]", value) if item.strip()]


def _cfg_mapping(value: str) -> dict[str, str]:
    mapping: dict[str, str] = {}
    for item in _cfg_list(value):
        key, sep, target = item.partition("=")
        if sep:
            mapping[key.strip()] = target.strip()
    return mapping


# ---- setup.py (static reading, never executed) ---------------------------------------------------------------
class _Unresolved(CodeAliasError):
    """A setup() argument that is not a literal we can read without running the file."""


class _SetupReader:
    """Resolves setup() keyword arguments to literals, following module constants (`NAME = "x"`)."""

    def __init__(self, tree: ast.Module) -> None:
        self.assignments: dict[str, ast.expr] = {}
        # Module-level constants win over function locals of the same name; either may hold the metadata.
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                self.assignments.setdefault(node.targets[0].id, node.value)
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
                self.assignments.setdefault(node.target.id, node.value)
        for node in tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                self.assignments[node.targets[0].id] = node.value

    def keywords(self, call: ast.Call) -> dict[str, ast.expr]:
        """setup()'s keyword arguments, `**metadata` expanded when `metadata` is a literal dict or dict()."""
        found: dict[str, ast.expr] = {}
        for keyword in call.keywords:
            if keyword.arg is not None:
                found[keyword.arg] = keyword.value
                continue
            expanded = self._dict_items(keyword.value, depth=0)
            for key, value in expanded.items():
                found.setdefault(key, value)
        return found

    def _dict_items(self, node: ast.expr, depth: int) -> dict[str, ast.expr]:
        if depth > 5:
            return {}
        if isinstance(node, ast.Name) and node.id in self.assignments:
            return self._dict_items(self.assignments[node.id], depth + 1)
        if isinstance(node, ast.Dict):
            return {
                key.value: value
                for key, value in zip(node.keys, node.values, strict=True)
                if isinstance(key, ast.Constant) and isinstance(key.value, str)
            }
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict":
            return {kw.arg: kw.value for kw in node.keywords if kw.arg is not None}
        return {}

    def string(self, node: ast.expr, depth: int = 0) -> str:
        if depth > 10:
            raise _Unresolved(ast.unparse(node))
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name) and node.id in self.assignments:
            return self.string(self.assignments[node.id], depth + 1)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return self.string(node.left, depth + 1) + self.string(node.right, depth + 1)
        raise _Unresolved(ast.unparse(node))

    def strings(self, node: ast.expr, depth: int = 0) -> list[str]:
        if depth > 10:
            raise _Unresolved(ast.unparse(node))
        if isinstance(node, ast.List | ast.Tuple):
            return [self.string(item, depth + 1) for item in node.elts]
        if isinstance(node, ast.Name) and node.id in self.assignments:
            return self.strings(self.assignments[node.id], depth + 1)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            # `['sympy'] + modules`: keep what is literal, the rest is a sub-package list anyway.
            left = self._strings_or_empty(node.left, depth + 1)
            right = self._strings_or_empty(node.right, depth + 1)
            if left or right:
                return left + right
        raise _Unresolved(ast.unparse(node))

    def _strings_or_empty(self, node: ast.expr, depth: int) -> list[str]:
        try:
            return self.strings(node, depth)
        except _Unresolved:
            return []


def _find_setup_call(tree: ast.Module) -> ast.Call | None:
    calls = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and (
            (isinstance(node.func, ast.Name) and node.func.id == "setup")
            or (isinstance(node.func, ast.Attribute) and node.func.attr == "setup")
        )
    ]
    calls.sort(key=lambda call: (call.lineno, call.col_offset))
    # Prefer a call that passes arguments: `setup()` shims defer to setup.cfg / pyproject.toml.
    return next((call for call in calls if call.keywords), calls[0] if calls else None)


def _find_packages_call(reader: _SetupReader, node: ast.expr) -> ast.Call | None:
    if isinstance(node, ast.Name) and node.id in reader.assignments:
        node = reader.assignments[node.id]
    if isinstance(node, ast.Call):
        func = node.func
        func_name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        if func_name in ("find_packages", "find_namespace_packages"):
            return node
    return None


def _parse_setup_py(ctx: _Context, text: str) -> list[PackageInfo]:
    try:
        tree = ast.parse(text, filename=ctx.rel_path)
    except SyntaxError as error:
        raise ctx.error(f"not valid Python 3 (line {error.lineno}): {error.msg}") from error
    except (ValueError, RecursionError) as error:
        raise ctx.error(f"cannot parse: {error}") from error
    call = _find_setup_call(tree)
    if call is None:
        return []
    reader = _SetupReader(tree)
    keywords = reader.keywords(call)
    if "name" not in keywords:
        opaque = [kw.value for kw in call.keywords if kw.arg is None]
        if opaque and not ctx.index.has_file(_join(ctx.folder, "__init__.py")):
            # Inside a Python package this is a numpy.distutils sub-configuration, not a distribution.
            shown = ast.unparse(opaque[0])
            raise ctx.error(f"the package name is not a literal (setup(**{shown})); setup.py is never executed")
        return []  # name comes from setup.cfg or pyproject.toml
    try:
        name = reader.string(keywords["name"]).strip()
    except _Unresolved as error:
        raise ctx.error(f"the package name is not a literal ({error}); setup.py is never executed") from error
    if not name:
        raise ctx.error("setup(name=...) is empty")
    version: str | None
    try:
        version = reader.string(keywords["version"]) if "version" in keywords else None
    except _Unresolved:
        version = None
    return [_python_package(ctx, name, _setup_py_import_names(ctx, reader, keywords), version)]


def _setup_py_import_names(ctx: _Context, reader: _SetupReader, keywords: dict[str, ast.expr]) -> list[str]:
    names: list[str] = []
    package_dir: dict[str, str] = {}
    if "package_dir" in keywords:
        items = reader._dict_items(keywords["package_dir"], depth=0)
        for key, value in items.items():
            try:
                package_dir[key] = reader.string(value)
            except _Unresolved:
                continue
    if "packages" in keywords:
        find_call = _find_packages_call(reader, keywords["packages"])
        if find_call is not None:
            find: dict[str, Any] = {}
            arguments = {kw.arg: kw.value for kw in find_call.keywords if kw.arg}
            if find_call.args:
                arguments.setdefault("where", find_call.args[0])
            for key in ("where", "include", "exclude"):
                if key not in arguments:
                    continue
                try:
                    value = arguments[key]
                    find[key] = [reader.string(value)] if key == "where" else reader.strings(value)
                except _Unresolved:
                    continue
            names += _find_packages(ctx, find, package_dir.get("", ""), "find_packages() ")
        else:
            # Computed at run time when unresolved: the folders decide instead.
            with contextlib.suppress(_Unresolved):
                names += _top_segments(reader.strings(keywords["packages"]))
    if "py_modules" in keywords:
        with contextlib.suppress(_Unresolved):
            names += [m for m in reader.strings(keywords["py_modules"]) if m.isidentifier()]
    if not names and package_dir.get(""):
        names += _infer_import_names(ctx.index, ctx.folder, [package_dir[""]])
    return _unique(names)


# ---- Cargo -------------------------------------------------------------------------------------------------
def _parse_cargo(ctx: _Context, text: str) -> list[PackageInfo]:
    document = ctx.toml(text)
    package = _table(ctx, document, "package")
    workspace = _table(ctx, document, "workspace")
    if "members" in workspace:
        _str_list(ctx, workspace["members"], "[workspace].members")  # members are found as their own manifests
    if "package" not in document:
        if "workspace" in document:
            return []  # a virtual workspace manifest
        raise ctx.error("neither [package] nor [workspace] is declared")
    name = _required_name(ctx, package, "[package].")
    version_value = package.get("version")
    version: str | None
    if isinstance(version_value, dict) and version_value.get("workspace") is True:
        version = _workspace_version(ctx)
    else:
        version = _optional_str(ctx, package, "version", "[package].")
    lib = _table(ctx, document, "lib")
    crate = _optional_str(ctx, lib, "name", "[lib].") or name.replace("-", "_")
    return [ctx.package(name, "cargo", import_names=[crate], version=version)]


def _workspace_version(ctx: _Context) -> str | None:
    """`version.workspace = true`: the version of the nearest enclosing workspace, if it declares one."""
    folder = ctx.folder
    while folder:
        folder = posixpath.dirname(folder)
        candidate = posixpath.join(folder, "Cargo.toml") if folder else "Cargo.toml"
        try:
            document = tomllib.loads(_read(ctx.root, candidate))
        except (ManifestError, tomllib.TOMLDecodeError):
            continue
        workspace_package = document.get("workspace", {}).get("package", {})
        if isinstance(workspace_package, dict) and isinstance(workspace_package.get("version"), str):
            return str(workspace_package["version"])
        if "workspace" in document:
            return None
    return None


# ---- Go ----------------------------------------------------------------------------------------------------
def _parse_go_mod(ctx: _Context, text: str) -> list[PackageInfo]:
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("//", 1)[0].strip()
        if not line.startswith("module"):
            continue
        rest = line[len("module") :]
        if rest and not rest[0].isspace():
            continue  # a word that merely starts with "module"
        path = rest.strip().strip('"').strip("`")
        if not path or any(ch.isspace() for ch in path):
            raise ctx.error(f"line {number}: malformed module directive {raw.strip()!r}")
        return [ctx.package(path, "go", aliases=[go_package_name(path)], import_names=[path])]
    raise ctx.error("no module directive")


def go_package_name(module_path: str) -> str:
    """The package name code uses for a module: ``github.com/acme/pay/v2`` -> ``pay``, ``gopkg.in/yaml.v3``
    -> ``yaml``."""
    segments = [s for s in module_path.split("/") if s]
    if len(segments) > 1 and _GO_MAJOR_RE.fullmatch(segments[-1]):
        segments.pop()
    last = _GOPKG_VERSION_RE.sub("", segments[-1]) if segments else module_path
    return last


_PARSERS = {
    "package.json": _parse_package_json,
    "pyproject.toml": _parse_pyproject,
    "setup.cfg": _parse_setup_cfg,
    "setup.py": _parse_setup_py,
    "Cargo.toml": _parse_cargo,
    "go.mod": _parse_go_mod,
}
