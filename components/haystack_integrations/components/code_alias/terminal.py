"""`code-alias ask`'s answer on a terminal (with `rich`): one line per symbol, names bold and paths coloured, the
snippet with `--code`, everything wrapped to the terminal's width.

On a terminal the names are bold, the paths cyan (links to the file at its line, for terminals that read OSC 8)
and the reasons dim; piped or redirected, or with `NO_COLOR` set (or `TERM=dumb`), the same text comes without any
escape code, one line per symbol however long. Paths are the repository's own (`--json` has the absolute ones).
An answer without a confident match says so first and marks its closest places as weak.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, TextIO

from rich.console import Console
from rich.style import Style
from rich.syntax import Syntax
from rich.text import Text

from .answer_view import (
    WEAK_RESULTS,
    MatchTerms,
    abstained,
    folded_text,
    group_symbols,
    line_matches,
    match_terms,
)
from .core.graph_text import answer_text as graph_answer_text
from .core.graph_text import usage_title
from .presentation import display_name, footer_parts, short_reason

#: Widest name and path columns kept aligned; a longer one pushes its own line only.
NAME_COLUMN = 44
PATH_COLUMN = 56
#: The width of a pipe: never wrapped (a line per symbol for grep and friends).
PIPE_WIDTH = 100_000
_LEXERS = {"tsx": "tsx", "vue": "html", "shell": "bash"}
_SYMBOL_MATCH = Style(bold=True, underline=True)
_WORD_MATCH = Style(underline=True)


def console_for(stream: TextIO, environ: dict[str, str] | None = None) -> Console:
    """
    A console writing to `stream`: colour and links on a terminal, plain text when piped or when `NO_COLOR` is set
    (rich reads `NO_COLOR`, `FORCE_COLOR`, `TERM` and `COLUMNS` itself).
    """
    env = os.environ if environ is None else environ
    try:
        terminal = stream.isatty()
    except (AttributeError, ValueError):
        terminal = False
    dumb = env.get("TERM", "") == "dumb"
    return Console(
        file=stream,
        force_terminal=terminal and not dumb,
        no_color=bool(env.get("NO_COLOR")) or dumb or not terminal,
        width=None if terminal else PIPE_WIDTH,
        highlight=False,
        markup=False,
        emoji=False,
        soft_wrap=False,
    )


def _location(symbol: dict[str, Any], *, with_repo: bool = False) -> str:
    """`path:line` in the repository (`repo:path:line` where the answer spans several repositories)."""
    place = f"{symbol.get('file_path')}:{symbol.get('start_line') or 1}"
    return f"{symbol['repo']}:{place}" if with_repo and symbol.get("repo") else place


def _link(symbol: dict[str, Any], console: Console) -> Style:
    """The path's style: cyan, and a link to the file at its line (on a terminal)."""
    absolute = symbol.get("absolute_path")
    if not absolute or console.no_color or not console.is_terminal:
        return Style(color="cyan")
    return Style(color="cyan", link=Path(absolute).as_uri() + f"#L{symbol.get('start_line') or 1}")


def _symbol_lines(
    symbols: list[dict[str, Any]], groups: list[list[int]], console: Console, *, weak: bool
) -> list[list[Text]]:
    """
    Per group of symbols, its line: place, name, `path:line`, kind and reason (the reason on a line of its own,
    indented and wrapped, when the whole does not fit the width).
    """
    width = console.width
    leads = [symbols[group[0]] for group in groups]
    several = len({s.get("repo") for s in symbols}) > 1
    name_width = min(NAME_COLUMN, max((len(display_name(s)) for s in leads), default=0))
    path_width = min(PATH_COLUMN, max((len(_location(s, with_repo=several)) for s in leads), default=0))
    if 4 + name_width + 2 + path_width > width:  # columns that cannot line up on this width are not padded
        name_width = path_width = 0
    style = "yellow" if weak else "dim"
    rows: list[list[Text]] = []
    for place, group in enumerate(groups, 1):
        symbol = symbols[group[0]]
        name, where = display_name(symbol), _location(symbol, with_repo=several)
        line = Text()
        line.append(f"{place:>2}  ", style="dim")
        line.append(name.ljust(name_width), style="" if weak else "bold")
        line.append("  ")
        line.append(where, style=_link(symbol, console))
        line.append(" " * max(0, path_width - len(where)) + "  ")
        reason = f"{symbol.get('kind') or 'symbol'} · {short_reason(symbol.get('evidence'))}"
        folded = folded_text(symbols, group)
        if folded:
            reason += f" · {folded}"
        if weak:
            reason = "weak: " + reason
        if len(line) + len(reason) <= width:
            line.append(reason, style=style)
            line.rstrip()
            rows.append([line])
        else:
            line.rstrip()
            wrapped = Text(reason, style=style).wrap(console, max(20, width - 4))
            rows.append([line, *(Text("    ").append_text(part) for part in wrapped)])
    return rows


