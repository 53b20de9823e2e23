"""Unified-diff parsing, test-file detection, and mapping changed lines onto the definitions that hold them.

Framework-free. This is how a SWE-bench-style ``patch`` becomes gold: the non-test files it changes, and the
functions (methods, classes) of the ORIGINAL file whose span contains a changed line.

Gold-function rule (documented once, used everywhere):

- A removed (``-``) line at old line ``n`` touches every definition whose span ``[start_line, end_line]``
  contains ``n``.
- A block of added (``+``) lines inserted after old line ``n`` (with no removed line in between) touches a
  definition that contains ``n`` strictly inside its span (``start_line <= n < end_line``), or that ends at
  ``n`` when the first non-blank inserted line is indented deeper than the definition's header (code appended
  to the end of its body). An insertion before a definition's first line (a new decorator, a new sibling
  function) touches the enclosing scope only.
- Of the definitions a line touches, only the innermost one of kind function / method / class counts, so a
  fix inside ``Foo.bar`` gives ``Foo.bar`` and not ``Foo`` too; a change to a class body outside any method
  gives the class; a module-level change gives no function.

When the file at hand is not byte-identical to the one the patch was made against (a release instead of the
exact commit), each hunk is found by its text instead of trusting its line numbers (:func:`locate_hunk`):
its old side; else its new side (a release made after the fix holds the new text, and then the added
lines are the changed ones); else the same blocks with outer context trimmed; else one run of its context
lines alone (a file that differs from both sides). A hunk found nowhere is counted as unresolved.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

__all__ = [
    "FileDiff",
    "Hunk",
    "HunkLine",
    "changed_definitions",
    "is_test_file",
    "locate_hunk",
    "parse_unified_diff",
    "touched_old_lines",
]

from ..core.testfiles import is_test_file

_DIFF_GIT_RE = re.compile(r"^diff --git (?:\"?a/(?P<a>.+?)\"?) (?:\"?b/(?P<b>.+?)\"?)$")
_HUNK_RE = re.compile(r"^@@ -(?P<os>\d+)(?:,(?P<ol>\d+))? \+(?P<ns>\d+)(?:,(?P<nl>\d+))? @@(?P<ctx>.*)$")


@dataclass(frozen=True)
class HunkLine:
    """One body line of a hunk: ``kind`` is ``" "`` (context), ``"-"`` (removed) or ``"+"`` (added)."""

    kind: str
    text: str


@dataclass
class Hunk:
    """One ``@@`` hunk: its old/new ranges (1-based) and body lines."""

    old_start: int
    old_count: int
    new_start: int
    new_count: int
    section: str = ""
    lines: list[HunkLine] = field(default_factory=list)

    @property
    def old_lines(self) -> list[str]:
        """The old side of the hunk (context and removed lines), in order."""
        return [line.text for line in self.lines if line.kind != "+"]

    @property
    def new_lines(self) -> list[str]:
        """The new side of the hunk (context and added lines), in order."""
        return [line.text for line in self.lines if line.kind != "-"]

    def reversed(self) -> Hunk:
        """The same hunk seen from its new side: added and removed lines swap, old and new ranges swap."""
        swap = {"+": "-", "-": "+", " ": " "}
        return Hunk(
            old_start=self.new_start,
            old_count=self.new_count,
            new_start=self.old_start,
            new_count=self.old_count,
            section=self.section,
            lines=[HunkLine(swap[line.kind], line.text) for line in self.lines],
        )

    @property
    def old_range(self) -> tuple[int, int]:
        """The old line range ``(first, last)`` the hunk covers, inclusive; ``(n, n - 1)`` when empty."""
        first = self.old_start if self.old_count else self.old_start + 1
        return first, first + self.old_count - 1


@dataclass
class FileDiff:
    """The changes to one file."""

    old_path: str | None
    new_path: str | None
    hunks: list[Hunk] = field(default_factory=list)
    is_binary: bool = False

    @property
    def is_new(self) -> bool:
        """The file did not exist before (``--- /dev/null``)."""
        return self.old_path is None

    @property
    def is_deleted(self) -> bool:
        """The file does not exist after (``+++ /dev/null``)."""
        return self.new_path is None

    @property
    def is_rename(self) -> bool:
        """The file moved (both sides exist under different names)."""
        return self.old_path is not None and self.new_path is not None and self.old_path != self.new_path

    @property
    def path(self) -> str:
        """The file's path in the ORIGINAL tree, or its new path when it is a new file."""
        return self.old_path if self.old_path is not None else (self.new_path or "")


