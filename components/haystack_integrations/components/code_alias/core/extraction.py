"""Extraction state shared by the per-language extractors: definitions recorded while a tree is read, their spans,
leading comments and export status, turned into `SymbolDef` records once the whole file has been seen.

Framework-free. `symbols.py` drives it with its Python and JavaScript walkers, `tag_definitions.py` with the Go,
Rust and Java definitions that the tag queries find.
"""

from __future__ import annotations

import hashlib
import re

from tree_sitter import Node

from .model import SymbolDef, SymbolKind

MAX_DOC_CHARS = 500

UPPER_CASE_RE = re.compile(r"_*[A-Z][A-Z0-9_]*")
_COMMENT_PREFIX_RE = re.compile(r"^\s*(?:/\*+!?|\*+(?!/)|//+!?|#+)")
_COMMENT_SUFFIX_RE = re.compile(r"\*+/\s*$")
# Bytes that continue an identifier: ASCII word characters, `$`, and any UTF-8 multi-byte sequence.
_IDENT_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_$") | frozenset(
    range(0x80, 0x100)
)
_NAME_PLACEHOLDER = b"\x00"
COMMENT_TYPES = frozenset({"comment", "line_comment", "block_comment"})
# Siblings that belong to the definition that follows them (decorators and attributes).
_SPAN_EXTENDERS = frozenset({"decorator", "attribute_item"})


# ---- extraction state ---------------------------------------------------------------------------------------
class PendingDef:
    """A definition before its export status is final (that can depend on `__all__` or `export {}` later)."""

    __slots__ = (
        "aliases",
        "comment_row",
        "container",
        "doc",
        "end_byte",
        "end_row",
        "kind",
        "listed_only",
        "name",
        "own_exported",
        "parent",
        "reexport_from",
        "scopes",
        "signature",
        "start_byte",
        "start_row",
        "top_level",
    )

    def __init__(
        self,
        name: str,
        kind: SymbolKind,
        scopes: tuple[str, ...],
        parent: str | None,
        container: int | None,
        own_exported: bool,
        top_level: bool,
        listed_only: bool,
        signature: bool,
    ) -> None:
        self.name = name
        self.kind: SymbolKind = kind
        self.scopes = scopes
        self.parent = parent
        self.container = container
        self.own_exported = own_exported
        self.top_level = top_level
        self.listed_only = listed_only
        self.signature = signature
        self.start_row = 0
        self.end_row = 0
        self.start_byte = 0
        self.end_byte = 0
        self.doc = ""
        self.comment_row: int | None = None
        self.aliases: tuple[str, ...] = ()
        self.reexport_from: str | None = None


