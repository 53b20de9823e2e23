"""A pasted question or issue report -> search text without the noise that no code contains.

A GitHub issue pasted as a question opens with its template: HTML comments with the template's instructions,
"- [ ] Would you like to work on a fix?", "_No response_" under every heading left empty, emoji headings, and
links whose payload is kilobytes of base64 (a vuejs `play.vuejs.org/#eNqVkk...` reproduction, a babel REPL
`?code_lz=...`). An embedding model reads only its first 256 word pieces, so that boilerplate can fill the
whole window before the first sentence about the bug. `clean_question_text` removes it and keeps the rest:

- URLs become ``host/last/readable/path/words`` (query strings, fragments, hashes and base64 payloads dropped;
  a GitHub ``blob/<sha>/src/diff/props.js#L109`` link keeps ``src/diff/props.js``); markdown images and
  ``<img src="http...">`` tags are dropped, a link's text is kept.
- HTML comments, ``_No response_`` lines, task-list template lines (``- [ ] ...``/``- [x] ...`` without code
  or identifiers) and headings whose section is left empty are dropped.
- Heading markers, ``**bold**`` markers and emoji are dropped (the heading's words stay).
- Whitespace is collapsed outside code.

Code is never touched: fenced blocks and inline code spans are kept byte for byte, and so are lines of prose,
error messages and identifiers. A plain one-line title comes back unchanged (apart from surrounding
whitespace). Framework-free; the embedder (`CodeTextEmbedder`) applies it to the text it embeds.
"""

from __future__ import annotations

import re
import unicodedata
from urllib.parse import unquote, urlsplit

__all__ = ["clean_question_text", "shorten_url"]

_FENCE = re.compile(r"^[ \t]*(```|~~~)")
_INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1")
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_MD_IMAGE = re.compile(r"!\[([^\]\n]*)\]\((\s*[^)\s]+)[^)\n]*\)")
_MD_LINK = re.compile(r"\[([^\]\n]+)\]\((\s*https?://[^)\s]+)[^)\n]*\)")
_IMG_TAG = re.compile(r"<img\b[^>\n]*\bsrc\s*=\s*[\"']https?://[^>\n]*>", re.IGNORECASE)
_URL = re.compile(r"<?\bhttps?://[^\s<>()\[\]`'\"]+>?")
_TASK = re.compile(r"^\s*[-*+]\s+\[[^\]\n]{0,3}\]\s*(.*)$")
_NO_RESPONSE = re.compile(r"^\s*_No response_\s*$", re.IGNORECASE)
_HEADING = re.compile(r"^\s{0,3}#{1,6}(?:\s+|$)(.*?)(?:\s+#+)?\s*$")
# Markdown bold as people type it: "**word**" between spaces or punctuation, never `__repr__` or `a**(-x)`.
_BOLD = re.compile(r"(?:^|(?<=[\s(\[]))\*\*(?=[^\s*])(.+?)(?<=[^\s*])\*\*(?=$|[\s.,:;!?)\]])")
# An identifier worth keeping a task-list line for: camelCase, snake_case, a dotted name or a call.
_IDENTIFIER = re.compile(r"\b(?:[a-z]+[A-Z]\w*|\w+_\w+|\w+\.\w+\(|\w+\(\))")
_HEX = re.compile(r"^[0-9a-fA-F]{7,}$")
_EMOJI_EXTRA = frozenset({"\ufe0f", "\ufe0e", "\u200d", "\u20e3"})


def _is_readable(segment: str) -> bool:
    """A path word a person would type: short, not a hash, not a base64 or percent-encoded payload."""
    if not segment or len(segment) > 40 or _HEX.match(segment):
        return False
    letters = sum(c.isalpha() for c in segment)
    if letters == 0:
        return False
    digits = sum(c.isdigit() for c in segment)
    if re.fullmatch(r"[0-9a-fA-F-]{16,}", segment):  # a UUID or a hash with dashes
        return False
    if re.search(r"[-_.@]", segment):
        return True
    # Ids and payloads mix letters and digits without separators (7xwu6c49, eNqVkktr20AQx7, c7f57db13af4).
    return not ((len(segment) >= 6 and digits * 10 >= len(segment) * 3) or (len(segment) > 12 and digits >= 3))


def shorten_url(url: str, *, words: int = 4) -> str:
    """
    Reduce a URL to its host and its last readable path words.

    :param url: An absolute http(s) URL.
    :param words: The most path words kept (the last ones, which name the file or the page).
    :returns: ``host`` or ``host/a/b``; the URL unchanged when it cannot be parsed.
    """
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    host = parts.hostname or ""
    if not host:
        return url
    segments = [unquote(s) for s in parts.path.split("/") if s]
    if host.endswith("github.com") and ("blob" in segments or "tree" in segments):
        marker = "blob" if "blob" in segments else "tree"
        segments = segments[segments.index(marker) + 2 :]  # the file's path, without the commit or branch
    kept = [s for s in segments if _is_readable(s)][-words:]
    return "/".join([host, *kept])


def _is_emoji(char: str) -> bool:
    """Pictographs, dingbats and their modifiers; other symbols (°, ©, box drawing) stay."""
    point = ord(char)
    if char in _EMOJI_EXTRA or 0x1F3FB <= point <= 0x1F3FF:
        return True
    emoji_block = (
        point >= 0x1F000 or 0x2300 <= point <= 0x23FF or 0x2600 <= point <= 0x27BF or 0x2B00 <= point <= 0x2BFF
    )
    return emoji_block and unicodedata.category(char) == "So"