def _strip_prefix(raw: str) -> str | None:
    raw = raw.split("\t", 1)[0].strip()
    if raw.startswith('"') and raw.endswith('"'):
        raw = raw[1:-1]
    if raw == "/dev/null":
        return None
    if raw.startswith(("a/", "b/")):
        return raw[2:]
    return raw


def parse_unified_diff(text: str) -> list[FileDiff]:
    """
    Parse a unified diff (``git diff`` style or plain ``---``/``+++``) into per-file changes.

    Handles new files (``--- /dev/null``, ``new file mode``), deletions (``+++ /dev/null``, ``deleted file
    mode``), renames (``rename from`` / ``rename to``, with or without hunks), binary files and
    ``\\ No newline at end of file`` markers.

    :param text: The diff.
    :returns: One :class:`FileDiff` per file, in diff order.
    """
    files: list[FileDiff] = []
    current: FileDiff | None = None
    hunk: Hunk | None = None
    old_left = new_left = 0
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        if hunk is not None and (old_left > 0 or new_left > 0):
            if line.startswith("\\"):
                index += 1
                continue
            kind = line[:1] if line[:1] in {" ", "-", "+"} else " "
            if line == "":
                kind = " "
            hunk.lines.append(HunkLine(kind, line[1:]))
            if kind in {" ", "-"}:
                old_left -= 1
            if kind in {" ", "+"}:
                new_left -= 1
            index += 1
            continue
        hunk = None
        match = _DIFF_GIT_RE.match(line)
        if match:
            current = FileDiff(old_path=match.group("a"), new_path=match.group("b"))
            files.append(current)
        elif line.startswith("--- ") and index + 1 < len(lines) and lines[index + 1].startswith("+++ "):
            old_path = _strip_prefix(line[4:])
            new_path = _strip_prefix(lines[index + 1][4:])
            if current is None or current.hunks:
                current = FileDiff(old_path=old_path, new_path=new_path)
                files.append(current)
            else:
                current.old_path, current.new_path = old_path, new_path
            index += 1
        elif current is not None and line.startswith("new file mode"):
            current.old_path = None
        elif current is not None and line.startswith("deleted file mode"):
            current.new_path = None
        elif current is not None and line.startswith(("rename from ", "copy from ")):
            current.old_path = line.split(" ", 2)[2]
        elif current is not None and line.startswith(("rename to ", "copy to ")):
            current.new_path = line.split(" ", 2)[2]
        elif current is not None and (line.startswith("Binary files ") or line == "GIT binary patch"):
            current.is_binary = True
        else:
            match = _HUNK_RE.match(line)
            if match and current is not None:
                hunk = Hunk(
                    old_start=int(match.group("os")),
                    old_count=int(match.group("ol")) if match.group("ol") is not None else 1,
                    new_start=int(match.group("ns")),
                    new_count=int(match.group("nl")) if match.group("nl") is not None else 1,
                    section=match.group("ctx").strip(),
                )
                current.hunks.append(hunk)
                old_left, new_left = hunk.old_count, hunk.new_count
        index += 1
    return files


@dataclass(frozen=True)
class TouchedLines:
    """What a hunk changes on the old side: removed line numbers, and insertion points (after old line n)."""

    removed: tuple[int, ...]
    insertions: tuple[tuple[int, str], ...]
    """``(n, first_non_blank_inserted_line)``: added lines inserted after old line ``n``."""


