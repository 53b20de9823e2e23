"""Several repositories in one alias dictionary: naming them, taking one's part out, putting it back, removing it.

An index of named repositories keeps one `AliasDictionary` whose symbols and packages carry `repo`, and whose
`repositories` map holds each repository's own files, renames, nicknames and last sync. A repository is
refreshed by taking its part out (`part_of`, what `DictionaryBuilder.refresh` reads as the previous build),
refreshing it, and merging it back (`merge_part`); the other repositories' entries are kept as they are.

Framework-free.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from ..errors import CodeAliasError
from .identifiers import unique
from .model import AliasDictionary, PackageEntry, RepositoryRecord, Skipped, SymbolEntry

# Letters, digits and `._+@/-`, starting with a letter or digit: folder names and `owner/name` both fit.
REPO_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+@/-]{0,199}")
_REMOTE = re.compile(r"(?:[:/])([^/:]+)/([^/]+?)(?:\.git)?/?$")


class RepositoryNameError(ValueError, CodeAliasError):
    """A repository name that cannot be used (says which and why)."""


def check_repo_name(name: str) -> str:
    """
    Return `name`, its slashes normalised, when it is a usable repository name.

    A name is not a path, but it looks like one (`owner/name`), so it is read as one would read a path: `\\` is
    `/`, doubled slashes and slashes at either end go, and a `.` or `..` part is refused rather than resolved
    (`acme/payments/../web` would otherwise be a third name for a tree already indexed).

    :raises RepositoryNameError: Empty, too long, with characters other than letters, digits and `._+@/-`, or
        with a `.` or `..` part.
    """
    if not isinstance(name, str):
        raise RepositoryNameError(f"repository name {name!r}: a name such as owner/name, got {type(name).__name__}")
    parts = [part for part in name.strip().replace("\\", "/").split("/") if part]
    if any(part in (".", "..") for part in parts):
        raise RepositoryNameError(f"repository name {name!r}: no '.' or '..' parts (a name, not a path)")
    normal = "/".join(parts)
    if not REPO_NAME.fullmatch(normal):
        raise RepositoryNameError(
            f"repository name {name!r}: use 1-200 letters, digits or ._+@/- starting with a letter or digit"
        )
    return normal


def remote_repo_name(url: str) -> str | None:
    """
    `owner/name` of a git remote URL (`git@github.com:o/n.git`, `https://host/o/n`, or the path `git clone .`
    records, `/work/acme/.`), or None when its last two parts make no repository name (`check_repo_name`).
    """
    text = url.strip()
    while text.endswith(("/", "/.")):  # `git clone .` records the source as `<its path>/.`
        text = text[: -1 if text.endswith("/") else -2]
    match = _REMOTE.search(text)
    if match is None:
        return None
    try:
        return check_repo_name(f"{match.group(1)}/{match.group(2)}")
    except RepositoryNameError:
        return None


def origin_url(folder: str | Path) -> str:
    """The URL of a git checkout's `origin` remote; "" when there is none (or no git, or no checkout)."""
    try:
        completed = subprocess.run(
            ["git", "-C", str(folder), "config", "--get", "remote.origin.url"],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return completed.stdout.strip() if completed.returncode == 0 else ""


def default_repo_name(root: str | Path) -> str:
    """
    The name a repository gets when none is given: its git remote's `owner/name` (origin), else its folder name.

    :param root: The repository folder.
    """
    folder = Path(root).resolve()
    remote = remote_repo_name(origin_url(folder))
    if remote is not None:
        return remote
    cleaned = re.sub(r"[^A-Za-z0-9._+@-]+", "-", folder.name).lstrip("._+@-")
    return cleaned[:200] or "repo"


def repositories_of(dictionary: AliasDictionary | None) -> dict[str, RepositoryRecord]:
    """Name -> record of the repositories a dictionary holds (empty for a single-tree dictionary)."""
    return dict(dictionary.repositories) if dictionary is not None else {}


def part_of(dictionary: AliasDictionary | None, name: str) -> AliasDictionary | None:
    """
    The dictionary of repository `name` alone, as its last build left it (what a refresh of it starts from).

    A dictionary of one unnamed tree (built before repositories had names) is returned as it is: its root decides
    whether the refresh can reuse it. None when the repository is not in the dictionary.
    """
    if dictionary is None:
        return None
    if not dictionary.repositories:
        return dictionary if dictionary.files else None
    record = dictionary.repositories.get(name)
    if record is None:
        return None
    return AliasDictionary.model_construct(
        schema_version=dictionary.schema_version,
        root=record.root,
        symbols=[s for s in dictionary.symbols if s.repo == name],
        # Without the tag, so the builder sees its packages unchanged and reuses the symbol entries.
        packages=[p.model_copy(update={"repo": None}) for p in dictionary.packages if p.repo == name],
        nicknames=record.nicknames,
        abbreviations=dictionary.abbreviations,
        renamed=record.renamed,
        files=record.files,
        skipped=record.skipped,
        repositories={},
        version=record.version,
    )


def _tag_symbols(symbols: list[SymbolEntry], name: str) -> list[SymbolEntry]:
    return [s if s.repo == name else s.model_copy(update={"repo": name}) for s in symbols]


def _tag_packages(packages: list[PackageEntry], name: str) -> list[PackageEntry]:
    return [p if p.repo == name else p.model_copy(update={"repo": name}) for p in packages]


def _combine(
    records: dict[str, RepositoryRecord],
    symbols: list[SymbolEntry],
    packages: list[PackageEntry],
    abbreviations: dict[str, list[str]],
) -> AliasDictionary:
    nicknames: dict[str, list[str]] = {}
    renamed: dict[str, str] = {}
    skipped: list[Skipped] = []
    for name in sorted(records):
        record = records[name]
        for nickname, targets in record.nicknames.items():
            nicknames[nickname] = unique([*nicknames.get(nickname, []), *targets])
        for old, new in record.renamed.items():
            renamed.setdefault(old, new)
        skipped.extend(Skipped(path=f"{name}:{s.path}", reason=s.reason) for s in record.skipped)
    only = next(iter(records.values())).root if len(records) == 1 else ""
    return AliasDictionary(
        root=only,
        symbols=symbols,
        packages=packages,
        nicknames=dict(sorted(nicknames.items())),
        abbreviations=abbreviations,
        renamed=dict(sorted(renamed.items())),
        skipped=skipped,
        repositories=dict(sorted(records.items())),
    ).seal()


def merge_part(dictionary: AliasDictionary | None, name: str, part: AliasDictionary) -> AliasDictionary:
    """
    The dictionary with repository `name`'s part replaced by `part` (a fresh build of that repository alone).

    The other named repositories' entries stay; the content of a dictionary of one unnamed tree is dropped
    (it is the previous build of this repository, or a tree this index no longer serves).
    """
    check_repo_name(name)
    records: dict[str, RepositoryRecord] = {}
    symbols: list[SymbolEntry] = []
    packages: list[PackageEntry] = []
    if dictionary is not None and dictionary.repositories:
        records = {n: r for n, r in dictionary.repositories.items() if n != name}
        symbols = [s for s in dictionary.symbols if s.repo != name and s.repo in records]
        packages = [p for p in dictionary.packages if p.repo != name and p.repo in records]
    records[name] = RepositoryRecord(
        root=part.root,
        files=part.files,
        nicknames=part.nicknames,
        renamed=part.renamed,
        skipped=part.skipped,
        version=part.version or part.compute_version(),
    )
    symbols.extend(_tag_symbols(part.symbols, name))
    packages.extend(_tag_packages(part.packages, name))
    return _combine(records, symbols, packages, part.abbreviations)


def without_repository(dictionary: AliasDictionary, name: str) -> AliasDictionary:
    """
    The dictionary without repository `name` (its symbols, packages, files, renames and nicknames).

    :raises KeyError: The dictionary holds no repository of that name (the message lists those it holds).
    """
    if name not in dictionary.repositories:
        known = ", ".join(sorted(dictionary.repositories)) or "none"
        raise KeyError(f"no repository {name!r} in this index (it holds: {known})")
    records = {n: r for n, r in dictionary.repositories.items() if n != name}
    if not records:
        return AliasDictionary(abbreviations=dictionary.abbreviations).seal()
    symbols = [s for s in dictionary.symbols if s.repo in records]
    packages = [p for p in dictionary.packages if p.repo in records]
    return _combine(records, symbols, packages, dictionary.abbreviations)
