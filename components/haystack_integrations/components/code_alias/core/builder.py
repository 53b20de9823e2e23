# long: a full build and an incremental refresh share one assembly of the dictionary
"""Build and incrementally refresh the alias dictionary of a code tree.

The builder is a pure function of the tree (plus nickname and abbreviation files): `refresh` with a
previous dictionary re-reads only files whose size or modification time changed, re-parses only files
whose content hash changed, and ends with the same symbols and packages as a full build. What a refresh
adds on top is history: a symbol whose name disappeared while a definition with the same body appeared
keeps the old name as an alias of the new one.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import logging
import multiprocessing
import os
import stat
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from ..errors import CodeAliasError
from .chunking import TEXT_ONLY, too_many_definitions
from .identifiers import split_identifier, text_words, unique
from .manifests import MANIFEST_NAMES, discover_packages
from .model import (
    EXTRACTOR_VERSION,
    AliasDictionary,
    FileRecord,
    PackageEntry,
    PackageInfo,
    Reference,
    Skipped,
    SymbolDef,
    SymbolEntry,
)
from .reexports import ReexportLinks, link_reexports
from .symbols import LANGUAGE_BY_EXTENSION, extract_file, language_for_path
from .testfiles import is_fixture_file
from .walker import UnsafePathError, WalkConfig, WalkEntry, read_text_file, resolve_inside, walk_repository

logger = logging.getLogger(__name__)

# Docstring words beyond this many add noise rather than recall.
MAX_DOC_WORDS = 24
# Fewer files than this per worker are parsed in-process: starting workers would cost more than it saves.
PARALLEL_MIN_FILES = 64
MAX_WORKERS = 4
DEFAULT_NICKNAME_FILES = (".code-alias-nicknames.yml", ".code-alias-nicknames.yaml")


class ConfigFileError(ValueError, CodeAliasError):
    """A nickname or abbreviation file that cannot be used (names the file and why)."""


@dataclass
class BuildStats:
    """What a build or refresh did, for progress reports and benchmarks."""

    files_seen: int = 0
    files_read: int = 0
    files_parsed: int = 0
    files_reused: int = 0
    files_skipped: int = 0
    symbols: int = 0
    packages: int = 0
    renamed: dict[str, str] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class SourceText:
    """A file's text supplied directly (e.g. from Haystack Documents) instead of read from disk."""

    rel_path: str
    text: str


def default_abbreviations() -> dict[str, list[str]]:
    """The abbreviation table shipped with the package (`config/abbreviations.yaml`); a fresh copy per call."""
    return {short: list(expansions) for short, expansions in _packaged_abbreviations().items()}


@functools.lru_cache(maxsize=1)
def _packaged_abbreviations() -> dict[str, list[str]]:
    # Parsed once per process: a warm server's every sync builds a DictionaryBuilder (the YAML parse was 40-80 ms).
    text = resources.files("haystack_integrations.components.code_alias").joinpath("config/abbreviations.yaml")
    return _mapping_of_lists(yaml.safe_load(text.read_text(encoding="utf-8")), "abbreviations.yaml (packaged)")


def load_mapping_file(path: str | Path) -> dict[str, list[str]]:
    """
    Read a YAML file of `key: [value, ...]` (nicknames or abbreviations).

    A single string value is accepted as a one-element list.

    :raises ConfigFileError: The file is missing, not YAML, or not such a mapping (names the file and the key).
    """
    source = Path(path)
    try:
        data = yaml.safe_load(source.read_text(encoding="utf-8"))
    except FileNotFoundError as error:
        raise ConfigFileError(f"{source}: file not found") from error
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigFileError(f"{source}: cannot read: {error}") from error
    except yaml.YAMLError as error:
        raise ConfigFileError(f"{source}: not valid YAML: {error}") from error
    return _mapping_of_lists(data or {}, str(source))


def _mapping_of_lists(data: Any, source: str) -> dict[str, list[str]]:
    if not isinstance(data, Mapping):
        raise ConfigFileError(f"{source}: expected a mapping of name -> [names], got {type(data).__name__}")
    result: dict[str, list[str]] = {}
    for key, value in data.items():
        values = [value] if isinstance(value, str) else value
        if (
            not isinstance(key, str | int)
            or not isinstance(values, list)
            or not all(isinstance(v, str | int) for v in values)
        ):
            raise ConfigFileError(f"{source}: entry {key!r} must map a name to a list of names")
        result[str(key)] = [str(v) for v in values]
    return result