def touched_old_lines(hunk: Hunk, offset: int = 0) -> TouchedLines:
    """
    The old-side lines a hunk changes.

    :param hunk: The hunk.
    :param offset: Added to every old line number (where the hunk really sits in the file at hand).
    """
    removed: list[int] = []
    insertions: list[tuple[int, str]] = []
    old_line = hunk.old_start + offset
    if hunk.old_count == 0:
        old_line += 1  # "-n,0" means "after line n"
    pending: list[str] | None = None
    for line in hunk.lines:
        if line.kind == "+":
            if pending is None:
                pending = []
            pending.append(line.text)
            continue
        if pending is not None:
            first = next((text for text in pending if text.strip()), "")
            insertions.append((old_line - 1, first))
            pending = None
        if line.kind == "-":
            removed.append(old_line)
        old_line += 1
    if pending is not None:
        first = next((text for text in pending if text.strip()), "")
        insertions.append((old_line - 1, first))
    # An insertion right after a removed line is a replacement: the removed line already names the place.
    removed_set = set(removed)
    kept = tuple((n, text) for n, text in insertions if n not in removed_set)
    return TouchedLines(tuple(removed), kept)


def _norm(line: str) -> str:
    return line.rstrip()


def locate_hunk(hunk: Hunk, file_lines: Sequence[str], *, trim: bool = True) -> int | None:
    """
    Where a hunk's old side really sits in ``file_lines``, as an offset to add to its old line numbers.

    Tries the recorded position first, then every exact match of the old-side block (trailing whitespace
    ignored), nearest to the recorded position; then the same with outer context lines trimmed one at a time
    (down to the changed lines themselves). Returns None when the text is not in the file.

    :param hunk: The hunk.
    :param file_lines: The file at hand, split into lines (no line ends).
    :param trim: Whether to try trimmed blocks after the whole one.
    """
    old = [_norm(text) for text in hunk.old_lines]
    lines = [_norm(text) for text in file_lines]
    first_old = hunk.old_range[0]
    if not old:
        # A pure insertion into an empty file, or an empty hunk: only the recorded position exists.
        return 0 if hunk.old_start <= len(lines) else None
    kinds = [line.kind for line in hunk.lines if line.kind != "+"]
    changed = [i for i, kind in enumerate(kinds) if kind == "-"]
    # Trim context from both ends, keeping changed lines (and at least one line).
    lo_limit = changed[0] if changed else len(old) - 1
    hi_limit = changed[-1] + 1 if changed else 1
    candidates: list[tuple[int, int]] = []
    for cut in range(len(old) if trim else 1):
        for lo in range(0, cut + 1):
            hi = len(old) - (cut - lo)
            if lo > lo_limit or hi < hi_limit or hi - lo < 1:
                continue
            candidates.append((lo, hi))
    for lo, hi in candidates:
        block = old[lo:hi]
        if not any(text.strip() for text in block):
            continue
        expected = first_old - 1 + lo  # 0-based index where the block should start
        positions = _find_block(lines, block)
        if positions:
            best = min(positions, key=lambda pos: (abs(pos - expected), pos))
            return best - expected
    return None


def _find_block(lines: Sequence[str], block: Sequence[str]) -> list[int]:
    size = len(block)
    first = block[0]
    return [
        start
        for start in range(0, len(lines) - size + 1)
        if lines[start] == first and list(lines[start : start + size]) == list(block)
    ]


class DefinitionLike(Protocol):
    """What :func:`changed_definitions` needs of a definition (``SymbolDef`` fits)."""

    @property
    def name(self) -> str: ...

    @property
    def qualified_name(self) -> str: ...

    @property
    def kind(self) -> str: ...

    @property
    def start_line(self) -> int: ...

    @property
    def end_line(self) -> int: ...


FUNCTION_KINDS = frozenset({"function", "method", "class"})


def _indent(text: str) -> int:
    expanded = text.expandtabs(8)
    return len(expanded) - len(expanded.lstrip(" "))


