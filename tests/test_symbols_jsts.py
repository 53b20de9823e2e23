"""JavaScript / TypeScript as first-class citizens (issue 10): every definition form, `.vue`, `.d.ts`, Flow,
renamed re-exports, package aliases, and test / fixture code kept out of the rewrite's hints.

The fixture repository `tests/fixtures/jsts_repo` holds one small file per form, modelled on the real code the
issue names (vue's renderer and Teleport, axios, preact's component, hooks and internal.d.ts, babel's Flow-typed
expression parser and its test fixtures).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from haystack_integrations.components.code_alias.core.builder import DictionaryBuilder
from haystack_integrations.components.code_alias.core.hints import HintIndex
from haystack_integrations.components.code_alias.core.model import AliasDictionary, SymbolDef
from haystack_integrations.components.code_alias.core.reexports import resolve_module
from haystack_integrations.components.code_alias.core.rewrite import dictionary_rewrite
from haystack_integrations.components.code_alias.core.symbols import (
    _error_count,
    _parser,
    extract_symbols,
    language_for_path,
)

REPO = Path(__file__).parent / "fixtures" / "jsts_repo"


def _symbols(rel_path: str) -> dict[str, SymbolDef]:
    language = language_for_path(rel_path)
    assert language is not None, rel_path
    found = extract_symbols((REPO / rel_path).read_text(encoding="utf-8"), language, rel_path)
    assert all(symbol.file_path == rel_path for symbol in found)
    return {symbol.qualified_name: symbol for symbol in found}


def _summary(symbol: SymbolDef) -> tuple[str, str | None, bool, int, int]:
    return symbol.kind, symbol.parent, symbol.exported, symbol.start_line, symbol.end_line


# ---- extraction, one form per file --------------------------------------------------------------------------
def test_functions_assigned_inside_a_factory_function() -> None:
    symbols = _symbols("packages/runtime-core/src/renderer.ts")
    base = "packages.runtime-core.src.renderer.baseCreateRenderer"
    assert _summary(symbols[base]) == ("function", None, True, 8, 32)
    assert _summary(symbols[f"{base}.patch"]) == ("function", None, False, 12, 15)
    assert symbols[f"{base}.patch"].docstring == "The heart of the diff: dispatches on the vnode's type."
    assert _summary(symbols[f"{base}.processElement"]) == ("function", None, False, 17, 19)
    assert _summary(symbols[f"{base}.mountComponent"]) == ("function", None, False, 21, 27)
    # Two levels deep; the third level (`componentUpdateFn`) is a local helper.
    assert _summary(symbols[f"{base}.mountComponent.setupRenderEffect"]) == ("function", None, False, 22, 25)
    assert not [name for name in symbols if name.endswith(("componentUpdateFn", ".count", "hostInsert"))]


def test_methods_of_an_object_literal() -> None:
    symbols = _symbols("packages/runtime-core/src/components/Teleport.ts")
    impl = "packages.runtime-core.src.components.Teleport.TeleportImpl"
    assert _summary(symbols[impl]) == ("constant", None, True, 1, 13)
    assert _summary(symbols[f"{impl}.process"]) == ("method", "TeleportImpl", True, 5, 7)
    assert symbols[f"{impl}.process"].docstring == "Mounts or patches the teleported children."
    assert _summary(symbols[f"{impl}.remove"]) == ("method", "TeleportImpl", True, 8, 10)
    assert _summary(symbols[f"{impl}.move"]) == ("method", "TeleportImpl", True, 11, 11)
    assert f"{impl}.name" not in symbols and f"{impl}.hydrate" not in symbols  # values, not functions


def test_prototype_assignments_and_module_exports() -> None:
    symbols = _symbols("lib/core/Axios.js")
    assert _summary(symbols["lib.core.Axios.Axios"]) == ("function", None, True, 6, 8)  # module.exports = Axios
    assert _summary(symbols["lib.core.Axios.Axios.request"]) == ("method", "Axios", True, 13, 15)
    assert symbols["lib.core.Axios.Axios.request"].docstring == "Dispatch a request."
    assert _summary(symbols["lib.core.Axios.Axios.getUri"]) == ("method", "Axios", True, 17, 19)
    assert _summary(symbols["lib.core.Axios.dispatchRequest"]) == ("function", None, False, 21, 23)

    component = _symbols("src/component.js")
    assert _summary(component["src.component.BaseComponent.setState"]) == ("method", "BaseComponent", True, 12, 14)


def test_module_exports_of_a_named_function() -> None:
    symbols = _symbols("lib/adapters/http.js")
    adapter = symbols["lib.adapters.http.httpAdapter"]
    assert _summary(adapter) == ("function", None, True, 4, 7)
    assert adapter.docstring == "The Node.js adapter: one request over http/https, following redirects."
    # `export default supported && function xhrAdapter() {}`
    assert _summary(_symbols("lib/adapters/xhr.js")["lib.adapters.xhr.xhrAdapter"]) == ("function", None, True, 3, 5)


def test_hook_assignments_on_an_imported_object() -> None:
    symbols = _symbols("hooks/src/index.js")
    assert _summary(symbols["hooks.src.options._render"]) == ("method", "options", False, 6, 8)
    assert symbols["hooks.src.options._render"].docstring == "Resets the hook state before a component renders."
    assert _summary(symbols["hooks.src.options.diffed"]) == ("method", "options", False, 10, 12)
    assert _summary(symbols["hooks.src.options.vnode"]) == ("method", "options", False, 14, 14)
    assert _summary(symbols["hooks.src.useState"]) == ("function", None, True, 16, 18)
    assert "hooks.src.oldBeforeDiff" not in symbols


def test_export_default_object_exports_its_members() -> None:
    symbols = _symbols("lib/utils.js")
    assert _summary(symbols["lib.utils.isArray"]) == ("variable", None, True, 1, 1)  # `const {isArray} = Array`
    assert _summary(symbols["lib.utils.kindOf"]) == ("constant", None, True, 3, 3)
    assert _summary(symbols["lib.utils.isString"]) == ("constant", None, True, 7, 7)
    assert _summary(symbols["lib.utils.typeOfTest"]) == ("function", None, False, 5, 5)
    # `each: forEach` exports forEach under the public name `each`.
    assert _summary(symbols["lib.utils.forEach"]) == ("function", None, True, 9, 11)
    assert symbols["lib.utils.forEach"].aliases == ("each",)
    assert _summary(symbols["lib.utils.merge"]) == ("function", None, True, 21, 23)
    assert "lib.utils.internalOnly" not in symbols


def test_declare_global_in_an_internal_declaration_file() -> None:
    symbols = _symbols("src/internal.d.ts")
    assert _summary(symbols["src.internal.HookType"]) == ("enum", None, True, 4, 7)
    assert _summary(symbols["src.internal.Options"]) == ("interface", None, True, 9, 13)
    assert _summary(symbols["src.internal.Options._render"]) == ("method", "Options", True, 11, 11)
    assert _summary(symbols["src.internal.ComponentChild"]) == ("type", None, True, 15, 15)
    assert _summary(symbols["src.internal.VNode"]) == ("interface", None, True, 17, 19)  # global, not `export`ed


def test_ambient_declarations_and_declare_module() -> None:
    symbols = _symbols("types/ambient.d.ts")
    assert _summary(symbols["types.ambient.connectDevtools"]) == ("function", None, True, 2, 2)
    assert _summary(symbols["types.ambient.version"]) == ("constant", None, True, 3, 3)
    assert _summary(symbols["types.ambient.__DEV__"]) == ("constant", None, True, 6, 6)
    assert _summary(symbols["types.ambient.setupDevtoolsPlugin"]) == ("function", None, True, 8, 8)
    assert _summary(symbols["types.ambient.WindowState"]) == ("interface", None, True, 10, 12)


def test_declare_function_in_a_plain_ts_file_is_not_an_export() -> None:
    found = extract_symbols("declare function ext(): void;\ndeclare global { interface G {} }\n", "typescript", "a.ts")
    assert [(s.name, s.exported) for s in found] == [("ext", False), ("G", True)]


def test_vue_single_file_components() -> None:
    setup = _symbols("src/components/HelloWorld.vue")
    component = setup["src.components.HelloWorld.HelloWorld"]
    assert (component.kind, component.exported, component.start_line, component.end_line) == ("class", True, 1, 21)
    assert component.language == "vue"
    assert _summary(setup["src.components.HelloWorld.increment"]) == ("function", None, False, 12, 14)
    assert setup["src.components.HelloWorld.increment"].docstring == "Adds one to the counter."
    assert _summary(setup["src.components.HelloWorld.reset"]) == ("function", None, False, 16, 16)
    assert "src.components.HelloWorld.count" not in setup  # reactive state, not a definition

    options = _symbols("src/components/todo-list.vue")  # plain <script>, after nothing, before the template
    assert _summary(options["src.components.todo-list.TodoList"])[:3] == ("class", None, True)
    assert _summary(options["src.components.todo-list.sortTodos"]) == ("function", None, True, 2, 4)


def test_flow_typed_javascript_parses_with_the_typescript_grammar() -> None:
    rel_path = "packages/babel-parser/src/parser/expression.js"
    source = (REPO / rel_path).read_bytes()
    # Why the fallback exists: the JavaScript grammar loses whole methods; TypeScript only trips on the variance
    # sigil `+isLookahead` and `%checks` (babel's real expression.js: 437 error nodes against 0).
    javascript_errors = _error_count(_parser("javascript").parse(source).root_node)
    assert _error_count(_parser("typescript").parse(source).root_node) < javascript_errors
    symbols = _symbols(rel_path)
    parser = "packages.babel-parser.src.parser.expression.ExpressionParser"
    assert _summary(symbols[parser]) == ("class", None, True, 6, 30)
    assert [name.rsplit(".", 1)[1] for name in symbols if name.startswith(parser + ".")] == [
        "parseExpression",
        "parseMaybeAssign",
        "checkExpressionErrors",
        "parseAwait",
    ]
    assert symbols[f"{parser}.parseAwait"].language == "javascript"
    assert _summary(symbols[f"{parser}.parseAwait"]) == ("method", "ExpressionParser", True, 26, 29)


def test_renamed_exports_keep_the_own_name_and_list_the_public_one() -> None:
    component = _symbols("src/component.js")
    assert component["src.component.BaseComponent"].aliases == ()  # renamed only in index.js
    assert component["src.component.renderComponent"].aliases == ("rerender",)
    assert component["src.component.renderComponent"].exported
    index = _symbols("src/index.js")
    reexport = index["src.Component"]
    assert (reexport.aliases, reexport.reexport_from, reexport.exported) == (("BaseComponent",), "./component", True)
    assert index["src.h"].reexport_from == "external-package"
    assert "src.render" not in index  # a plain re-export renames nothing
    found = extract_symbols("export { default as Teleport, x as default } from './T.vue'\n", "javascript", "i.js")
    assert [(s.name, s.aliases, s.reexport_from) for s in found] == [("Teleport", (), "./T.vue")]


def test_syntax_errors_never_raise() -> None:
    found = extract_symbols("function ok() {}\nconst = => {{{\nexport const f = () => 1\n", "javascript", "x.js")
    assert "ok" in [s.name for s in found]


# ---- module resolution --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("importer", "specifier", "expected"),
    [
        ("src/index.js", "./component", "src/component.js"),
        ("src/index.js", "./component.js", "src/component.js"),
        ("src/a/index.ts", "../component", "src/component.js"),
        ("src/index.ts", "./lib", "src/lib/index.ts"),
        ("src/index.ts", "./esm.js", "src/esm.ts"),  # TypeScript's ESM convention
        ("src/index.js", "react", None),  # a package
        ("index.js", "../outside", None),
        ("src/index.js", "./missing", None),
    ],
)
def test_resolve_module(importer: str, specifier: str, expected: str | None) -> None:
    files = {"src/component.js": 1, "src/lib/index.ts": 1, "src/esm.ts": 1}
    assert resolve_module(importer, specifier, files) == expected


# ---- the dictionary, the hints and the rewrite ---------------------------------------------------------------
@pytest.fixture(scope="module")
def dictionary() -> AliasDictionary:
    return DictionaryBuilder().build(REPO)[0]


def test_dictionary_links_a_renamed_reexport_to_its_definition(dictionary: AliasDictionary) -> None:
    entries = [s for s in dictionary.symbols if s.name in ("BaseComponent", "Component")]
    assert [(s.name, s.file_path, s.start_line, s.aliases) for s in entries] == [
        ("BaseComponent", "src/component.js", 4, ("Component",))
    ]
    # An unresolvable re-export (a package) stays an entry of the file that makes it.
    assert [(s.file_path, s.aliases) for s in dictionary.symbols if s.name == "h"] == [
        ("src/index.js", ("createElement",))
    ]
    found = HintIndex(dictionary).lookup("why does Component setState not rerender?")
    base = next(h for h in found[:2] if h.name == "BaseComponent")
    assert any(reason.startswith("alias") for reason in base.reasons)


def test_fixture_symbols_stay_out_of_the_dictionary_but_the_file_is_indexed(dictionary: AliasDictionary) -> None:
    fixture = "packages/babel-parser/test/fixtures/es2015/yield/input.js"
    assert fixture in dictionary.files  # still read, parsed and searchable
    assert [s.name for s in dictionary.files[fixture].symbols] == ["fixtureOnlyGenerator"]
    assert not [s for s in dictionary.symbols if s.file_path == fixture]
    rewrite = dictionary_rewrite("fixtureOnlyGenerator", HintIndex(dictionary).lookup("fixtureOnlyGenerator"))
    assert "fixtureOnlyGenerator" not in rewrite.symbols


def test_nested_test_folder_is_excluded_from_hints(dictionary: AliasDictionary) -> None:
    # preact's compat/test/ts/memo.tsx once supplied a rewrite symbol.
    in_test = [s for s in dictionary.symbols if s.name == "MemoizedTestComponent"]
    assert [s.file_path for s in in_test] == ["compat/test/ts/memo.tsx"]
    question = "memoized component"
    hints = HintIndex(dictionary).lookup(question)
    test_hints = [h for h in hints if h.name == "MemoizedTestComponent"]
    assert test_hints and all(h.in_tests for h in test_hints)
    assert "MemoizedTestComponent" not in dictionary_rewrite(question, hints).symbols
    assert all(h.in_tests for h in HintIndex(dictionary).lookup("expect watch type") if h.name == "expectWatchType")


def test_every_file_maps_to_its_package(dictionary: AliasDictionary) -> None:
    packages = {p.name: p for p in dictionary.packages}
    # The fixture's package.json under test/fixtures declares nothing.
    assert set(packages) == {"jsts-monorepo", "@vue/runtime-core", "@vue/compat", "@babel/parser"}
    assert packages["@vue/compat"].aliases == ("compat", "vue-compat")
    assert dictionary.package_for_file("packages/vue-compat/src/index.ts") == "@vue/compat"
    assert dictionary.package_for_file("packages/runtime-core/src/components/Teleport.ts") == "@vue/runtime-core"
    hints = HintIndex(dictionary).lookup("vue-compat createCompatVue")
    assert "@vue/compat" in [h.name for h in hints]


def test_vue_files_reach_the_dictionary(dictionary: AliasDictionary) -> None:
    names = {(s.name, s.language) for s in dictionary.symbols if s.file_path.endswith(".vue")}
    assert {("HelloWorld", "vue"), ("increment", "vue"), ("TodoList", "vue"), ("sortTodos", "vue")} <= names


def test_refresh_follows_a_reexport_edited_in_another_file(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    component = "export function BaseComponent() {}\nexport function Other() {}\n"
    (tmp_path / "src/component.js").write_text(component, encoding="utf-8")
    index = tmp_path / "src/index.js"
    index.write_text("export { BaseComponent as Component } from './component';\n", encoding="utf-8")
    builder = DictionaryBuilder()
    first, _ = builder.build(tmp_path)
    assert [(s.name, s.aliases) for s in first.symbols] == [("BaseComponent", ("Component",)), ("Other", ())]
    # Only index.js changes, yet component.js's entries must change with it (they are otherwise reused).
    index.write_text("export { Other as Component } from './component.js';\n", encoding="utf-8")
    second, stats = builder.refresh(tmp_path, first)
    assert stats.files_parsed == 1
    assert [(s.name, s.aliases) for s in second.symbols] == [("BaseComponent", ()), ("Other", ("Component",))]
    index.write_text("export { Other } from './component';\n", encoding="utf-8")
    third, _ = builder.refresh(tmp_path, second)
    assert [(s.name, s.aliases) for s in third.symbols] == [("BaseComponent", ()), ("Other", ())]
    assert third.symbols == builder.build(tmp_path)[0].symbols  # a refresh ends where a full build does