def _read_and_parse_one(job: tuple[WalkEntry, str, FileRecord | None, int]) -> tuple[str, FileRecord, bool]:
    """(rel_path, record, parsed?) for one file: reuse the old parse when the content hash is unchanged."""
    entry, language, old, max_bytes = job
    read = read_text_file(entry, max_bytes=max_bytes)
    if isinstance(read, Skipped):
        record = FileRecord(
            sha256="",
            size=entry.size,
            mtime_ns=entry.mtime_ns,
            language=language,
            error=read.reason,
            extractor=EXTRACTOR_VERSION,
        )
        return entry.rel_path, record, False
    text, digest = read
    if old is not None and old.sha256 == digest and _reusable(old) and old.current:
        return entry.rel_path, old.model_copy(update={"mtime_ns": entry.mtime_ns, "size": entry.size}), False
    record = _parsed_record(text, digest, entry.size, entry.mtime_ns, language, entry.rel_path)
    return entry.rel_path, record, True


def _exit_with_parent(parent_pid: int) -> None:
    """
    Pool initializer: end this worker when the index run that forked it is gone. A killed run (SIGKILL, the OOM
    killer) cannot shut its pool down, and forked workers never see their task queue close (each holds its write
    end), so they would wait forever, holding the run's stdout and stderr open.
    """

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(0.2)
        os._exit(1)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def _shipped(
    job: tuple[WalkEntry, str, FileRecord | None, int],
) -> tuple[str, FileRecord, bool, list[tuple[Any, ...]]]:
    """`_read_and_parse_one` in a worker process: the references travel back as plain tuples (pickled several times
    faster than named tuples: 0.12 s against 0.02 s for Django's 40k), made `Reference`s again by the parent."""
    rel_path, record, parsed = _read_and_parse_one(job)
    references = [tuple(reference) for reference in record.references]
    record.references = []
    return rel_path, record, parsed, references


def _reusable(record: FileRecord) -> bool:
    """Whether an unchanged file's previous parse stands: it parsed, or it had too many definitions (`TEXT_ONLY`)."""
    return record.error is None or record.error.endswith(TEXT_ONLY)


def _parsed_record(text: str, digest: str, size: int, mtime_ns: int, language: str, rel_path: str) -> FileRecord:
    """
    A parsed file's record: its definitions and references (one parse: `extract_file`). A file of too many
    definitions keeps neither, and says so (`too_many_definitions`).
    """
    extracted = extract_file(text, language, rel_path)
    too_many = too_many_definitions(len(extracted.symbols))
    record = FileRecord(
        sha256=digest,
        size=size,
        mtime_ns=mtime_ns,
        language=language,
        symbols=[] if too_many else extracted.symbols,
        error=too_many,
        extractor=EXTRACTOR_VERSION,
    )
    # The extractor's own records, assigned as they are: validating 40k references of Django took 0.12 s of a build.
    record.references = [] if too_many else extracted.references
    return record


@lru_cache(maxsize=100_000)
def _doc_words(docstring: str) -> tuple[str, ...]:
    return tuple(unique(text_words(docstring))[:MAX_DOC_WORDS])


def _is_wanted(rel_path: str) -> bool:
    name = rel_path.rsplit("/", 1)[-1]
    if name in MANIFEST_NAMES:
        return True
    dot = name.rfind(".")
    return dot > 0 and name[dot:] in LANGUAGE_BY_EXTENSION


