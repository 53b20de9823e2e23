"""Cut a source file into retrieval chunks: one per definition, plus the module remainder.

A class chunk keeps its own lines and only the first line (signature) of each nested definition, so the
class reads as a summary of its members without repeating their bodies; methods are chunks of their own.
The module remainder is what no definition covers (imports, constants, top-level code), with each
top-level definition reduced to its signature line.

A chunk longer than ``max_lines`` is cut into consecutive parts of at most ``max_lines`` lines, so the end of a
long function or module (axios's 525-line ``httpAdapter``, a ``describe`` block of 1,000 lines) stays
searchable. The first part keeps the definition's whole line span (it is where the symbol is shown); each later
part carries the lines it holds and ``part`` >= 1.

The comment block right above a definition (which the extractor leaves out of its span and records as its
`comment_line`: a JSDoc above `export function` or `export default class`, Rust's and Go's `///` / `//` doc comments
above attributes, a Javadoc above annotations, a `#` block above a Python decorator) belongs to the definition's
chunk: the chunk's text starts with the comment, and the enclosing class or module chunk keeps only the
definition's signature line. Otherwise a documented definition would leave its words in the module chunk, where the
symbol is not. The chunk's `start_line` stays the definition's own (where the symbol is shown: "path:line of the
definition", as the dictionary has it); `comment_lines` says how many lines of comment its text starts with, above
that line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .line_runs import encode_line_runs, runs_needed
from .model import SymbolDef

# Kinds that become chunks of their own; constants and variables stay in their parent's chunk.
CHUNK_KINDS = frozenset({"function", "method", "class", "interface", "struct", "enum", "trait", "type"})
# Beyond this a chunk is cut: embeddings read only the first few hundred tokens, and BM25 length
# normalisation punishes huge chunks anyway.
MAX_CHUNK_LINES = 400
#: A file defining more than this is generated code (a 1 MB file of 100,000 one-line definitions made 89 MB of
#: index): its definitions are neither dictionary entries nor chunks of their own; its text is chunked as a
#: module's (`MAX_CHUNK_LINES` lines a chunk), so it stays searchable. Hand-written modules define hundreds at
#: most; the bound leaves a wide margin for large ones (a `.d.ts` of a whole API, say).
MAX_DEFINITIONS_PER_FILE = 5_000
#: The end of the skip report's reason for such a file (the splitter reads it to skip a second parse).
TEXT_ONLY = "indexed as text, without its definitions"
# Bump when `chunk_file` cuts the same file and symbols differently: an index sync then re-splits every file whose
# stored chunks carry another version (2: a definition longer than max_lines is cut into parts, not truncated;
# 3: a JavaScript / TypeScript doc comment moves from the enclosing chunk into the definition's; 4: so does the
# comment above a definition in every language, as the extractor's `comment_line` says).
CHUNKER_VERSION = 4
# A declaration file's comments document an API implemented elsewhere: in the declarations' chunks their prose
# outranked the implementation a question is about (JS/TS set, BM25: file Acc@1 -3.0 on all four rows, immutable's
# `Collection.slice` of `immutable.d.ts` over `sliceFactory`), so they stay in the module chunk.
_DECLARATION_FILE = re.compile(r"\.d\.[cm]?ts$")


def too_many_definitions(count: int) -> str | None:
    """The skip report's reason when a file defines more than `MAX_DEFINITIONS_PER_FILE` symbols; else None."""
    if count <= MAX_DEFINITIONS_PER_FILE:
        return None
    return f"{count:,} definitions > limit {MAX_DEFINITIONS_PER_FILE:,} (generated code?): {TEXT_ONLY}"


