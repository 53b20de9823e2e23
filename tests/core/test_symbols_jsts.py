"""JavaScript / TypeScript as first-class citizens (issue 10): every definition form, `.vue`, `.d.ts`, Flow,
renamed re-exports, package aliases, and test / fixture code kept out of the rewrite's hints.

The fixture repository `tests/fixtures/jsts_repo` holds one small file per form, modelled on the real code the
issue names (vue's renderer and Teleport, axios, preact's component, hooks and internal.d.ts, babel's Flow-typed
expression parser and its test fixtures).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from haystack import Document

from haystack_integrations.components.code_alias import cli
from haystack_integrations.components.code_alias.answer_view import definition_lines
from haystack_integrations.components.code_alias.core.builder import DictionaryBuilder
from haystack_integrations.components.code_alias.core.chunking import chunk_file
from haystack_integrations.components.code_alias.core.model import AliasDictionary, SymbolDef
from haystack_integrations.components.code_alias.core.reexports import resolve_module
from haystack_integrations.components.code_alias.core.symbols import (
    _error_count,
    _parser,
    extract_symbols,
    language_for_path,
)
from haystack_integrations.components.code_alias.indexing.splitter import CodeSplitter
from haystack_integrations.components.code_alias.paths import DICTIONARY_FILE
from haystack_integrations.components.code_alias.rewriting.hints import HintIndex
from haystack_integrations.components.code_alias.rewriting.rewrite import dictionary_rewrite
from haystack_integrations.components.code_alias.serving.chat import to_chunk
from tests.support.repos import FIXTURES

REPO = FIXTURES / "jsts_repo"


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


# ---- doc comments belong to their definition (issue 28) -------------------------------------------------------
_DOC = "Retries the charge with doubling delay."


@pytest.mark.parametrize(
    ("declaration", "name", "kind"),
    [
        ("export function chargeWithRetry(call) {\n  return call();\n}", "chargeWithRetry", "function"),
        ("export async function chargeWithRetry(call) {\n  return await call();\n}", "chargeWithRetry", "function"),
        ("export const chargeWithRetry = (call) => call();", "chargeWithRetry", "function"),
        ("export default function chargeWithRetry(call) {\n  return call();\n}", "chargeWithRetry", "function"),
        ("export class ChargeRetrier {\n  run() {}\n}", "ChargeRetrier", "class"),
        ("@Injectable()\nexport class ChargeRetrier {\n  run() {}\n}", "ChargeRetrier", "class"),
        ("export interface ChargeRetrier {\n  run(): void;\n}", "ChargeRetrier", "interface"),
        ("export type ChargeRetrier = (call: () => void) => void;", "ChargeRetrier", "type"),
        ("exports.chargeWithRetry = function (call) {\n  return call();\n};", "chargeWithRetry", "function"),
        ("function chargeWithRetry(call) {\n  return call();\n}", "chargeWithRetry", "function"),
    ],
)
@pytest.mark.parametrize(
    "comment",
    [f"/**\n * {_DOC}\n * @param call the request\n */", f"/** {_DOC} */", f"// {_DOC}\n// (line comments too)"],
)
def test_a_doc_comment_goes_to_its_definitions_chunk(declaration: str, name: str, kind: str, comment: str) -> None:
    head = "import { charge } from './charge';\n\nconst LIMIT = 3;\n\n"
    text = f"{head}{comment}\n{declaration}\n\nconsole.log(LIMIT);\n"
    symbols = extract_symbols(text, "typescript", "src/retry.ts")
    definition = next(s for s in symbols if s.name == name)
    assert definition.kind == kind and definition.docstring.startswith(_DOC)
    chunks = chunk_file(text, symbols)
    own = next(c for c in chunks if c.symbol == name)
    # The chunk keeps the definition's line; its text reads from the comment on, `comment_lines` above that line.
    comment_line = 5
    assert own.start_line == definition.start_line and own.content.startswith(comment)
    assert own.start_line - own.comment_lines == comment_line
    assert own.content.splitlines() == text.splitlines()[comment_line - 1 : own.end_line]
    assert own.content.endswith(declaration)
    module = next(c for c in chunks if c.kind == "module")
    assert _DOC not in module.content and "@param" not in module.content and "line comments" not in module.content
    # The module still shows the definition's signature line, and everything that is not the comment.
    assert declaration.splitlines()[0] in module.content.splitlines()
    assert "const LIMIT = 3;" in module.content and "console.log(LIMIT);" in module.content


def test_a_method_doc_comment_leaves_the_class_chunk() -> None:
    text = (
        "/** Charges cards. */\n"
        "export class Payments {\n"
        "  private client = null;\n"
        "\n"
        "  /** Refunds a charge in full. */\n"
        "  refund(id: string) {\n"
        "    return id;\n"
        "  }\n"
        "\n"
        "  // Captures an authorised charge.\n"
        "  capture = (id: string) => id;\n"
        "}\n"
    )
    symbols = extract_symbols(text, "typescript", "src/payments.ts")
    by_name = {s.name: s for s in symbols}
    assert by_name["refund"].docstring == "Refunds a charge in full."
    assert by_name["capture"].docstring == "Captures an authorised charge."
    chunks = {c.symbol: c for c in chunk_file(text, symbols)}
    assert chunks["refund"].content.splitlines()[0].strip() == "/** Refunds a charge in full. */"
    assert (chunks["refund"].start_line, chunks["refund"].comment_lines) == (by_name["refund"].start_line, 1)
    assert chunks["capture"].content.splitlines()[0].strip() == "// Captures an authorised charge."
    payments = chunks["Payments"].content
    assert payments.startswith("/** Charges cards. */\nexport class Payments {")
    assert "Refunds" not in payments and "Captures" not in payments
    assert "  refund(id: string) {" in payments and "  capture = (id: string) => id;" in payments
    assert chunks[None].content == "export class Payments {"  # the module keeps the signature line only


@pytest.mark.parametrize(
    "before",
    [
        "/** Not this function's: a blank line separates it. */\n\n",
        "/*! license header, kept for the module */\n",
        "const LIMIT = 3; /* a trailing note\n  of the statement before */\n",
        "callSomething(); // a trailing note\n",
    ],
)
def test_comments_that_are_no_doc_stay_in_the_module_chunk(before: str) -> None:
    text = f"{before}export function chargeWithRetry(call) {{\n  return call();\n}}\n"
    symbols = extract_symbols(text, "javascript", "src/retry.js")
    chunks = chunk_file(text, symbols)
    own = next(c for c in chunks if c.symbol == "chargeWithRetry")
    assert own.content.startswith("export function chargeWithRetry(call) {")
    assert own.start_line == next(s for s in symbols if s.name == "chargeWithRetry").start_line
    assert own.comment_lines == 0
    module = next(c for c in chunks if c.kind == "module")
    assert module.content.startswith(before.strip().splitlines()[0])


def test_only_the_comment_the_extractor_read_moves() -> None:
    text = (
        "const pattern = /a*/; /* a note on the pattern */\n"  # the statement's own comment, not the doc
        "/**\n * Matches `lib/*.js` globs.\n */\n"
        "export function matchGlob(path) {\n  return pattern.test(path);\n}\n"
    )
    symbols = extract_symbols(text, "javascript", "src/glob.js")
    function = next(s for s in symbols if s.name == "matchGlob")
    assert function.docstring == "Matches `lib/*.js` globs."
    chunks = chunk_file(text, symbols)
    own = next(c for c in chunks if c.symbol == "matchGlob")
    assert own.content.startswith("/**\n * Matches `lib/*.js` globs.\n */\nexport function matchGlob")
    module = next(c for c in chunks if c.kind == "module")
    assert module.content == "const pattern = /a*/; /* a note on the pattern */\nexport function matchGlob(path) {"


def test_a_declaration_files_comments_stay_in_its_module_chunk() -> None:
    # A `.d.ts` documents an API implemented elsewhere: its prose in the declarations' chunks outranked the
    # implementations on the JS/TS set (file Acc@1 -3.0 on all four BM25 rows). The docstring still is the symbol's.
    text = "/** Returns a new Collection of the values in the range. */\nexport function slice(b: number): void;\n"
    for path, moved in (("type-definitions/immutable.d.ts", False), ("src/slice.ts", True)):
        symbols = extract_symbols(text, "typescript", path)
        assert symbols[0].docstring == "Returns a new Collection of the values in the range."
        module, own = chunk_file(text, symbols)
        assert own.content.startswith("/**") is moved and ("Returns a new" in module.content) is not moved


def test_one_comment_above_two_declarators_goes_to_the_first() -> None:
    text = "/** Two helpers. */\nexport const first = () => 1, second = () => 2;\n"
    symbols = extract_symbols(text, "javascript", "src/pair.js")
    assert [(s.name, s.docstring) for s in symbols] == [("first", "Two helpers."), ("second", "Two helpers.")]
    chunks = chunk_file(text, symbols)
    assert [(c.symbol, c.start_line, c.comment_lines) for c in chunks] == [
        (None, 1, 0),
        ("first", 2, 1),
        ("second", 2, 0),
    ]
    assert [c.content.startswith("/** Two helpers. */") for c in chunks] == [False, True, False]


@pytest.mark.parametrize(
    ("language", "path", "text", "name", "comment"),
    [
        (
            "python",
            "retry.py",
            "import os\n\n# Retries the charge.\n@traced\ndef charge_with_retry(call):\n    return call()\n",
            "charge_with_retry",
            "# Retries the charge.",
        ),
        (
            "python",
            "retry.py",
            'X = 1\n\n# Retries the charge.\n# (twice)\ndef charge_with_retry(call):\n    """Doc."""\n    return 1\n',
            "charge_with_retry",
            "# Retries the charge.\n# (twice)",
        ),
        (
            "go",
            "pay/retry.go",
            "package pay\n\n// ChargeWithRetry retries the charge.\nfunc ChargeWithRetry() {}\n",
            "ChargeWithRetry",
            "// ChargeWithRetry retries the charge.",
        ),
        (
            "rust",
            "src/retry.rs",
            "use x::y;\n\n/// Retries the charge.\n#[inline]\npub fn charge_with_retry() {}\n",
            "charge_with_retry",
            "/// Retries the charge.",
        ),
        (
            "java",
            "src/Retry.java",
            "package p;\n\n/**\n * Retries the charge.\n */\n@Service\npublic class Retry {\n}\n",
            "Retry",
            "/**\n * Retries the charge.\n */",
        ),
    ],
)
def test_the_comment_above_a_definition_joins_its_chunk_in_every_language(
    language: str, path: str, text: str, name: str, comment: str
) -> None:
    # Issue 43: JSDoc, `///`, Go doc comments, Javadoc above annotations, a `#` block above a Python decorator.
    symbols = extract_symbols(text, language, path)
    definition = next(s for s in symbols if s.name == name)
    chunks = chunk_file(text, symbols)
    own = next(c for c in chunks if c.symbol == name)
    assert own.content.startswith(comment) and own.start_line == definition.start_line
    assert own.comment_lines == comment.count("\n") + 1 == definition.start_line - (definition.comment_line or 0)
    assert all(comment.splitlines()[0] not in c.content for c in chunks if c is not own)


def test_a_java_method_javadoc_leaves_its_class_chunk() -> None:
    text = "public class Pay {\n    /** Refunds in full. */\n    @Override\n    public void refund() {}\n}\n"
    symbols = extract_symbols(text, "java", "Pay.java")
    chunks = {c.symbol: c for c in chunk_file(text, symbols)}
    assert chunks["refund"].content.startswith("    /** Refunds in full. */\n    @Override")
    assert "Refunds" not in chunks["Pay"].content and "    @Override" in chunks["Pay"].content


def test_doc_words_of_a_documented_export_reach_the_dictionary_and_its_chunk(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    text = (
        "import { post } from './http';\n\n"
        "/**\n * Retries a failed payment with exponential backoff.\n */\n"
        "export const withStripeBackoff = (call, attempts) => call(attempts);\n"
    )
    (tmp_path / "src/stripe.ts").write_text(text, encoding="utf-8")
    dictionary, _ = DictionaryBuilder().build(tmp_path)
    entry = next(s for s in dictionary.symbols if s.name == "withStripeBackoff")
    assert {"retries", "payment", "exponential", "backoff"} <= {w.lower() for w in entry.doc_words}
    file = Document(content=text, meta={"file_path": "src/stripe.ts"})
    chunks = CodeSplitter().run(documents=[file], dictionary=dictionary)["documents"]
    own = next(c for c in chunks if c.meta["symbol"] == "withStripeBackoff")
    assert "exponential backoff" in (own.content or "")
    assert all("exponential" not in (c.content or "") for c in chunks if c.meta["kind"] == "module")
    # The meta says where the text starts, so the chat and the page show and cite the right lines.
    assert (own.meta["start_line"], own.meta["comment_lines"]) == (6, 3)
    assert all("comment_lines" not in c.meta for c in chunks if c is not own)
    cited = to_chunk(own)
    assert cited is not None and (cited.start_line, cited.end_line, cited.lines[0]) == (3, 6, "/**")
    shown = definition_lines(chunks, {"file_path": "src/stripe.ts", "qualified_name": own.meta["qualified_name"]})
    assert shown is not None and shown.numbers == (3, 4, 5, 6)
    assert shown.texts[-1] == "export const withStripeBackoff = (call, attempts) => call(attempts);"


# ---- a renamed export of an imported name is an alias (issue 28) ---------------------------------------------
def test_a_renamed_export_of_an_imported_name_is_a_reexport_record() -> None:
    text = (
        "import Default, { BaseWidget, Other as Local } from './widget';\n"
        "import * as helpers from './helpers';\n"
        "import { merge } from 'lodash';\n"
        "export { BaseWidget as Widget, Local as Public, Local, Default as Main, merge as deepMerge };\n"
        "export { BaseWidget, helpers as tools, Local as default, Default };\n"
    )
    found = extract_symbols(text, "typescript", "src/index.ts")
    assert [(s.name, s.kind, s.aliases, s.reexport_from, s.exported) for s in found] == [
        ("Widget", "variable", ("BaseWidget",), "./widget", True),
        ("Public", "variable", ("Other",), "./widget", True),
        ("Local", "variable", ("Other",), "./widget", True),  # `import { Other as Local }` renamed it already
        ("Main", "variable", (), "./widget", True),  # a default import: "default" is no name to look up
        ("deepMerge", "variable", ("merge",), "lodash", True),
    ]
    # Imports are hoisted: an export list above the import reads the same.
    hoisted = extract_symbols(
        "export { BaseWidget as Widget };\nimport { BaseWidget } from './widget';\n", "javascript", "i.js"
    )
    assert [(s.name, s.aliases, s.reexport_from) for s in hoisted] == [("Widget", ("BaseWidget",), "./widget")]


@pytest.mark.parametrize(
    "index_text",
    [
        "import { BaseWidget } from './widget';\nexport { BaseWidget as Widget };\n",
        "export { BaseWidget as Widget } from './widget';\n",
        "import { BaseWidget as Base } from './widget.js';\nexport { Base as Widget };\n",
    ],
)
def test_dict_show_finds_a_renamed_local_reexport(
    index_text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "src/widget.ts").write_text("/** A widget. */\nexport class BaseWidget {}\n", encoding="utf-8")
    (repo / "src/index.ts").write_text(index_text, encoding="utf-8")
    dictionary, _ = DictionaryBuilder().build(repo)
    assert [(s.name, s.file_path, s.start_line, s.aliases) for s in dictionary.symbols] == [
        ("BaseWidget", "src/widget.ts", 2, ("Widget",))
    ]
    dictionary.save(tmp_path / "idx" / DICTIONARY_FILE)
    code = cli.main(["dict", "show", "Widget", "--json", "--index-dir", str(tmp_path / "idx")])
    out, err = capsys.readouterr()
    assert code == 0, err
    payload = json.loads(out)
    assert payload["alias_of"] == ["BaseWidget"]
    assert [(s["qualified_name"], s["file_path"], s["start_line"]) for s in payload["symbols"]] == [
        ("src.widget.BaseWidget", "src/widget.ts", 2)
    ]
