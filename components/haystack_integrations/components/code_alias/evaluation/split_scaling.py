"""How splitting one file scales with its number of definitions (issue 12: the splitter was quadratic).

Generates Python files of N one-line functions (plus a class with N/10 methods, so nesting is exercised) and
times each per-file step of indexing: tree-sitter extraction, `chunk_file`, and the `CodeSplitter` component.
For N up to `--reference-max` it also times the old quadratic `chunk_file` and checks both give the same chunks:

    python benchmarks/split_scaling.py                  # 2k, 4k, 8k, 100k definitions
    python benchmarks/split_scaling.py --sizes 2000 4000 --reference-max 4000
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

from haystack import Document

from ..core.chunking import CHUNK_KINDS, Chunk, _without_nested, chunk_file
from ..core.model import SymbolDef
from ..core.symbols import extract_symbols
from ..indexing.splitter import CodeSplitter


def generated_file(definitions: int) -> str:
    """About `definitions` definitions: one-line functions, then a class holding a tenth of them as methods."""
    methods = definitions // 10
    lines = [f"def f{i}(): return {i}" for i in range(definitions - methods - 1)]
    lines.append("class Holder:")
    lines += [f"    def m{i}(self): return {i}" for i in range(methods)]
    return "\n".join(lines) + "\n"


def _quadratic_children(definitions: list[SymbolDef], parent: SymbolDef | None) -> list[SymbolDef]:
    """The child scan before issue 12: every definition looked at for every parent."""
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
            continue
        children.append(definition)
    return children


def quadratic_chunk_file(text: str, symbols: list[SymbolDef], max_lines: int = 400) -> list[Chunk]:
    """`chunk_file` before issue 12, for the comparison."""
    lines = text.splitlines()
    definitions = sorted(
        (s for s in symbols if s.kind in CHUNK_KINDS and s.start_line <= len(lines)),
        key=lambda s: (s.start_line, -s.end_line),
    )
    chunks: list[Chunk] = []
    remainder = _without_nested(lines, 1, len(lines), _quadratic_children(definitions, None))
    if any(line.strip() for line in remainder):
        chunks.append(Chunk("\n".join(remainder[:max_lines]), "module", None, None, 1, max(1, len(lines))))
    for d in definitions:
        end = min(d.end_line, len(lines))
        body = _without_nested(lines, d.start_line, end, _quadratic_children(definitions, d))
        chunks.append(Chunk("\n".join(body[:max_lines]), d.kind, d.name, d.qualified_name, d.start_line, end))
    return chunks


def _timed(function: Callable[..., Any], *args: Any) -> tuple[Any, float]:
    started = time.perf_counter()
    result = function(*args)
    return result, time.perf_counter() - started


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[2000, 4000, 8000, 100000])
    parser.add_argument("--reference-max", type=int, default=8000, help="largest N to time the quadratic version at")
    args = parser.parse_args(argv)
    header = ["definitions", "file KB", "extract s", "chunk_file s", "CodeSplitter s", "old chunk_file s"]
    widths = [11, 8, 10, 13, 15, 17]
    print(" ".join(f"{name:>{width}}" for name, width in zip(header, widths, strict=True)))
    for size in args.sizes:
        text = generated_file(size)
        symbols, extract_s = _timed(extract_symbols, text, "python", "generated.py")
        chunks, chunk_s = _timed(chunk_file, text, symbols)
        document = Document(content=text, meta={"file_path": "generated.py"})
        _, splitter_s = _timed(CodeSplitter().run, [document])
        old = "-"
        if size <= args.reference_max:
            reference, old_s = _timed(quadratic_chunk_file, text, symbols)
            if reference != chunks:
                raise SystemExit(f"{size}: the linear and the quadratic chunk_file disagree")
            old = f"{old_s:.3f}"
        row = [
            str(len(symbols)),
            str(len(text) // 1024),
            f"{extract_s:.3f}",
            f"{chunk_s:.3f}",
            f"{splitter_s:.3f}",
            old,
        ]
        print(" ".join(f"{value:>{width}}" for value, width in zip(row, widths, strict=True)))
