"""`chunk_file`: the linear child scan gives exactly the chunks of the original quadratic one."""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

import pytest

from haystack_integrations.components.code_alias.core.chunking import CHUNK_KINDS, chunk_file
from haystack_integrations.components.code_alias.core.model import SymbolDef
from haystack_integrations.components.code_alias.core.symbols import extract_symbols, language_for_path

# the reference: chunk_file as it was before the linear scan, kept once for the split-scaling benchmark
from haystack_integrations.components.code_alias.evaluation.split_scaling import (
    quadratic_chunk_file as reference_chunk_file,
)
from tests.support.repos import FIXTURES, ROOT, write_tree

PACKAGE = ROOT / "components" / "haystack_integrations" / "components" / "code_alias"




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
        # The reference predates doc comments moving into their definition's chunk (tested in test_symbols_jsts):
        # without a comment line no comment moves, and the comparison is of the child scan alone.
        symbols = [s.model_copy(update={"comment_line": None}) for s in extract_symbols(text, language, path.name)]
        for max_lines in (400, 5):
            # The reference cut a long chunk at max_lines; the first parts are exactly its chunks.
            first_parts = [c for c in chunk_file(text, symbols, max_lines=max_lines) if c.part == 0]
            assert first_parts == reference_chunk_file(text, symbols, max_lines=max_lines), path
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
    assert [c for c in chunks if c.part == 0] == reference_chunk_file(text, symbols)
    tail = [c for c in chunks if c.kind == "module" and c.part > 0]
    assert tail and "print(CONSTANT)" in tail[-1].content  # the remainder past 400 lines is no longer lost
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
        chunks = chunk_file(text, symbols, max_lines=max_lines)
        assert [c for c in chunks if c.part == 0] == reference_chunk_file(text, symbols, max_lines=max_lines)
        # The parts of each chunk, joined, are the whole uncut chunk (less trailing blank parts).
        whole = reference_chunk_file(text, symbols, max_lines=10_000)
        joined: list[str] = []
        for chunk in chunks:
            if chunk.part == 0:
                joined.append(chunk.content)
            else:
                joined[-1] += "\n" + chunk.content
        assert joined == [c.content for c in whole]


def test_nesting_is_reduced_to_signature_lines() -> None:
    text = "class A:\n    def b(self):\n        pass\n    def c(self):\n        pass\nx = 1\n"
    symbols = [_symbol("A", 1, 5, "class"), _symbol("b", 2, 3, "method"), _symbol("c", 4, 5, "method")]
    chunks = chunk_file(text, symbols)
    assert [c.symbol for c in chunks] == [None, "A", "b", "c"]
    assert chunks[0].content == "class A:\nx = 1"
    assert chunks[1].content == "class A:\n    def b(self):\n    def c(self):"


# ---- long chunks are cut into parts, not truncated -------------------------------------------------------------------
def test_a_long_function_is_cut_into_parts_and_its_end_stays_searchable() -> None:
    # The defect: a 525-line function kept only its first 400 lines, so its end was never indexed.
    body = [f"  const header{i} = res.headers['h{i}'];" for i in range(11)]
    text = "\n".join(
        ["import x from 'x';", "function httpAdapter(config) {", *body, "  return 'contentEncodingTail';", "}"]
    )
    symbols = extract_symbols(text, "javascript", "lib/http.js")
    chunks = [c for c in chunk_file(text, symbols, max_lines=5) if c.symbol == "httpAdapter"]
    assert [c.part for c in chunks] == [0, 1, 2]
    assert (chunks[0].start_line, chunks[0].end_line) == (2, 15)  # the first part shows the definition's span
    assert [(c.start_line, c.end_line) for c in chunks[1:]] == [(7, 11), (12, 15)]
    assert "contentEncodingTail" in chunks[-1].content
    assert "\n".join(c.content for c in chunks) == "\n".join(text.splitlines()[1:])  # every line once, in order


def test_parts_follow_the_kept_lines_of_a_reduced_body() -> None:
    # A nested function is reduced to its signature line; a part's line numbers are the original ones.
    text = "\n".join(
        [
            "def outer():",
            "    a = 1",
            "    def inner():",
            "        return 1",
            "        # more",
            "    b = 2",
            "    c = 3",
        ]
    )
    symbols = [_symbol("outer", 1, 7), _symbol("inner", 3, 5)]
    outer = [c for c in chunk_file(text, symbols, max_lines=2) if c.symbol == "outer"]
    assert [c.content.splitlines() for c in outer] == [
        ["def outer():", "    a = 1"],
        ["    def inner():", "    b = 2"],
        ["    c = 3"],
    ]
    assert [(c.start_line, c.end_line) for c in outer[1:]] == [(3, 6), (7, 7)]


def test_max_lines_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_lines must be >= 1"):
        chunk_file("x = 1\n", [], max_lines=0)


def test_a_file_of_too_many_definitions_is_indexed_as_text(tmp_path: Path) -> None:
    """A 1 MB file of one-line definitions made a dictionary entry and a chunk of each: 89 MB of index."""
    from haystack_integrations.components.code_alias.app.search import CodeSearch
    from haystack_integrations.components.code_alias.core.chunking import MAX_DEFINITIONS_PER_FILE
    from haystack_integrations.components.code_alias.indexing.dictionary_handle import DictionaryHandle
    from haystack_integrations.components.code_alias.paths import DICTIONARY_FILE

    count = MAX_DEFINITIONS_PER_FILE + 1
    repo = write_tree(
        tmp_path / "repo",
        {
            "pkg/generated.py": "".join(f"def f{i}():0\n" for i in range(count)),
            "pkg/retry.py": 'def retry_payment(charge):\n    """Retry a failed card charge."""\n    return charge()\n',
        },
    )
    search = CodeSearch(tmp_path / "index", lexical=True)
    stats = search.index(repo)
    [skip] = [s for s in stats["skipped"] if s["path"].endswith("pkg/generated.py")]
    assert (
        skip["reason"]
        == f"{count:,} definitions > limit 5,000 (generated code?): indexed as text, without its definitions"
    )
    dictionary = DictionaryHandle.for_path(search.index_dir / DICTIONARY_FILE).dictionary
    assert [s.name for s in dictionary.symbols] == ["retry_payment"]
    store = search.query_pipeline.get_component("bm25_retriever").document_store
    chunks = [d for d in store.filter_documents() if d.meta["file_path"] == "pkg/generated.py"]
    assert len(chunks) == -(-count // 400) and all(c.meta["symbol"] is None for c in chunks)  # 400-line windows
    assert search.ask("f4242", top_k=3).files[0]["file_path"] == "pkg/generated.py"  # its text is still found
    assert search.ask("retry payment", top_k=1).files[0]["file_path"] == "pkg/retry.py"
    again = search.index(repo)  # a refresh keeps it so, without a second parse in the splitter
    assert again["files_changed"] == 0 and [s.name for s in dictionary.symbols] == ["retry_payment"]
    os.utime(repo / "pkg/generated.py")  # touched, same content: the previous parse stands
    touched = search.index(repo)
    assert touched["dictionary"]["files_parsed"] == 0, touched["dictionary"]
    assert any(s["path"].endswith("pkg/generated.py") for s in touched["skipped"])
