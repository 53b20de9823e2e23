# long: symbol extraction for every supported language: per-language rules read best side by side
"""Tree-sitter symbol extraction: the definitions of a source file as `SymbolDef` records.

Framework-free. One explicit walk per language over the declaration levels of the tree (module, class,
impl, namespace bodies) rather than a tag query: function bodies are entered only at their statement level
(JavaScript, two levels deep), so the walk touches a small fraction of the nodes a query would match
against, and parsing dominates the cost. The walks cover what the grammars' own `tags.scm` queries tag as
definitions (JavaScript's `pair` / `assignment_expression` function values included) at those levels, but
not locals deep inside bodies, which a query cannot tell apart from callbacks.

Supported: Python, JavaScript (Flow-typed too), TypeScript, TSX, Vue single-file components, Go, Rust, Java.
Syntax errors never raise: tree-sitter recovers, and whatever definitions it still recognises are returned.

What is extracted (locals inside function bodies never are):

- Python: functions, classes and methods (nested classes too, and definitions under module- or class-level
  `if` / `try` / `with`), UPPER_CASE constants at module and class level, `type X = ...` / `X: TypeAlias`,
  and other module-level assignments only when `__all__` lists them (kind "variable").
- JavaScript / TypeScript / TSX: function declarations (an overload signature only when no implementation
  follows), classes and their methods (arrow-function fields count as methods), functions and classes
  assigned to `const` / `let` / `var`, exported values, UPPER_CASE consts, `exports.f = function ...`;
  TypeScript interfaces (with their method signatures), type aliases, enums, and namespaces (kind "module").
  Also: functions and classes declared directly in a function's body, two levels deep (vue's `patch` inside
  `baseCreateRenderer`; not exported); the function-valued members of a module-level object literal
  (`TeleportImpl.process`, methods); members assigned from outside (`Axios.prototype.request = function`,
  `A.prototype = { ... }`, `axios.create = ...`, hooks such as `options.vnode = vnode => {}`: methods of that
  object, exported when it is defined and exported here); `module.exports = function httpAdapter` and
  `export default guard && function httpAdapter`; `export default { a, b }` / `module.exports = { a, b }` (names
  exported, methods defined); destructured module-level names when an export list names them
  (`const {isArray} = Array`); declarations inside `declare global {}` / `declare module "x" {}`; in `.d.ts`
  files every declaration (ambient: exported). A renamed export (`export { a as b }`) keeps the definition's
  own name and lists the public name in `aliases`; a renamed re-export (`export { a as b } from './x'`) is a
  "variable" record named `b` with `aliases=("a",)` and `reexport_from="./x"`, which the dictionary builder
  links to `a` in the file it resolves to; so is a local renamed export of an imported name (`import { a } from
  './x'; export { a as b }`). Flow-typed JavaScript that the JavaScript grammar fails on is
  re-parsed with the TypeScript and TSX grammars, keeping the tree with the fewest syntax errors (babel's
  `expression.js`: 437 error nodes with the JavaScript grammar, 0 with TypeScript).
- Vue single-file components (`.vue`): the component (a "class" named after the file, spanning it) and the
  definitions of its `<script>` / `<script setup>` blocks, read with the grammar their `lang` names.
- Go: functions, methods (qualified `Receiver.Method`), type declarations (struct, interface with its
  methods, other), exported consts and vars.
- Rust: functions, impl and trait methods (qualified `Type.method`), structs and unions (kind "struct"),
  enums, traits, type aliases, consts and statics (`static mut` is a "variable"), inline `mod {}` (kind
  "module"), and `macro_rules!` (kind "function": the model has no macro kind).
- Java: classes, records (kind "class"), interfaces and annotation types (kind "interface"), enums, methods,
  constructors (a "method" named after the class), and static final / interface constants.

What "exported" means, per language (a member is exported only when its enclosing container is too):

- Python: listed in the module's `__all__` when it has a literal one (top-level names); otherwise the name
  has no leading underscore. Dunder names (`__init__`, `__call__`) count as exported: they are public
  protocol, unlike `_private` and name-mangled `__private` names.
- JavaScript / TypeScript: declared under `export` / `export default`, named in an `export { ... }` clause,
  or listed in CommonJS `module.exports` / `exports.x = ...`. Members: not `#private`, `private` or
  `protected`.
- Go: the name starts with an upper-case letter (a method also needs an exported receiver type).
- Rust: plain `pub` visibility (`pub(crate)` and friends are not exported); methods of a trait impl and
  items of a trait follow the trait, since Rust forbids `pub` on them; inherent-impl methods follow only their
  own `pub`, since the type may be defined in another file; `macro_rules!` needs `#[macro_export]`.
- Java: a `public` modifier, or a member of an interface / annotation type that is not `private`.
"""

from __future__ import annotations

import importlib
import logging
import re
import threading
from dataclasses import dataclass
from functools import cache
from pathlib import PurePosixPath

from tree_sitter import Language, Node, Parser, Tree

from .extraction import (
    COMMENT_TYPES,
    MAX_DOC_CHARS,
    UPPER_CASE_RE,
    Extractor,
    body_hash,
    field_text,
    python_string,
)
from .model import Reference, SymbolDef, SymbolKind
from .references import collect_references
from .tag_definitions import define_from_tags
from .tags import run_tags, tag_query

