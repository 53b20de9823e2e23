"""What every view of an answer shows beyond the ranking (`answer_view`): real line numbers, snippets centred on the
question's matches, repeats folded in the ranking's order, completions in a useful order, links, and abstention."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from haystack import Document

from haystack_integrations.components.code_alias.answer_view import (
    CodeLines,
    answer_confidence,
    check_link_template,
    chunk_lines,
    code_link,
    definition_lines,
    folded_text,
    group_symbols,
    line_matches,
    mark_confidence,
    match_terms,
    order_completions,
    snippet,
)
from haystack_integrations.components.code_alias.core.chunking import chunk_file
from haystack_integrations.components.code_alias.core.line_runs import decode_line_runs, encode_line_runs
from haystack_integrations.components.code_alias.core.symbols import extract_symbols, language_for_path
from haystack_integrations.components.code_alias.indexing.splitter import CodeSplitter
from tests.support.repos import FIXTURES, ROOT
from tests.support.views_repo import FIELDS

PACKAGE = ROOT / "components" / "haystack_integrations"


def test_line_runs_round_trip() -> None:
    numbers = [3, 4, 5, 9, 12, 13]
    assert encode_line_runs(numbers) == "3-5,9,12-13"
    assert decode_line_runs("3-5,9,12-13") == numbers
    for damaged in ("", "3-", "5-3", "a", "4,3", "1-2,2"):
        assert decode_line_runs(damaged) is None, damaged


def _all_chunks() -> list[tuple[str, Document]]:
    files = sorted(PACKAGE.rglob("*.py")) + sorted(p for p in FIXTURES.rglob("*") if p.is_file())
    documents = [
        Document(content=path.read_text(encoding="utf-8", errors="replace"), meta={"file_path": path.as_posix()})
        for path in files
        if language_for_path(path.name)
    ]
    chunks = CodeSplitter(max_chunk_lines=40).run(documents=documents)["documents"]
    texts = {d.meta["file_path"]: d.content for d in documents}
    return [(texts[chunk.meta["file_path"]], chunk) for chunk in chunks]


def test_every_chunk_line_is_shown_at_its_line_in_the_file() -> None:
    """The splitter's chunks of this package and the fixtures, class outlines and long chunks' parts included."""
    outlines = 0
    for text, chunk in _all_chunks():
        lines = text.splitlines()
        code = chunk_lines(chunk.content, chunk.meta)
        assert code is not None and code.complete, chunk.meta
        assert len(code.numbers) == len(code.texts)
        for number, line in zip(code.numbers, code.texts, strict=True):
            assert lines[number - 1] == line, (chunk.meta["file_path"], number)
        outlines += list(code.numbers) != list(range(code.numbers[0], code.numbers[-1] + 1))
    assert outlines > 100  # the check saw lines that jump (outlines), not only consecutive ones


def test_an_outline_from_an_older_index_shows_only_what_is_certain() -> None:
    # A class chunk written before `line_runs`: five lines of text for a 12-line span.
    meta = {"file_path": "f.py", "start_line": 10, "end_line": 21, "language": "python"}
    code = chunk_lines("class A:\n    x = 1\n    def a(self):\n    def b(self):\n    y = 2", meta)
    assert code == CodeLines((10,), ("class A:",), "python", complete=False)
    # A function of one run needs no runs: its numbers follow from its start.
    whole = chunk_lines("def f():\n    return 1\n", {**meta, "end_line": 12})
    assert whole is not None and whole.numbers == (10, 11, 12) and whole.complete


def test_the_fixture_class_outline_is_numbered_as_the_file() -> None:
    symbols = extract_symbols(FIELDS, "python", "fields.py")
    field = next(c for c in chunk_file(FIELDS, symbols) if c.qualified_name == "fields.Field")
    code = chunk_lines(
        field.content, {"start_line": field.start_line, "end_line": field.end_line, "line_runs": field.line_runs}
    )
    assert code is not None
    lines = FIELDS.splitlines()
    assert [lines[n - 1] for n in code.numbers] == list(code.texts)
    assert "    @property" in code.texts and code.numbers[code.texts.index("    @property")] == 17


def test_matches_are_the_rewrites_names_and_the_questions_words() -> None:
    terms = match_terms("where do we validate email addresses?", ["EmailField", "shop.fields.Field"])
    assert terms.symbols == {"EmailField", "Field"} and {"validate", "email", "addresse"} <= terms.words
    line = "class EmailField(Field):  # validates an email"
    spans = [(line[s:e], kind) for s, e, kind in line_matches(line, terms)]
    assert spans == [("EmailField", "symbol"), ("Field", "symbol"), ("validates", "word"), ("email", "word")]
    # A question that says "class" does not light up the keyword.
    assert line_matches("class Foo:", match_terms("which class holds the fields?")) == []


def test_the_snippet_is_centred_on_the_matching_lines() -> None:
    texts = tuple(f"line {n}" for n in range(1, 31))
    texts = (*texts[:19], "retry_with_backoff(call)", *texts[20:])
    code = CodeLines(tuple(range(101, 131)), texts, "python")
    shown = snippet(code, match_terms("retry with backoff"), lines=6, more=12)
    assert shown is not None
    rows = shown.shown()
    assert len(rows) == 6 and (120, "retry_with_backoff(call)") in rows
    assert rows[0][0] <= 118 and rows[-1][0] >= 121  # the match sits in the middle, not at an edge
    assert len(shown.numbers) == 12 and shown.numbers[0] <= rows[0][0]  # "show more" surrounds it
    # Nothing matches: the first lines (the signature).
    assert snippet(code, match_terms("nothing here"), lines=4).shown()[0] == (101, "line 1")  # type: ignore[union-attr]


def test_definition_lines_merges_the_definitions_parts() -> None:
    documents = [
        Document(content="a\nb", meta={"file_path": "x.py", "qualified_name": "x.f", "start_line": 5, "end_line": 6}),
        Document(content="z", meta={"file_path": "x.py", "qualified_name": "x.g", "start_line": 9, "end_line": 9}),
        Document(content="c\nd", meta={"file_path": "x.py", "qualified_name": "x.f", "start_line": 7, "end_line": 8}),
    ]
    code = definition_lines(documents, {"file_path": "x.py", "qualified_name": "x.f", "start_line": 5})
    assert code is not None and code.numbers == (5, 6, 7, 8) and code.texts == ("a", "b", "c", "d")


def test_repeats_fold_under_the_first_in_the_rankings_order() -> None:
    symbols: list[dict[str, Any]] = [
        {"symbol": "_validated", "file_path": "fields.py"},
        {"symbol": "clean", "file_path": "fields.py"},
        {"symbol": "_validated", "file_path": "fields.py"},
        {"symbol": "_validated", "file_path": "other.py"},
        {"symbol": "_validated", "file_path": "fields.py"},
    ]
    groups = group_symbols(symbols)
    assert groups == [[0, 2, 4], [1], [3]]
    assert [g[0] for g in groups] == sorted(g[0] for g in groups)  # nothing moves ahead of its place
    assert folded_text(symbols, groups[0]) == "+2 more in fields.py" and folded_text(symbols, groups[1]) == ""


def test_completions_put_public_names_before_constants_private_names_and_tests() -> None:
    completions = [
        {"name": "VALIDATES", "symbol_kind": "constant", "files": ["a.py"]},
        {"name": "test_validate", "symbol_kind": "function", "files": ["tests/test_a.py"]},
        {"name": "_validate_one", "symbol_kind": "function", "files": ["a.py"]},
        {"name": "validate", "symbol_kind": "function", "files": ["a.py"]},
        {"name": "Validator", "symbol_kind": "class", "files": ["a.py"]},
        {"name": "unvalidated", "symbol_kind": "function", "files": ["a.py"]},  # a fuzzy match of "valid"
    ]
    names = [c["name"] for c in order_completions(completions, "valid")]
    # What starts with the prefix first (a leading underscore aside), then fuzzy matches; each part by group.
    assert names == ["validate", "Validator", "VALIDATES", "_validate_one", "unvalidated", "test_validate"]


def test_links_follow_the_template_and_refuse_other_schemes() -> None:
    vscode = check_link_template("vscode")
    assert code_link(vscode, path="a b/c.py", line=7, root="/src/repo") == "vscode://file/src/repo/a%20b/c.py:7"
    web = check_link_template("https://git.example/acme/pay/blob/main/{path}#L{line}")
    assert code_link(web, path="src/x.py", line=3, root=None) == "https://git.example/acme/pay/blob/main/src/x.py#L3"
    assert code_link(vscode, path="x.py", line=1, root=None) is None  # no folder known: no absolute link
    for bad in ("javascript:alert(1)//{path}", "https://git.example/no-place", "data:text/html,{path}"):
        with pytest.raises(ValueError):
            check_link_template(bad)


def test_an_answer_abstains_when_no_word_of_the_question_is_in_the_code() -> None:
    found = SimpleNamespace(bm25_documents=[Document(content="x")])
    assert answer_confidence(found) == (None, False)
    assert answer_confidence(SimpleNamespace(bm25_documents=[])) == (None, True)
    assert answer_confidence(SimpleNamespace()) == (None, False)  # no keyword list to judge by: not judged
    # The fitted ranking's own figures win over the interim rule.
    fitted = SimpleNamespace(bm25_documents=[], confidence=0.83, abstained=False)
    assert answer_confidence(fitted) == (0.83, False)
    assert mark_confidence({"abstained": True, "confidence": 0.1}, found) == {"abstained": True, "confidence": 0.1}