def _code_lines(code: dict[str, Any], terms: MatchTerms, console: Console) -> list[Text]:
    """
    A snippet's rows, indented: line numbers (an elision row where the index leaves lines out), the code highlighted,
    the question's matches underlined (the rewrite's names also bold).
    """
    rows = [line for line in code.get("lines") or [] if isinstance(line, list) and len(line) >= 2]
    numbers = [int(line[0]) for line in rows]
    texts = [str(line[1]) for line in rows]
    colour = not console.no_color
    language = str(code.get("language") or "")
    source = "\n".join(texts)
    rendered: list[Text]
    if colour:
        syntax = Syntax(
            source, _LEXERS.get(language, language) or "text", theme="ansi_dark", background_color="default"
        )
        rendered = list(syntax.highlight(source).split("\n", allow_blank=True))
    else:
        rendered = [Text(text) for text in texts]
    digits = len(str(max(numbers, default=1)))
    out: list[Text] = []
    previous: int | None = None
    for number, text, row in zip(numbers, texts, rendered, strict=False):
        if previous is not None and number != previous + 1:
            left = number - previous - 1
            out.append(Text(f"    {'⋮':>{digits}}  ({left} line{'s' if left > 1 else ''})", style="dim"))
        line = Text()
        line.append(f"    {number:>{digits}}  ", style="dim")
        shown = row.copy()
        if colour:
            for start, end, kind in line_matches(text, terms):
                shown.stylize(_SYMBOL_MATCH if kind == "symbol" else _WORD_MATCH, start, end)
        line.append_text(shown)
        line.rstrip()
        out.append(line)
        previous = number
    if not code.get("complete", True):
        out.append(Text(f"    {'⋮':>{digits}}  (re-index to see the rest with its line numbers)", style="dim"))
    return out


def render_answer(payload: dict[str, Any], console: Console, *, code: bool = False) -> None:
    """
    Print an ask answer: the ranked symbols (repeats of a name in one file folded under the first), the snippet of
    each with `code`, then the reference graph's callers or impact of the symbol asked about when the answer has
    them (`usage`: a usage question), then a dim footer (the rewrite, the retrieval, who answered). Without a
    confident match it says so and shows only the closest places, marked weak.
    """
    symbols: list[dict[str, Any]] = list(payload.get("symbols") or [])
    weak = abstained(payload)
    groups = group_symbols(symbols)
    if weak:
        console.print(Text("No confident match; the closest places:", style="bold yellow"))
        groups = groups[:WEAK_RESULTS]
    used = (payload.get("rewrite") or {}).get("symbols") or []
    terms = match_terms(str(payload.get("question") or ""), used)
    for group, lines in zip(groups, _symbol_lines(symbols, groups, console, weak=weak), strict=True):
        for line in lines:
            console.print(line, overflow="fold", crop=False)
        snippet = symbols[group[0]].get("code") if code else None
        if snippet and snippet.get("lines"):
            for line in _code_lines(snippet, terms, console):
                console.print(line, no_wrap=True, overflow="ellipsis")
    if not symbols:
        console.print(Text("No definition answers this; try other words or a name from the code.", style="yellow"))
    usage = payload.get("usage")
    if usage:
        console.print()
        console.print(Text(usage_title(usage), style="bold"))
        for row in graph_answer_text(usage, usage["kind"]).splitlines():
            console.print(Text(row), overflow="fold", crop=False)
    footer = Text(" · ".join(footer_parts(payload)), style="dim")
    console.print(footer, overflow="fold")


def answer_text(payload: dict[str, Any], *, code: bool = False, width: int = PIPE_WIDTH) -> str:
    """The answer as plain text (what a pipe receives), for tests and callers without a stream."""
    console = Console(width=width, no_color=True, force_terminal=False, highlight=False, markup=False, emoji=False)
    with console.capture() as captured:
        render_answer(payload, console, code=code)
    return captured.get()
