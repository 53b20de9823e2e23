"""Cut a source file into retrieval chunks: one per definition, plus the module remainder.

A class chunk keeps its own lines and only the first line (signature) of each nested definition, so the
class reads as a summary of its members without repeating their bodies; methods are chunks of their own.
The module remainder is what no definition covers (imports, constants, top-level code), with each
top-level definition reduced to its signature line.
"""

from __future__ import annotations

from dataclasses import dataclass

from .model import SymbolDef

# Kinds that become chunks of their own; constants and variables stay in their parent's chunk.
CHUNK_KINDS = frozenset({"function", "method", "class", "interface", "struct", "enum", "trait", "type"})
# Beyond this a chunk is cut: embeddings read only the first few hundred tokens, and BM25 length
# normalisation punishes huge chunks anyway.
MAX_CHUNK_LINES = 400


@dataclass(frozen=True)
class Chunk:
    """One retrieval unit of a file."""

    content: str
    kind: str
    symbol: str | None
    qualified_name: str | None
    start_line: int
    end_line: int


def chunk_file(text: str, symbols: list[SymbolDef], *, max_lines: int = MAX_CHUNK_LINES) -> list[Chunk]:
    """
    Split a file's text into chunks along its definitions.

    :param text: The file's text.
    :param symbols: Its definitions (from `extract_symbols`).
    :param max_lines: Longest chunk; longer definitions keep their first `max_lines` lines.
    :returns: Chunks in file order, the module remainder first (when it has any code).
    """
    lines = text.splitlines()
    definitions = sorted(
        (s for s in symbols if s.kind in CHUNK_KINDS and s.start_line <= len(lines)),
        key=lambda s: (s.start_line, -s.end_line),
    )
    chunks: list[Chunk] = []
    remainder = _without_nested(lines, 1, len(lines), _direct_children(definitions, None))
    if any(line.strip() for line in remainder):
        chunks.append(Chunk("\n".join(remainder[:max_lines]), "module", None, None, 1, max(1, len(lines))))
    for definition in definitions:
        end = min(definition.end_line, len(lines))
        body = _without_nested(lines, definition.start_line, end, _direct_children(definitions, definition))
        chunks.append(
            Chunk(
                content="\n".join(body[:max_lines]),
                kind=definition.kind,
                symbol=definition.name,
                qualified_name=definition.qualified_name,
                start_line=definition.start_line,
                end_line=end,
            )
        )
    return chunks


def _direct_children(definitions: list[SymbolDef], parent: SymbolDef | None) -> list[SymbolDef]:
    """Definitions nested directly in `parent` (or top-level ones for None), by span containment."""
    inside = [
        d
        for d in definitions
        if d is not parent
        and (parent is None or (parent.start_line <= d.start_line and d.end_line <= parent.end_line))
        and not (parent is not None and d.start_line == parent.start_line and d.end_line == parent.end_line)
    ]
    children: list[SymbolDef] = []
    for definition in inside:
        if (
            children
            and children[-1].start_line <= definition.start_line
            and definition.end_line <= children[-1].end_line
        ):
            continue  # nested deeper: covered by the previous child
        children.append(definition)
    return children


def _without_nested(lines: list[str], start: int, end: int, children: list[SymbolDef]) -> list[str]:
    """Lines start..end (1-based, inclusive) with each child's body reduced to its first line."""
    kept: list[str] = []
    line = start
    for child in children:
        if child.start_line < start or child.end_line > end:
            continue
        kept.extend(lines[line - 1 : child.start_line - 1])
        kept.append(lines[child.start_line - 1])
        line = child.end_line + 1
    kept.extend(lines[line - 1 : end])
    return kept
