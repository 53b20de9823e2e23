"""What every view of an answer shows beyond the ranking: the code at real line numbers, a short snippet centred on
the lines that match the question, the matches to highlight, near-duplicates folded, completions in a useful
order, and whether the answer is a confident one.

The page, the terminal, the chat and MCP all take these from here, so they agree on them. Nothing here reorders the
ranking: `group_symbols` folds repeats under the first of them, in the order the ranking returned. Standard library
(and the framework-free core's identifier splitting) only: the terminal runs this on the CLI's fast path.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import quote

from .core.identifiers import STOP_WORDS, find_identifiers, split_identifier, text_words
from .core.line_runs import decode_line_runs
from .core.testfiles import is_test_file

#: Lines of the snippet each answer shows first.
SNIPPET_LINES = 8
#: Most lines "show more" reveals (the snippet's surroundings in the definition's chunk).
MORE_LINES = 60
#: Closest places an answer without a confident match still shows.
WEAK_RESULTS = 3

_CODE_TOKEN = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
# Words of the languages themselves: a question that says "class" or "function" does not light up every keyword.
_LANGUAGE_WORDS = frozenset(
    {w.lower() for w in keyword.kwlist}
    | {
        "function", "const", "let", "var", "export", "default", "extends", "implements", "interface", "type",
        "enum", "static", "public", "private", "protected", "readonly", "void", "null", "undefined", "this",
        "self", "new", "return", "async", "await", "func", "package", "struct", "impl", "pub", "fn", "mod",
    }
)  # fmt: skip


class _Chunk(Protocol):
    """A retrieved chunk (a Haystack `Document`): its text and meta."""

    content: str | None
    meta: dict[str, Any]


# ---- the code at real line numbers ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class CodeLines:
    """
    Lines of one definition as the index holds them, each with its line number in the file.

    :param numbers: The file's line number of each line, increasing; a jump is lines the chunk leaves out (the
        bodies of a class's methods), which every view shows as an elision row.
    :param texts: The lines.
    :param language: The chunk's language.
    :param complete: False when only the first line's number is certain (a class outline from an index built
        before chunks carried `line_runs`): the views show that line and say the rest needs a re-index.
    """

    numbers: tuple[int, ...]
    texts: tuple[str, ...]
    language: str = ""
    complete: bool = True


def text_start(meta: Mapping[str, Any]) -> int | None:
    """The line a chunk's text starts at: its `start_line`, less the doc comment lines above it (JS/TS)."""
    start, comment = meta.get("start_line"), meta.get("comment_lines")
    if not isinstance(start, int):
        return None
    return start - comment if isinstance(comment, int) and 0 < comment < start else start


def chunk_lines(content: str | None, meta: Mapping[str, Any]) -> CodeLines | None:
    """
    A chunk's lines with the file's line numbers (`line_runs` when the splitter wrote them; else the one run from
    its first line, when that run ends at `end_line`). None without text or a start line.
    """
    start = text_start(meta)
    if not content or start is None:
        return None
    texts = tuple(content.split("\n"))  # not splitlines(): the chunk's own lines, trailing empty ones included
    language = str(meta.get("language") or "")
    runs = meta.get("line_runs")
    if isinstance(runs, str) and runs:
        numbers = decode_line_runs(runs)
        if numbers is not None and len(numbers) == len(texts):
            return CodeLines(tuple(numbers), texts, language)
    end = meta.get("end_line")
    if not runs and (not isinstance(end, int) or start + len(texts) - 1 == end):
        return CodeLines(tuple(range(start, start + len(texts))), texts, language)
    # Lines left out somewhere, and no record of where: only the first line's number is certain.
    return CodeLines((start,), texts[:1], language, complete=False)


