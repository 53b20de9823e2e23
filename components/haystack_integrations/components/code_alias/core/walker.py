# long: the repository walk and each of its safety rules (ignores, links, sizes, binaries) in one place
"""Safe, fast and deterministic walking of a code repository.

Framework-free. The walker lists the files worth indexing and reports everything it leaves out with a
reason (:class:`~.model.Skipped`), so a user can see why a file is missing from the dictionary. It never
reads file contents; :func:`read_text_file` does that, one file at a time, and reports binary, non-UTF-8,
oversized and unreadable files the same way.

Symlinks are followed only while they stay inside the repository root. The walk runs in two phases: first
every real folder (symlinks not followed, only collected), then the collected symlinks. So a file reachable
both directly and through a link is always listed under its real path, the link is reported as a duplicate,
and a link back to an enclosing folder is reported as a loop instead of being walked forever.

Excluded folders: VCS metadata and tool caches (``.git``, ``__pycache__``, ``.mypy_cache``...) are left out
silently, because every checkout has dozens of them and reporting them is noise. Every other excluded folder
(``node_modules``, ``vendor``, ``dist``, a virtualenv...) is reported once, as the folder, never per file.
Files and folders that a ``.gitignore`` of the repository ignores (the root's and nested ones, with git's
override and negation rules, via pathspec) are left out and reported once, as the folder or file; a user's
global excludes and ``.git/info/exclude`` are not read (they describe one machine, not the project).
Folder names that are also plausible package names (``build``, ``dist``, ``env``, ``vendor``...) are only
excluded when the folder is not a Python package (has no ``__init__.py``): pypa/build keeps its ``src/build``
and coverage.py its ``coverage``. Any folder holding a ``pyvenv.cfg`` or ``conda-meta`` is a virtualenv and
is excluded whatever its name.
"""

from __future__ import annotations

import errno
import fnmatch
import hashlib
import operator
import os
import re
import stat
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

from haystack_integrations.components.code_alias.core.model import Skipped
from haystack_integrations.components.code_alias.errors import CodeAliasError

# Excluded silently: every checkout has many of these and nobody expects their contents indexed.
_QUIET_EXCLUDED_DIRS: frozenset[str] = frozenset(
    {
        # version control
        ".git",
        ".hg",
        ".svn",
        ".bzr",
        "CVS",
        # tool caches
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".hypothesis",
        ".ipynb_checkpoints",
        ".cache",
        # editors and our own index
        ".idea",
        ".vscode",
        ".code-alias",
    }
)

# Folders that are never source of the project itself: dependencies, build output, VCS data, caches (the quiet
# ones above, and these, each reported as skipped).
DEFAULT_EXCLUDED_DIRS: frozenset[str] = _QUIET_EXCLUDED_DIRS | frozenset(
    {
        # dependencies and vendored code
        "node_modules",
        ".bench-cache",
        "bower_components",
        "jspm_packages",
        ".yarn",
        ".pnpm-store",
        "vendor",
        "third_party",
        "third-party",
        "site-packages",
        "Pods",
        # virtualenvs
        ".venv",
        "venv",
        "env",
        ".env",
        ".conda",
        # build output
        "dist",
        "build",
        "out",
        "target",
        "_build",
        ".eggs",
        "*.egg-info",
        ".next",
        ".nuxt",
        ".svelte-kit",
        ".angular",
        ".parcel-cache",
        ".turbo",
        ".gradle",
        ".terraform",
        # tool caches and reports
        ".tox",
        ".nox",
        "coverage",
        "htmlcov",
        ".nyc_output",
    }
)

# Generic names that real packages also use (pypa/build's `build`, coverage.py's `coverage`): such a folder is
# only excluded when it is not a Python package.
_GENERIC_DIR_NAMES: frozenset[str] = frozenset(
    {"build", "dist", "out", "target", "env", "coverage", "vendor", "third_party", "third-party"}
)

# Marker files whose presence makes a folder a virtualenv, whatever it is called.
_VENV_MARKERS: tuple[str, ...] = ("pyvenv.cfg", "conda-meta")

