"""The reference graph (issue 43): references from tag queries, resolution by scope and imports, ambiguity marked,
stored with the dictionary and refreshed with it, callers / callees / impact, centrality."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from haystack_integrations.components.code_alias.core.builder import DictionaryBuilder
from haystack_integrations.components.code_alias.core.graph import ReferenceGraph, pagerank
from haystack_integrations.components.code_alias.core.graph_answers import (
    GraphNameError,
    answer_text,
    callees_answer,
    callers_answer,
    impact_answer,
    usage_answer,
    usage_kind,
)
from haystack_integrations.components.code_alias.core.model import AliasDictionary, Reference
from haystack_integrations.components.code_alias.core.symbols import extract_file
from haystack_integrations.components.code_alias.core.tags import wheel_tags_file
from haystack_integrations.components.code_alias.evaluation import graph_fixtures
from haystack_integrations.components.code_alias.rewriting.rewrite import classify_intent
from tests.support.repos import FIXTURES

GRAPH_FIXTURES = FIXTURES / "graph"
LANGUAGES = ("python", "javascript", "typescript", "go", "rust", "java")


@pytest.fixture(scope="module")
def python_graph() -> ReferenceGraph:
    dictionary, _ = DictionaryBuilder().build(GRAPH_FIXTURES / "python")
    return ReferenceGraph(dictionary)


# ---- extraction -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("module", ["tree_sitter_python", "tree_sitter_javascript", "tree_sitter_typescript",
                                    "tree_sitter_go", "tree_sitter_rust", "tree_sitter_java"])  # fmt: skip
def test_every_grammar_wheel_ships_the_tags_query_we_read(module: str) -> None:
    path = wheel_tags_file(module)
    assert path is not None and "@reference." in path.read_text(encoding="utf-8")


def _references(source: str, language: str, path: str) -> set[tuple[str, ...]]:
    return {tuple(str(part) for part in r) for r in extract_file(source, language, path).references}


def test_python_references_name_the_receiver_the_module_and_the_local_binding() -> None:
    source = (
        "import os.path\nfrom .util import helper as h\nfrom ..core import *\n\n"
        "class A(Base, mod.Mixin):\n    def m(self, x: Foo):\n        self.n()\n        y = Foo()\n"
        "        y.run()\n        h(x)\n        os.path.join('a')\n        Bar().go()\n"
    )
    found = _references(source, "python", "pkg/a.py")
    assert {
        ("import", "", "1", "os.path", "os.path"),
        ("import", "helper", "2", ".util", "h"),
        ("import", "*", "3", "..core", ""),
        ("inherit", "Base", "5", "", ""),
        ("inherit", "Mixin", "5", "mod", ""),
        ("bind", "x", "6", "Foo", ""),
        ("call", "n", "7", "self", ""),
        ("bind", "y", "8", "Foo", ""),
        ("call", "run", "9", "y", ""),
        ("call", "h", "10", "", ""),
        ("call", "join", "11", "os.path", ""),
        ("call", "go", "12", "Bar()", ""),
    } <= found


def test_javascript_imports_reexports_and_require_are_references() -> None:
    source = (
        "import def, { a as b } from './x'\nimport * as ns from '../y'\nexport * from './z'\n"
        "export { q as r } from './w'\nconst lib = require('./lib')\nconst { p, s: t } = require('pkg')\n"
        "class K extends Base { m() { this.n(); ns.f(); const o = new Thing(); o.go() } }\n"
    )
    found = _references(source, "javascript", "src/a.js")
    assert {
        ("import", "default", "1", "./x", "def"),
        ("import", "a", "1", "./x", "b"),
        ("import", "", "2", "../y", "ns"),
        ("reexport", "*", "3", "./z", ""),
        ("reexport", "q", "4", "./w", "r"),
        ("import", "", "5", "./lib", "lib"),
        ("import", "s", "6", "pkg", "t"),
        ("inherit", "Base", "7", "", ""),
        ("call", "n", "7", "this", ""),
        ("bind", "o", "7", "Thing", ""),
        ("new", "Thing", "7", "", ""),
        ("call", "go", "7", "o", ""),
    } <= found


def test_namespace_reexports_of_every_form_are_read() -> None:
    # `export * as default from` has no name node: it once stopped the whole dictionary build of a babel tree
    source = "export * as ns from './a'\nexport * as \"a-b\" from './b'\nexport * as default from './c'\n"
    found = _references(source, "javascript", "src/index.js")
    assert {
        ("reexport", "", "1", "./a", "ns"),
        ("reexport", "", "2", "./b", "a-b"),
        ("reexport", "", "3", "./c", "default"),
    } <= found


def test_go_rust_java_typed_variables_and_paths() -> None:
    go = _references(
        'package p\nimport f "fmt"\nfunc (s *Server) Start() { s.serve(); f.Println(); z := Foo{} }\n',
        "go",
        "p/a.go",
    )
    assert {("import", "", "2", "fmt", "f"), ("bind", "s", "3", "Server", ""), ("call", "serve", "3", "s", "")} <= go
    assert ("new", "Foo", "3", "", "") in go and ("bind", "z", "3", "Foo", "") in go
    rust = _references(
        "use crate::a::{b, c as d};\nfn f(q: &Bar) { Foo::new(); a::b::c(); let x = Baz::new(); x.m(); }\n",
        "rust",
        "src/lib.rs",
    )
    assert {("import", "b", "1", "crate.a", "b"), ("import", "c", "1", "crate.a", "d")} <= rust
    assert {("call", "new", "2", "Foo", ""), ("call", "c", "2", "a.b", ""), ("bind", "x", "2", "Baz", "")} <= rust
    assert ("bind", "q", "2", "Bar", "") in rust
    java = _references(
        "import static a.b.C.m;\nclass A extends B { Foo f; void g(Bar b) { this.f.r(); C.s(); new Baz().q(); } }\n",
        "java",
        "A.java",
    )
    assert {("import", "m", "1", "a.b.C", "m"), ("inherit", "B", "2", "", "")} <= java
    assert ("bind", "this.f", "2", "Foo", "") in java
    assert {("call", "r", "2", "this.f", ""), ("call", "s", "2", "C", ""), ("call", "q", "2", "Baz()", "")} <= java


def test_a_declarations_own_name_is_no_use_of_it() -> None:
    found = _references("interface I { x: number }\ntype T = I\nclass C implements I {}\n", "typescript", "a.ts")
    assert ("type", "T", "2", "", "") not in found and ("type", "I", "1", "", "") not in found
    assert ("type", "I", "2", "", "") in found and ("inherit", "I", "3", "", "") in found


def test_a_generated_file_of_too_many_uses_keeps_none() -> None:
    from haystack_integrations.components.code_alias.core.references import MAX_REFERENCES_PER_FILE

    source = "".join(f"f{i}()\n" for i in range(MAX_REFERENCES_PER_FILE + 1))
    assert extract_file(source, "python", "gen.py").references == []


# ---- resolution on the fixtures -------------------------------------------------------------------------------------
@pytest.mark.parametrize("language", LANGUAGES)
def test_callers_precision_and_recall_on_the_hand_written_fixture(language: str) -> None:
    result = graph_fixtures.evaluate(GRAPH_FIXTURES / language)
    assert result["sites"] >= 10
    assert result["precision"] >= 0.95, result["false_positives"]
    assert result["recall"] >= 0.9, result["misses"]
    assert result["ambiguous_reported"] == result["ambiguous_listed"] >= 1
    assert result["ambiguous_resolved_wrongly"] == []


def test_ambiguous_edges_are_listed_apart_and_never_as_callers(python_graph: ReferenceGraph) -> None:
    answer = callers_answer(python_graph, "shop.pricing.Tax.apply")
    [target] = answer["targets"]
    assert [(s["file_path"], s["line"]) for s in target["callers"]] == [("shop/orders.py", 18)]
    [maybe] = target["ambiguous"]
    assert (maybe["file_path"], maybe["line"], maybe["candidates"]) == ("app.py", 14, 2)
    assert "not known" in maybe["reason"]


def test_a_name_of_several_definitions_answers_for_each(python_graph: ReferenceGraph) -> None:
    answer = callers_answer(python_graph, "apply")
    assert answer["definitions"] == 2
    assert {t["qualified_name"] for t in answer["targets"]} == {"shop.pricing.Discount.apply", "shop.pricing.Tax.apply"}
    narrowed = callers_answer(python_graph, "apply", file_path="shop/pricing.py")
    assert narrowed["definitions"] == 2
    with pytest.raises(GraphNameError, match="no definition named 'nowhere'"):
        callers_answer(python_graph, "nowhere")


def test_callees_split_resolved_ambiguous_and_outside(python_graph: ReferenceGraph) -> None:
    [main] = callees_answer(python_graph, "app.main")["targets"]
    assert [s["callee"]["qualified_name"] for s in main["callees"]] == [
        "shop.orders.Order",
        "shop.orders.place_order",
        "shop.pricing.total",
        "app.handle",
    ]
    [handle] = callees_answer(python_graph, "handle")["targets"]
    assert [s["name"] for s in handle["ambiguous"]] == ["apply"] and handle["callees"] == []
    [total] = callees_answer(python_graph, "shop.pricing.total")["targets"]
    assert {s["name"] for s in total["external"]} == {"sum"}


def test_impact_follows_callers_transitively_and_marks_tests(python_graph: ReferenceGraph) -> None:
    [target] = impact_answer(python_graph, "shop.pricing.Tax.apply", depth=3)["targets"]
    reached = {(row["depth"], row["caller"]["qualified_name"]) for row in target["impact"]}
    assert (1, "shop.orders.Order.taxed") in reached
    assert (2, "shop.orders.confirm") in reached
    assert (3, "tests.orders_check.test_confirm") in reached
    assert [row["caller"]["qualified_name"] for row in target["tests"]] == ["tests.orders_check.test_confirm"]
    shallow = impact_answer(python_graph, "shop.pricing.Tax.apply", depth=1)["targets"][0]
    assert {row["depth"] for row in shallow["impact"]} == {1}
    text = answer_text(impact_answer(python_graph, "shop.pricing.Tax.apply"), "impact")
    assert "tests/orders_check.py:6  tests.orders_check.test_confirm  [test]" in text


def test_a_recursive_call_is_no_caller_of_itself(tmp_path: Path) -> None:
    (tmp_path / "walk.py").write_text("def walk(n):\n    return walk(n - 1) if n else 0\n", encoding="utf-8")
    graph = ReferenceGraph(DictionaryBuilder().build(tmp_path)[0])
    assert callers_answer(graph, "walk")["targets"][0]["callers"] == []


# ---- stored with the dictionary, refreshed with it -------------------------------------------------------------------
def _edges(graph: ReferenceGraph) -> set[tuple[Any, ...]]:
    def name(ident: int | None) -> str:
        return "<module>" if ident is None else graph.definitions[ident].qualified_name

    return {
        (graph.file_path(e), e.line, e.kind, e.status, name(e.source), tuple(sorted(name(t) for t in e.targets)))
        for e in graph.edges
    }


def test_references_travel_with_the_dictionary_and_a_refresh_replaces_a_changed_files(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(GRAPH_FIXTURES / "python", repo)
    builder = DictionaryBuilder()
    first, _ = builder.build(repo)
    saved = AliasDictionary.load(first.save(tmp_path / "dictionary.json"))
    assert saved.files["app.py"].references == first.files["app.py"].references
    assert all(isinstance(r, Reference) for r in saved.files["app.py"].references)
    app = repo / "app.py"
    text = app.read_text(encoding="utf-8")
    app.write_text(text.replace("    place(order)\n", "    place(order)\n    place(order)\n"), encoding="utf-8")
    (repo / "tests" / "orders_check.py").unlink()
    second, stats = builder.refresh(repo, saved)
    assert stats.files_parsed == 1
    assert "tests/orders_check.py" not in second.files
    refreshed = ReferenceGraph(second)
    assert _edges(refreshed) == _edges(ReferenceGraph(builder.build(repo)[0]))  # as a full build resolves it
    callers = callers_answer(refreshed, "place_order")["targets"][0]["callers"]
    assert [(s["file_path"], s["line"]) for s in callers] == [("app.py", 8), ("app.py", 9)]
    confirm = callers_answer(refreshed, "confirm")["targets"][0]["callers"]
    assert not any(s["file_path"].startswith("tests/") for s in confirm)


def test_the_index_keeps_the_graph_and_a_sync_refreshes_it(tmp_path: Path) -> None:
    from haystack_integrations.components.code_alias.app.search import CodeSearch
    from haystack_integrations.components.code_alias.indexing.dictionary_handle import DictionaryHandle
    from haystack_integrations.components.code_alias.paths import DICTIONARY_FILE

    repo = tmp_path / "repo"
    shutil.copytree(GRAPH_FIXTURES / "python", repo)
    search = CodeSearch(tmp_path / "index", lexical=True)
    search.index(repo)
    handle = DictionaryHandle.for_path(tmp_path / "index" / DICTIONARY_FILE)
    graph = handle.graph()
    assert handle.graph() is graph  # resolved once per dictionary version
    assert len(callers_answer(graph, "total")["targets"][0]["callers"]) == 2
    (repo / "extra.py").write_text("from shop.pricing import total\n\n\ndef again():\n    return total([1])\n")
    search.index(repo)
    after = handle.graph()
    assert after is not graph and after.version != graph.version
    sites = {(s["file_path"], s["line"]) for s in callers_answer(after, "total")["targets"][0]["callers"]}
    assert ("extra.py", 5) in sites and len(sites) == 3


# ---- centrality ---------------------------------------------------------------------------------------------------
def test_pagerank_matches_networkx_on_a_graph_with_dangling_nodes() -> None:
    networkx = pytest.importorskip("networkx")
    import numpy as np

    edges = [(0, 1), (0, 2), (1, 2), (2, 0), (3, 2), (4, 4), (5, 3), (0, 1)]
    sources, targets = (np.array(side) for side in zip(*edges, strict=True))
    ours = pagerank(7, sources, targets)
    graph = networkx.MultiDiGraph()
    graph.add_nodes_from(range(7))
    graph.add_edges_from(edges)
    expected = networkx.pagerank(graph, alpha=0.85, tol=1e-12)
    assert np.allclose(ours, [expected[i] for i in range(7)], atol=1e-6)
    assert abs(float(ours.sum()) - 1.0) < 1e-9


def test_centrality_features_by_file_and_qualified_name(python_graph: ReferenceGraph) -> None:
    centrality = python_graph.centrality()
    rounding = centrality.features("shop/pricing.py", "shop.pricing._round")
    assert rounding["in_degree"] == 3  # total, Discount.apply, Tax.apply
    assert rounding["pagerank"] > centrality.features("app.py", "app.main")["pagerank"]
    assert 0.0 <= rounding["pagerank_rank"] <= 1.0
    assert centrality.features("nowhere.py", "x") == {"in_degree": 0.0, "pagerank": 0.0, "pagerank_rank": 0.0}


# ---- usage questions ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("question", "intent", "kind"),
    [
        ("who calls withStripeBackoff?", "usage", "callers"),
        ("where is merge_setting called?", "usage", "callers"),
        ("is prepare_request used anywhere?", "usage", "callers"),
        ("what breaks if I change Session.request", "usage", "impact"),
        ("what would break if I rename parse_url", "usage", "impact"),
        ("where's the payments retry helper?", "locate_symbol", "callers"),
        ("how do I use the session?", "how_to", "callers"),
    ],
)
def test_usage_questions_have_their_own_intent(question: str, intent: str, kind: str) -> None:
    assert classify_intent(question) == intent
    assert usage_kind(question) == kind


def test_a_usage_answer_is_about_the_symbol_the_rewrite_named(python_graph: ReferenceGraph) -> None:
    ranked = [
        {"qualified_name": "shop.orders.Order", "file_path": "shop/orders.py", "symbol": "Order"},
        {"qualified_name": "shop.orders.place_order", "file_path": "shop/orders.py", "symbol": "place_order"},
    ]
    usage = usage_answer(python_graph, "who calls place_order?", ["place_order"], ranked)
    assert usage is not None and usage["kind"] == "callers"
    assert [(s["file_path"], s["line"]) for s in usage["targets"][0]["callers"]] == [("app.py", 8)]
    impact = usage_answer(python_graph, "what breaks if I change place_order", ["place_order"], ranked)
    assert impact is not None and impact["kind"] == "impact"
    assert usage_answer(python_graph, "who calls it", [], []) is None


def test_the_cli_answers_callers_callees_and_impact(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from haystack_integrations.components.code_alias.cli import main

    index = tmp_path / "index"
    assert main(["index", str(GRAPH_FIXTURES / "python"), "--lexical", "--index-dir", str(index), "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["callers", "total", "--index-dir", str(index)]) == 0
    text = capsys.readouterr().out
    assert "shop.pricing.total (function, shop/pricing.py:4): 2 caller(s), 0 ambiguous" in text
    assert "shop/orders.py:13  shop.orders.Order.price" in text and "app.py:9  app.main" in text
    assert main(["--json", "impact", "Tax.apply", "--depth", "2", "--index-dir", str(index)]) == 0
    answer = json.loads(capsys.readouterr().out)
    # Order.taxed (depth 1), app.handle (depth 1, ambiguous: `thing.apply`), confirm (depth 2, through taxed).
    assert answer["depth"] == 2 and answer["targets"][0]["total"] == {"reached": 3, "tests": 0, "ambiguous": 1}
    assert main(["callees", "handle", "--index-dir", str(index)]) == 0
    assert "apply?  one of 2" in capsys.readouterr().out
    assert main(["callers", "nowhere", "--index-dir", str(index)]) == 2
    assert "no definition named 'nowhere'" in capsys.readouterr().err
    assert main(["impact", "total", "--depth", "0", "--index-dir", str(index)]) == 2
    # A usage question's ask: the ranked places, then the graph's callers, then the footer (the rewrite used).
    assert main(["ask", "who calls place_order?", "--no-daemon", "--index-dir", str(index)]) == 0
    lines = capsys.readouterr().out.splitlines()
    graph = lines.index("Who calls it (reference graph):")
    assert lines[0].startswith(" 1  ") and "  app.py:8  app.main" in lines[graph:]
    assert graph < len(lines) - 1 and "reference graph" not in lines[-1]


# ---- incremental refresh ---------------------------------------------------------------------------------------------
_ORDERS = (GRAPH_FIXTURES / "python" / "shop" / "orders.py").read_text(encoding="utf-8")
_EDITS: dict[str, list[tuple[str, str | None]]] = {
    "python": [
        # Lines move, definitions do not change: only the uses that reached the file's definitions are redone.
        ("shop/orders.py", '"""Orders, moved down."""\n\n\n' + _ORDERS.replace("def confirm", "def confirm_it")),
        (
            "app.py",
            "import shop\n\n\ndef main():\n    return shop.total([1]) + helper()\n\n\ndef helper():\n    return 9\n",
        ),
        ("tests/orders_check.py", None),
        ("shop/extra.py", "def handle(x):\n    return x\n\n\ndef total(items):\n    return 0\n"),
        ("shop/pricing.py", "def total_of(items):\n    return sum(items)\n\n\nclass Discount:\n    pass\n"),
        ("shop/__init__.py", "from .orders import confirm as place\nfrom .pricing import total\n"),
        (
            "shop/orders.py",
            "from .pricing import Tax\n\n\nclass Order(Tax):\n    def price(self):\n        return self.apply(1)\n",
        ),
    ],
    "javascript": [
        ("src/index.js", "export { total as sumItems, Discount } from './pricing'\n"),
        ("src/pricing.js", "export function total(items) {\n  return items.length\n}\n"),
        ("src/legacy.js", None),
    ],
    "java": [
        (
            "src/main/java/com/shop/pricing/Pricing.java",
            "package com.shop.pricing;\n\npublic final class Pricing {\n    public static int total(int[] items) {\n"
            "        return items.length;\n    }\n}\n",
        ),
        (
            "src/main/java/com/shop/pricing/Extra.java",
            "package com.shop.pricing;\n\nclass Extra { int apply(int a) { return a; } }\n",
        ),
    ],
}


@pytest.mark.parametrize("language", sorted(_EDITS))
def test_a_refreshed_graph_has_the_edges_of_a_full_build(language: str, tmp_path: Path) -> None:
    repo = tmp_path / language
    shutil.copytree(GRAPH_FIXTURES / language, repo)
    builder = DictionaryBuilder()
    dictionary, _ = builder.build(repo)
    graph = ReferenceGraph(dictionary)
    for path, text in _EDITS[language]:
        target = repo / path
        if text is None:
            target.unlink()
        else:
            target.write_text(text, encoding="utf-8")
        dictionary, _ = builder.refresh(repo, dictionary)
        refreshed = ReferenceGraph.refreshed(graph, dictionary)
        full = ReferenceGraph(dictionary)
        assert _edges(refreshed) == _edges(full), path
        assert refreshed.summary()["definitions"] == full.summary()["definitions"]
        assert refreshed.centrality().in_degree == full.centrality().in_degree
        graph = refreshed
    # The class whose bases changed (orders.py's last edit) took the full path; the others were incremental.
    assert graph.refreshed_files in (None, 1)
