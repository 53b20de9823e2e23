"""Several repositories in one index folder: their names, their per-repository record, and query filters on them.

`repositories.json` in the index folder records, per repository, what `code-alias status` shows: the folder it
was indexed from, its last sync, its chunks, its part of the dictionary (version, symbols) and the last error.
It is written atomically after each `CodeSearch.index` / `remove_repository`; the dictionary and documents stay
the truth (the record only reports them).
"""

from __future__ import annotations

import difflib
import json
import logging
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypedDict

from haystack.document_stores.in_memory import InMemoryDocumentStore

from ..core.filters import filter_names as _values
from ..core.model import atomic_write_bytes, read_json_object
from ..core.repositories import RepositoryNameError, check_repo_name, default_repo_name
from ..errors import CodeAliasError

logger = logging.getLogger(__name__)

REPOSITORIES_FILE = "repositories.json"
#: Names an unknown-filter error lists (an index can hold hundreds of packages).
MAX_KNOWN_SHOWN = 20
#: A package hint at least this sure (an alias or a nickname written in the question; see
#: `rewriting.hints.EVIDENCE_CONFIDENCE`) may narrow retrieval to that package.
STRONG_PACKAGE_CONFIDENCE = 0.8
#: ... and so may one whose "package" evidence is this high: every word of the package's name is in the question
#: (`EVIDENCE_CONFIDENCE["package"]` x a share of 1). Some of its words only boost.
ALL_PACKAGE_WORDS = 0.5

__all__ = [
    "REPOSITORIES_FILE",
    "RepositoryStatus",
    "UnknownFilterError",
    "as_recorded",
    "count_repository_documents",
    "forget_repository",
    "inferred_packages",
    "read_repositories",
    "record_repository",
    "repository_filters",
    "repository_for_root",
    "resolve_filter_names",
]


class RepositoryStatus(TypedDict, total=False):
    """What `status` reports of one repository of an index."""

    root: str
    last_sync: str | None
    documents: int | None
    symbols: int | None
    dictionary_version: str | None
    last_error: str | None


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def read_repositories(index_dir: Path) -> dict[str, RepositoryStatus]:
    """Name -> record of the repositories of `index_dir` (empty when none was recorded or the file is damaged)."""
    data = read_json_object(index_dir / REPOSITORIES_FILE) or {}
    return {str(k): v for k, v in data.items() if isinstance(v, dict)}  # type: ignore[misc]


def _write(index_dir: Path, records: dict[str, RepositoryStatus]) -> None:
    try:
        atomic_write_bytes(index_dir / REPOSITORIES_FILE, json.dumps(dict(sorted(records.items())), indent=1).encode())
    except OSError as error:  # the index is what matters; say why the record is stale
        logger.warning("code-alias: could not record repositories in %s: %s", index_dir / REPOSITORIES_FILE, error)


def record_repository(index_dir: Path, name: str, **fields: Any) -> RepositoryStatus:
    """Update repository `name`'s record with `fields` (a sync that succeeded also sets `last_sync` and clears the
    error when `last_error` is not among `fields`)."""
    records = read_repositories(index_dir)
    record: RepositoryStatus = dict(records.get(name, {}))  # type: ignore[assignment]
    if "last_error" not in fields:
        fields = {**fields, "last_error": None, "last_sync": _now()}
    record.update(fields)  # type: ignore[typeddict-item]
    records[name] = record
    _write(index_dir, records)
    return record


def forget_repository(index_dir: Path, name: str) -> None:
    """Drop repository `name`'s record (after it was removed from the index)."""
    records = read_repositories(index_dir)
    if records.pop(name, None) is not None:
        _write(index_dir, records)


def repository_for_root(index_dir: Path, root: Path, given: str | None = None) -> str:
    """
    The name a repository is indexed under: `given` (checked, slashes normalised), else the name the same folder
    was indexed under before, else its git remote's `owner/name`, else its folder name. A name the index already
    holds in another case is that name (`ACME/Payments` is `acme/payments`: hosts do not tell case apart).

    One folder has one name: a second one would hold every chunk of it twice and answer each file twice.

    :raises core.repositories.RepositoryNameError: `given` is not a usable name, or the folder is already
        indexed under another name (the message names it).
    """
    records = read_repositories(index_dir)
    resolved = str(root.resolve())
    recorded = [name for name, record in sorted(records.items()) if record.get("root") == resolved]
    if given is None:
        return recorded[0] if recorded else as_recorded(default_repo_name(root), records)
    name = as_recorded(check_repo_name(given), records)
    if recorded and name not in recorded:
        raise RepositoryNameError(
            f"{resolved} is already indexed as {recorded[0]!r}, not {given!r}: refresh it under that name "
            f"(`--repo {recorded[0]}`), or remove it first (`code-alias index --remove-repo {recorded[0]}`)"
        )
    return name


def as_recorded(name: str, names: Iterable[str]) -> str:
    """`name` as the index spells it (`names`: the repositories it holds) when it holds it in another case; else
    `name`."""
    known = set(names)
    if name in known:
        return name
    same = sorted(other for other in known if other.casefold() == name.casefold())
    return same[0] if same else name


