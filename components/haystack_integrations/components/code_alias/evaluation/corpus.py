# long: three kinds of corpus (a folder, a git commit, a PyPI release), each fetched and cached
"""Corpora for golden items: a local directory, a git repository at a commit, or a release from PyPI.

Framework-free. Extracted corpora are cached on disk (default ``.bench-cache/`` in the working directory)
under ``corpora/<key>/`` and reused across instances and runs: releases by ``(distribution, version)``, git
trees by ``(repository, commit)``. A corpus is extracted into a temporary folder next to its final place and
renamed into place in one step, so a crash leaves no half corpus and two processes racing on the same key
both end with the same complete folder.

How a release is obtained (:class:`PipDownloader`), all through ``pip download --no-deps``, nothing built or
installed:

1. a wheel for this interpreter: ``--only-binary=:all:``;
2. a wheel for another CPython: ``--only-binary=:all: --python-version X.Y --implementation cp --abi cpXY[m]``
   with manylinux ``--platform`` tags, newest Python first (3.13 down to 3.5). Old platform releases need
   this (astropy 1.3 ships only cp36 wheels among these, scikit-learn 0.20/0.21 cp37), and so do releases
   whose ``Requires-Python`` excludes this interpreter (Django 5.0 needs 3.10 or later). The Python
   source in a platform wheel does not depend on the tag picked;
3. the sdist: ``--no-binary=:all:``. pip prepares an sdist's metadata (runs its ``setup.py egg_info`` or
   PEP 517 hook) even for a download; when that fails (requests 0.14's setup.py does not run on Python
   3.11), the archive URL pip selected from the index is read from its ``-vvv`` log and fetched directly
   from the same index host, without running anything.

Wheel corpora drop ``*.dist-info`` folders and compiled binaries (``.so``, ``.pyd``, ``.dll``, ``.dylib``);
sdists lose their single top folder. Repository paths map onto corpus paths by trying the path itself, then
without a leading ``src/`` or ``lib/`` (what a wheel does to ``src/flask/app.py`` or
``lib/matplotlib/axes/_axes.py``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Literal, Protocol

from ..core.model import read_json_object
from ..core.symbols import language_for_path
from ..errors import CodeAliasError
from ..progress import progress_bar

__all__ = [
    "DEFAULT_CACHE_DIR",
    "PYPI_DISTRIBUTIONS",
    "Corpus",
    "CorpusCache",
    "CorpusError",
    "CorpusResolver",
    "DownloadResult",
    "Downloader",
    "InstanceCoverage",
    "PipDownloader",
    "coverage_of",
    "map_repo_path",
    "prefetch",
    "unique_plans",
]

DEFAULT_CACHE_DIR = Path(".bench-cache")

#: SWE-bench repository -> PyPI distribution.
PYPI_DISTRIBUTIONS: dict[str, str] = {
    "django/django": "Django",
    "astropy/astropy": "astropy",
    "sympy/sympy": "sympy",
    "scikit-learn/scikit-learn": "scikit-learn",
    "matplotlib/matplotlib": "matplotlib",
    "pytest-dev/pytest": "pytest",
    "sphinx-doc/sphinx": "Sphinx",
    "psf/requests": "requests",
    "pylint-dev/pylint": "pylint",
    "pydata/xarray": "xarray",
    "mwaskom/seaborn": "seaborn",
    "pallets/flask": "Flask",
}

#: Leading folders that a built distribution drops from repository paths.
STRIPPED_PREFIXES: tuple[str, ...] = ("src", "lib")
#: Files a wheel corpus leaves out: compiled code, not searchable text.
BINARY_SUFFIXES: frozenset[str] = frozenset({".so", ".pyd", ".dll", ".dylib", ".a", ".lib", ".o"})
#: Python versions tried for wheels of other interpreters, newest first.
PYTHON_LADDER: tuple[str, ...] = ("3.13", "3.12", "3.11", "3.10", "3.9", "3.8", "3.7", "3.6", "3.5")
#: Platform tags offered with ``--platform`` (pure wheels always match too).
PLATFORM_TAGS: tuple[str, ...] = (
    "manylinux_2_28_x86_64",
    "manylinux_2_17_x86_64",
    "manylinux2014_x86_64",
    "manylinux2010_x86_64",
    "manylinux1_x86_64",
)


class CorpusError(CodeAliasError):
    """A corpus that cannot be obtained (the message says why: no release, no commit, extraction failed)."""


def map_repo_path(repo_path: str, exists: Callable[[str], bool]) -> str | None:
    """
    The corpus path of a repository path, or None when the corpus lacks it.

    Tries the path itself, then the path without a leading ``src/`` or ``lib/``.

    :param repo_path: POSIX path relative to the repository root.
    :param exists: Whether a corpus path exists (as a file).
    """
    path = repo_path.lstrip("/")
    if exists(path):
        return path
    parts = PurePosixPath(path).parts
    if len(parts) > 1 and parts[0] in STRIPPED_PREFIXES:
        stripped = "/".join(parts[1:])
        if exists(stripped):
            return stripped
    return None


@dataclass(frozen=True)
class Corpus:
    """A code tree on disk that golden items are asked against."""

    key: str
    root: Path
    kind: Literal["local", "git", "wheel", "sdist"]
    source: str = ""
    details: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def exists(self, corpus_path: str) -> bool:
        """Whether a corpus path is a file of the corpus."""
        return (self.root / corpus_path).is_file()

    def map_path(self, repo_path: str) -> str | None:
        """The corpus path of a repository path (:func:`map_repo_path`), or None."""
        return map_repo_path(repo_path, self.exists)

    def read(self, repo_path: str) -> tuple[str, str] | None:
        """``(corpus path, text)`` of a repository path, or None when the corpus lacks it or it is unreadable."""
        corpus_path = self.map_path(repo_path)
        if corpus_path is None:
            return None
        try:
            return corpus_path, (self.root / corpus_path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None


@dataclass(frozen=True)
class DownloadResult:
    """An archive a downloader fetched, and how."""

    archive: Path
    kind: Literal["wheel", "sdist"]
    how: str


class Downloader(Protocol):
    """Fetches a release archive of ``distribution==version`` into ``dest`` (injectable for tests)."""

    def __call__(self, distribution: str, version: str, dest: Path) -> DownloadResult: ...


def _abi_for(python_version: str) -> str:
    major, minor = (int(part) for part in python_version.split(".")[:2])
    return f"cp{major}{minor}m" if (major, minor) < (3, 8) else f"cp{major}{minor}"


class PipDownloader:
    """
    Fetches a release with ``pip download --no-deps`` (the module docstring tells the order of attempts).

    :param python: The interpreter whose pip runs (default: this one).
    :param timeout: Seconds for each pip call.
    :param extra_args: Added to every pip call (``--index-url ...``).
    """

    def __init__(self, python: str | None = None, *, timeout: float = 600.0, extra_args: Sequence[str] = ()) -> None:
        self.python = python or sys.executable
        self.timeout = timeout
        self.extra_args = list(extra_args)

    def attempts(self) -> list[tuple[str, list[str]]]:
        """The pip argument sets tried for wheels, in order, each with a short description."""
        tries: list[tuple[str, list[str]]] = [("wheel (this interpreter)", ["--only-binary=:all:"])]
        for version in PYTHON_LADDER:
            args = ["--only-binary=:all:", "--python-version", version, "--implementation", "cp"]
            args += ["--abi", _abi_for(version)]
            for platform in PLATFORM_TAGS:
                args += ["--platform", platform]
            tries.append((f"wheel (cp{version.replace('.', '')})", args))
        return tries

    def _pip(self, args: list[str], dest: Path) -> subprocess.CompletedProcess[str]:
        command = [self.python, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check"]
        command += ["-d", str(dest), *self.extra_args, *args]
        return subprocess.run(command, capture_output=True, text=True, timeout=self.timeout, check=False)

    def __call__(self, distribution: str, version: str, dest: Path) -> DownloadResult:
        """
        Fetch ``distribution==version`` into ``dest``.

        Each pip call downloads into a fresh temporary folder next to ``dest``, and the archive is renamed
        into ``dest``, so concurrent fetches of one release do not see each other's partial files.

        :raises CorpusError: No wheel and no sdist could be fetched (the message holds pip's last error).
        """
        dest.mkdir(parents=True, exist_ok=True)
        requirement = f"{distribution}=={version}"
        last_error = ""
        for how, args in self.attempts():
            log, archive = self._download([*args, requirement], dest, (".whl",))
            if archive is not None:
                return DownloadResult(archive, "wheel", how)
            last_error = _last_error(log)
            if "No matching distribution" not in log and "Could not find a version" not in log:
                break  # not "no such wheel" but something else (index unreachable...): other tags will not help
        log, archive = self._download(["-vvv", "--no-binary=:all:", requirement], dest, (".tar.gz", ".zip", ".tgz"))
        if archive is not None:
            return DownloadResult(archive, "sdist", "sdist (pip download --no-binary=:all:)")
        url = _selected_sdist_url(log)
        if url is None:
            raise CorpusError(f"{requirement}: no wheel and no sdist on the index ({_last_error(log) or last_error})")
        target = dest / Path(urllib.parse.urlparse(url).path).name
        try:
            _fetch(url, target, timeout=self.timeout)
        except OSError as error:
            raise CorpusError(f"{requirement}: fetching the sdist {url} failed: {error}") from error
        return DownloadResult(target, "sdist", f"sdist fetched from the index URL pip chose; pip: {_last_error(log)}")

    def _download(self, args: list[str], dest: Path, suffixes: tuple[str, ...]) -> tuple[str, Path | None]:
        scratch = Path(tempfile.mkdtemp(prefix=".pip-", dir=dest))
        try:
            result = self._pip(args, scratch)
            log = result.stdout + result.stderr
            found = sorted(path for path in scratch.iterdir() if path.name.lower().endswith(suffixes))
            if result.returncode != 0 or not found:
                return log, None
            target = dest / found[0].name
            os.replace(found[0], target)
            return log, target
        finally:
            shutil.rmtree(scratch, ignore_errors=True)


def _last_error(log: str) -> str:
    lines = [line.strip() for line in log.splitlines() if line.strip().startswith("ERROR:")]
    if lines:
        return lines[-1][len("ERROR:") :].strip()
    tail = [line.strip() for line in log.splitlines() if line.strip()]
    return tail[-1] if tail else ""


def _selected_sdist_url(log: str) -> str | None:
    added = re.findall(r"Added \S+ from (\S+?\.(?:tar\.gz|tar\.bz2|tgz|zip))(?:#\S*)? to build tracker", log)
    if added:
        return str(added[-1])
    return None


def _fetch(url: str, target: Path, *, timeout: float) -> None:
    scheme = urllib.parse.urlparse(url).scheme
    if scheme not in {"https", "file"}:
        raise OSError(f"refusing to fetch {url!r}: only https and file URLs of the index")
    tmp = target.with_name(f".{target.name}.{os.getpid()}.part")
    with urllib.request.urlopen(url, timeout=timeout) as response, tmp.open("wb") as handle:
        shutil.copyfileobj(response, handle)
    os.replace(tmp, target)


def _safe_member(name: str) -> str | None:
    path = PurePosixPath(name.replace("\\", "/"))
    if path.is_absolute() or ".." in path.parts or not path.parts:
        return None
    return str(path)


def _extract_archive(archive: Path, target: Path) -> None:
    name = archive.name.lower()
    if name.endswith((".whl", ".zip")):
        with zipfile.ZipFile(archive) as bundle:
            for info in bundle.infolist():
                member = _safe_member(info.filename)
                if member is None or info.is_dir():
                    continue
                destination = target / member
                destination.parent.mkdir(parents=True, exist_ok=True)
                with bundle.open(info) as source, destination.open("wb") as sink:
                    shutil.copyfileobj(source, sink)
        return
    if name.endswith((".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".tar")):
        with tarfile.open(archive) as bundle:
            for tar_info in bundle.getmembers():
                member = _safe_member(tar_info.name)
                if member is None or not tar_info.isfile():
                    continue
                destination = target / member
                destination.parent.mkdir(parents=True, exist_ok=True)
                extracted = bundle.extractfile(tar_info)
                if extracted is None:
                    continue
                with extracted, destination.open("wb") as sink:
                    shutil.copyfileobj(extracted, sink)
        return
    raise CorpusError(f"{archive.name}: unknown archive type")


def _strip_single_top_folder(folder: Path) -> None:
    entries = [entry for entry in folder.iterdir()]
    if len(entries) != 1 or not entries[0].is_dir():
        return
    top = entries[0]
    holding = folder / f".strip-{os.getpid()}-{time.monotonic_ns()}"
    top.rename(holding)
    for child in holding.iterdir():
        child.rename(folder / child.name)
    holding.rmdir()


def _prune_wheel(folder: Path) -> None:
    for info in list(folder.glob("*.dist-info")):
        shutil.rmtree(info, ignore_errors=True)
    for path in folder.rglob("*"):
        if path.is_file() and path.suffix.lower() in BINARY_SUFFIXES:
            path.unlink()
    data = list(folder.glob("*.data"))
    for bundle in data:
        # purelib / platlib hold package code: lift it to the root, as an install would.
        for kind in ("purelib", "platlib"):
            lib = bundle / kind
            if lib.is_dir():
                for child in lib.iterdir():
                    if not (folder / child.name).exists():
                        child.rename(folder / child.name)
        shutil.rmtree(bundle, ignore_errors=True)


def _count_files(folder: Path) -> int:
    return sum(1 for path in folder.rglob("*") if path.is_file())


def _safe_key(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._+-]+", "_", text).strip("_") or "corpus"


class CorpusCache:
    """
    Obtains corpora and caches them under ``cache_dir``.

    :param cache_dir: The cache folder (default ``.bench-cache`` in the working directory); a relative path is
        made absolute against the working directory at construction (``git archive -o`` runs inside the
        repository, where a relative path would land).
    :param downloader: Fetches release archives (default :class:`PipDownloader`); tests inject a fake.
    :param keep_archives: Keep downloaded archives under ``downloads/`` (default: yes; a rebuild of a corpus
        then needs no download).
    """

    def __init__(
        self,
        cache_dir: str | Path = DEFAULT_CACHE_DIR,
        *,
        downloader: Downloader | None = None,
        keep_archives: bool = True,
    ) -> None:
        self.cache_dir = Path(cache_dir).absolute()
        self.downloader: Downloader = downloader or PipDownloader()
        self.keep_archives = keep_archives

    @property
    def corpora_dir(self) -> Path:
        """Where extracted corpora live."""
        return self.cache_dir / "corpora"

    def _manifest_path(self, key: str) -> Path:
        return self.cache_dir / "manifests" / f"{key}.json"

    def _read_manifest(self, key: str) -> dict[str, Any]:
        return read_json_object(self._manifest_path(key)) or {}

    def _write_manifest(self, key: str, data: dict[str, Any]) -> None:
        path = self._manifest_path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data, indent=2, sort_keys=True), encoding="utf-8")
        os.replace(tmp, path)

    def _publish(self, key: str, build: Callable[[Path], dict[str, Any]]) -> Path:
        """Build a corpus into a temporary folder and rename it into place (or reuse the winner's)."""
        final = self.corpora_dir / key
        if final.is_dir():
            return final
        self.corpora_dir.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{key}.", suffix=".tmp", dir=self.corpora_dir))
        try:
            details = build(staging)
            details["files"] = _count_files(staging)
            self._write_manifest(key, details)
            try:
                os.rename(staging, final)
            except OSError:
                if not final.is_dir():
                    raise
                shutil.rmtree(staging, ignore_errors=True)  # another process published it first
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        return final

    # ---- the three kinds ---------------------------------------------------------------------------------
    def local(self, path: str | Path) -> Corpus:
        """A local directory used in place (nothing copied)."""
        root = Path(path).resolve()
        if not root.is_dir():
            raise CorpusError(f"{root}: not a directory")
        return Corpus(key=f"local-{_safe_key(root.name)}", root=root, kind="local", source=str(root))

    def git(self, repository: str | Path, commit: str, *, name: str | None = None) -> Corpus:
        """
        The tree of a local git repository at ``commit`` (``git archive``; no network, no checkout).

        :param repository: A local clone.
        :param commit: A commit, tag or branch the clone has.
        :param name: The key's name part (default: the clone's folder name).
        :raises CorpusError: Not a repository, or the commit is unknown there.
        """
        repo = Path(repository).resolve()
        resolved = subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "--verify", f"{commit}^{{commit}}"],
            capture_output=True,
            text=True,
            check=False,
        )
        if resolved.returncode != 0:
            raise CorpusError(f"{repo}: commit {commit!r} not found: {resolved.stderr.strip()}")
        sha = resolved.stdout.strip()
        key = f"git-{_safe_key(name or repo.name)}-{sha[:12]}"

        def build(staging: Path) -> dict[str, Any]:
            archive = staging.parent / f"{staging.name}.tar"
            try:
                result = subprocess.run(
                    ["git", "-C", str(repo), "archive", "--format=tar", "-o", str(archive), sha],
                    capture_output=True,
                    text=True,
                    check=False,
                )
                if result.returncode != 0:
                    raise CorpusError(f"{repo}: git archive {sha} failed: {result.stderr.strip()}")
                _extract_archive(archive, staging)
            finally:
                archive.unlink(missing_ok=True)
            return {"kind": "git", "source": str(repo), "commit": sha}

        root = self._publish(key, build)
        return Corpus(key=key, root=root, kind="git", source=str(repo), details=self._read_manifest(key))

    def pypi(self, distribution: str, version: str) -> Corpus:
        """
        The release ``distribution==version`` from the package index (wheel, else sdist), extracted.

        :raises CorpusError: No release archive could be fetched or extracted.
        """
        key = f"{_safe_key(distribution)}-{_safe_key(version)}"
        manifest: dict[str, Any] = {}

        def build(staging: Path) -> dict[str, Any]:
            downloads = self.cache_dir / "downloads" / key
            archive = self._cached_archive(downloads)
            if archive is None:
                result = self.downloader(distribution, version, downloads)
                archive, kind, how = result.archive, result.kind, result.how
            else:
                kind = "wheel" if archive.suffix == ".whl" else "sdist"
                how = "cached archive"
            try:
                _extract_archive(archive, staging)
            except (OSError, tarfile.TarError, zipfile.BadZipFile) as error:
                raise CorpusError(f"{archive.name}: extraction failed: {error}") from error
            if kind == "wheel":
                _prune_wheel(staging)
            else:
                _strip_single_top_folder(staging)
            manifest.update(
                kind=kind,
                distribution=distribution,
                version=version,
                archive=archive.name,
                sha256=_sha256(archive),
                how=how,
            )
            if not self.keep_archives:
                shutil.rmtree(downloads, ignore_errors=True)
            return dict(manifest)

        root = self._publish(key, build)
        details = self._read_manifest(key) or manifest
        kind: Literal["wheel", "sdist"] = "sdist" if details.get("kind") == "sdist" else "wheel"
        return Corpus(key=key, root=root, kind=kind, source=str(details.get("archive", "")), details=details)

    @staticmethod
    def _cached_archive(downloads: Path) -> Path | None:
        if not downloads.is_dir():
            return None
        archives = sorted(
            path
            for path in downloads.iterdir()
            if path.is_file() and not path.name.startswith(".") and path.name.endswith((".whl", ".tar.gz", ".zip"))
        )
        wheels = [path for path in archives if path.suffix == ".whl"]
        chosen = wheels or archives
        return chosen[0] if chosen else None