DEFAULT_EXCLUDED_GLOBS: tuple[str, ...] = (
    # minified, bundled and source-map output
    "*.min.js",
    "*.min.mjs",
    "*.min.css",
    "*.bundle.js",
    "*.chunk.js",
    "*.js.map",
    "*.css.map",
    # generated code
    "*_pb2.py",
    "*_pb2.pyi",
    "*_pb2_grpc.py",
    "*.pb.go",
    "*.pb.gw.go",
    "*_generated.go",
    "*.generated.*",
    "*.g.dart",
    "*.designer.cs",
    # lock files: generated, huge, and no symbol in them
    "package-lock.json",
    "npm-shrinkwrap.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "Cargo.lock",
    "poetry.lock",
    "Pipfile.lock",
    "uv.lock",
    "go.sum",
    # secrets must never reach an index
    ".env",
    ".env.*",
)

_BINARY_SNIFF_BYTES = 8192
_UTF8_BOM = b"\xef\xbb\xbf"
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
_GLOB_CHARS = frozenset("*?[")


class UnsafePathError(ValueError, CodeAliasError):
    """A path that would resolve outside the repository root (``..``, absolute, or a symlink leading out)."""


@dataclass(frozen=True)
class WalkConfig:
    """
    What :func:`walk_repository` lists and what it leaves out.

    :param exclude_dirs: Folder names never descended into; entries with glob characters (``*.egg-info``) are
        matched with :mod:`fnmatch`.
    :param exclude_globs: File patterns left out and reported (generated, minified, lock and secret files).
        A pattern containing ``/`` is matched against the POSIX path relative to the root, any other against
        the file name.
    :param max_file_bytes: Files larger than this are reported as too large.
    :param follow_symlinks: Follow symlinks whose target stays inside the root. When False, symlinks are
        reported and not followed.
    :param extensions: Suffixes with their dot (``".py"``, ``".d.ts"``) or whole file names
        (``"package.json"``) to list; ``None`` lists every file. Files that do not match are ignored silently:
        they were never wanted, so they are not "skipped".
    :param respect_gitignore: Leave out what the repository's ``.gitignore`` files ignore.
    """

    exclude_dirs: frozenset[str] = DEFAULT_EXCLUDED_DIRS
    exclude_globs: tuple[str, ...] = DEFAULT_EXCLUDED_GLOBS
    max_file_bytes: int = 1_000_000
    follow_symlinks: bool = True
    extensions: frozenset[str] | None = None
    respect_gitignore: bool = True


DEFAULT_WALK_CONFIG = WalkConfig()


@dataclass(frozen=True)
class WalkEntry:
    """
    One file the walker lists.

    :param rel_path: POSIX path relative to the repository root, as the walk reached it (through a folder
        symlink this is the link's path, not the target's).
    :param abs_path: The file's real location on disk (symlinks resolved).
    :param size: Size in bytes at walk time.
    :param mtime_ns: Modification time in nanoseconds at walk time.
    """

    rel_path: str
    abs_path: Path
    size: int
    mtime_ns: int


@dataclass
class WalkResult:
    """The files listed (sorted by ``rel_path``) and the things left out with a reason (sorted by path)."""

    files: list[WalkEntry] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)


@dataclass(frozen=True)
class _PendingLink:
    rel_path: str
    link_path: str  # the link itself, inside a real folder
    parent_real: str  # real path of the folder holding the link


class _IgnoreRules:
    """One `.gitignore`: pathspec decides (negations, order); one combined regex first rules out most paths."""

    def __init__(self, spec: pathspec.GitIgnoreSpec) -> None:
        self.spec = spec
        compiled = [getattr(p, "regex", None) for p in spec.patterns if p.include is not None]
        # Named groups cannot repeat in one alternation.
        regexes = [r.pattern.replace("(?P<ps_d>", "(?:") for r in compiled if r is not None]
        self.empty = not regexes
        try:
            self.quick: re.Pattern[str] | None = re.compile("|".join(f"(?:{r})" for r in regexes)) if regexes else None
        except re.error:  # pragma: no cover - pathspec's own regexes; then every path takes the precise check
            self.quick = None

    def decide(self, path: str) -> bool | None:
        """True: ignored; False: re-included by a `!` rule; None: no rule matches."""
        if self.empty or (self.quick is not None and self.quick.match(path) is None):
            return None
        return self.spec.check_file(path).include