@dataclass(frozen=True)
class Chunk:
    """One retrieval unit of a file."""

    content: str
    kind: str
    symbol: str | None
    qualified_name: str | None
    start_line: int
    end_line: int
    #: 0 for a chunk or its first part; 1, 2... for the later parts of a chunk longer than `max_lines`.
    part: int = 0
    #: Lines of doc comment the text starts with, above `start_line`: the text reads from `start_line - comment_lines`.
    comment_lines: int = 0
    #: The file's line number of each line of `content` as runs (`core.line_runs`), when they are not the one run
    #: from the text's first line to `end_line` (a class outline, a long chunk's first part); else empty. Not part
    #: of equality: it is derived from the span and the nesting the other fields already fix.
    line_runs: str = field(default="", compare=False)


def chunk_file(text: str, symbols: list[SymbolDef], *, max_lines: int = MAX_CHUNK_LINES) -> list[Chunk]:
    """
    Split a file's text into chunks along its definitions.

    :param text: The file's text.
    :param symbols: Its definitions (from `extract_symbols`).
    :param max_lines: Longest chunk; a longer definition (or module remainder) is cut into parts of
        `max_lines` lines, which follow the first one.
    :returns: Chunks in file order, the module remainder first (when it has any code).
    """
    if max_lines < 1:
        raise ValueError(f"max_lines must be >= 1, got {max_lines}")
    lines = text.splitlines()
    definitions = sorted(
        (s for s in symbols if s.kind in CHUNK_KINDS and s.start_line <= len(lines)),
        key=lambda s: (s.start_line, -s.end_line),
    )
    chunks: list[Chunk] = []
    children = _children_of_all(definitions)
    docs = _doc_comments(lines, definitions)
    numbers, remainder = _without_docs(lines, *_kept_lines(lines, 1, len(lines), children[-1]), children[-1], docs)
    if any(line.strip() for line in remainder):
        chunks.extend(_parts(numbers, remainder, max_lines, "module", None, None, 1, max(1, len(lines))))
    for index, definition in enumerate(definitions):
        end = min(definition.end_line, len(lines))
        numbers, body = _without_docs(
            lines, *_kept_lines(lines, definition.start_line, end, children[index]), children[index], docs
        )
        own_doc = docs.get(id(definition), range(0))
        if own_doc:
            numbers = [*own_doc, *numbers]
            body = [*(lines[n - 1] for n in own_doc), *body]
        chunks.extend(
            _parts(
                numbers,
                body,
                max_lines,
                definition.kind,
                definition.name,
                definition.qualified_name,
                definition.start_line,
                end,
                comment_lines=len(own_doc),
            )
        )
    return chunks


def _doc_comments(lines: list[str], definitions: list[SymbolDef]) -> dict[int, range]:
    """
    The lines of the comment block right above each definition that has one (`SymbolDef.comment_line`, as the
    extractor found it: no blank line between, not a trailing comment of the code before, not an inner `//!`
    comment), keyed by `id()`. Lines another definition already took (`export const a = () => 1, b = () => 2`
    documents both) stay with the first.
    """
    docs: dict[int, range] = {}
    claimed: set[int] = set()
    for definition in definitions:
        top = definition.comment_line
        if top is None or not 1 <= top < definition.start_line or _DECLARATION_FILE.search(definition.file_path):
            continue
        doc = range(top, min(definition.start_line, len(lines) + 1))
        if doc and not claimed.intersection(doc):
            docs[id(definition)] = doc
            claimed.update(doc)
    return docs


def _without_docs(
    lines: list[str], numbers: list[int], body: list[str], children: list[SymbolDef], docs: dict[int, range]
) -> tuple[list[int], list[str]]:
    """Kept lines less the doc comments of `children`, which go to the children's own chunks."""
    if not docs:
        return numbers, body
    moved = {n for child in children for n in docs.get(id(child), ())}
    if not moved:
        return numbers, body
    kept = [n for n in numbers if n not in moved]
    return kept, [lines[n - 1] for n in kept]