def definition_lines(documents: Iterable[_Chunk], symbol: Mapping[str, Any]) -> CodeLines | None:
    """
    The code of a ranked symbol from the retrieved chunks: every retrieved part of its definition (same file and
    qualified name, or the chunk holding its start line), merged by line number.
    """
    path, name, start = symbol.get("file_path"), symbol.get("qualified_name"), symbol.get("start_line")
    repo = symbol.get("repo")
    found: dict[int, str] = {}
    language = ""
    complete = True
    holding: CodeLines | None = None
    for document in documents:
        meta = document.meta
        if meta.get("file_path") != path or (repo is not None and meta.get("repo") != repo):
            continue  # another file, or the same path in another repository of the index
        lines = chunk_lines(document.content, meta)
        if lines is None:
            continue
        if meta.get("qualified_name") == name and name is not None:
            found.update(zip(lines.numbers, lines.texts, strict=True))
            language = language or lines.language
            complete = complete and lines.complete
        elif holding is None and isinstance(start, int) and lines.numbers[0] <= start <= lines.numbers[-1]:
            holding = lines
    if found:
        numbers = tuple(sorted(found))
        return CodeLines(numbers, tuple(found[n] for n in numbers), language, complete)
    if holding is not None and isinstance(start, int):  # e.g. a constant, shown inside its module's chunk
        keep = [i for i, n in enumerate(holding.numbers) if n >= start]
        return CodeLines(
            tuple(holding.numbers[i] for i in keep), tuple(holding.texts[i] for i in keep), holding.language
        )
    return None


# ---- what to highlight ----------------------------------------------------------------------------------------------
def _word_key(word: str) -> str:
    """A word as matching compares it: lower-case, a plural's `s` dropped (`payments` finds `payment`)."""
    word = word.lower()
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


@dataclass(frozen=True)
class MatchTerms:
    """
    What to highlight in an answer's code: identifiers written whole (the rewrite's symbols, names typed in the
    question) and the question's content words, matched against the words of every identifier.
    """

    symbols: frozenset[str] = frozenset()
    words: frozenset[str] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.symbols or self.words)

    def to_dict(self) -> dict[str, list[str]]:
        return {"symbols": sorted(self.symbols), "words": sorted(self.words)}


def match_terms(question: str, symbols: Sequence[str] = ()) -> MatchTerms:
    """The terms of a question and its rewrite's symbols (their last dotted part, as code writes them)."""
    names = {name.rsplit(".", 1)[-1] for name in symbols if name}
    names.update(token for token in find_identifiers(question) if len(split_identifier(token)) > 1)
    words = {
        _word_key(word)
        for word in text_words(question)
        if len(word) > 1 and not word.isdigit() and word not in _LANGUAGE_WORDS
    }
    return MatchTerms(frozenset(name for name in names if name), frozenset(words - STOP_WORDS))


def line_matches(text: str, terms: MatchTerms) -> list[tuple[int, int, str]]:
    """
    Where `terms` occur in one line of code: `(start, end, kind)` spans, kind "symbol" for a whole identifier of
    the rewrite or the question, "word" for an identifier holding one of the question's words.
    """
    if not terms:
        return []
    spans: list[tuple[int, int, str]] = []
    for match in _CODE_TOKEN.finditer(text):
        token = match.group(0)
        if token in terms.symbols:
            spans.append((match.start(), match.end(), "symbol"))
        elif (
            terms.words
            and token.lower() not in _LANGUAGE_WORDS
            and any(_word_key(word) in terms.words for word in split_identifier(token))
        ):
            spans.append((match.start(), match.end(), "word"))
    return spans


def _line_score(text: str, terms: MatchTerms) -> float:
    spans = line_matches(text, terms)
    return sum(3.0 if kind == "symbol" else 1.0 for *_, kind in spans) + len({text[s:e].lower() for s, e, _ in spans})


# ---- the snippet ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Snippet:
    """
    The lines one answer shows of a definition: `numbers`/`texts` (at most `MORE_LINES` rows around the snippet),
    of which rows `first`..`last` (inclusive) are the snippet shown before "show more".
    """

    numbers: tuple[int, ...]
    texts: tuple[str, ...]
    first: int
    last: int
    language: str
    complete: bool

    def shown(self) -> tuple[tuple[int, str], ...]:
        """The snippet's (line number, text) rows."""
        rows = slice(self.first, self.last + 1)
        return tuple(zip(self.numbers[rows], self.texts[rows], strict=True))

    def to_dict(self, terms: MatchTerms | None = None, *, more: bool = True) -> dict[str, Any]:
        """
        JSON: `language`, `lines` ([number, text], or [number, text, spans] with `terms`), `window` (the snippet's
        first and last row), `complete`. Without `more`, only the snippet's rows (and `window` covers them all).
        """
        rows = range(len(self.numbers)) if more else range(self.first, self.last + 1)
        lines: list[list[Any]] = []
        for row in rows:
            line: list[Any] = [self.numbers[row], self.texts[row]]
            if terms is not None:
                line.append([list(span) for span in line_matches(self.texts[row], terms)])
            lines.append(line)
        window = [self.first, self.last] if more else [0, self.last - self.first]
        return {"language": self.language, "lines": lines, "window": window, "complete": self.complete}