class _Walker:
    """One walk's state; a class only to share the precomputed matchers with the hot loop."""

    def __init__(self, root_real: str, config: WalkConfig, wanted: Callable[[str], bool] | None) -> None:
        self.root_real = root_real
        self.root_prefix = root_real.rstrip(os.sep) + os.sep
        self.config = config
        self.wanted = wanted
        self.exclude_names = frozenset(d for d in config.exclude_dirs if not _GLOB_CHARS & set(d))
        self.exclude_dir_globs = tuple(d for d in config.exclude_dirs if _GLOB_CHARS & set(d))
        self.name_globs = tuple(g for g in config.exclude_globs if "/" not in g)
        self.path_globs = tuple(g for g in config.exclude_globs if "/" in g)
        # One alternation instead of a loop over patterns: this check runs for every file.
        self.name_globs_re = _compile_globs(self.name_globs)
        self.path_globs_re = _compile_globs(self.path_globs)
        self.extensions = frozenset(e.lower() for e in config.extensions) if config.extensions is not None else None
        self.files: list[WalkEntry] = []
        self.skipped: list[Skipped] = []
        self.visited_dirs: dict[tuple[int, int], str] = {}
        self.listed_files: dict[tuple[int, int], str] = {}
        self.pending: deque[_PendingLink] = deque()
        # Folder (relative, "" = root) -> its compiled .gitignore.
        self.gitignores: dict[str, _IgnoreRules] = {}

    # ---- filters -------------------------------------------------------------------------------------------
    def _extension_wanted(self, name: str) -> bool:
        extensions = self.extensions
        if extensions is None:
            return True
        lower = name.lower()
        if lower in extensions:
            return True
        # Try every suffix so ".d.ts" and ".ts" both work; start after a leading dot (".eslintrc.js").
        dot = lower.find(".", 1)
        while dot != -1:
            if lower[dot:] in extensions:
                return True
            dot = lower.find(".", dot + 1)
        return False

    def _file_wanted(self, name: str, rel_path: str) -> bool:
        """Silent filters: the caller's extensions and predicate."""
        if not self._extension_wanted(name):
            return False
        return self.wanted is None or self.wanted(rel_path)

    def _excluded_file(self, name: str, rel_path: str) -> str | None:
        """The skip reason of a file left out by an exclusion glob, or None."""
        pattern = None
        if self.name_globs_re is not None and self.name_globs_re.match(name):
            pattern = next(p for p in self.name_globs if fnmatch.fnmatchcase(name, p))
        elif self.path_globs_re is not None and self.path_globs_re.match(rel_path):
            pattern = next(p for p in self.path_globs if fnmatch.fnmatchcase(rel_path, p))
        return None if pattern is None else f"excluded file (generated, bundled, lock or secret: {pattern!r})"

    def _excluded_dir(self, name: str, real_path: str) -> str | None:
        """The reason to leave a folder out, or None. Checks a marker file only for generic names."""
        if name in self.exclude_names:
            if name in _GENERIC_DIR_NAMES and os.path.isfile(os.path.join(real_path, "__init__.py")):
                return None
            return name
        for pattern in self.exclude_dir_globs:
            if fnmatch.fnmatchcase(name, pattern):
                return pattern
        return None

    def _read_gitignore(self, real_dir: str, rel_dir: str) -> None:
        path = os.path.join(real_dir, ".gitignore")
        shown = f"{rel_dir}/.gitignore" if rel_dir else ".gitignore"
        try:
            if os.path.getsize(path) > self.config.max_file_bytes:
                self._skip(shown, "too large to read as ignore rules; its rules are not applied")
                return
            with open(path, encoding="utf-8", errors="replace") as handle:
                self.gitignores[rel_dir] = _IgnoreRules(pathspec.GitIgnoreSpec.from_lines(handle.read().splitlines()))
        except (OSError, ValueError) as error:  # unreadable, or a pattern pathspec cannot compile
            self._skip(shown, f"ignore rules not applied: {error}")

    def _gitignored(self, rel_path: str, is_dir: bool) -> str | None:
        """The `.gitignore` that ignores `rel_path`, or None; the deepest one with a matching rule decides."""
        if not self.gitignores:
            return None
        decided: str | None = None
        folder = ""
        parts = rel_path.split("/")
        for depth in range(len(parts)):
            rules = self.gitignores.get(folder)
            if rules is not None:
                included = rules.decide("/".join(parts[depth:]) + ("/" if is_dir else ""))
                if included is not None:
                    decided = (f"{folder}/.gitignore" if folder else ".gitignore") if included else None
            folder = f"{folder}/{parts[depth]}" if folder else parts[depth]
        return decided

    def _ignored(self, rel_path: str, is_dir: bool) -> str | None:
        """The skip reason of a folder or file a `.gitignore` ignores, or None."""
        ignored_by = self._gitignored(rel_path, is_dir=is_dir)
        return None if ignored_by is None else f"ignored {'folder' if is_dir else 'file'} (by {ignored_by})"

    def _skip(self, rel_path: str, reason: str) -> None:
        self.skipped.append(Skipped(path=rel_path, reason=reason))

    def _stat_unless_left_out(
        self, entry: os.DirEntry[str], rel_path: str, is_dir: bool, excluded: str | None
    ) -> os.stat_result | None:
        """
        The folder's or file's own stat, or None when it is left out, with the reason recorded: `excluded` (the
        reason already worded; "" leaves it out quietly), a `.gitignore` rule, or a failing stat.
        """
        left_out = excluded if excluded is not None else self._ignored(rel_path, is_dir)
        if left_out is not None:
            if left_out:
                self._skip(rel_path, left_out)
            return None
        try:
            return entry.stat(follow_symlinks=False)
        except OSError as error:
            self._skip(rel_path, f"{'cannot read folder' if is_dir else 'cannot stat'}: {error.strerror}")
            return None

    # ---- phase 1 and 2: folders ----------------------------------------------------------------------------
    # long: one iterative walk with its skip rules in the order they must apply
    def walk_tree(self, start_real: str, start_rel: str) -> None:
        """Walk real folders below `start_real` without following symlinks; collect the symlinks met."""
        try:
            start_stat = os.stat(start_real)
        except OSError as error:
            self._skip(start_rel or ".", f"cannot read folder: {error.strerror}")
            return
        self.visited_dirs.setdefault((start_stat.st_dev, start_stat.st_ino), start_rel)
        stack: list[tuple[str, str]] = [(start_real, start_rel)]
        config = self.config
        max_bytes = config.max_file_bytes
        while stack:
            real_dir, rel_dir = stack.pop()
            try:
                with os.scandir(real_dir) as iterator:
                    entries = sorted(iterator, key=_entry_name)
            except PermissionError:
                self._skip(rel_dir or ".", "unreadable folder: permission denied")
                continue
            except OSError as error:
                self._skip(rel_dir or ".", f"cannot list folder: {error.strerror}")
                continue
            # A virtualenv under any name: recognisable only once listed, so the check costs no syscall.
            if rel_dir and any(entry.name in _VENV_MARKERS for entry in entries):
                self._skip(rel_dir, "excluded folder: a Python virtual environment")
                continue
            if self.config.respect_gitignore and any(e.name == ".gitignore" for e in entries):
                self._read_gitignore(real_dir, rel_dir)
            prefix = rel_dir + "/" if rel_dir else ""
            subdirs: list[tuple[str, str]] = []
            dir_path: Path | None = None  # made on the first listed file: `dir / name` is half the cost of Path()
            for entry in entries:
                name = entry.name
                rel_path = prefix + name
                if not (name.isascii() or _utf8_name(name)):
                    self._skip(_printable(rel_path), "file name is not valid UTF-8")
                    continue
                try:
                    is_link = entry.is_symlink()
                    is_dir = not is_link and entry.is_dir(follow_symlinks=False)
                except OSError as error:  # pragma: no cover - d_type is known on every filesystem tested
                    self._skip(rel_path, f"cannot inspect: {error.strerror}")
                    continue
                if is_dir:
                    excluded = self._excluded_dir(name, entry.path)
                    dir_stat = self._stat_unless_left_out(entry, rel_path, True, _excluded_folder_reason(excluded))
                    if dir_stat is None:
                        continue
                    key = (dir_stat.st_dev, dir_stat.st_ino)
                    if key in self.visited_dirs:  # a bind mount of a folder already walked
                        self._skip(rel_path, f"same folder as {self.visited_dirs[key]!r}, already walked there")
                        continue
                    self.visited_dirs[key] = rel_path
                    subdirs.append((entry.path, rel_path))
                    continue
                if is_link:
                    self._collect_link(name, rel_path, entry.path, real_dir)
                    continue
                if not self._file_wanted(name, rel_path):
                    continue
                file_stat = self._stat_unless_left_out(entry, rel_path, False, self._excluded_file(name, rel_path))
                if file_stat is None:
                    continue
                if not stat.S_ISREG(file_stat.st_mode):
                    self._skip(rel_path, f"not a regular file ({_file_kind(file_stat.st_mode)})")
                    continue
                if file_stat.st_size > max_bytes:
                    self._skip(rel_path, f"too large: {file_stat.st_size} bytes > limit {max_bytes}")
                    continue
                self.listed_files.setdefault((file_stat.st_dev, file_stat.st_ino), rel_path)
                if dir_path is None:
                    dir_path = Path(real_dir)
                self.files.append(WalkEntry(rel_path, dir_path / name, file_stat.st_size, file_stat.st_mtime_ns))
            # Reverse so the stack pops folders in name order: a sorted pre-order walk.
            stack.extend(reversed(subdirs))

    def _collect_link(self, name: str, rel_path: str, link_path: str, parent_real: str) -> None:
        """Defer a symlink to phase 2; drop it now when its name alone rules it out."""
        excluded_name = name in self.exclude_names or any(fnmatch.fnmatchcase(name, p) for p in self.exclude_dir_globs)
        # A link named like an excluded folder (`.venv -> /opt/venv`) is as unwanted as the folder.
        if excluded_name and self._link_is_dir(link_path):
            reason = _excluded_folder_reason(name)
            if reason:
                self._skip(rel_path, reason)
            return
        if not self.config.follow_symlinks:
            if self._link_is_dir(link_path) or self._file_wanted(name, rel_path):
                self._skip(rel_path, "symlink not followed (follow_symlinks is off)")
            return
        self.pending.append(_PendingLink(rel_path, link_path, parent_real))

    @staticmethod
    def _link_is_dir(link_path: str) -> bool:
        try:
            return stat.S_ISDIR(os.stat(link_path).st_mode)
        except OSError:
            return False

    def _inside_root(self, real_path: str) -> bool:
        return real_path == self.root_real or real_path.startswith(self.root_prefix)

    def follow_links(self) -> None:
        """Phase 2: resolve each collected symlink; walk linked folders not walked yet (they may add links)."""
        while self.pending:
            link = self.pending.popleft()
            self._follow(link)

    def _maybe_wanted(self, name: str, rel_path: str) -> bool:
        """For a link whose target is unknown: wanted as a file, or named like a folder (no suffix)."""
        return self._file_wanted(name, rel_path) or "." not in name.lstrip(".")

    def _follow(self, link: _PendingLink) -> None:
        rel_path = link.rel_path
        name = rel_path.rsplit("/", 1)[-1]
        try:
            target_stat = os.stat(link.link_path)
        except FileNotFoundError:
            if self._maybe_wanted(name, rel_path):
                self._skip(rel_path, f"broken symlink (-> {_readlink(link.link_path)!r} does not exist)")
            return
        except OSError as error:
            if not self._maybe_wanted(name, rel_path):
                return
            if error.errno == errno.ELOOP:
                self._skip(rel_path, "symlink loop (the chain of links never reaches a file or folder)")
            else:
                self._skip(rel_path, f"cannot follow symlink: {error.strerror}")
            return
        is_dir = stat.S_ISDIR(target_stat.st_mode)
        # Links to unwanted files are ignored as silently as unwanted files.
        if not is_dir and not self._file_wanted(name, rel_path):
            return
        ignored = self._ignored(rel_path, is_dir)
        if ignored is not None:
            self._skip(rel_path, ignored)
            return
        target_real = os.path.realpath(link.link_path)
        if not self._inside_root(target_real):
            self._skip(rel_path, f"symlink escapes the repository root (-> {target_real!r})")
            return
        if is_dir:
            parent = link.parent_real
            if parent == target_real or parent.startswith(target_real.rstrip(os.sep) + os.sep):
                shown = os.path.relpath(target_real, self.root_real).replace(os.sep, "/")
                self._skip(rel_path, f"symlink loop (points back to its enclosing folder {shown!r})")
                return
            walked_as = self.visited_dirs.get((target_stat.st_dev, target_stat.st_ino))
            if walked_as is not None:
                self._skip(rel_path, f"symlink to folder {walked_as!r}, already walked there")
                return
            self.walk_tree(target_real, rel_path)
            return
        if not stat.S_ISREG(target_stat.st_mode):
            self._skip(rel_path, f"not a regular file ({_file_kind(target_stat.st_mode)})")
            return
        excluded = self._excluded_file(name, rel_path)
        if excluded is not None:
            self._skip(rel_path, excluded)
            return
        listed_as = self.listed_files.get((target_stat.st_dev, target_stat.st_ino))
        if listed_as is not None:
            self._skip(rel_path, f"symlink to {listed_as!r}, already listed there")
            return
        if target_stat.st_size > self.config.max_file_bytes:
            self._skip(rel_path, f"too large: {target_stat.st_size} bytes > limit {self.config.max_file_bytes}")
            return
        self.listed_files[(target_stat.st_dev, target_stat.st_ino)] = rel_path
        self.files.append(WalkEntry(rel_path, Path(target_real), target_stat.st_size, target_stat.st_mtime_ns))


