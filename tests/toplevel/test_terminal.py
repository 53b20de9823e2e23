"""`code-alias ask` on a terminal and through a pipe: snapshots of both (with and without `--code`), `NO_COLOR`, and
the real command in a pseudo-terminal.

The snapshots are of one real answer (`snapshots/answer.json`: "validated fields" over the views fixture, lexical
index, with its code lines), so a change of layout shows as a diff. `CODE_ALIAS_UPDATE_SNAPSHOTS=1` rewrites them.
"""

from __future__ import annotations

import copy
import io
import json
import os
import pty
import re
import select
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from haystack_integrations.components.code_alias.terminal import answer_text, console_for, render_answer
from tests.support.repos import ROOT, SNAPSHOTS
from tests.support.views_repo import views_copy

UPDATE = os.environ.get("CODE_ALIAS_UPDATE_SNAPSHOTS") == "1"
_LINK_ID = re.compile(r"\x1b\]8;id=[^;]*;")
_ESCAPES = re.compile(r"\x1b\[[0-9;]*m|\x1b\]8;[^\x1b]*\x1b\\")
# SGR colour parameters: 30-37/90-97 foreground, 40-47/100-107 background, 38;5;N / 38;2;R;G;B and the like.
_COLOUR = re.compile(r"\x1b\[[0-9;]*(?:(?<=\[)|;)(?:3[0-8]|4[0-8]|9[0-7]|10[0-7])(?:;[0-9;]*)?m")


def _answer() -> dict[str, Any]:
    return dict(json.loads((SNAPSHOTS / "answer.json").read_text(encoding="utf-8")))


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _render(payload: dict[str, Any], *, tty: bool, code: bool = False, env: dict[str, str] | None = None) -> str:
    stream = _Terminal() if tty else io.StringIO()
    environ = {"TERM": "xterm-256color", "COLUMNS": "100", **(env or {})}
    console = console_for(stream, environ)
    if tty:
        console.size = (100, 40)  # `COLUMNS` as the test's terminal has it, whatever runs the tests
    render_answer(payload, console, code=code)
    return _LINK_ID.sub("\x1b]8;id=N;", stream.getvalue())


def _snapshot(name: str, text: str) -> None:
    path = SNAPSHOTS / name
    if UPDATE or not path.exists():
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8"), f"{name} changed (CODE_ALIAS_UPDATE_SNAPSHOTS=1 rewrites it)"


@pytest.mark.parametrize("code", [False, True], ids=["compact", "code"])
def test_piped_output_is_plain_text_one_line_per_symbol(code: bool) -> None:
    text = _render(_answer(), tty=False, code=code)
    _snapshot(f"ask-pipe{'-code' if code else ''}.txt", text)
    assert "\x1b" not in text  # no escape code of any kind in a pipe
    lines = text.splitlines()
    # The six `_validated` of fields.py fold under the first; the places are the groups, in the ranking's order.
    assert lines[0].startswith(" 1  MoneyField._validated  services/shop/shop/fields.py:90")
    assert "+5 more in fields.py" in lines[0]
    places = [line for line in lines if re.match(r"^ ?\d+  ", line)]
    assert [line.split()[1] for line in places] == [
        "MoneyField._validated",
        "Field",
        "QuantityField",
        "EmailField",
        "PostcodeField",
    ]
    assert lines[-1].startswith("rewrite (dictionary): _validated, Field · retrieval: lexical · answered by the warm")
    assert not any(line != line.rstrip() for line in lines)  # nothing padded to a width
    if code:
        # The class outline at the file's own numbers, with the elision between them.
        at = lines.index(next(line for line in lines if line.startswith(" 2  Field ")))
        doc = '"""A form field. Every field of the class validates the same way: strip, check, keep the errors."""'
        assert lines[at + 1 : at + 6] == [
            "     9  class Field:",
            f"    10      {doc}",
            "    11",
            "    12      def __init__(self, name: str, required: bool = True) -> None:",
            "     ⋮  (3 lines)",
        ]
    else:
        assert "class Field:" not in text


@pytest.mark.parametrize("code", [False, True], ids=["compact", "code"])
def test_a_terminal_gets_colour_bold_names_and_links(code: bool) -> None:
    text = _render(_answer(), tty=True, code=code)
    _snapshot(f"ask-tty{'-code' if code else ''}.txt", text)
    assert "\x1b[1mMoneyField._validated" in text  # the name bold
    assert "\x1b]8;id=N;file:///src/acme/services/shop/shop/fields.py#L90\x1b\\" in text  # the path links the line
    assert _COLOUR.search(text)
    width = max(len(_ESCAPES.sub("", line)) for line in text.splitlines())
    assert width <= 100  # wrapped to the terminal, never past it
    if code:
        assert "\x1b[1;4" in text  # the rewrite's `_validated` marked in the code: bold, underlined


def test_no_color_keeps_the_layout_without_colour() -> None:
    text = _render(_answer(), tty=True, env={"NO_COLOR": "1"})
    assert not _COLOUR.search(text) and "\x1b[1mMoneyField" in text  # bold is not colour (no-color.org)
    plain = _ESCAPES.sub("", text)
    assert plain.splitlines()[0].startswith(" 1  MoneyField._validated  services/shop/shop/fields.py:90")


def test_an_answer_without_a_confident_match_says_so_and_marks_its_places_weak() -> None:
    payload = copy.deepcopy(_answer())
    payload["abstained"] = True
    text = answer_text(payload)
    lines = text.splitlines()
    assert lines[0] == "No confident match; the closest places:"
    places = [line for line in lines if re.match(r"^ ?\d+  ", line)]
    assert len(places) == 3 and all("weak: " in line for line in places)


def _read_all(fd: int, timeout: float = 120.0) -> bytes:
    out = b""
    while True:
        ready, _, _ = select.select([fd], [], [], timeout)
        if not ready:
            return out
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # the other end closed (Linux: EIO)
            return out
        if not chunk:
            return out
        out += chunk


def test_the_real_command_colours_a_terminal_and_not_a_pipe(tmp_path: Path) -> None:
    from haystack_integrations.components.code_alias.app.search import CodeSearch

    index = tmp_path / "index"
    CodeSearch(index, lexical=True).index(views_copy(tmp_path / "repo"))
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "components"), os.environ.get("PYTHONPATH", "")]),
        "TERM": "xterm-256color",
        "COLUMNS": "100",
        "CODE_ALIAS_NO_DAEMON": "1",
    }
    env.pop("NO_COLOR", None)
    command = [sys.executable, "-m", "haystack_integrations.components.code_alias.cli", "--index-dir", str(index)]
    command += ["ask", "where do we validate the email field", "--code", "4"]
    main, secondary = pty.openpty()
    process = subprocess.Popen(command, env=env, stdin=secondary, stdout=secondary, stderr=secondary)
    os.close(secondary)
    out = _read_all(main).decode("utf-8", errors="replace")
    process.wait(timeout=60)
    os.close(main)
    assert process.returncode == 0, out
    assert "\x1b[1mEmailField" in out and _COLOUR.search(out)
    assert " 36  " in out and "class" in out  # the snippet at the file's line
    piped = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120, check=True)
    assert "\x1b" not in piped.stdout and piped.stdout.startswith(" 1  EmailField")
    no_color = subprocess.run(command, env={**env, "NO_COLOR": "1"}, capture_output=True, text=True, timeout=120)
    assert "\x1b" not in no_color.stdout