def count_repository_documents(store: Any, name: str) -> int | None:
    """Chunks of repository `name` in `store`; None when the store cannot count them cheaply."""

    if isinstance(store, InMemoryDocumentStore):
        return sum(1 for document in store.storage.values() if document.meta.get("repo") == name)
    counter = getattr(store, "count_documents_by_filter", None)
    if callable(counter):
        try:
            return int(counter(filters={"field": "meta.repo", "operator": "==", "value": name}))
        except Exception as error:  # a report, not the index: say nothing rather than fail the sync
            logger.debug("code-alias: cannot count the chunks of %s: %s", name, error)
    return None


def repository_filters(
    repo: str | Sequence[str] | None = None, package: str | Sequence[str] | None = None
) -> dict[str, Any] | None:
    """
    The Haystack filter narrowing retrieval to repositories and/or packages (`meta.repo`, `meta.package`).

    :param repo: One repository name, or several (any of them).
    :param package: One package name, or several (any of them).
    :returns: The filter, or None when neither is given.
    :raises ValueError: An empty, too long or non-string name, or too many names (the message names the field).
    """
    conditions: list[dict[str, Any]] = []
    for field, given in (("repo", repo), ("package", package)):
        values = _values(given, field)
        if len(values) == 1:
            conditions.append({"field": f"meta.{field}", "operator": "==", "value": values[0]})
        elif values:
            conditions.append({"field": f"meta.{field}", "operator": "in", "value": values})
    if not conditions:
        return None
    return conditions[0] if len(conditions) == 1 else {"operator": "AND", "conditions": conditions}


class UnknownFilterError(ValueError, CodeAliasError):
    """
    A `repo` / `package` filter naming nothing the index holds; the message names what it holds instead.

    :param field: "repo" or "package".
    :param unknown: The names given that the index does not hold.
    :param known: Every name the index holds for that field.
    """

    def __init__(self, field: str, unknown: Sequence[str], known: Sequence[str]) -> None:
        self.field = field
        self.unknown = list(unknown)
        self.known = sorted(known)
        what = "repository" if field == "repo" else "package"
        names = ", ".join(repr(name) for name in self.unknown)
        if not self.known:
            holds = f"it holds no {'named repositories' if field == 'repo' else 'packages'}"
        else:
            shown = ", ".join(self.known[:MAX_KNOWN_SHOWN])
            more = f" and {len(self.known) - MAX_KNOWN_SHOWN} more" if len(self.known) > MAX_KNOWN_SHOWN else ""
            holds = f"its {'repositories' if field == 'repo' else 'packages'}: {shown}{more}"
        close = [c for name in self.unknown for c in difflib.get_close_matches(name, self.known, n=3, cutoff=0.6)]
        hint = f" (did you mean {', '.join(dict.fromkeys(close))}?)" if close else ""
        super().__init__(f"{field}: no {what} {names} in this index{hint}; {holds}")


def resolve_filter_names(
    value: str | Sequence[str] | None,
    field: str,
    known: Sequence[str],
    aliases: Mapping[str, Sequence[str]] | None = None,
) -> str | list[str] | None:
    """
    A `repo` / `package` filter with each name as the index spells it: an exact name, else the one name that
    matches in another case (repository hosts and PyPI do not tell case apart), else the one name with that alias
    (`payments-core` for `@acme/payments-core`).

    :param value: The filter as given (one name, several, or None).
    :param field: "repo" or "package", for the message.
    :param known: The names the index holds.
    :param aliases: Name -> its other names (a package's aliases and import names).
    :returns: The filter in the shape it came in, names resolved; None for None.
    :raises UnknownFilterError: A name the index does not hold (the message lists those it holds).
    :raises ValueError: A value `repository_filters` refuses.
    """
    if value is None:
        return None
    names = _values(value, field)
    exact = set(known)
    folded: dict[str, set[str]] = {}
    for name in known:
        folded.setdefault(name.casefold(), set()).add(name)
    other: dict[str, set[str]] = {}
    for name, names_of in (aliases or {}).items():
        for alias in names_of:
            other.setdefault(alias.casefold(), set()).add(name)
    resolved: list[str] = []
    unknown: list[str] = []
    for name in names:
        key = name.casefold()
        matches = {name} if name in exact else folded.get(key) or other.get(key) or set()
        if len(matches) == 1:
            resolved.append(next(iter(matches)))
        else:  # none, or ambiguous: the caller must pick from the list
            unknown.append(name)
    if unknown:
        raise UnknownFilterError(field, unknown, list(exact))
    return resolved[0] if isinstance(value, str) else resolved


def inferred_packages(
    packages: Sequence[str], hints: Sequence[Mapping[str, Any]], *, min_confidence: float = STRONG_PACKAGE_CONFIDENCE
) -> list[str]:
    """
    The rewrite's packages that the question names with strong evidence, to narrow retrieval to (empty: none).

    Strong: a package hint of confidence >= `min_confidence`, or with every word of the package's name in the
    question (`ALL_PACKAGE_WORDS`).

    :param packages: The rewrite's packages.
    :param hints: The rewrite's hints (`Hint.to_dict()`: kind, name, confidence, evidence...).
    :param min_confidence: The least confidence of a package hint that narrows.
    """
    strong = set()
    for hint in hints:
        if hint.get("kind") != "package":
            continue
        evidence = hint.get("evidence") if isinstance(hint.get("evidence"), Mapping) else {}
        named = float(evidence.get("package") or 0.0) >= ALL_PACKAGE_WORDS  # type: ignore[union-attr]
        if named or float(hint.get("confidence") or 0.0) >= min_confidence:
            strong.add(str(hint.get("name")))
    return [package for package in packages if package in strong]
