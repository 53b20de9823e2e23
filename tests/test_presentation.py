"""The CLI's answer for a person: *why* in words, absolute `path:line`, terminal hyperlinks only on a terminal."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from haystack_integrations.components.code_alias.presentation import (
    add_locations,
    hyperlinks_wanted,
    link,
    ordinal,
    why_in_words,
)


def test_why_is_said_in_words() -> None:
    assert [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 102)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "102nd",
    ]  # fmt: skip
    said = why_in_words(["bm25 #2", "embedding #1", "rewrite: withStripeBackoff (retrieved:#1, doc, confidence 0.54)"])
    assert said == (
        "found by keyword search, 2nd; found by meaning (embeddings), 1st; the question's rewrite asks for it: "
        "defined in the 1st search hit, its doc has the question's words"
    )
    assert why_in_words(["rewrite: AccessGate (nickname:the bouncer, exact)"]).endswith(
        "your nickname 'the bouncer' for it, the question names it"
    )
    assert "confidence" not in why_in_words(["rewrite: x (confidence 0.9)"])


def test_locations_are_absolute_per_repository(tmp_path: Path) -> None:
    (tmp_path / "repositories.json").write_text(
        json.dumps({"a": {"root": "/src/a"}, "b": {"root": "/src/b"}}), encoding="utf-8"
    )
    payload = {
        "symbols": [{"file_path": "x.py", "start_line": 7, "repo": "b"}],
        "files": [{"file_path": "y.py", "repo": "a", "hits": [{"start_line": None}, {"start_line": 3}]}],
    }
    add_locations(payload, tmp_path)
    assert payload["symbols"][0]["location"] == "/src/b/x.py:7"
    assert payload["files"][0]["absolute_path"] == "/src/a/y.py" and payload["files"][0]["location"] == "/src/a/y.py:3"


def test_hyperlinks_only_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERM", "xterm-256color")

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert not hyperlinks_wanted(io.StringIO()) and hyperlinks_wanted(Terminal())
    assert link("f.py:3", "/src/f.py", 3, enabled=True) == "\033]8;;file:///src/f.py#L3\033\\f.py:3\033]8;;\033\\"
    assert link("f.py:3", "/src/f.py", 3, enabled=False) == "f.py:3"