def snippet(
    code: CodeLines, terms: MatchTerms, *, lines: int = SNIPPET_LINES, more: int = MORE_LINES
) -> Snippet | None:
    """
    The `lines` rows of `code` that match `terms` best, centred on their matching rows (the first rows, the
    signature, when nothing matches), within at most `more` rows around them that "show more" reveals.
    """
    count = len(code.numbers)
    if count == 0 or lines <= 0:
        return None
    size = min(lines, count)
    scores = [_line_score(text, terms) for text in code.texts]
    best_start, best = 0, sum(scores[:size])
    running = best
    for start in range(1, count - size + 1):
        running += scores[start + size - 1] - scores[start - 1]
        if running > best:
            best_start, best = start, running
    if best > 0:  # centre the window on its matching rows, within the code
        matched = [row for row in range(best_start, best_start + size) if scores[row] > 0]
        centre = (matched[0] + matched[-1]) // 2
        best_start = max(0, min(count - size, centre - size // 2))
    low = max(0, min(best_start - (more - size) // 2, count - more))
    high = min(count, max(low + more, best_start + size))
    return Snippet(
        numbers=code.numbers[low:high],
        texts=code.texts[low:high],
        first=best_start - low,
        last=best_start - low + size - 1,
        language=code.language,
        complete=code.complete,
    )


def attach_code(
    symbols: list[dict[str, Any]],
    documents: Iterable[_Chunk],
    terms: MatchTerms,
    *,
    lines: int = SNIPPET_LINES,
    more: bool = False,
    spans: bool = False,
) -> None:
    """
    Give each symbol its `code` (`Snippet.to_dict`), in place: the `lines` best-matching rows of its definition
    (with the rows around them when `more`, and highlight spans when `spans`); None when no retrieved chunk holds it.
    """
    chunks = list(documents)
    for symbol in symbols:
        code = definition_lines(chunks, symbol)
        shown = snippet(code, terms, lines=lines) if code is not None else None
        symbol["code"] = None if shown is None else shown.to_dict(terms if spans else None, more=more)


# ---- repeats folded -------------------------------------------------------------------------------------------------
def group_symbols(symbols: Sequence[Mapping[str, Any]]) -> list[list[int]]:
    """
    The ranked symbols as groups of positions: definitions of the same name in the same file (five `_validated`
    methods of `fields.py`) fold under the first of them. Groups keep the ranking's order of their first member;
    nothing moves across groups.
    """
    groups: list[list[int]] = []
    by_key: dict[tuple[Any, Any, Any], list[int]] = {}
    for position, symbol in enumerate(symbols):
        name = symbol.get("symbol") or str(symbol.get("qualified_name") or "").rsplit(".", 1)[-1]
        key = (symbol.get("repo"), symbol.get("file_path"), name)
        if name and key in by_key:
            by_key[key].append(position)
            continue
        group = [position]
        by_key[key] = group
        groups.append(group)
    return groups


def folded_text(symbols: Sequence[Mapping[str, Any]], group: Sequence[int]) -> str:
    """ "+4 more in fields.py" for a group of more than one definition (empty otherwise)."""
    if len(group) < 2:
        return ""
    path = str(symbols[group[0]].get("file_path") or "")
    return f"+{len(group) - 1} more in {path.rsplit('/', 1)[-1]}"


# ---- links to the code ---------------------------------------------------------------------------------------------
#: Editor link templates by name: `{abs}` is the file's absolute path, `{path}` its path in the repository, `{line}`
#: the line, `{repo}` the repository's name. A team server may set a web template of its forge instead
#: (`CODE_ALIAS_LINK_TEMPLATE=https://git.example/acme/pay/blob/main/{path}#L{line}`); the page lets each person
#: choose their own and map the server's folder to their checkout.
LINK_PRESETS = {
    "vscode": "vscode://file{abs}:{line}",
    "jetbrains": "idea://open?file={abs}&line={line}",
    "file": "file://{abs}",
}
#: The schemes a link template may use (a `javascript:` or `data:` link is never made).
LINK_SCHEMES = ("http", "https", "vscode", "vscode-insiders", "idea", "jetbrains", "file")


def check_link_template(template: str) -> str:
    """
    A link template (a `LINK_PRESETS` name or a template naming `{path}` or `{abs}`), as its template.

    :raises ValueError: Another scheme than `LINK_SCHEMES`, or no place for the file.
    """
    chosen = LINK_PRESETS.get(template.strip(), template.strip())
    scheme = chosen.split(":", 1)[0].lower()
    if scheme not in LINK_SCHEMES or ":" not in chosen:
        raise ValueError(f"a link template must start with one of {', '.join(s + ':' for s in LINK_SCHEMES)}")
    if "{path}" not in chosen and "{abs}" not in chosen:
        raise ValueError("a link template must place the file: {path} (in the repository) or {abs} (absolute)")
    return chosen


def code_link(template: str, *, path: str, line: int | None, root: str | None, repo: str | None = None) -> str | None:
    """
    The link of `template` to `path` at `line` (each path segment percent-encoded); None when it needs the
    absolute path and no root is known.
    """
    absolute = f"{root.rstrip('/')}/{path}" if root else None
    if "{abs}" in template and absolute is None:
        return None
    return (
        template.replace("{abs}", quote(absolute or "", safe="/"))
        .replace("{path}", quote(path, safe="/"))
        .replace("{line}", str(line or 1))
        .replace("{repo}", quote(repo or "", safe="/"))
    )


# ---- confidence ---------------------------------------------------------------------------------------------------
def answer_confidence(answer: Any) -> tuple[float | None, bool]:
    """
    `(confidence, abstained)` of an answer (`AskResult`).

    The ranking stage (`ranking.CodeRanker`) gives every answer a calibrated `confidence` and `abstained`. An
    answer object without them (one made by other code) abstains when the keyword search over the question as
    written (`bm25_documents`) found nothing. This is the one place that decides it for every view.
    """
    abstained = getattr(answer, "abstained", None)
    if isinstance(abstained, bool):
        confidence = getattr(answer, "confidence", None)
        return (float(confidence) if isinstance(confidence, (int, float)) else None), abstained
    found = getattr(answer, "bm25_documents", None)
    return None, found is not None and not found  # an answer without a keyword search's list: not judged


def mark_confidence(payload: dict[str, Any], answer: Any) -> dict[str, Any]:
    """`payload` (an answer's JSON) with `confidence` and `abstained`, unless the answer's own JSON has them."""
    if not isinstance(payload.get("abstained"), bool):
        payload["confidence"], payload["abstained"] = answer_confidence(answer)
    return payload


def abstained(payload: Mapping[str, Any]) -> bool:
    """Whether an answer's JSON says it found no confident match (an older server's answer never does)."""
    return payload.get("abstained") is True


# ---- completions ----------------------------------------------------------------------------------------------------
def completion_group(name: str, symbol_kind: str | None, files: Sequence[str]) -> int:
    """
    Where a completion goes: 0 public names (and packages), 1 constants (`ALL_CAPS`, or the kind says so), 2 private
    names (`_x`), 3 names defined only in tests. Within a group the dictionary's own order stays.
    """
    last = name.rsplit(".", 1)[-1]
    if (files and all(is_test_file(path) for path in files)) or last.lower().startswith("test"):
        return 3
    if last.startswith("_") and not (last.startswith("__") and last.endswith("__")):
        return 2
    if symbol_kind == "constant" or (last.isupper() and any(c.isalpha() for c in last)):
        return 1
    return 0


def order_completions(completions: list[dict[str, Any]], prefix: str = "") -> list[dict[str, Any]]:
    """
    Completions that start with `prefix` before fuzzy ones, and within each, public names first, then constants,
    private names and tests (a stable sort: the dictionary's order stays within a group).
    """
    typed = prefix.strip().lower()

    def key(item: dict[str, Any]) -> tuple[int, int]:
        name = str(item.get("name") or "")
        tier = 0 if not typed or name.lower().lstrip("_").startswith(typed.lstrip("_")) else 1
        files = [str(path) for path in item.get("files") or []]
        return tier, completion_group(name, item.get("symbol_kind"), files)

    return sorted(completions, key=key)