class Extractor:
    """Collects definitions for one file; the per-language walkers below drive it."""

    def __init__(self, source: bytes, language: str, file_path: str, module: str) -> None:
        self.source = source
        self.language = language
        self.file_path = file_path
        self.module = module
        self.defs: list[PendingDef] = []
        # Python `__all__` (None: the module has none) and whether every part of it was a literal.
        self.listed: set[str] | None = None
        self.listed_complete = True
        # JavaScript: local name -> the public names a renamed export gives it (`export { a as b }`).
        self.public_names: dict[str, list[str]] = {}
        # JavaScript: local name of an imported binding -> (its name in the module it comes from, that module's
        # specifier), so `import { a } from './x'; export { a as b }` reads as `export { a as b } from './x'`.
        self.imports: dict[str, tuple[str, str]] = {}
        # JavaScript: inside a `.d.ts` file, `declare global {}` or `declare module "x" {}` (everything public).
        self.ambient = False
        # JavaScript: how many function bodies deep the walk is (`_JS_MAX_FUNCTION_DEPTH`).
        self.function_depth = 0
        self._top_level: dict[str, int] = {}

    def top_level_index(self, name: str) -> int | None:
        """The index of the last module-level definition called `name` so far, if any."""
        return self._top_level.get(name)

    # -- recording ----------------------------------------------------------------------------------------
    def add(
        self,
        name: str,
        kind: SymbolKind,
        node: Node,
        *,
        scopes: tuple[str, ...] = (),
        parent: str | None = None,
        container: int | None = None,
        exported: bool = True,
        top_level: bool = False,
        doc: str = "",
        listed_only: bool = False,
        signature: bool = False,
        comment_anchor: Node | None = None,
    ) -> int:
        """
        Record a definition spanning `node` (plus decorators / attributes right above it).

        :param doc: A docstring; when empty, the leading comment block above the definition is used.
        :param top_level: Whether a module-level export list (`__all__`, `export {}`) can export it.
        :param listed_only: Keep it only if that export list names it (plain module-level variables).
        :param signature: A body-less overload or declaration, dropped when a full definition shares its name.
        :param comment_anchor: The statement whose leading comment documents `node` when `node` is only part of
            it (one declarator of `const a = 1, b = 2`); the span is then `node` alone.
        :returns: The definition's index, to pass as `container` for its members.
        """
        record = PendingDef(name, kind, scopes, parent, container, exported, top_level, listed_only, signature)
        if comment_anchor is None:
            start_node, comment, record.comment_row = self._leading(node)
        else:
            _, comment, record.comment_row = self._leading(comment_anchor)
            start_node = node
        record.start_row = start_node.start_point.row
        record.start_byte = start_node.start_byte
        record.end_byte = node.end_byte
        end = node.end_point
        # A node that swallows its trailing newline ends at column 0 of the next line.
        record.end_row = end.row - 1 if end.column == 0 and end.row > record.start_row else end.row
        record.doc = clip(doc) if doc else comment
        self.defs.append(record)
        if not scopes:
            self._top_level[name] = len(self.defs) - 1
        return len(self.defs) - 1

    def _leading(self, node: Node) -> tuple[Node, str, int | None]:
        """
        The first node of the definition's span (decorators / attributes), its leading comment block cleaned, and
        the block's first row (None without one).
        """
        start = node
        top_row = node.start_point.row
        comments: list[Node] = []
        sibling = node.prev_named_sibling
        while sibling is not None:
            kind = sibling.type
            if kind not in COMMENT_TYPES and kind not in _SPAN_EXTENDERS:
                break
            if end_row(sibling) < top_row - 1:
                sibling = None  # a blank line separates it: not this definition's
                break
            if kind in _SPAN_EXTENDERS:
                if comments:
                    break  # an attribute above the comment belongs to something else
                start = sibling
            else:
                raw = sibling.text or b""
                if raw.startswith((b"//!", b"/*!")):
                    sibling = None  # an inner doc comment documents the enclosing module
                    break
                comments.append(sibling)
            top_row = sibling.start_point.row
            sibling = sibling.prev_named_sibling
        if comments and sibling is not None and end_row(sibling) >= comments[-1].start_point.row:
            comments.pop()  # a trailing comment of the statement before (`x = 1  # note`)
        if not comments:
            return start, "", None
        text = clean_comment(b"\n".join(c.text or b"" for c in reversed(comments)))
        return start, text, comments[-1].start_point.row

    def text(self, node: Node | None) -> str:
        if node is None:
            return ""
        return self.source[node.start_byte : node.end_byte].decode("utf-8", "replace")

    # -- finishing -------------------------------------------------------------------------------------------
    def finish(self) -> list[SymbolDef]:
        exported = self._resolve_exports()
        keep = [True] * len(self.defs)
        seen_assignments: set[str] = set()
        full_names = {
            (d.scopes, d.name) for d in self.defs if not d.signature and d.kind in ("function", "method", "class")
        }
        for index, record in enumerate(self.defs):
            if record.listed_only and not self._is_listed(record.name):
                keep[index] = False
            elif record.signature and (record.scopes, record.name) in full_names:
                keep[index] = False  # an overload signature of a function defined in full
            elif record.kind in ("constant", "variable"):
                key = ".".join((*record.scopes, record.name))
                if key in seen_assignments:
                    keep[index] = False  # re-assigned (if/else branches): the first assignment defines it
                seen_assignments.add(key)
        order = sorted(
            (i for i in range(len(self.defs)) if keep[i]),
            key=lambda i: (self.defs[i].start_byte, -self.defs[i].end_byte, i),
        )
        for record in self.defs:
            if record.top_level and record.name in self.public_names:
                record.aliases = tuple(dict.fromkeys((*record.aliases, *self.public_names[record.name])))
        return [self._symbol(self.defs[i], exported[i]) for i in order]

    def _is_listed(self, name: str) -> bool:
        return self.listed is not None and name in self.listed

    def _resolve_exports(self) -> list[bool]:
        resolved: list[bool] = []
        python = self.language == "python"
        for record in self.defs:
            value = record.own_exported
            if record.top_level:
                if python and self.listed is not None:
                    value = record.name in self.listed or (not self.listed_complete and value)
                elif not python:
                    value = value or self._is_listed(record.name)
            if record.container is not None:
                value = value and resolved[record.container]
            resolved.append(value)
        return resolved

    def _symbol(self, record: PendingDef, exported: bool) -> SymbolDef:
        body = self.source[record.start_byte : record.end_byte]
        qualified = ".".join(part for part in (self.module, *record.scopes, record.name) if part)
        return SymbolDef(
            name=record.name,
            kind=record.kind,
            qualified_name=qualified,
            file_path=self.file_path,
            language=self.language,
            start_line=record.start_row + 1,
            end_line=max(record.end_row, record.start_row) + 1,
            exported=exported,
            docstring=record.doc,
            parent=record.parent,
            body_hash=body_hash(body, record.name),
            aliases=record.aliases,
            reexport_from=record.reexport_from,
            comment_line=None if record.comment_row is None else record.comment_row + 1,
        )


