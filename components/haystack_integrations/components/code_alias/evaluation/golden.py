"""Golden questions: the JSONL format, and the loader for SWE-bench-format instances.

Framework-free. A golden set is JSONL, one object a line::

    {"id": "q1", "question": "where is the retry helper?", "gold_files": ["pay/retry.py"],
     "gold_symbols": ["pay/retry.py::with_stripe_backoff"], "repo": "acme/payments"}

``gold_symbols`` entries are ``"path::Scope.name"`` (a function in a file, its scope path inside the file:
``Class.method``) or a bare name (any file). SWE-bench instances carry a ``patch`` instead; their gold
functions are derived from it per corpus (:func:`gold_functions_for`), because the changed definitions can
only be found in the file the corpus holds.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from haystack_integrations.components.code_alias.errors import CodeAliasError
from haystack_integrations.components.code_alias.evaluation.metrics import local_name
from haystack_integrations.components.code_alias.evaluation.patches import (
    changed_definitions,
    is_test_file,
    parse_unified_diff,
)

__all__ = [
    "GoldFunction",
    "GoldenError",
    "GoldenItem",
    "gold_files_from_patch",
    "gold_functions_for",
    "load_golden",
    "load_swebench",
    "save_golden",
]

QueryField = Literal["title", "full"]


class GoldenError(CodeAliasError):
    """A golden file that cannot be read or has an invalid line (the message names the file and line)."""


class GoldenItem(BaseModel):
    """One golden question with what a retriever should find."""

    model_config = ConfigDict(extra="forbid")

    id: str
    question: str
    gold_files: list[str] = Field(description="repository paths (POSIX) that answer the question")
    gold_symbols: list[str] = Field(
        default_factory=list, description="'path::Scope.name' or a bare name; empty when unknown"
    )
    repo: str | None = None
    title: str | None = Field(default=None, description="first line of the issue (SWE-bench)")
    full_text: str | None = Field(default=None, description="the whole issue text (SWE-bench)")
    version: str | None = Field(default=None, description="project version, for a release corpus")
    base_commit: str | None = Field(default=None, description="commit the gold refers to, for a git corpus")
    patch: str | None = Field(default=None, description="the fix as a unified diff, when gold derives from it")
    meta: dict[str, Any] = Field(default_factory=dict, description="free-form: file_location_hint, created_at...")

    def question_for(self, query: QueryField) -> str:
        """The question text for a query mode: the title, or the full text (falling back to ``question``)."""
        if query == "title":
            return self.title or self.question
        return self.full_text or self.question

    @property
    def names_file(self) -> bool | None:
        """
        Whether the issue names the file (Agentless's ``file_location_hint`` label), None when unlabelled.

        ``"None"`` (the string) means the issue does not name the file.
        """
        hint = self.meta.get("file_location_hint")
        if hint is None:
            return None
        return str(hint) != "None"


def _read_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        handle = path.open(encoding="utf-8")
    except OSError as error:
        raise GoldenError(f"{path}: cannot read: {error}") from error
    with handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError as error:
                raise GoldenError(f"{path}:{number}: not JSON: {error.msg}") from error
            if not isinstance(value, dict):
                raise GoldenError(f"{path}:{number}: expected a JSON object")
            yield number, value


def load_golden(path: str | Path) -> list[GoldenItem]:
    """
    Read a golden set written by :func:`save_golden` (or by hand in that format).

    :raises GoldenError: The file is unreadable or a line is invalid (names the file and line).
    """
    source = Path(path)
    items: list[GoldenItem] = []
    for number, value in _read_jsonl(source):
        try:
            items.append(GoldenItem.model_validate(value))
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "(top level)"
            raise GoldenError(f"{source}:{number}: invalid golden item at {where}: {first['msg']}") from error
    return items


def save_golden(items: Iterable[GoldenItem], path: str | Path) -> Path:
    """Write golden items as JSONL (one object a line, fields that are unset left out)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("w", encoding="utf-8") as handle:
        for item in items:
            handle.write(item.model_dump_json(exclude_defaults=True) + "\n")
    return target


def gold_files_from_patch(patch: str) -> list[str]:
    """
    The non-test files a patch changes, in diff order: paths of the ORIGINAL tree.

    New files (nothing to retrieve before the fix) and test files (:func:`is_test_file`) are left out; a
    renamed file counts under its old name; a deleted file counts (its text was there to be found).
    """
    files: list[str] = []
    for diff in parse_unified_diff(patch):
        if diff.is_new or diff.old_path is None or is_test_file(diff.old_path):
            continue
        if diff.old_path not in files:
            files.append(diff.old_path)
    return files


def _title_of(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return text.strip()


def load_swebench(path: str | Path, *, query: QueryField = "title") -> list[GoldenItem]:
    """
    Read SWE-bench-format JSONL (``instance_id, repo, version, base_commit, problem_statement, patch``).

    Gold files come from ``patch`` (:func:`gold_files_from_patch`); ``gold_symbols`` stays empty, since the
    changed functions depend on the corpus file (see :func:`gold_functions_for`). Instances whose patch
    changes no non-test file are skipped. Extra fields (``file_location_hint``, ``function_location_hint``,
    ``created_at``) go to ``meta``.

    :param path: The JSONL file.
    :param query: Which text becomes ``question``: ``"title"`` (first non-empty line of the issue) or
        ``"full"`` (the whole problem statement). Both stay available as ``title`` / ``full_text``.
    :raises GoldenError: The file is unreadable, or a line lacks ``instance_id`` / ``problem_statement`` /
        ``patch``.
    """
    source = Path(path)
    items: list[GoldenItem] = []
    known = {"instance_id", "repo", "version", "base_commit", "problem_statement", "patch"}
    for number, row in _read_jsonl(source):
        missing = [key for key in ("instance_id", "problem_statement", "patch") if not row.get(key)]
        if missing:
            raise GoldenError(f"{source}:{number}: SWE-bench instance lacks {', '.join(missing)}")
        statement = str(row["problem_statement"])
        gold = gold_files_from_patch(str(row["patch"]))
        if not gold:
            continue
        title = _title_of(statement)
        items.append(
            GoldenItem(
                id=str(row["instance_id"]),
                question=title if query == "title" else statement,
                gold_files=gold,
                repo=row.get("repo"),
                title=title,
                full_text=statement,
                version=str(row["version"]) if row.get("version") is not None else None,
                base_commit=row.get("base_commit"),
                patch=str(row["patch"]),
                meta={key: value for key, value in row.items() if key not in known},
            )
        )
    return items


class GoldFunction(BaseModel):
    """A gold function: the file it lives in (corpus path) and its scope path inside the file."""

    model_config = ConfigDict(frozen=True)

    file: str
    local_name: str
    qualified_name: str = ""


def gold_functions_for(
    item: GoldenItem,
    read_file: Callable[[str], tuple[str, str] | None],
    extract: Callable[[str, str], list[Any]],
) -> tuple[list[GoldFunction], bool]:
    """
    The gold functions of an item, in corpus paths.

    From ``gold_symbols`` when the item has them (``"path::Scope.name"``; the path goes through ``read_file``
    to reach its corpus path); else from ``patch``: each non-test file's hunks are located in the corpus file
    and mapped onto its definitions (:func:`~.patches.changed_definitions`).

    :param item: The golden item.
    :param read_file: Repository path -> ``(corpus path, text)``, or None when the corpus lacks the file.
    :param extract: ``(text, corpus path)`` -> the file's definitions (``SymbolDef``-like objects).
    :returns: The gold functions, and whether they are complete (every gold file present and every hunk
        located). Items with no derivable gold functions return ``([], False)``.
    """

    if item.gold_symbols:
        functions: list[GoldFunction] = []
        complete = True
        for symbol in item.gold_symbols:
            if "::" in symbol:
                repo_path, name = symbol.split("::", 1)
                found = read_file(repo_path)
                if found is None:
                    complete = False
                    continue
                functions.append(GoldFunction(file=found[0], local_name=name, qualified_name=name))
            else:
                functions.append(GoldFunction(file="", local_name=symbol, qualified_name=symbol))
        return functions, complete and bool(functions)
    if not item.patch:
        return [], False
    functions = []
    complete = True
    for diff in parse_unified_diff(item.patch):
        if diff.is_new or diff.old_path is None or is_test_file(diff.old_path):
            continue
        found = read_file(diff.old_path)
        if found is None:
            complete = False
            continue
        corpus_path, text = found
        definitions = extract(text, corpus_path)
        changed, unresolved = changed_definitions(diff.hunks, definitions, text.splitlines())
        if unresolved:
            complete = False
        for definition in changed:
            gold = GoldFunction(
                file=corpus_path,
                local_name=local_name(corpus_path, definition.qualified_name),
                qualified_name=definition.qualified_name,
            )
            if gold not in functions:
                functions.append(gold)
    return functions, complete and bool(functions)