def walk_repository(
    root: str | Path,
    config: WalkConfig = DEFAULT_WALK_CONFIG,
    *,
    wanted: Callable[[str], bool] | None = None,
) -> WalkResult:
    """
    List the files of a repository worth indexing, and report what was left out and why.

    The result is deterministic: files sorted by ``rel_path``, skipped entries by path. Nothing in the tree
    makes it raise (unreadable folders, loops, broken links and odd files are reported as skipped); only a
    root that does not exist or is not a folder does, because that is a mistake of the caller.

    :param root: The repository folder; it may itself be a symlink.
    :param config: What to list and what to exclude.
    :param wanted: Extra predicate on the POSIX relative path, applied after ``config.extensions``; files it
        rejects are ignored silently.
    :returns: The listed files and the skipped things.
    :raises FileNotFoundError: `root` does not exist.
    :raises NotADirectoryError: `root` is not a folder.
    """
    root_str = os.fspath(root)
    root_real = os.path.realpath(root_str)
    if not os.path.exists(root_real):
        raise FileNotFoundError(f"{root_str}: repository root does not exist")
    if not os.path.isdir(root_real):
        raise NotADirectoryError(f"{root_str}: repository root is not a folder")
    walker = _Walker(root_real, config, wanted)
    walker.walk_tree(root_real, "")
    walker.follow_links()
    walker.files.sort(key=lambda entry: entry.rel_path)
    walker.skipped.sort(key=lambda skipped: (skipped.path, skipped.reason))
    return WalkResult(files=walker.files, skipped=walker.skipped)