# ---- helpers ---------------------------------------------------------------------------------------------------
def end_row(node: Node) -> int:
    end = node.end_point
    return end.row - 1 if end.column == 0 and end.row > node.start_point.row else end.row


def clip(text: str) -> str:
    """Collapse whitespace and cut at a word boundary so the result has at most `MAX_DOC_CHARS` characters."""
    collapsed = " ".join(text.split())
    if len(collapsed) <= MAX_DOC_CHARS:
        return collapsed
    cut = collapsed[:MAX_DOC_CHARS]
    space = cut.rfind(" ")
    return cut[:space] if space > MAX_DOC_CHARS // 2 else cut


def clean_comment(raw: bytes) -> str:
    """Comment markers (`//`, `///`, `/* */`, `/** */`, leading `*`, `#`) stripped, whitespace collapsed."""
    lines = []
    for line in raw.decode("utf-8", "replace").splitlines():
        line = _COMMENT_SUFFIX_RE.sub("", _COMMENT_PREFIX_RE.sub("", line, count=1), count=1)
        lines.append(line)
    return clip(" ".join(lines))


def python_string(raw: str) -> str:
    """The contents of a Python string literal (prefix and quotes removed; escapes kept as written)."""
    body = raw.lstrip("rRbBuUfF")
    for quote in ('"""', "'''", '"', "'"):
        if body.startswith(quote):
            body = body[len(quote) :]
            return body[: -len(quote)] if body.endswith(quote) else body
    return body


def body_hash(body: bytes, name: str) -> str:
    """
    Hash of a definition's text with its own name masked and whitespace collapsed.

    A pure rename leaves it unchanged; any other edit (outside whitespace) changes it.

    :param body: The definition's source bytes.
    :param name: The definition's name; every whole-identifier occurrence of it is masked.
    :returns: The first 16 hex digits of the SHA-1.
    """
    masked = _mask_name(body, name.encode("utf-8", "surrogatepass"))
    return hashlib.sha1(b" ".join(masked.split()), usedforsecurity=False).hexdigest()[:16]


def _mask_name(body: bytes, name: bytes) -> bytes:
    # A split on the name and a boundary check per occurrence: much cheaper than a regex compiled per name.
    if not name or name not in body:
        return body
    pieces = body.split(name)
    out = [pieces[0]]
    previous_byte = pieces[0][-1] if pieces[0] else -1
    for index in range(1, len(pieces)):
        following = pieces[index]
        next_byte = following[0] if following else -1
        whole = previous_byte not in _IDENT_BYTES and next_byte not in _IDENT_BYTES
        out.append(_NAME_PLACEHOLDER if whole else name)
        out.append(following)
        previous_byte = following[-1] if following else name[-1]
    return b"".join(out)


def field_text(extractor: Extractor, node: Node, field: str) -> str:
    return extractor.text(node.child_by_field_name(field))