class DictionaryBuilder:
    """
    Builds an `AliasDictionary` from a repository root (or from supplied file texts).

    :param walk_config: Which folders and files to skip, and the size limit.
    :param nicknames: `nickname -> [symbol or package names]`; merged over the repository's own
        `.code-alias-nicknames.yml` when that exists.
    :param abbreviations: `abbreviation -> [expansions]`; defaults to the packaged table.
    :param progress: Called with (files done, files total) while parsing, for progress bars.
    """

    def __init__(
        self,
        *,
        walk_config: WalkConfig | None = None,
        nicknames: Mapping[str, Sequence[str]] | None = None,
        abbreviations: Mapping[str, Sequence[str]] | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> None:
        self.walk_config = walk_config or WalkConfig()
        self.nicknames = {k: list(v) for k, v in (nicknames or {}).items()}
        self.abbreviations = (
            {k: list(v) for k, v in abbreviations.items()} if abbreviations is not None else default_abbreviations()
        )
        self.progress = progress

    # ---- entry points --------------------------------------------------------------------------------------
    def build(self, root: str | Path) -> tuple[AliasDictionary, BuildStats]:
        """A full build: read and parse every source file under `root`."""
        return self.refresh(root, previous=None)

    def refresh(self, root: str | Path, previous: AliasDictionary | None) -> tuple[AliasDictionary, BuildStats]:
        """
        Rebuild after changes, reusing `previous` for files whose size, mtime or content hash did not change.

        :param root: The repository root.
        :param previous: The dictionary of an earlier build of the same root, or None for a full build.
        """
        root_path = Path(root).resolve()
        stats = BuildStats()
        walk = walk_repository(root_path, self.walk_config, wanted=_is_wanted)
        skipped: list[Skipped] = list(walk.skipped)
        old_files = previous.files if previous is not None and previous.root == str(root_path) else {}
        files: dict[str, FileRecord] = {}
        manifests: list[str] = []
        to_read: list[tuple[WalkEntry, str, FileRecord | None]] = []
        for entry in walk.files:
            stats.files_seen += 1
            if entry.rel_path.rsplit("/", 1)[-1] in MANIFEST_NAMES:
                manifests.append(entry.rel_path)
            language = language_for_path(entry.rel_path)
            if language is None:
                continue
            old = old_files.get(entry.rel_path)
            # Same size and mtime: trust the previous parse without reading the file at all.
            if (
                old is not None
                and old.size == entry.size
                and old.mtime_ns == entry.mtime_ns
                and old.language == language
                and old.current  # parsed by an older extractor: read again (a release changed what files yield)
            ):
                stats.files_reused += 1
                files[entry.rel_path] = old
            else:
                to_read.append((entry, language, old))
        self._read_into(files, to_read, stats)
        files = dict(sorted(files.items()))
        for rel_path, record in files.items():
            if record.error is not None:
                skipped.append(Skipped(path=rel_path, reason=record.error))
        nicknames = dict(self.nicknames)
        for name in DEFAULT_NICKNAME_FILES:
            if (root_path / name).is_file():
                try:
                    nicknames = {**load_mapping_file(root_path / name), **nicknames}
                except ConfigFileError as error:
                    skipped.append(Skipped(path=name, reason=str(error)))
        packages = self._packages(root_path, manifests, list(files), skipped)
        dictionary = self.assemble(str(root_path), files, packages, nicknames, skipped, previous)
        stats.symbols = len(dictionary.symbols)
        stats.packages = len(dictionary.packages)
        stats.files_skipped = len(skipped)
        stats.renamed = {
            old: new for old, new in dictionary.renamed.items() if previous is None or old not in previous.renamed
        }
        return dictionary, stats

    def refresh_paths(
        self, root: str | Path, previous: AliasDictionary | None, paths: Iterable[str]
    ) -> tuple[AliasDictionary, BuildStats] | None:
        """
        `refresh` without walking the tree, when only the content of files the previous build read has changed
        (a push that edited files): only `paths` are looked at, everything else is reused from `previous`.

        :param paths: Paths relative to `root` that may have changed (others did not).
        :returns: The same result as `refresh`, or None when the paths may change more than the content of files
            already known (a file added, removed, leaving the root through a symlink, or no longer a plain file; a
            manifest, nickname or ignore file; no usable previous build): then call `refresh`, which walks.
        """
        root_path = Path(root).resolve()
        if previous is None or previous.root != str(root_path):
            return None
        if not all(record.current for record in previous.files.values()):
            return None  # an older extractor parsed some files: the walk re-reads them
        stats = BuildStats(files_seen=len(previous.files))
        files = dict(previous.files)
        pushed: set[str] = set()
        to_read: list[tuple[WalkEntry, str, FileRecord | None]] = []
        for rel_path in dict.fromkeys(paths):
            name = rel_path.rsplit("/", 1)[-1]
            if name in MANIFEST_NAMES or name in DEFAULT_NICKNAME_FILES or name == ".gitignore":
                return None
            language = language_for_path(rel_path)
            if language is None:
                continue  # not a source file: no part of the dictionary
            old = files.get(rel_path)
            if old is None or old.language != language:
                return None  # a file the previous build did not read: only a walk knows whether it belongs
            try:
                real = resolve_inside(root_path, rel_path)
                info = real.stat()
            except (UnsafePathError, OSError):
                return None  # gone, or now outside the root: the walk decides what leaves
            if not stat.S_ISREG(info.st_mode):
                return None
            pushed.add(rel_path)
            if old.size == info.st_size and old.mtime_ns == info.st_mtime_ns and _reusable(old):
                stats.files_reused += 1
                continue
            entry = WalkEntry(rel_path=rel_path, abs_path=real, size=info.st_size, mtime_ns=info.st_mtime_ns)
            to_read.append((entry, language, old))
        self._read_into(files, to_read, stats)
        skipped = [s for s in previous.skipped if s.path not in pushed]
        skipped.extend(Skipped(path=path, reason=files[path].error or "") for path in pushed if files[path].error)
        nicknames = dict(self.nicknames)
        for name in DEFAULT_NICKNAME_FILES:
            if (root_path / name).is_file():
                with contextlib.suppress(ConfigFileError):  # reported by the build that read it (in `skipped`)
                    nicknames = {**load_mapping_file(root_path / name), **nicknames}
        packages = [
            PackageInfo(
                name=p.name,
                ecosystem=p.ecosystem,  # type: ignore[arg-type]
                root=p.root,
                manifest=p.manifest,
                aliases=p.aliases,
                import_names=p.import_names,
            )
            for p in previous.packages
        ]
        dictionary = self.assemble(str(root_path), files, packages, nicknames, skipped, previous)
        stats.symbols = len(dictionary.symbols)
        stats.packages = len(dictionary.packages)
        stats.files_skipped = len(skipped)
        stats.renamed = {old: new for old, new in dictionary.renamed.items() if old not in previous.renamed}
        return dictionary, stats

    def build_from_texts(
        self, sources: Iterable[SourceText], previous: AliasDictionary | None = None, root: str = ""
    ) -> tuple[AliasDictionary, BuildStats]:
        """
        Build from file texts already in memory (Haystack Documents with `meta.file_path`).

        Manifests among the texts are parsed from a temporary copy, since the manifest parsers read files.
        """

        stats = BuildStats()
        files: dict[str, FileRecord] = {}
        manifest_texts: dict[str, str] = {}
        skipped: list[Skipped] = []
        old_files = previous.files if previous is not None else {}
        for source in sources:
            stats.files_seen += 1
            if source.rel_path.rsplit("/", 1)[-1] in MANIFEST_NAMES:
                manifest_texts[source.rel_path] = source.text
            language = language_for_path(source.rel_path)
            if language is None:
                continue
            digest = hashlib.sha256(source.text.encode("utf-8", "surrogatepass")).hexdigest()
            old = old_files.get(source.rel_path)
            if old is not None and old.sha256 == digest and old.current:
                files[source.rel_path] = old
                stats.files_reused += 1
                continue
            stats.files_parsed += 1
            files[source.rel_path] = _parsed_record(source.text, digest, len(source.text), 0, language, source.rel_path)
        packages: list[PackageInfo] = []
        if manifest_texts:
            with tempfile.TemporaryDirectory(prefix="code-alias-manifests-") as tmp:
                for rel_path, text in manifest_texts.items():
                    target = Path(tmp, rel_path)
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_text(text, encoding="utf-8")
                packages = self._packages(Path(tmp), list(manifest_texts), list(files), skipped)
        dictionary = self.assemble(root, files, packages, dict(self.nicknames), skipped, previous)
        stats.symbols, stats.packages, stats.files_skipped = (
            len(dictionary.symbols),
            len(dictionary.packages),
            len(skipped),
        )
        return dictionary, stats

    # ---- steps ---------------------------------------------------------------------------------------------
    def _read_into(
        self, files: dict[str, FileRecord], work: list[tuple[WalkEntry, str, FileRecord | None]], stats: BuildStats
    ) -> None:
        """Read and parse `work` into `files`, counting what was read, parsed and reused in `stats`."""
        for rel_path, record, parsed in self._read_and_parse(work):
            stats.files_read += 1
            stats.files_parsed += parsed
            stats.files_reused += not parsed and record.error is None
            files[rel_path] = record

    def _read_and_parse(
        self, work: list[tuple[WalkEntry, str, FileRecord | None]]
    ) -> Iterator[tuple[str, FileRecord, bool]]:
        """Read, hash and (when the hash changed) parse files; on several processes when there are many."""
        max_bytes = self.walk_config.max_file_bytes
        jobs = [(entry, language, old, max_bytes) for entry, language, old in work]
        workers = min(len(jobs) // PARALLEL_MIN_FILES, os.cpu_count() or 1, MAX_WORKERS)
        done = 0
        if workers > 1 and "fork" in multiprocessing.get_all_start_methods():
            # Parsing is CPU-bound C code that holds the GIL: only processes use the second core.
            context = multiprocessing.get_context("fork")
            with ProcessPoolExecutor(
                max_workers=workers, mp_context=context, initializer=_exit_with_parent, initargs=(os.getpid(),)
            ) as pool:
                chunks = max(8, len(jobs) // (workers * 8))
                for rel_path, record, parsed, references in pool.map(_shipped, jobs, chunksize=chunks):
                    record.references = list(map(Reference._make, references))
                    done += 1
                    self._report(done, len(jobs))
                    yield rel_path, record, parsed
            return
        for job in jobs:
            done += 1
            self._report(done, len(jobs))
            yield _read_and_parse_one(job)

    def _report(self, done: int, total: int) -> None:
        if self.progress is not None and (done % 50 == 0 or done == total):
            self.progress(done, total)

    def _packages(
        self, root: Path, manifests: list[str], source_files: list[str], skipped: list[Skipped]
    ) -> list[PackageInfo]:
        # Manifests are few and small, and their import-name inference depends on the folders around them,
        # so they are re-read on every build rather than cached.
        packages, problems = discover_packages(root, [*manifests, *source_files])
        skipped.extend(problems)
        return packages

    # long: one pass from parsed files to the sealed dictionary; its steps share their tables
    def assemble(
        self,
        root: str,
        files: dict[str, FileRecord],
        packages: list[PackageInfo],
        nicknames: dict[str, list[str]],
        skipped: list[Skipped],
        previous: AliasDictionary | None,
    ) -> AliasDictionary:
        """Turn parsed files and packages into the sealed dictionary (aliases, package membership, renames)."""
        package_entries = [
            PackageEntry(
                name=p.name,
                ecosystem=p.ecosystem,
                root=p.root,
                manifest=p.manifest,
                aliases=p.aliases,
                import_names=p.import_names,
                words=tuple(unique(w for n in (p.name, *p.aliases, *p.import_names) for w in split_identifier(n))),
            )
            for p in packages
        ]
        shell = AliasDictionary(root=root, packages=package_entries)
        definitions: list[SymbolDef] = [s for path in sorted(files) for s in files[path].symbols]
        renamed = self._renames(definitions, previous)
        nicknames = {k: list(v) for k, v in sorted(nicknames.items())}
        aliases_by_target: dict[str, list[str]] = {}
        for nickname, targets in nicknames.items():
            for target in targets:
                aliases_by_target.setdefault(target, []).append(nickname)
        for old, new in renamed.items():
            aliases_by_target.setdefault(new, []).append(old)
        package_cache: dict[str, str | None] = {}
        # Renamed re-exports (`export { a as b } from './x'`) give `a` in ./x the public name `b`.
        links = link_reexports(files)
        # Entries of a file whose parse, package and aliases are unchanged are reused as they are.
        reusable: dict[str, list[SymbolEntry]] = {}
        # A rename changes the aliases of its new name only: entries named otherwise stay reusable.
        renamed_targets: set[str] = set()
        if previous is not None and previous.renamed != renamed:
            renamed_targets = {n for o, n in renamed.items() if previous.renamed.get(o) != n}
            renamed_targets |= {n for o, n in previous.renamed.items() if renamed.get(o) != n}
        if (
            previous is not None
            and previous.packages == package_entries
            and previous.nicknames == nicknames
            and _same_links(links, link_reexports(previous.files))
        ):
            for entry in previous.symbols:
                reusable.setdefault(entry.file_path, []).append(entry)
        symbols: list[SymbolEntry] = []
        for path in sorted(files):
            record = files[path]
            old_record = previous.files.get(path) if previous is not None else None
            if (
                path in reusable
                and old_record is not None
                and old_record.sha256 == record.sha256
                and not any(e.name in renamed_targets or e.qualified_name in renamed_targets for e in reusable[path])
            ):
                symbols.extend(reusable[path])
                continue
            folder = path.rsplit("/", 1)[0] if "/" in path else ""
            if folder not in package_cache:
                package_cache[folder] = shell.package_for_file(path)
            if is_fixture_file(path):
                continue  # test input data stays searchable (its chunks) but never feeds the hints
            for definition in record.symbols:
                if links.is_resolved(definition):
                    continue  # the public name is now an alias of the definition it re-exports
                symbols.append(
                    SymbolEntry.model_construct(
                        name=definition.name,
                        kind=definition.kind,
                        qualified_name=definition.qualified_name,
                        file_path=definition.file_path,
                        language=definition.language,
                        start_line=definition.start_line,
                        end_line=definition.end_line,
                        exported=definition.exported,
                        package=package_cache[folder],
                        words=split_identifier(definition.name),
                        doc_words=_doc_words(definition.docstring),
                        aliases=tuple(
                            unique(
                                [
                                    *aliases_by_target.get(definition.name, []),
                                    *aliases_by_target.get(definition.qualified_name, []),
                                    *definition.aliases,
                                    *links.aliases_for(definition),
                                ]
                            )
                        ),
                    )
                )
        for package in list(package_entries):
            extra = [a for n in (package.name, *package.aliases) for a in aliases_by_target.get(n, [])]
            if extra:
                package_entries[package_entries.index(package)] = package.model_copy(
                    update={"aliases": tuple(unique([*package.aliases, *extra]))}
                )
        return AliasDictionary(
            root=root,
            symbols=symbols,
            packages=package_entries,
            nicknames=nicknames,
            abbreviations=self.abbreviations,
            renamed=renamed,
            files=files,
            skipped=sorted(skipped, key=lambda s: s.path),
        ).seal()

    @staticmethod
    def _renames(definitions: list[SymbolDef], previous: AliasDictionary | None) -> dict[str, str]:
        """
        Names retired by a rename -> their new name, carried over from `previous` and extended.

        A rename is a name present before and gone now, whose definition body (name masked out) reappears
        under exactly one new name of the same kind.
        """
        if previous is None:
            return {}
        current_names = {d.name for d in definitions}
        old_definitions = [s for record in previous.files.values() for s in record.symbols]
        old_names = {d.name for d in old_definitions}
        appeared: dict[tuple[str, str], set[str]] = {}
        for definition in definitions:
            if definition.name not in old_names and definition.body_hash:
                appeared.setdefault((definition.kind, definition.body_hash), set()).add(definition.name)
        renamed = {old: new for old, new in previous.renamed.items() if old not in current_names}
        for definition in old_definitions:
            if definition.name in current_names or not definition.body_hash:
                continue
            candidates = appeared.get((definition.kind, definition.body_hash), set())
            if len(candidates) == 1:
                new = next(iter(candidates))
                renamed[definition.name] = new
                # Chains: a -> b earlier and b -> c now means a -> c.
                for old, target in list(renamed.items()):
                    if target == definition.name:
                        renamed[old] = new
        return dict(sorted((old, new) for old, new in renamed.items() if new in current_names))


def _same_links(new: ReexportLinks, old: ReexportLinks) -> bool:
    """Whether two `ReexportLinks` give the same public names (so unchanged files' entries can be reused)."""
    return new.aliases == old.aliases and new.resolved == old.resolved