def read_text_file(entry_or_path: WalkEntry | str | Path, *, max_bytes: int) -> tuple[str, str] | Skipped:
    """
    Read a source file as UTF-8 text.

    The text is returned exactly as stored (no newline translation, so offsets match the bytes) except that a
    leading UTF-8 byte-order mark is dropped. The hash covers the raw bytes, BOM included, so it changes
    exactly when the file does. Opening is non-blocking, so a FIFO planted in a tree cannot hang the build.

    :param entry_or_path: A :class:`WalkEntry` (reported under its ``rel_path``) or a path (reported as given).
    :param max_bytes: Larger files are skipped, whatever their size was at walk time.
    :returns: ``(text, sha256 hex digest of the bytes)``, or a :class:`Skipped` saying why the file is unusable:
        missing, unreadable, not a regular file, too large, binary (NUL byte in the first 8 KiB), not UTF-8.
    """
    if isinstance(entry_or_path, WalkEntry):
        label, path = entry_or_path.rel_path, os.fspath(entry_or_path.abs_path)
    else:
        label = path = os.fspath(entry_or_path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return Skipped(path=label, reason="file does not exist (removed, or a broken symlink)")
    except PermissionError:
        return Skipped(path=label, reason="unreadable: permission denied")
    except OSError as error:
        if error.errno == errno.ELOOP:
            return Skipped(path=label, reason="symlink loop")
        return Skipped(path=label, reason=f"cannot open: {error.strerror}")
    try:
        with open(fd, "rb", closefd=True) as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):
                return Skipped(path=label, reason=f"not a regular file ({_file_kind(info.st_mode)})")
            if info.st_size > max_bytes:
                return Skipped(path=label, reason=f"too large: {info.st_size} bytes > limit {max_bytes}")
            data = handle.read(max_bytes + 1)
    except OSError as error:
        return Skipped(path=label, reason=f"unreadable: {error.strerror}")
    if len(data) > max_bytes:  # grew since it was stat'ed
        return Skipped(path=label, reason=f"too large: more than {max_bytes} bytes > limit {max_bytes}")
    if data.startswith(_UTF16_BOMS):
        return Skipped(path=label, reason="not UTF-8 text (UTF-16 byte-order mark)")
    if b"\x00" in data[:_BINARY_SNIFF_BYTES]:
        return Skipped(path=label, reason="binary (NUL byte in the first 8 KiB)")
    body = data[len(_UTF8_BOM) :] if data.startswith(_UTF8_BOM) else data
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as error:
        offset = error.start + (len(data) - len(body))
        return Skipped(path=label, reason=f"not UTF-8 text (byte 0x{data[offset]:02x} at offset {offset})")
    return text, hashlib.sha256(data).hexdigest()