logger = logging.getLogger(__name__)

__all__ = [
    "LANGUAGE_BY_EXTENSION",
    "MAX_DOC_CHARS",
    "SUPPORTED_LANGUAGES",
    "FileExtraction",
    "body_hash",
    "extract_file",
    "extract_symbols",
    "language_for_path",
    "module_name_for",
]

LANGUAGE_BY_EXTENSION: dict[str, str] = {
    ".py": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".vue": "vue",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
}

# language -> (grammar module, function returning the language pointer)
_GRAMMARS: dict[str, tuple[str, str]] = {
    "python": ("tree_sitter_python", "language"),
    "javascript": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
    "go": ("tree_sitter_go", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "java": ("tree_sitter_java", "language"),
}
# Languages read through another grammar: a `.vue` file's `<script>` blocks are JavaScript or TypeScript.
_EMBEDDING_LANGUAGES = frozenset({"vue"})
SUPPORTED_LANGUAGES: frozenset[str] = frozenset(_GRAMMARS) | _EMBEDDING_LANGUAGES
# Languages whose definitions come from the tag queries (`tag_definitions.py`); the others have walkers below.
_TAG_DEFINED = frozenset({"go", "rust", "java"})

_JAVA_PACKAGE_RE = re.compile(r"^\s*package\s+([A-Za-z_$][\w$]*(?:\s*\.\s*[A-Za-z_$][\w$]*)*)\s*;", re.MULTILINE)

_PY_CLAUSES = frozenset({"elif_clause", "else_clause", "except_clause", "except_group_clause", "finally_clause"})
_PY_COMPOUND = frozenset({"if_statement", "try_statement", "with_statement"})
_JS_FUNCTION_VALUES = frozenset(
    {"arrow_function", "function_expression", "function", "generator_function", "generator_function_expression"}
)
_JS_CLASS_VALUES = frozenset({"class"})

_thread_state = threading.local()


# ---- languages and paths -----------------------------------------------------------------------------------
def language_for_path(path: str) -> str | None:
    """
    The language of a source file, from its extension.

    :param path: A file path (any separator style).
    :returns: One of the supported language names, or None for a file this module does not parse.
    """
    suffix = PurePosixPath(path.replace("\\", "/")).suffix.lower()
    return LANGUAGE_BY_EXTENSION.get(suffix)


def module_name_for(file_path: str, language: str, text: str | None = None) -> str:
    """
    The dotted module path a file's definitions are qualified with.

    - python: `django/db/models/query.py` -> `django.db.models.query`; `pkg/__init__.py` -> `pkg`; a leading
      `src/` or `lib/` folder is dropped.
    - javascript / typescript / tsx: the path without its extension, dotted; `index` files map to their folder
      (`src/utils/index.ts` -> `src.utils`); `.d.ts` declaration files lose the `.d` too.
    - go: the package folder, dotted (`pkg/server/http.go` -> `pkg.server`; a root file -> "").
    - rust: the crate-relative module path: what follows the last `src/` folder, `mod.rs` mapping to its folder
      and the crate roots `lib.rs` / `main.rs` to "" (`crates/net/src/tcp/mod.rs` -> `tcp`).
    - java: the `package` declaration when `text` is given and has one; otherwise the folder path below
      `src/main/java/`, `src/test/java/` or `src/`.

    :param file_path: POSIX path relative to the repository root.
    :param language: A supported language name.
    :param text: The file's source, only read for Java (its package declaration).
    :returns: The module path; "" when the file is a root without a name of its own.
    :raises ValueError: `language` is not supported.
    """
    _check_language(language)
    parts = [part for part in file_path.replace("\\", "/").split("/") if part not in ("", ".")]
    if not parts:
        return ""
    stem = parts[-1].rsplit(".", 1)[0] if "." in parts[-1][1:] else parts[-1]
    folders = parts[:-1]
    if language == "python":
        if folders and folders[0] in ("src", "lib"):
            folders = folders[1:]
        names = [*folders, stem] if stem != "__init__" else folders
    elif language in ("javascript", "typescript", "tsx", "vue"):
        if stem.endswith(".d"):
            stem = stem[: -len(".d")]
        names = [*folders, stem] if stem != "index" else folders
    elif language == "go":
        names = folders
    elif language == "rust":
        if "src" in folders:
            cut = len(folders) - 1 - folders[::-1].index("src")
            folders, at_crate_root = folders[cut + 1 :], cut == len(folders) - 1
        else:
            at_crate_root = False
        drop = stem == "mod" or (at_crate_root and stem in ("lib", "main"))
        names = folders if drop else [*folders, stem]
    else:  # java
        if text is not None:
            match = _JAVA_PACKAGE_RE.search(text[:20_000])
            if match:
                return re.sub(r"\s+", "", match.group(1))
        names = _java_folder(folders)
    return ".".join(names)


def _java_folder(folders: list[str]) -> list[str]:
    """Folders below the conventional Java source root (Maven / Gradle layouts, or a bare `src/`)."""
    for marker in (["src", "main", "java"], ["src", "test", "java"]):
        for index in range(len(folders) - len(marker), -1, -1):
            if folders[index : index + len(marker)] == marker:
                return folders[index + len(marker) :]
    if folders and folders[0] == "src":
        return folders[1:]
    return folders


def _check_language(language: str) -> None:
    if language not in SUPPORTED_LANGUAGES:
        supported = ", ".join(sorted(SUPPORTED_LANGUAGES))
        raise ValueError(f"unsupported language {language!r} (supported: {supported})")


@cache
def _language(language: str) -> Language:
    module_name, function_name = _GRAMMARS[language]
    module = importlib.import_module(module_name)
    return Language(getattr(module, function_name)())


def _parser(language: str) -> Parser:
    # Parsers are not thread-safe; one per thread and language, Languages are shared.
    parsers: dict[str, Parser] | None = getattr(_thread_state, "parsers", None)
    if parsers is None:
        parsers = _thread_state.parsers = {}
    parser = parsers.get(language)
    if parser is None:
        parser = parsers[language] = Parser(_language(language))
    return parser


# ---- public entry point --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class FileExtraction:
    """What one parse of a file yields: its definitions and the uses of names in it (`references`)."""

    symbols: list[SymbolDef]
    references: list[Reference]


def extract_symbols(text: str, language: str, file_path: str) -> list[SymbolDef]:
    """
    The definitions of one source file.

    Line spans are 1-based and inclusive; they start at a definition's decorators / attributes but not at its
    leading comment (`comment_line` says where that starts). `body_hash` hashes the definition's text with its
    own name masked and whitespace collapsed, so a pure rename keeps it.

    :param text: The file's source.
    :param language: One of `SUPPORTED_LANGUAGES` (see `language_for_path`).
    :param file_path: POSIX path relative to the repository root (recorded, and used for the module path).
    :returns: The definitions in source order (containers before their members).
    :raises ValueError: `language` is not supported.
    """
    return extract_file(text, language, file_path, references=False).symbols


def extract_file(text: str, language: str, file_path: str, *, references: bool = True) -> FileExtraction:
    """
    The definitions of one source file (as `extract_symbols`) and, from the same parse, its references: the calls,
    type uses, base classes, imports and typed variables that the tag queries find (`core/references.py`).

    :param references: False: the definitions alone (the tag query is then run only for Go, Rust and Java, whose
        definitions come from it).
    :raises ValueError: `language` is not supported.
    """
    _check_language(language)
    source = text.encode("utf-8", "surrogatepass")
    module = module_name_for(file_path, language)
    extractor = Extractor(source, language, file_path, module)
    if language == "vue":
        source, grammar = _vue_tree(source)
        tree = _parser(grammar).parse(source)
        extractor.source = source
        _vue_component(extractor, tree.root_node, file_path)
    else:
        grammar = language
        tree = _parser(language).parse(source)
        if language == "javascript" and tree.root_node.has_error:
            tree, grammar = _flow_tree(source, tree)
    root = tree.root_node
    defined_by_tags = language in _TAG_DEFINED
    query = tag_query(grammar, _language(grammar), definitions=defined_by_tags)
    tags = run_tags(query, root) if references or defined_by_tags else []
    if language in _TAG_DEFINED:
        define_from_tags(extractor, root, tags)
    else:
        _WALKERS[language](extractor, root)
    found: list[Reference] = []
    if references:
        try:
            found = collect_references(tags, source, grammar)
        except (IndexError, AttributeError, ValueError) as error:  # a node shape the reader does not know
            # The file's definitions stay; only its uses are left out of the reference graph, and the log says so.
            logger.warning("%s: references not read (%s: %s)", file_path, type(error).__name__, error)
    return FileExtraction(extractor.finish(), found)


def _error_count(node: Node, limit: int = 1_000) -> int:
    """Syntax errors in a tree (ERROR and missing nodes), counted up to `limit`; only erring subtrees are entered."""
    count = 0
    stack = [node]
    while stack and count < limit:
        current = stack.pop()
        if current.type == "ERROR" or current.is_missing:
            count += 1
        elif current.has_error:
            stack.extend(current.children)
    return count


def _flow_tree(source: bytes, tree: Tree) -> tuple[Tree, str]:
    """
    The best parse of a JavaScript file the JavaScript grammar fails on, and its grammar: Flow-typed code
    (`// @flow`: babel's parser, React) reads as TypeScript almost everywhere. The TypeScript and TSX grammars are
    tried, and the tree with the fewest syntax errors wins (ties go to the JavaScript grammar).
    """
    best, best_grammar, best_errors = tree, "javascript", _error_count(tree.root_node)
    for grammar in ("typescript", "tsx"):
        candidate = _parser(grammar).parse(source)
        errors = _error_count(candidate.root_node)
        if errors < best_errors:
            best, best_grammar, best_errors = candidate, grammar, errors
        if best_errors == 0:
            break
    return best, best_grammar


def _vue_component(extractor: Extractor, root: Node, file_path: str) -> None:
    """A `.vue` single-file component itself: a "class" over the whole file, named after the file (its
    `<script>` / `<script setup>` blocks are read by the JavaScript walker, with the grammar their `lang` names)."""
    component_name = _vue_component_name(file_path)
    if component_name:
        source = extractor.source
        index = extractor.add(component_name, "class", root, exported=True)
        record = extractor.defs[index]
        record.start_row, record.start_byte = 0, 0
        record.end_byte = len(source)
        record.end_row = max(0, source.count(b"\n") - (1 if source.endswith(b"\n") else 0))


# ---- Python --------------------------------------------------------------------------------------------------
def _walk_python(ex: Extractor, root: Node) -> None:
    _py_block(ex, root, (), None, None, False)


def _py_block(
    ex: Extractor, block: Node, scopes: tuple[str, ...], parent: str | None, container: int | None, in_class: bool
) -> None:
    for child in block.named_children:
        kind = child.type
        definition = child
        if kind == "decorated_definition":
            inner = child.child_by_field_name("definition")
            if inner is None:
                continue
            definition, kind = inner, inner.type
        if kind == "function_definition":
            name = field_text(ex, definition, "name")
            if name:
                ex.add(
                    name,
                    "method" if in_class else "function",
                    child,
                    scopes=scopes,
                    parent=parent,
                    container=container,
                    exported=_py_public(name),
                    top_level=not scopes,
                    doc=_py_docstring(ex, definition),
                )
        elif kind == "class_definition":
            name = field_text(ex, definition, "name")
            body = definition.child_by_field_name("body")
            if name:
                index = ex.add(
                    name,
                    "class",
                    child,
                    scopes=scopes,
                    parent=parent,
                    container=container,
                    exported=_py_public(name),
                    top_level=not scopes,
                    doc=_py_docstring(ex, definition),
                )
                if body is not None:
                    _py_block(ex, body, (*scopes, name), name, index, True)
        elif kind == "expression_statement":
            _py_assignment(ex, child, scopes, parent, container)
        elif kind == "type_alias_statement" and not scopes:
            left = child.child_by_field_name("left")
            name = ex.text(left.named_children[0] if left is not None and left.named_children else left)
            if name.isidentifier():
                ex.add(name, "type", child, exported=_py_public(name), top_level=True)
        elif kind in _PY_COMPOUND:
            _py_compound(ex, child, scopes, parent, container, in_class)


def _py_compound(
    ex: Extractor, node: Node, scopes: tuple[str, ...], parent: str | None, container: int | None, in_class: bool
) -> None:
    # Definitions under `if TYPE_CHECKING:` / `try: ... except ImportError:` still belong to the module or class.
    for child in node.named_children:
        if child.type == "block":
            _py_block(ex, child, scopes, parent, container, in_class)
        elif child.type in _PY_CLAUSES:
            _py_compound(ex, child, scopes, parent, container, in_class)


def _py_public(name: str) -> bool:
    return not name.startswith("_") or (name.startswith("__") and name.endswith("__") and len(name) > 4)


def _py_docstring(ex: Extractor, definition: Node) -> str:
    body = definition.child_by_field_name("body")
    if body is None:
        return ""
    for statement in body.named_children:
        if statement.type == "comment":
            continue
        if statement.type == "expression_statement" and statement.named_child_count == 1:
            string = statement.named_children[0]
            if string.type == "string":
                return python_string(ex.text(string))
        return ""
    return ""


def _py_assignment(
    ex: Extractor, statement: Node, scopes: tuple[str, ...], parent: str | None, container: int | None
) -> None:
    if statement.named_child_count != 1:
        return
    node: Node | None = statement.named_children[0]
    if node is not None and node.type == "augmented_assignment":
        if ex.text(node.child_by_field_name("left")) == "__all__" and not scopes:
            _py_collect_all(ex, node.child_by_field_name("right"))
        return
    while node is not None and node.type == "assignment":
        left = node.child_by_field_name("left")
        right = node.child_by_field_name("right")
        annotation = ex.text(node.child_by_field_name("type"))
        for target in _py_targets(left):
            name = ex.text(target)
            if name == "__all__" and not scopes:
                _py_collect_all(ex, right)
            elif not scopes and annotation.rpartition(".")[2] == "TypeAlias":
                ex.add(name, "type", statement, exported=_py_public(name), top_level=True)
            elif UPPER_CASE_RE.fullmatch(name):
                ex.add(
                    name,
                    "constant",
                    statement,
                    scopes=scopes,
                    parent=parent,
                    container=container,
                    exported=_py_public(name),
                    top_level=not scopes,
                )
            elif not scopes:
                ex.add(name, "variable", statement, exported=True, top_level=True, listed_only=True)
        node = right if right is not None and right.type == "assignment" else None


def _py_targets(left: Node | None) -> list[Node]:
    if left is None:
        return []
    if left.type == "identifier":
        return [left]
    if left.type in ("pattern_list", "tuple_pattern"):
        return [target for target in left.named_children if target.type == "identifier"]
    return []


def _py_collect_all(ex: Extractor, node: Node | None) -> None:
    """Add the string literals of an `__all__` value; anything computed marks the list incomplete."""
    if ex.listed is None:
        ex.listed = set()
    if node is None:
        ex.listed_complete = False
        return
    kind = node.type
    if kind in ("list", "tuple", "set"):
        for element in node.named_children:
            if element.type == "string":
                ex.listed.add(python_string(ex.text(element)))
            elif element.type != "comment":
                ex.listed_complete = False
    elif kind == "binary_operator":
        _py_collect_all(ex, node.child_by_field_name("left"))
        _py_collect_all(ex, node.child_by_field_name("right"))
    elif kind == "parenthesized_expression" and node.named_child_count == 1:
        _py_collect_all(ex, node.named_children[0])
    else:
        ex.listed_complete = False


# ---- JavaScript / TypeScript ------------------------------------------------------------------------------------
# Functions nested this deep inside other functions are still definitions (vue's `baseCreateRenderer` defines
# `patch`, `mountComponent`... as `const` arrows in its body); deeper ones are local helpers.
_JS_MAX_FUNCTION_DEPTH = 2
_JS_WRAPPERS = frozenset({"parenthesized_expression", "as_expression", "satisfies_expression", "non_null_expression"})
_JS_DECLARATION_FILE_RE = re.compile(r"\.d\.[cm]?ts$")


def _walk_js(ex: Extractor, root: Node) -> None:
    ex.listed = set()  # local names exported by `export { a, b }`, `export default a`, `module.exports`
    ex.ambient = bool(_JS_DECLARATION_FILE_RE.search(ex.file_path))
    _js_imports(ex, root)
    _js_statements(ex, root, (), None, True)


def _js_imports(ex: Extractor, root: Node) -> None:
    """
    The module-level imported bindings: `import { a, b as c } from './x'` (`a` -> `a`, `c` -> `b`) and
    `import d from './x'` (`d` -> `default`). Collected before the walk: imports are hoisted, so an export list may
    name one above its import. Namespace imports (`import * as ns`) name no single definition and are left out.
    """
    for statement in root.named_children:
        source = statement.child_by_field_name("source") if statement.type == "import_statement" else None
        if source is None:
            continue
        specifier = ex.text(source)[1:-1]
        for clause in statement.named_children:
            if clause.type != "import_clause":
                continue
            for binding in clause.named_children:
                if binding.type == "identifier":
                    ex.imports[ex.text(binding)] = ("default", specifier)
                elif binding.type == "named_imports":
                    for item in binding.named_children:
                        imported = field_text(ex, item, "name")
                        local = field_text(ex, item, "alias") or imported
                        if item.type == "import_specifier" and imported and local:
                            ex.imports[local] = (imported, specifier)


def _js_unwrap(node: Node | None) -> Node | None:
    """`(x)`, `x as T`, `x satisfies T`, `x!` -> x."""
    while node is not None and node.type in _JS_WRAPPERS and node.named_child_count:
        node = node.named_children[0]
    return node


def _js_guarded(node: Node | None) -> Node | None:
    """The value a guard selects: `supported && function httpAdapter() {}` -> the function."""
    node = _js_unwrap(node)
    while node is not None and node.type == "binary_expression" and _field_text_raw(node, "operator") in ("&&", "||"):
        node = _js_unwrap(node.child_by_field_name("right"))
    return node


def _field_text_raw(node: Node, field: str) -> str:
    child = node.child_by_field_name(field)
    return (child.text or b"").decode("utf-8", "replace") if child is not None else ""


def _js_statements(ex: Extractor, block: Node, scopes: tuple[str, ...], container: int | None, top_level: bool) -> None:
    for statement in block.named_children:
        kind = statement.type
        if kind == "export_statement":
            declaration = statement.child_by_field_name("declaration")
            if declaration is not None:
                _js_declaration(ex, declaration, statement, scopes, container, True, top_level)
            elif top_level:
                _js_export_names(ex, statement)
        elif kind == "expression_statement":
            if top_level:
                _js_expression(ex, statement)
            elif ex.ambient and statement.named_child_count:  # `declare module "x" {}` parses as an expression
                _js_declaration(ex, statement.named_children[0], statement, scopes, container, True, False)
        elif kind not in COMMENT_TYPES:
            _js_declaration(ex, statement, statement, scopes, container, ex.ambient, top_level)


def _js_declaration(
    ex: Extractor,
    node: Node,
    anchor: Node,
    scopes: tuple[str, ...],
    container: int | None,
    exported: bool,
    top_level: bool,
) -> None:
    kind = node.type
    if kind == "ambient_declaration":  # `declare function f(): void;`, `declare global {}`, `declare module "x" {}`
        ambient, ex.ambient = ex.ambient, True
        for child in node.named_children:
            if child.type == "statement_block":  # `declare global { ... }`: its declarations are global
                _js_statements(ex, child, scopes, container, top_level)
            else:  # `declare function f()` in a `.ts` file describes something defined elsewhere
                _js_declaration(ex, child, anchor, scopes, container, exported, top_level)
        ex.ambient = ambient
        return
    if kind == "module":  # `declare module "x" { ... }`: an ambient module's declarations are all public
        body = node.child_by_field_name("body")
        if body is not None:
            ambient, ex.ambient = ex.ambient, True
            _js_statements(ex, body, scopes, container, top_level)
            ex.ambient = ambient
        return
    name = field_text(ex, node, "name")

    def emit(kind: SymbolKind, *, signature: bool = False, outer: tuple[str, ...] = ()) -> int:
        return ex.add(
            name,
            kind,
            anchor,
            scopes=(*scopes, *outer),
            container=container,
            exported=exported,
            top_level=top_level and not outer,
            signature=signature,
        )

    if kind in ("function_declaration", "generator_function_declaration", "function_signature"):
        if name:
            index = emit("function", signature=kind == "function_signature")
            _js_function_body(ex, node, (*scopes, name), index)
    elif kind in ("class_declaration", "abstract_class_declaration", "interface_declaration", "class"):
        if name:
            index = emit("interface" if kind == "interface_declaration" else "class")
            _js_class_body(ex, node.child_by_field_name("body"), (*scopes, name), name, index)
    elif kind in ("type_alias_declaration", "enum_declaration"):
        if name:
            emit("type" if kind == "type_alias_declaration" else "enum")
    elif kind == "internal_module":  # `namespace A.B { ... }`
        name_node = node.child_by_field_name("name")
        body = node.child_by_field_name("body")
        if name_node is not None and name_node.type in ("identifier", "nested_identifier"):
            *outer, name = "".join(ex.text(name_node).split()).split(".")
            index = emit("module", outer=tuple(outer))
            if body is not None:
                _js_statements(ex, body, (*scopes, *outer, name), index, False)
    elif kind in ("lexical_declaration", "variable_declaration"):
        _js_variables(ex, node, anchor, scopes, container, exported, top_level)


def _js_function_body(ex: Extractor, function: Node | None, scopes: tuple[str, ...], container: int) -> None:
    """Functions and classes declared directly in a function's body (closures a factory returns, helpers)."""
    body = function.child_by_field_name("body") if function is not None else None
    if body is None or body.type != "statement_block" or ex.function_depth >= _JS_MAX_FUNCTION_DEPTH:
        return
    ex.function_depth += 1
    ambient, ex.ambient = ex.ambient, False
    for statement in body.named_children:
        if statement.type in ("function_declaration", "generator_function_declaration", "class_declaration"):
            _js_declaration(ex, statement, statement, scopes, container, False, False)
        elif statement.type in ("lexical_declaration", "variable_declaration"):
            _js_variables(ex, statement, statement, scopes, container, False, False)
    ex.ambient = ambient
    ex.function_depth -= 1


def _js_variables(
    ex: Extractor,
    node: Node,
    anchor: Node,
    scopes: tuple[str, ...],
    container: int | None,
    exported: bool,
    top_level: bool,
) -> None:
    is_const = node.child_count > 0 and node.children[0].type == "const"
    declarators = [child for child in node.named_children if child.type == "variable_declarator"]
    for declarator in declarators:
        name_node = declarator.child_by_field_name("name")
        if name_node is not None and name_node.type == "object_pattern" and top_level and not ex.function_depth:
            # `const {isArray} = Array`: each name is a module-level binding, kept when an export list names it.
            for element in name_node.named_children:
                if element.type == "shorthand_property_identifier_pattern":
                    ex.add(
                        ex.text(element),
                        "variable",
                        declarator,
                        scopes=scopes,
                        container=container,
                        exported=exported,
                        top_level=True,
                        listed_only=not exported,
                        comment_anchor=anchor,
                    )
            continue
        if name_node is None or name_node.type != "identifier":
            continue  # other destructuring patterns define no single symbol
        name = ex.text(name_node)
        value = _js_unwrap(declarator.child_by_field_name("value"))
        value_kind = value.type if value is not None else ""
        span, comment_anchor = (anchor, None) if len(declarators) == 1 else (declarator, anchor)
        kind: SymbolKind = "constant" if is_const else "variable"
        listed_only = False
        methods = _js_object_methods(ex, value) if value_kind == "object" and top_level else []
        if value_kind in _JS_FUNCTION_VALUES:
            kind = "function"
        elif value_kind in _JS_CLASS_VALUES:
            kind = "class"
        elif ex.function_depth or (not exported and not (is_const and UPPER_CASE_RE.fullmatch(name)) and not methods):
            if not top_level:
                continue
            listed_only = True  # kept only if `export { name }` or `module.exports` names it, maybe further down
        index = ex.add(
            name,
            kind,
            span,
            scopes=scopes,
            container=container,
            exported=exported,
            top_level=top_level,
            listed_only=listed_only,
            comment_anchor=comment_anchor,
        )
        if kind == "class" and value is not None:
            _js_class_body(ex, value.child_by_field_name("body"), (*scopes, name), name, index)
        elif kind == "function":
            _js_function_body(ex, value, (*scopes, name), index)
        for method_name, method in methods:
            ex.add(method_name, "method", method, scopes=(*scopes, name), parent=name, container=index)


def _js_object_methods(ex: Extractor, obj: Node | None) -> list[tuple[str, Node]]:
    """The function-valued members of an object literal: `{ process() {}, remove: function () {}, f: () => 1 }`."""
    methods: list[tuple[str, Node]] = []
    if obj is None or obj.type != "object":
        return methods
    for entry in obj.named_children:
        if entry.type == "method_definition":
            key = entry.child_by_field_name("name")
        elif entry.type == "pair":
            value = _js_unwrap(entry.child_by_field_name("value"))
            if value is None or value.type not in _JS_FUNCTION_VALUES:
                continue
            key = entry.child_by_field_name("key")
        else:
            continue
        if key is not None and key.type in ("property_identifier", "identifier"):
            methods.append((ex.text(key), entry))
        elif key is not None and key.type == "string":
            text = ex.text(key)[1:-1]
            if text.isidentifier():
                methods.append((text, entry))
    return methods


def _js_class_body(ex: Extractor, body: Node | None, scopes: tuple[str, ...], parent: str, container: int) -> None:
    if body is None:
        return
    for member in body.named_children:
        kind = member.type
        if kind in ("method_definition", "abstract_method_signature", "method_signature"):
            name_node = member.child_by_field_name("name")
        elif kind in ("field_definition", "public_field_definition"):
            value = member.child_by_field_name("value")
            if value is None or value.type not in _JS_FUNCTION_VALUES:
                continue  # plain fields are state, not definitions
            name_node = member.child_by_field_name("name") or member.child_by_field_name("property")
        else:
            continue
        if name_node is None or name_node.type not in ("property_identifier", "private_property_identifier"):
            continue  # computed and string-keyed members have no stable name
        name = ex.text(name_node).lstrip("#")
        private = name_node.type == "private_property_identifier" or any(
            child.type == "accessibility_modifier" and ex.text(child) in ("private", "protected")
            for child in member.named_children
        )
        # In a class body a `method_signature` is an overload; in an interface it is the whole member.
        signature = kind == "method_signature" and body.type == "class_body"
        ex.add(
            name,
            "method",
            member,
            scopes=scopes,
            parent=parent,
            container=container,
            exported=not private,
            signature=signature,
        )


def _js_export_names(ex: Extractor, statement: Node) -> None:
    """
    `export { a, b as c }`, `export default a` and `export default { a, b }` export the local names a and b.

    A renamed export keeps the public name as an alias of the local definition; a renamed re-export from another
    module (`export { a as c } from './x'`) becomes a re-export record that the dictionary links to `a` there.
    """
    assert ex.listed is not None
    source = statement.child_by_field_name("source")
    if source is not None:
        specifier = ex.text(source)[1:-1]
        for child in statement.named_children:
            if child.type != "export_clause":
                continue
            for item in child.named_children:
                own, public = field_text(ex, item, "name"), field_text(ex, item, "alias")
                if item.type == "export_specifier" and own and public:
                    _js_reexport(ex, item, statement, public, own, specifier)
        return
    value = _js_guarded(statement.child_by_field_name("value"))
    if value is not None and value.type == "identifier":
        ex.listed.add(ex.text(value))
    elif value is not None and value.type == "object":  # `export default { isArray, kindOf, merge() {} }`
        _js_listed_object(ex, value, statement)
    elif value is not None and (value.type in _JS_FUNCTION_VALUES or value.type in _JS_CLASS_VALUES):
        name = field_text(ex, value, "name")
        if name:  # `export default supported && function httpAdapter(config) {}`
            _js_assigned(ex, name, value, statement, (), None, None, True)
    for child in statement.named_children:
        if child.type == "export_clause":
            for item in child.named_children:
                if item.type == "export_specifier":
                    own, public = field_text(ex, item, "name"), field_text(ex, item, "alias")
                    ex.listed.add(own)
                    if own in ex.imports:  # `import { a } from './x'; export { a as b }`: a re-export of `a`
                        imported, specifier = ex.imports[own]
                        # `import d from './x'; export { d }` names nothing new, and no record could link to it.
                        if imported != "default" or (public and public != own):
                            _js_reexport(ex, item, statement, public or own, imported, specifier)
                    elif public and public != own and public != "default":
                        ex.public_names.setdefault(own, []).append(public)
        elif child.type == "identifier":  # TypeScript `export = Foo`
            ex.listed.add(ex.text(child))


def _js_reexport(ex: Extractor, item: Node, statement: Node, public: str, own: str, specifier: str) -> None:
    """
    A re-export record: `public` is the name this module gives `own` of the module `specifier` names. Only a new
    name makes one (`export { a } from './x'` renames nothing); the dictionary links it to `own` when it resolves.
    """
    if public in (own, "default"):
        return
    ex.add(public, "variable", item, exported=True, comment_anchor=statement)
    # `export { default as Teleport } from './Teleport.vue'`: "default" is no name to look up.
    ex.defs[-1].aliases = (own,) if own != "default" else ()
    ex.defs[-1].reexport_from = specifier


def _js_listed_object(ex: Extractor, obj: Node, statement: Node) -> None:
    """An exported object literal: its shorthand and identifier members are exported, its methods defined."""
    assert ex.listed is not None
    for entry in obj.named_children:
        if entry.type == "shorthand_property_identifier":
            ex.listed.add(ex.text(entry))
        elif entry.type == "pair":
            value = _js_unwrap(entry.child_by_field_name("value"))
            key = field_text(ex, entry, "key")
            if value is not None and value.type == "identifier":
                ex.listed.add(ex.text(value))
                if key and key != ex.text(value) and key.isidentifier():
                    ex.public_names.setdefault(ex.text(value), []).append(key)
    for name, method in _js_object_methods(ex, obj):
        ex.add(name, "function", method, top_level=True, comment_anchor=None)


def _js_expression(ex: Extractor, statement: Node) -> None:
    """
    Top-level assignments that define or export something.

    CommonJS: `module.exports = {a, b}`, `module.exports = a`, `module.exports = function httpAdapter() {}`,
    `exports.f = function () {}`. Members assigned from outside: `Axios.prototype.request = function () {}`,
    `Axios.prototype = { request() {} }`, `axios.create = function () {}`, and hooks such as
    `options.vnode = vnode => {}` (methods of the object, exported when that object is defined and exported here).
    """
    assert ex.listed is not None
    expression = statement.named_children[0] if statement.named_child_count else None
    if expression is None or expression.type != "assignment_expression":
        return
    left = expression.child_by_field_name("left")
    right = _js_guarded(expression.child_by_field_name("right"))
    if left is None or right is None or left.type != "member_expression":
        return
    target = ex.text(left)
    if target == "module.exports":
        if right.type == "identifier":
            ex.listed.add(ex.text(right))
        elif right.type == "object":
            _js_listed_object(ex, right, statement)
        elif right.type in _JS_FUNCTION_VALUES or right.type in _JS_CLASS_VALUES:
            name = field_text(ex, right, "name")
            if name:  # `module.exports = function httpAdapter(config) {}`
                _js_assigned(ex, name, right, statement, (), None, None, True)
        return
    if target.startswith(("exports.", "module.exports.")) and target.count(".") == target.startswith("module") + 1:
        name = target.rpartition(".")[2]
        if right.type in _JS_FUNCTION_VALUES or right.type in _JS_CLASS_VALUES:
            _js_assigned(ex, name, right, statement, (), None, None, True)
        elif right.type == "identifier":
            ex.listed.add(ex.text(right))
        return
    owner_node = left.child_by_field_name("object")
    property_node = left.child_by_field_name("property")
    if owner_node is None or property_node is None or property_node.type != "property_identifier":
        return
    member = ex.text(property_node)
    if owner_node.type == "member_expression" and field_text(ex, owner_node, "property") == "prototype":
        owner_node = owner_node.child_by_field_name("object")  # `A.prototype.b = ...`
    elif member == "prototype" and right.type == "object" and owner_node.type == "identifier":
        owner = ex.text(owner_node)  # `A.prototype = { b() {}, c: function () {} }`
        container = ex.top_level_index(owner)
        for name, method in _js_object_methods(ex, right):
            ex.add(name, "method", method, scopes=(owner,), parent=owner, container=container, exported=True)
        return
    if owner_node is None or owner_node.type != "identifier":
        return
    if right.type not in _JS_FUNCTION_VALUES and right.type not in _JS_CLASS_VALUES:
        return
    owner = ex.text(owner_node)
    container = ex.top_level_index(owner)
    # A hook on an imported object (`options.vnode = ...`) is no export of this module.
    exported = container is not None and not member.startswith("_")
    _js_assigned(ex, member, right, statement, (owner,), owner, container, exported)


def _js_assigned(
    ex: Extractor,
    name: str,
    value: Node,
    statement: Node,
    scopes: tuple[str, ...],
    parent: str | None,
    container: int | None,
    exported: bool,
) -> None:
    """A function or class assigned to a name (`module.exports = ...`, `A.prototype.b = ...`)."""
    is_class = value.type in _JS_CLASS_VALUES
    kind: SymbolKind = "class" if is_class else ("method" if parent else "function")
    index = ex.add(
        name,
        kind,
        statement,
        scopes=scopes,
        parent=parent,
        container=container,
        exported=exported,
        top_level=not scopes,
    )
    if is_class:
        _js_class_body(ex, value.child_by_field_name("body"), (*scopes, name), name, index)
    else:
        _js_function_body(ex, value, (*scopes, name), index)


# ---- Vue single-file components -----------------------------------------------------------------------------
_VUE_SCRIPT_RE = re.compile(rb"<script\b([^>]*)>(.*?)</script\s*>", re.DOTALL | re.IGNORECASE)
_VUE_LANG_RE = re.compile(rb"""\blang\s*=\s*["']?([A-Za-z]+)""")
_VUE_GRAMMAR = {b"ts": "typescript", b"tsx": "tsx", b"jsx": "tsx"}


def _vue_tree(source: bytes) -> tuple[bytes, str]:
    """
    The source with everything outside its `<script>` / `<script setup>` blocks blanked (newlines kept, so lines
    and byte offsets stay the file's own), and the grammar the blocks ask for (`lang="ts"`).
    """
    blanked = bytearray(b" " * len(source))
    for index, byte in enumerate(source):
        if byte == 0x0A:
            blanked[index] = 0x0A
    grammar = "javascript"
    for match in _VUE_SCRIPT_RE.finditer(source):
        start, end = match.span(2)
        blanked[start:end] = source[start:end]
        lang = _VUE_LANG_RE.search(match.group(1))
        if lang is not None and lang.group(1).lower() in _VUE_GRAMMAR:
            grammar = _VUE_GRAMMAR[lang.group(1).lower()]
    return bytes(blanked), grammar


def _vue_component_name(file_path: str) -> str:
    """`src/components/hello-world.vue` -> `HelloWorld`; `App.vue` -> `App`."""
    stem = PurePosixPath(file_path).name.rsplit(".", 1)[0]
    words = [word for word in re.split(r"[^A-Za-z0-9]+", stem) if word]
    name = "".join(word[:1].upper() + word[1:] for word in words)
    if stem.lower() == "index" and len(PurePosixPath(file_path).parts) > 1:
        return _vue_component_name(PurePosixPath(file_path).parent.name + ".vue")
    return name if name[:1].isalpha() else ""


_WALKERS = {
    "python": _walk_python,
    "vue": _walk_js,
    "javascript": _walk_js,
    "typescript": _walk_js,
    "tsx": _walk_js,
}
