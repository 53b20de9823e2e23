"""`chunk_file`: the linear child scan gives exactly the chunks of the original quadratic one."""

from __future__ import annotations

import importlib.util
import random
from pathlib import Path
from typing import Any

import pytest

from haystack_integrations.components.code_alias.core.chunking import CHUNK_KINDS, chunk_file
from haystack_integrations.components.code_alias.core.model import SymbolDef
from haystack_integrations.components.code_alias.core.symbols import extract_symbols, language_for_path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "components" / "haystack_integrations" / "components" / "code_alias"
FIXTURES = Path(__file__).parent / "fixtures"


# ---- the reference: chunk_file as it was before the linear scan, kept once in benchmarks/split_scaling.py ----------
def _load_reference() -> Any:
    spec = importlib.util.spec_from_file_location("split_scaling", ROOT / "benchmarks" / "split_scaling.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.quadratic_chunk_file


reference_chunk_file = _load_reference()


# ---- real files -----------------------------------------------------------------------------------------------------
def _real_files() -> list[Path]:
    files = sorted(PACKAGE.rglob("*.py")) + sorted(p for p in FIXTURES.rglob("*") if p.is_file())
    return [p for p in files if language_for_path(p.name)]


def test_same_chunks_as_the_reference_on_real_files() -> None:
    compared = 0
    for path in _real_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        language = language_for_path(path.name)
        assert language is not None
        symbols = extract_symbols(text, language, path.name)
        for max_lines in (400, 5):
            assert chunk_file(text, symbols, max_lines=max_lines) == reference_chunk_file(
                text, symbols, max_lines=max_lines
            ), path
        compared += len(symbols)
    assert compared > 500  # the comparison saw real nesting: classes, methods, closures


def _generated_python(functions: int, classes: int, methods: int) -> str:
    parts = ["import os", "CONSTANT = 1"]
    for c in range(classes):
        parts.append(f"class Holder{c}:")
        parts.append(f'    """Holder {c}."""')
        for m in range(methods):
            parts += [f"    def method_{m}(self):", f"        def inner_{m}():", f"            return {m}"]
            parts += [
                "        return inner_()",
                f"    class Nested{m}:",
                "        def deep(self):",
                "            return 0",
            ]
    parts += [f"def f{i}(): return {i}" for i in range(functions)]
    parts.append("print(CONSTANT)")
    return "\n".join(parts) + "\n"


def test_same_chunks_as_the_reference_on_a_generated_file() -> None:
    text = _generated_python(functions=600, classes=8, methods=12)
    symbols = extract_symbols(text, "python", "generated.py")
    assert len([s for s in symbols if s.kind in CHUNK_KINDS]) >= 600 + 8 * 12 * 3
    chunks = chunk_file(text, symbols)
    assert chunks == reference_chunk_file(text, symbols)
    assert chunks[0].kind == "module" and "CONSTANT = 1" in chunks[0].content
    holder = next(c for c in chunks if c.symbol == "Holder0")
    assert "def method_0(self):" in holder.content and "return inner_()" not in holder.content


def _symbol(name: str, start: int, end: int, kind: Any = "function") -> SymbolDef:
    return SymbolDef(
        name=name,
        kind=kind,
        qualified_name=f"m.{name}",
        file_path="m.py",
        language="python",
        start_line=start,
        end_line=end,
    )


@pytest.mark.parametrize("seed", range(40))
def test_same_chunks_as_the_reference_on_arbitrary_spans(seed: int) -> None:
    """Spans a parser never yields (crossing, duplicated, past the end of the file) still chunk identically."""
    rng = random.Random(seed)
    length = rng.randint(1, 60)
    text = "\n".join(f"line {i}" for i in range(1, length + 1))
    symbols = []
    for i in range(rng.randint(0, 30)):
        start = rng.randint(1, length + 2)
        end = start + rng.choice([0, 0, 1, 2, 5, 20, rng.randint(0, 80)])
        symbols.append(_symbol(f"s{i}", start, end, rng.choice(["function", "class", "method", "constant"])))
    if symbols and rng.random() < 0.5:
        symbols.append(symbols[0])  # the same definition twice
    for max_lines in (400, 3):
        assert chunk_file(text, symbols, max_lines=max_lines) == reference_chunk_file(
            text, symbols, max_lines=max_lines
        )


def test_nesting_is_reduced_to_signature_lines() -> None:
    text = "class A:\n    def b(self):\n        pass\n    def c(self):\n        pass\nx = 1\n"
    symbols = [_symbol("A", 1, 5, "class"), _symbol("b", 2, 3, "method"), _symbol("c", 4, 5, "method")]
    chunks = chunk_file(text, symbols)
    assert [c.symbol for c in chunks] == [None, "A", "b", "c"]
    assert chunks[0].content == "class A:\nx = 1"
    assert chunks[1].content == "class A:\n    def b(self):\n    def c(self):"