def changed_definitions(
    hunks: Iterable[Hunk],
    definitions: Sequence[DefinitionLike],
    file_lines: Sequence[str] | None = None,
    *,
    kinds: frozenset[str] = FUNCTION_KINDS,
) -> tuple[list[DefinitionLike], int]:
    """
    The definitions of the original file that a patch's hunks change (the module docstring's rule).

    :param hunks: The hunks of one file.
    :param definitions: The definitions of the file at hand (``SymbolDef`` from ``extract_symbols``).
    :param file_lines: The file at hand; when given, each hunk is located by its text (:func:`locate_hunk`),
        else its line numbers are trusted.
    :param kinds: Definition kinds that count.
    :returns: The changed definitions (innermost, deduplicated, in file order) and the number of hunks that
        could not be located in ``file_lines``.
    """
    candidates = [d for d in definitions if d.kind in kinds]
    found: dict[tuple[str, int], DefinitionLike] = {}
    unresolved = 0
    for hunk in hunks:
        side = hunk
        offset = 0
        if file_lines is not None:
            located = _locate_either_side(hunk, file_lines)
            if located is None:
                unresolved += 1
                continue
            side, offset = located
        touched = touched_old_lines(side, offset)
        for line_no in touched.removed:
            innermost = _innermost(candidates, lambda d, n=line_no: d.start_line <= n <= d.end_line)
            if innermost is not None:
                found[(innermost.qualified_name, innermost.start_line)] = innermost
        for after, first_text in touched.insertions:

            def holds(d: DefinitionLike, n: int = after, text: str = first_text) -> bool:
                if d.start_line <= n < d.end_line:
                    return True
                if n == d.end_line and file_lines is not None and text.strip() and 0 < d.start_line <= len(file_lines):
                    return _indent(text) > _indent(file_lines[d.start_line - 1])
                return False

            innermost = _innermost(candidates, holds)
            if innermost is not None:
                found[(innermost.qualified_name, innermost.start_line)] = innermost
    ordered = sorted(found.values(), key=lambda d: (d.start_line, d.qualified_name))
    return ordered, unresolved


def _locate_either_side(hunk: Hunk, file_lines: Sequence[str]) -> tuple[Hunk, int] | None:
    """Locate a hunk by its old side, else by its new side (a file that already holds the fix)."""
    sides = (hunk, hunk.reversed())
    for trim in (False, True):
        for side in sides:
            offset = locate_hunk(side, file_lines, trim=trim)
            if offset is not None:
                return side, offset
    offset = _locate_by_context(hunk, file_lines)
    return (hunk, offset) if offset is not None else None


def _locate_by_context(hunk: Hunk, file_lines: Sequence[str]) -> int | None:
    """
    Last resort: anchor a hunk by one run of its context lines (the file differs from both sides, e.g. a
    release that holds half the fix). Runs with at least 20 non-blank characters are tried longest first;
    the match nearest to the recorded position wins.
    """
    lines = [_norm(text) for text in file_lines]
    runs: list[tuple[int, list[str]]] = []  # (index on the old side, lines)
    index = 0
    current: list[str] = []
    start = 0
    for line in hunk.lines:
        if line.kind == " ":
            if not current:
                start = index
            current.append(_norm(line.text))
        elif current:
            runs.append((start, current))
            current = []
        if line.kind != "+":
            index += 1
    if current:
        runs.append((start, current))
    runs = [run for run in runs if sum(len(text.strip()) for text in run[1]) >= 20]
    runs.sort(key=lambda run: -sum(len(text.strip()) for text in run[1]))
    first_old = hunk.old_range[0]
    for start, run in runs:
        # drop blank lines at the run's ends: they match anywhere
        lo, hi = 0, len(run)
        while lo < hi and not run[lo].strip():
            lo += 1
        while hi > lo and not run[hi - 1].strip():
            hi -= 1
        positions = _find_block(lines, run[lo:hi])
        if positions:
            expected = first_old - 1 + start + lo
            best = min(positions, key=lambda pos: (abs(pos - expected), pos))
            return best - expected
    return None


def _innermost(definitions: Sequence[DefinitionLike], holds: object) -> DefinitionLike | None:
    best: DefinitionLike | None = None
    for definition in definitions:
        if (
            callable(holds)
            and holds(definition)
            and (best is None or (definition.end_line - definition.start_line) < (best.end_line - best.start_line))
        ):
            best = definition
    return best
