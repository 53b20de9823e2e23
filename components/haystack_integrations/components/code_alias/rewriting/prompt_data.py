"""
Repository text offered to an LLM is data: candidate names and paths are checked and quoted before the prompt.

Names and paths come from the indexed code (a package.json `name`, a file name), so whoever writes that code
writes part of the prompt. A candidate is offered only when its name is one line of printable text of a
sane length; its file path likewise, else the candidate goes without it. What is offered is JSON-quoted, so
even a quote or a backslash stays inside its string, and no candidate can start a line of its own.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterable
from typing import Any

from .hints import Hint

#: Longest name offered: real identifiers and package names are far shorter.
MAX_NAME_CHARS = 200
#: Longest file path offered with a candidate.
MAX_PATH_CHARS = 300
# Control, format (zero-width, bidirectional overrides), surrogate, private-use and unassigned characters,
# and the line and paragraph separators: none belongs in a name, and several start a new line for a model.
_REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def is_prompt_safe(text: object, max_chars: int = MAX_NAME_CHARS) -> bool:
    """
    Whether `text` may go into a prompt as a candidate's name or path.

    :param text: The name or path.
    :param max_chars: Longest accepted length.
    :returns: True for a non-empty string of at most `max_chars` printable characters on one line, without
        leading or trailing spaces.
    """
    if not isinstance(text, str) or not text or len(text) > max_chars or text != text.strip():
        return False
    return not any(unicodedata.category(char) in _REFUSED_CATEGORIES for char in text)


def prompt_question(question: str, max_chars: int) -> str:
    """
    The question as the prompt shows it: stripped, and cut after `max_chars` characters at a word boundary with a
    closing "[...]", so a pasted issue with a long traceback cannot overflow a small model's context (what is cut
    still reaches retrieval).

    :param question: The user's question.
    :param max_chars: Most characters shown (at least 1).
    """
    text = question.strip()
    if len(text) <= max_chars:
        return text
    cut = text[:max_chars]
    space = cut.rfind(" ", max_chars // 2)
    return f"{(cut[:space] if space > 0 else cut).rstrip()} [...]"


def quoted(text: str) -> str:
    """`text` as a JSON string literal (what the prompt shows; a checked name needs no escape but `"` and `\\`)."""
    return json.dumps(text, ensure_ascii=False)


def offered_hints(hints: Iterable[Hint]) -> list[Hint]:
    """The hints whose names may be offered to an LLM (and become the answer schema's allowed values)."""
    return [hint for hint in hints if is_prompt_safe(hint.name)]


def prompt_candidates(hints: Iterable[Hint]) -> list[dict[str, Any]]:
    """
    The template's `hints`: each offered hint's fields with unsafe paths and names left out, plus `name_json`
    and `file_json` (its first safe file, or None), the JSON-quoted forms the default template shows.

    :param hints: Hints from the dictionary (unsafe names are dropped here too).
    """
    candidates: list[dict[str, Any]] = []
    for hint in offered_hints(hints):
        files = [path for path in hint.files if is_prompt_safe(path, MAX_PATH_CHARS)]
        candidate = hint.to_dict()
        candidate["files"] = files[:3]
        candidate["qualified_names"] = [name for name in hint.qualified_names[:3] if is_prompt_safe(name)]
        candidate["package"] = hint.package if is_prompt_safe(hint.package) else None
        candidate["name_json"] = quoted(hint.name)
        candidate["file_json"] = quoted(files[0]) if files else None
        candidates.append(candidate)
    return candidates