def resolve_inside(root: Path, rel_path: str) -> Path:
    """
    Resolve `rel_path` against `root`, refusing anything that would land outside it.

    :param root: The repository root (may be a symlink).
    :param rel_path: A relative path, POSIX or native separators; ``""`` or ``"."`` is the root itself.
    :returns: The real (symlink-resolved) absolute path, which need not exist.
    :raises UnsafePathError: `rel_path` is absolute, contains a NUL byte, or resolves (through ``..`` or a
        symlink) outside `root`.
    """
    if "\x00" in rel_path:
        raise UnsafePathError(f"{rel_path!r}: path contains a NUL byte")
    normalised = rel_path.replace("\\", "/") if os.sep == "\\" else rel_path
    if os.path.isabs(normalised) or normalised.startswith("/") or os.path.splitdrive(normalised)[0]:
        raise UnsafePathError(f"{rel_path!r}: absolute paths are not allowed, give a path relative to the root")
    root_real = os.path.realpath(os.fspath(root))
    target = os.path.realpath(os.path.join(root_real, normalised))
    if target != root_real and not target.startswith(root_real.rstrip(os.sep) + os.sep):
        raise UnsafePathError(f"{rel_path!r}: resolves to {target!r}, outside the repository root {root_real!r}")
    return Path(target)


def _compile_globs(patterns: tuple[str, ...]) -> re.Pattern[str] | None:
    if not patterns:
        return None
    return re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in patterns))


_entry_name = operator.attrgetter("name")


def _utf8_name(name: str) -> bool:
    # Undecodable bytes come back as lone surrogates, which JSON persistence could not store later.
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _printable(path: str) -> str:
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _readlink(path: str) -> str:
    try:
        return os.readlink(path)
    except OSError:
        return "?"


def _excluded_folder_reason(excluded: str | None) -> str | None:
    """The skip reason of a folder left out by the name or glob `excluded`; "" for the quiet ones (`.git`, ...)."""
    if excluded is None:
        return None
    return "" if excluded in _QUIET_EXCLUDED_DIRS else f"excluded folder (vendored, generated or tooling: {excluded!r})"


def _file_kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "named pipe"
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device"
    if stat.S_ISDIR(mode):
        return "folder"
    return "special file"
