"""A short text to embed for a code chunk: less arithmetic per chunk than the whole code.

`summary_text` keeps what a question about the chunk is likely to share with it: the file path, the qualified
name, the definition's signature, its docstring (or leading comment), and the words of the identifiers the body
uses (`fetchUserById` and `fetch_user_by_id` both give `fetch user by id`), each word once. The whole chunk is
usually several hundred tokens; this is usually well under a hundred, and the model's cost grows with the
tokens it reads.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Mapping
from typing import Any

from ..core.identifiers import split_identifier

# Words that say nothing about what a chunk does (keywords of the languages the splitter reads, and a few
# ubiquitous names).
_STOP_WORDS = frozenset(
    {w.lower() for w in keyword.kwlist}
    | {
        "self", "cls", "none", "true", "false", "const", "let", "var", "function", "this", "new", "typeof",
        "instanceof", "export", "default", "extends", "implements", "interface", "type", "enum", "static",
        "public", "private", "protected", "readonly", "void", "null", "undefined", "string", "number", "boolean",
        "args", "kwargs", "str", "int", "bool", "dict", "list", "tuple", "set", "object", "any", "isinstance",
        "len", "super", "init", "t",
    }
)  # fmt: skip
_IDENTIFIER = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_PY_DOCSTRING = re.compile(r"(?s)[rRbBuU]?(\"\"\"|''')(.*?)\1")
_BLOCK_COMMENT = re.compile(r"(?s)/\*\*?(.*?)\*/")
_DEFINITION = re.compile(
    r"^\s*(?:export\s+)?(?:default\s+)?(?:async\s+)?(?:def|class|function\*?|interface|type|enum|const|let|var)\b"
)
_SIGNATURE_LINES = 6
_DOCSTRING_CHARS = 400


def signature(content: str) -> str:
    """
    The first definition's header, on one line: from its `def` / `class` / `function` line up to the line that
    opens its body (`:` or `{`), at most a few lines; "" when the chunk starts with no definition.
    """
    lines = content.splitlines()
    for index, line in enumerate(lines):
        if not _DEFINITION.match(line):
            continue
        header: list[str] = []
        for part in lines[index : index + _SIGNATURE_LINES]:
            header.append(part.strip())
            stripped = part.split("#", 1)[0].rstrip()
            if stripped.endswith((":", "{", "=>", ";")) or "{" in stripped:
                break
        return " ".join(header).rstrip("{").strip()
    return ""


def docstring(content: str) -> str:
    """The chunk's first docstring (Python) or block comment (JavaScript/TypeScript), whitespace collapsed."""
    found = _PY_DOCSTRING.search(content)
    text = found.group(2) if found else ""
    if not text:
        block = _BLOCK_COMMENT.search(content)
        text = re.sub(r"(?m)^\s*\*", " ", block.group(1)) if block else ""
    if not text:  # a leading run of line comments
        comments = []
        for line in content.splitlines():
            stripped = line.strip()
            if stripped.startswith(("#", "//")):
                comments.append(stripped.lstrip("#/ "))
            elif stripped and not stripped.startswith("@") and comments:
                break
        text = " ".join(comments)
    return " ".join(text.split())[:_DOCSTRING_CHARS]


def identifier_words(content: str) -> list[str]:
    """Each word of the identifiers in `content` once, in order of first use, without keywords."""
    seen: dict[str, None] = {}
    for name in _IDENTIFIER.findall(content):
        for word in split_identifier(name):
            if len(word) > 1 and word not in _STOP_WORDS and not word.isdigit():
                seen.setdefault(word, None)
    return list(seen)


def summary_text(content: str, meta: Mapping[str, Any]) -> str:
    """
    The short text embedded for a chunk: path, qualified name, signature, docstring, identifier words.

    :param content: The chunk's code.
    :param meta: The chunk's meta (`file_path`, `qualified_name` are used when present).
    :returns: One line per part, empty parts left out; the words last, so a length limit cuts them first.
    """
    parts = [
        str(meta.get("file_path") or ""),
        str(meta.get("qualified_name") or ""),
        signature(content),
        docstring(content),
        # The docstring is there already: the words come from the rest.
        " ".join(identifier_words(_BLOCK_COMMENT.sub(" ", _PY_DOCSTRING.sub(" ", content, count=1), count=1))),
    ]
    return "\n".join(part for part in parts if part)
