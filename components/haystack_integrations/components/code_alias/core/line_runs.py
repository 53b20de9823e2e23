"""The real line numbers of a chunk whose text is not one run of the file's lines.

A class chunk keeps its own lines and only the signature line of each nested definition (`core.chunking`), so
its text skips lines; a later part of a long chunk starts mid-file. The splitter writes the numbers of the kept
lines as runs (`"686-690,698,705-706"`) in the chunk's `line_runs` meta whenever they are not exactly the lines
from the text's first line to `end_line`; every view of the chunk (the page, the terminal, the chat, MCP) numbers
its lines from them. Standard library only: the views run on the CLI's fast path.
"""

from __future__ import annotations

from collections.abc import Sequence


def encode_line_runs(numbers: Sequence[int]) -> str:
    """`[686, 687, 688, 698, 705, 706]` -> `"686-688,698,705-706"` (empty for no numbers)."""
    runs: list[str] = []
    index = 0
    while index < len(numbers):
        first = last = numbers[index]
        index += 1
        while index < len(numbers) and numbers[index] == last + 1:
            last = numbers[index]
            index += 1
        runs.append(str(first) if first == last else f"{first}-{last}")
    return ",".join(runs)


def decode_line_runs(text: str) -> list[int] | None:
    """The numbers of `encode_line_runs`'s text; None when it is not such a text (a damaged or foreign value)."""
    numbers: list[int] = []
    for run in text.split(","):
        first, dash, last = run.strip().partition("-")
        if not first.isdigit() or (dash and not last.isdigit()):
            return None
        low, high = int(first), int(last) if dash else int(first)
        if high < low or (numbers and low <= numbers[-1]) or high - low > 1_000_000:
            return None
        numbers.extend(range(low, high + 1))
    return numbers or None


def runs_needed(numbers: Sequence[int], end_line: int) -> bool:
    """Whether `numbers` (a chunk's kept lines) are anything but the one run from their first line to `end_line`."""
    return bool(numbers) and (numbers[-1] != end_line or numbers[-1] - numbers[0] + 1 != len(numbers))