def _strip_emoji(text: str) -> str:
    return "".join(c for c in text if not _is_emoji(c))


def _clean_prose(text: str) -> str:
    """Clean a stretch of text outside inline code."""
    text = _MD_IMAGE.sub(lambda m: "" if _is_generic_alt(m.group(1)) else m.group(1), text)
    text = _IMG_TAG.sub("", text)
    text = _MD_LINK.sub(lambda m: f"{m.group(1)} ({shorten_url(m.group(2).strip())})", text)
    text = _URL.sub(lambda m: shorten_url(m.group(0).strip("<>")), text)
    text = _BOLD.sub(r"\1", text)
    return _strip_emoji(text)


def _is_generic_alt(alt: str) -> bool:
    return (
        not alt.strip()
        or alt.strip().lower() in {"image", "screenshot", "img", "screen shot"}
        or bool(re.match(r"(?i)^(image|screenshot|screen shot|snipaste)[\w\s.:-]*$", alt.strip()))
    )


def _clean_line(line: str) -> str:
    """Clean one line outside fenced code; inline code spans are kept as written."""
    pieces: list[str] = []
    last = 0
    for match in _INLINE_CODE.finditer(line):
        pieces.append(_clean_prose(line[last : match.start()]))
        pieces.append(match.group(0))
        last = match.end()
    pieces.append(_clean_prose(line[last:]))
    return re.sub(r"[ \t]{2,}", " ", "".join(pieces)).strip()


def _is_template_task(line: str) -> bool:
    match = _TASK.match(line)
    if match is None:
        return False
    rest = match.group(1)
    return "`" not in rest and _IDENTIFIER.search(rest) is None


def _blocks(text: str) -> list[tuple[bool, list[str]]]:
    """Split into (is_code, lines) runs at fenced code blocks (an unclosed fence runs to the end)."""
    blocks: list[tuple[bool, list[str]]] = []
    prose: list[str] = []
    code: list[str] | None = None
    fence = ""
    for line in text.split("\n"):
        opened = _FENCE.match(line)
        if code is None:
            if opened:
                blocks.append((False, prose))
                prose, code, fence = [], [line], opened.group(1)
            else:
                prose.append(line)
        else:
            code.append(line)
            if line.strip().startswith(fence) and len(code) > 1 and line.strip().strip(fence[0]) == "":
                blocks.append((True, code))
                code = None
    if code is not None:
        blocks.append((True, code))
    blocks.append((False, prose))
    return blocks


_REMOVED = "\x01"  # a line the cleaning removed (template boilerplate), for the empty-section rule
_HEADING_MARK = "\x00"


def _clean_prose_lines(lines: list[str]) -> list[str]:
    """
    Clean prose lines into items: text lines, ``\\x00`` + heading words, and ``\\x01`` for each removed line.

    HTML comments are removed here, in prose only (an HTML or Vue code block keeps its comments).
    """
    joined = _HTML_COMMENT.sub(_REMOVED, "\n".join(lines))
    out: list[str] = []
    for line in joined.split("\n"):
        if _NO_RESPONSE.match(line) or _is_template_task(line):
            out.append(_REMOVED)
            continue
        had_text = bool(line.replace(_REMOVED, "").strip())
        heading = _HEADING.match(line.replace(_REMOVED, ""))
        if heading:
            out.append(_HEADING_MARK + _clean_line(heading.group(1)))
            continue
        cleaned = _clean_line(line.replace(_REMOVED, " "))
        if cleaned:
            out.append(cleaned)
        elif had_text or _REMOVED in line:  # only an image, a comment or emoji
            out.append(_REMOVED)
    return out


def _keep_heading(items: list[str], index: int) -> bool:
    """
    A heading stays unless its section was emptied by the cleaning (a template's unanswered question).

    A heading with nothing under it in the question itself stays: a run of ``# comment`` lines of unfenced
    code reads as headings, and none of them may go.
    """
    removed = False
    for item in items[index + 1 :]:
        if item.startswith(_HEADING_MARK):
            break
        if item != _REMOVED:
            return True
        removed = True
    return not removed


def clean_question_text(text: str) -> str:
    """
    Turn a pasted question or issue into search text without template boilerplate, URL payloads or emoji.

    :param text: The question as the user wrote or pasted it.
    :returns: The cleaned text: code blocks and inline code unchanged, prose lines cleaned and joined by newlines,
        headings of sections the cleaning emptied dropped. Empty input gives an empty string.
    """
    if not text or not text.strip():
        return ""
    items: list[str] = []  # prose lines, heading markers, removed-line markers and whole code blocks
    for is_code, lines in _blocks(text.replace("\r\n", "\n")):
        if is_code:
            items.append("\n".join(lines))
        else:
            items.extend(_clean_prose_lines(lines))
    kept: list[str] = []
    for index, item in enumerate(items):
        if item == _REMOVED:
            continue
        if item.startswith(_HEADING_MARK):
            words = item[1:].strip()
            if words and _keep_heading(items, index):
                kept.append(words)
            continue
        kept.append(item)
    return "\n".join(kept).strip()
