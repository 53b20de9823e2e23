"""How the CLI shows an answer to a person: absolute `path:line` locations, *why* in words, terminal hyperlinks.

The JSON keeps the raw evidence (`why` as the ranker wrote it) and gains `absolute_path` and `location`; the text
says the same in words ("found by keyword search, 2nd; the question names it"). Standard library only: this runs
on the warm server's fast path, after the answer came back.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, TextIO

REPOSITORIES_FILE = "repositories.json"  # `indexing.repositories.REPOSITORIES_FILE`, read here without its imports

_RETRIEVERS = {"bm25": "found by keyword search", "embedding": "found by meaning (embeddings)"}
_RANK = re.compile(r"^(?P<name>[\w-]+) #(?P<rank>\d+)$")
_REWRITE = re.compile(r"^rewrite: (?P<symbol>\S+?)(?: \((?P<evidence>.*)\))?$")


def ordinal(number: int) -> str:
    """1st, 2nd, 3rd, 4th, 11th, 21st."""
    suffix = "th" if 10 <= number % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")
    return f"{number}{suffix}"


def _evidence_words(kind: str, detail: str | None) -> str | None:
    """One piece of the rewrite's evidence for a symbol (`core.hints` reasons), in words."""
    if kind == "retrieved":
        place = detail.lstrip("#") if detail else ""
        return f"defined in the {ordinal(int(place))} search hit" if place.isdigit() else "defined in a search hit"
    words = {
        "exact": "the question names it",
        "fuzzy": "the question nearly names it",
        "nickname": f"your nickname {detail!r} for it" if detail else "a nickname of yours",
        "alias": f"its alias {detail!r} is in the question" if detail else "one of its aliases is in the question",
        "package": "the question names its package",
        "words": f"its name has the question's words ({detail})" if detail else "its name has the question's words",
        "abbreviation": "the question abbreviates its name",
        "doc": f"its doc mentions {detail}" if detail else "its doc has the question's words",
        "all-words": "its name has all the question's words",
        "described": "its description matches the question",
    }
    return words.get(kind)


def why_in_words(why: list[str]) -> str:
    """The ranker's evidence (`results.why_ranked`: "bm25 #2", "rewrite: name (words, doc, confidence 0.5)")."""
    said: list[str] = []
    for item in why:
        rank = _RANK.match(item)
        if rank:
            name = rank["name"]
            said.append(f"{_RETRIEVERS.get(name, f'in the {name} list')}, {ordinal(int(rank['rank']))}")
            continue
        rewrite = _REWRITE.match(item)
        if not rewrite:
            said.append(item)
            continue
        pieces = [p.strip() for p in (rewrite["evidence"] or "").split(",") if p.strip()]
        reasons = []
        for piece in pieces:
            if piece.startswith("confidence "):
                continue  # a number for --json readers, not a reason
            kind, _, detail = piece.partition(":")
            reasons.append(_evidence_words(kind, detail or None) or piece)
        said.append("the question's rewrite asks for it" + (f": {', '.join(reasons)}" if reasons else ""))
    return "; ".join(said)


def repository_roots(index_dir: Path) -> dict[str | None, str]:
    """Repository name -> the folder it was indexed from (None -> the only one, for chunks without a name)."""
    try:
        records = json.loads((index_dir / REPOSITORIES_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(records, dict):
        return {}
    roots: dict[str | None, str] = {
        str(name): str(record["root"])
        for name, record in records.items()
        if isinstance(record, dict) and record.get("root")
    }
    if len(roots) == 1:
        roots[None] = next(iter(roots.values()))
    return roots


def _absolute(item: dict[str, Any], roots: dict[str | None, str]) -> str | None:
    root = roots.get(item.get("repo")) or roots.get(None)
    path = item.get("file_path")
    return str(Path(root) / path) if root and path else None


def add_locations(payload: dict[str, Any], index_dir: Path) -> None:
    """Give each symbol and file of an answer `absolute_path` and `location` ("/abs/file.py:LINE"), in place."""
    roots = repository_roots(index_dir)
    for symbol in payload.get("symbols") or []:
        absolute = _absolute(symbol, roots)
        if absolute:
            symbol["absolute_path"] = absolute
            symbol["location"] = f"{absolute}:{symbol.get('start_line') or 1}"
    for item in payload.get("files") or []:
        absolute = _absolute(item, roots)
        if absolute:
            first = next((h.get("start_line") for h in item.get("hits") or [] if h.get("start_line")), 1)
            item["absolute_path"] = absolute
            item["location"] = f"{absolute}:{first}"


def hyperlinks_wanted(stream: TextIO) -> bool:
    """OSC 8 links only on a terminal (never when piped or redirected) that is not `dumb`."""
    try:
        return stream.isatty() and os.environ.get("TERM", "") != "dumb"
    except (AttributeError, ValueError):
        return False


def link(text: str, absolute_path: str | None, line: int | None, *, enabled: bool) -> str:
    """`text` as an OSC 8 terminal hyperlink to the file (at its line, for terminals that read `#L`), or as it is."""
    if not enabled or not absolute_path:
        return text
    target = Path(absolute_path).as_uri() + (f"#L{line}" if line else "")
    return f"\033]8;;{target}\033\\{text}\033]8;;\033\\"


def location_text(item: dict[str, Any], *, links: bool) -> str:
    """`/abs/path:LINE` (a hyperlink on a terminal), else the relative `path:LINE`."""
    line = item.get("start_line")
    shown = item.get("location") or f"{item.get('file_path')}:{line or 1}"
    return link(shown, item.get("absolute_path"), line, enabled=links)