def _sha256(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


CorpusMode = Literal["auto", "pypi", "git", "local"]


class CorpusResolver:
    """
    Chooses and obtains the corpus of each golden item.

    - ``local``: every item is asked against ``local_root`` (a user's own code and golden set).
    - ``git``: the item's ``repo`` is a clone under ``git_root`` (named ``owner__name``, ``name``,
      ``owner/name``, or a mirror's ``owner+name/repo`` or ``owner+name``), read at the item's ``base_commit``.
    - ``pypi``: the item's ``repo`` maps to a distribution (:data:`PYPI_DISTRIBUTIONS`, or ``distributions``),
      read at the item's ``version``.
    - ``auto``: git when a clone and a commit are there, else PyPI when a version and a distribution are,
      else ``local_root``.

    Failures are remembered per key for the resolver's lifetime, so 20 instances of a missing release cost one
    download attempt.
    """

    def __init__(
        self,
        cache: CorpusCache,
        *,
        mode: CorpusMode = "auto",
        local_root: str | Path | None = None,
        git_root: str | Path | None = None,
        distributions: dict[str, str] | None = None,
    ) -> None:
        self.cache = cache
        self.mode = mode
        self.local_root = Path(local_root) if local_root is not None else None
        self.git_root = Path(git_root) if git_root is not None else None
        self.distributions = {**PYPI_DISTRIBUTIONS, **(distributions or {})}
        self._failures: dict[str, CorpusError] = {}
        self._corpora: dict[str, Corpus] = {}

    def _git_clone(self, repo: str | None) -> Path | None:
        if self.git_root is None or not repo:
            return None
        owner, _, name = repo.partition("/")
        plus = repo.replace("/", "+")
        for candidate in (repo.replace("/", "__"), name or owner, repo, f"{plus}/repo", plus):
            path = self.git_root / candidate
            if (path / ".git").exists() or (path / "HEAD").is_file():
                return path
        return None

    def plan(self, repo: str | None, version: str | None, commit: str | None) -> tuple[str, tuple[str, ...]]:
        """Which corpus an item gets: ``(kind, arguments)``; kind ``"none"`` when no source fits."""
        modes = [self.mode] if self.mode != "auto" else ["git", "pypi", "local"]
        for mode in modes:
            if mode == "git":
                clone = self._git_clone(repo)
                if clone is not None and commit:
                    return "git", (str(clone), commit, (repo or clone.name).replace("/", "__"))
            elif mode == "pypi":
                distribution = self.distributions.get(repo or "")
                if distribution and version:
                    return "pypi", (distribution, version)
            elif mode == "local" and self.local_root is not None:
                return "local", (str(self.local_root),)
        return "none", (repo or "", version or "", commit or "")

    def plan_key(self, repo: str | None, version: str | None, commit: str | None) -> str:
        """A stable string naming the corpus an item gets (items sharing it share one corpus)."""
        kind, args = self.plan(repo, version, commit)
        return f"{kind}:{'/'.join(args)}"

    def resolve(self, repo: str | None, version: str | None, commit: str | None) -> Corpus:
        """
        The corpus for an item's ``repo`` / ``version`` / ``base_commit``.

        :raises CorpusError: No source fits, or obtaining it failed (remembered: not retried in this run).
        """
        plan_key = self.plan_key(repo, version, commit)
        if plan_key in self._corpora:
            return self._corpora[plan_key]
        if plan_key in self._failures:
            raise self._failures[plan_key]
        kind, args = self.plan(repo, version, commit)
        try:
            if kind == "git":
                corpus = self.cache.git(args[0], args[1], name=args[2])
            elif kind == "pypi":
                corpus = self.cache.pypi(args[0], args[1])
            elif kind == "local":
                corpus = self.cache.local(args[0])
            else:
                raise CorpusError(
                    f"no corpus source for repo={repo!r} version={version!r} commit={commit!r} "
                    f"(mode {self.mode}; give a local root, a git root, or a known distribution)"
                )
        except CorpusError as error:
            self._failures[plan_key] = error
            raise
        except (OSError, subprocess.SubprocessError) as error:
            failure = CorpusError(f"{plan_key}: {error}")
            self._failures[plan_key] = failure
            raise failure from error
        self._corpora[plan_key] = corpus
        return corpus


def unique_plans(resolver: CorpusResolver, keys: Iterable[tuple[str | None, str | None, str | None]]) -> list[str]:
    """The distinct corpus plans for ``(repo, version, commit)`` triples, first-seen order."""
    seen: dict[str, None] = {}
    for repo, version, commit in keys:
        seen.setdefault(resolver.plan_key(repo, version, commit), None)
    return list(seen)


@dataclass
class InstanceCoverage:
    """Whether an item's gold files exist in its corpus."""

    id: str
    repo: str | None
    corpus: str | None
    covered: bool
    gold_files: dict[str, str | None] = field(default_factory=dict)
    """Repository path -> corpus path (None: missing from the corpus)."""
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return asdict(self)


class HasCorpusFields(Protocol):
    """What coverage needs of a golden item (``GoldenItem`` fits)."""

    @property
    def id(self) -> str: ...

    @property
    def repo(self) -> str | None: ...

    @property
    def version(self) -> str | None: ...

    @property
    def base_commit(self) -> str | None: ...

    @property
    def gold_files(self) -> list[str]: ...


def coverage_of(item: HasCorpusFields, corpus: Corpus | None, error: str | None = None) -> InstanceCoverage:
    """
    An item's coverage in a corpus: covered when every gold file maps onto a corpus file that the index reads (a
    source file of a language it parses). A gold `package.json` or `CHANGELOG.md` is in the tree but never in a
    ranking, so such an instance would count as a miss that no retrieval could avoid.
    """

    if corpus is None:
        return InstanceCoverage(item.id, item.repo, None, False, {path: None for path in item.gold_files}, error)
    mapped = {path: corpus.map_path(path) for path in item.gold_files}
    missing = [path for path, value in mapped.items() if value is None]
    unread = [path for path, value in mapped.items() if value is not None and language_for_path(value) is None]
    covered = bool(mapped) and not missing and not unread
    reason = None
    if missing:
        reason = f"gold files not in {corpus.key}: {', '.join(missing)}"
    elif unread:
        reason = f"gold files the index does not read (not source code): {', '.join(unread)}"
    elif not mapped:
        reason = "no gold"
    return InstanceCoverage(item.id, item.repo, corpus.key, covered, mapped, reason)


def prefetch(
    items: Sequence[HasCorpusFields],
    resolver: CorpusResolver,
    *,
    progress: bool = True,
    on_corpus: Callable[[str, Corpus | None, str | None, float], None] | None = None,
) -> list[InstanceCoverage]:
    """
    Obtain every corpus the items need (one per distinct plan), and report each item's coverage.

    :param items: Golden items.
    :param resolver: Chooses and obtains corpora.
    :param progress: Show a tqdm bar over the corpora.
    :param on_corpus: Called after each corpus with ``(plan key, corpus or None, error or None, seconds)``.
    :returns: One :class:`InstanceCoverage` per item, in item order.
    """

    groups: dict[str, list[HasCorpusFields]] = {}
    for item in items:
        groups.setdefault(resolver.plan_key(item.repo, item.version, item.base_commit), []).append(item)
    results: dict[str, InstanceCoverage] = {}
    bar = progress_bar(groups.items(), total=len(groups), desc="corpora", unit="corpus", enabled=progress)
    for plan_key, members in bar:
        bar.set_postfix_str(plan_key[-40:])
        first = members[0]
        started = time.perf_counter()
        corpus: Corpus | None = None
        error: str | None = None
        try:
            corpus = resolver.resolve(first.repo, first.version, first.base_commit)
        except CorpusError as failure:
            error = str(failure)
        if on_corpus is not None:
            on_corpus(plan_key, corpus, error, time.perf_counter() - started)
        for member in members:
            results[member.id] = coverage_of(member, corpus, error)
    return [results[item.id] for item in items]