def _parts(
    numbers: list[int],
    body: list[str],
    max_lines: int,
    kind: str,
    symbol: str | None,
    qualified_name: str | None,
    start_line: int,
    end_line: int,
    *,
    comment_lines: int = 0,
) -> list[Chunk]:
    """One chunk, or its parts of `max_lines` lines when longer: the first with the whole span, then the rest."""
    text = "\n".join(body[:max_lines])
    kept = numbers[:max_lines]
    runs = encode_line_runs(kept) if runs_needed(kept, end_line) else ""
    parts = [
        Chunk(text, kind, symbol, qualified_name, start_line, end_line, comment_lines=comment_lines, line_runs=runs)
    ]
    for part, offset in enumerate(range(max_lines, len(body), max_lines), 1):
        window = body[offset : offset + max_lines]
        if not any(line.strip() for line in window):
            continue  # trailing blank lines: nothing to search
        kept = numbers[offset : offset + len(window)]
        first, last = kept[0], kept[-1]
        runs = encode_line_runs(kept) if runs_needed(kept, last) else ""
        parts.append(Chunk("\n".join(window), kind, symbol, qualified_name, first, last, part, line_runs=runs))
    return parts


def _children_of_all(definitions: list[SymbolDef]) -> list[list[SymbolDef]]:
    """
    The direct children of every definition (by span containment), and last the top-level definitions.

    `definitions` is sorted by (start line, -end line). A child of definition `i` is a later definition inside
    its span and not of the same span; a definition inside the previous child is a grandchild and is skipped.
    Once a child is taken, the scan jumps to the first later definition that ends after it (precomputed with a
    monotonic stack), so for spans that nest, as a syntax tree's do, every definition is visited once as a child
    and the whole pass is linear. Spans that cross (never from a parser) are still handled exactly, by stepping.

    :param definitions: Chunk-worthy definitions in (start line, -end line) order.
    :returns: One list per definition, in the same order, plus the top-level list at the end.
    """
    count = len(definitions)
    ends_later = [count] * count  # first later index whose end line is greater
    stack: list[int] = []
    for index, definition in enumerate(definitions):
        while stack and definitions[stack[-1]].end_line < definition.end_line:
            ends_later[stack.pop()] = index
        stack.append(index)
    result = [_direct_children(definitions, ends_later, index) for index in range(count)]
    result.append(_direct_children(definitions, ends_later, None))
    return result


def _direct_children(definitions: list[SymbolDef], ends_later: list[int], index: int | None) -> list[SymbolDef]:
    """Definitions nested directly in `definitions[index]` (or top-level ones for None), by span containment."""
    parent = None if index is None else definitions[index]
    children: list[SymbolDef] = []
    last: SymbolDef | None = None
    position = 0 if index is None else index + 1  # nothing earlier in the order lies inside the parent
    while position < len(definitions):
        definition = definitions[position]
        if parent is not None and definition.start_line > parent.end_line:
            break  # sorted by start line: nothing later starts inside the parent
        if last is not None and definition.end_line <= last.end_line:
            position += 1  # inside the previous child (it starts no earlier): a grandchild
            continue
        if parent is not None and (
            definition.end_line > parent.end_line
            or (definition.start_line == parent.start_line and definition.end_line == parent.end_line)
        ):
            position += 1  # crosses the parent's end, or is the parent's own span
            continue
        children.append(definition)
        last = definition
        position = ends_later[position]  # skip what lies inside this child
    return children


def _without_nested(lines: list[str], start: int, end: int, children: list[SymbolDef]) -> list[str]:
    """Lines start..end (1-based, inclusive) with each child's body reduced to its first line."""
    return _kept_lines(lines, start, end, children)[1]


def _kept_lines(lines: list[str], start: int, end: int, children: list[SymbolDef]) -> tuple[list[int], list[str]]:
    """`_without_nested`, with the 1-based line number of every kept line."""
    numbers: list[int] = []
    line = start
    for child in children:
        if child.start_line < start or child.end_line > end:
            continue
        numbers.extend(range(line, child.start_line))
        numbers.append(child.start_line)  # its signature line (even where a crossing span starts earlier)
        line = child.end_line + 1
    numbers.extend(range(line, end + 1))
    numbers = [n for n in numbers if 1 <= n <= len(lines)]
    return numbers, [lines[n - 1] for n in numbers]
