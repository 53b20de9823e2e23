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

import hashlib
import importlib
import re
import threading
from functools import cache
from pathlib import PurePosixPath

from tree_sitter import Language, Node, Parser, Tree

from haystack_integrations.components.code_alias.core.model import SymbolDef, SymbolKind

__all__ = [
    "LANGUAGE_BY_EXTENSION",
    "SUPPORTED_LANGUAGES",
    "body_hash",
    "doc_comment_text",
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

MAX_DOC_CHARS = 500

_UPPER_CASE_RE = re.compile(r"_*[A-Z][A-Z0-9_]*")
_COMMENT_PREFIX_RE = re.compile(r"^\s*(?:/\*+!?|\*+(?!/)|//+!?|#+)")
_COMMENT_SUFFIX_RE = re.compile(r"\*+/\s*$")
_JAVA_PACKAGE_RE = re.compile(r"^\s*package\s+([A-Za-z_$][\w$]*(?:\s*\.\s*[A-Za-z_$][\w$]*)*)\s*;", re.MULTILINE)
# Bytes that continue an identifier: ASCII word characters, `$`, and any UTF-8 multi-byte sequence.
_IDENT_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_$") | frozenset(
    range(0x80, 0x100)
)
_NAME_PLACEHOLDER = b"\x00"

_PY_CLAUSES = frozenset({"elif_clause", "else_clause", "except_clause", "except_group_clause", "finally_clause"})
_PY_COMPOUND = frozenset({"if_statement", "try_statement", "with_statement"})
_JS_FUNCTION_VALUES = frozenset(
    {"arrow_function", "function_expression", "function", "generator_function", "generator_function_expression"}
)
_JS_CLASS_VALUES = frozenset({"class"})
_COMMENT_TYPES = frozenset({"comment", "line_comment", "block_comment"})
# Siblings that belong to the definition that follows them (decorators and attributes).
_SPAN_EXTENDERS = frozenset({"decorator", "attribute_item"})

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
def extract_symbols(text: str, language: str, file_path: str) -> list[SymbolDef]:
    """
    The definitions of one source file.

    Line spans are 1-based and inclusive; they start at a definition's decorators / attributes but not at its
    leading comment. `body_hash` hashes the definition's text with its own name masked and whitespace
    collapsed, so a pure rename keeps it.

    :param text: The file's source.
    :param language: One of `SUPPORTED_LANGUAGES` (see `language_for_path`).
    :param file_path: POSIX path relative to the repository root (recorded, and used for the module path).
    :returns: The definitions in source order (containers before their members).
    :raises ValueError: `language` is not supported.
    """
    _check_language(language)
    source = text.encode("utf-8", "surrogatepass")
    module = module_name_for(file_path, language)
    if language == "vue":
        return _extract_vue(source, file_path, module)
    tree = _parser(language).parse(source)
    if language == "javascript" and tree.root_node.has_error:
        tree = _flow_tree(source, tree)
    extractor = _Extractor(source, language, file_path, module)
    walk = _WALKERS[language]
    walk(extractor, tree.root_node)
    return extractor.finish()


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


def _flow_tree(source: bytes, tree: Tree) -> Tree:
    """
    The best parse of a JavaScript file the JavaScript grammar fails on: Flow-typed code (`// @flow`: babel's
    parser, React) reads as TypeScript almost everywhere. The TypeScript and TSX grammars are tried, and the tree
    with the fewest syntax errors wins (ties go to the JavaScript grammar).
    """
    best, best_errors = tree, _error_count(tree.root_node)
    for grammar in ("typescript", "tsx"):
        candidate = _parser(grammar).parse(source)
        errors = _error_count(candidate.root_node)
        if errors < best_errors:
            best, best_errors = candidate, errors
        if best_errors == 0:
            break
    return best


def _extract_vue(source: bytes, file_path: str, module: str) -> list[SymbolDef]:
    """A `.vue` single-file component: the component itself (a "class" over the whole file, named after the
    file) and the definitions of its `<script>` / `<script setup>` blocks, parsed as the `lang` they declare."""
    blanked, grammar = _vue_tree(source)
    tree = _parser(grammar).parse(blanked)
    extractor = _Extractor(blanked, "vue", file_path, module)
    component_name = _vue_component_name(file_path)
    if component_name:
        index = extractor.add(component_name, "class", tree.root_node, exported=True)
        record = extractor.defs[index]
        record.start_row, record.start_byte = 0, 0
        record.end_byte = len(source)
        record.end_row = max(0, source.count(b"\n") - (1 if source.endswith(b"\n") else 0))
    _walk_js(extractor, tree.root_node)
    return extractor.finish()


# ---- extraction state ---------------------------------------------------------------------------------------
class _Def:
    """A definition before its export status is final (that can depend on `__all__` or `export {}` later)."""

    __slots__ = (
        "aliases",
        "container",
        "doc",
        "end_byte",
        "end_row",
        "kind",
        "listed_only",
        "name",
        "own_exported",
        "parent",
        "reexport_from",
        "scopes",
        "signature",
        "start_byte",
        "start_row",
        "top_level",
    )

    def __init__(
        self,
        name: str,
        kind: SymbolKind,
        scopes: tuple[str, ...],
        parent: str | None,
        container: int | None,
        own_exported: bool,
        top_level: bool,
        listed_only: bool,
        signature: bool,
    ) -> None:
        self.name = name
        self.kind: SymbolKind = kind
        self.scopes = scopes
        self.parent = parent
        self.container = container
        self.own_exported = own_exported
        self.top_level = top_level
        self.listed_only = listed_only
        self.signature = signature
        self.start_row = 0
        self.end_row = 0
        self.start_byte = 0
        self.end_byte = 0
        self.doc = ""
        self.aliases: tuple[str, ...] = ()
        self.reexport_from: str | None = None


class _Extractor:
    """Collects definitions for one file; the per-language walkers below drive it."""

    def __init__(self, source: bytes, language: str, file_path: str, module: str) -> None:
        self.source = source
        self.language = language
        self.file_path = file_path
        self.module = module
        self.defs: list[_Def] = []
        # Python `__all__` (None: the module has none) and whether every part of it was a literal.
        self.listed: set[str] | None = None
        self.listed_complete = True
        # JavaScript: local name -> the public names a renamed export gives it (`export { a as b }`).
        self.public_names: dict[str, list[str]] = {}
        # JavaScript: local name of an imported binding -> (its name in the module it comes from, that module's
        # specifier), so `import { a } from './x'; export { a as b }` reads as `export { a as b } from './x'`.
        self.imports: dict[str, tuple[str, str]] = {}
        # JavaScript: inside a `.d.ts` file, `declare global {}` or `declare module "x" {}` (everything public).
        self.ambient = False
        # JavaScript: how many function bodies deep the walk is (`_JS_MAX_FUNCTION_DEPTH`).
        self.function_depth = 0
        self._top_level: dict[str, int] = {}

    def top_level_index(self, name: str) -> int | None:
        """The index of the last module-level definition called `name` so far, if any."""
        return self._top_level.get(name)

    # -- recording ----------------------------------------------------------------------------------------
    def add(
        self,
        name: str,
        kind: SymbolKind,
        node: Node,
        *,
        scopes: tuple[str, ...] = (),
        parent: str | None = None,
        container: int | None = None,
        exported: bool = True,
        top_level: bool = False,
        doc: str = "",
        listed_only: bool = False,
        signature: bool = False,
        comment_anchor: Node | None = None,
    ) -> int:
        """
        Record a definition spanning `node` (plus decorators / attributes right above it).

        :param doc: A docstring; when empty, the leading comment block above the definition is used.
        :param top_level: Whether a module-level export list (`__all__`, `export {}`) can export it.
        :param listed_only: Keep it only if that export list names it (plain module-level variables).
        :param signature: A body-less overload or declaration, dropped when a full definition shares its name.
        :param comment_anchor: The statement whose leading comment documents `node` when `node` is only part of
            it (one declarator of `const a = 1, b = 2`); the span is then `node` alone.
        :returns: The definition's index, to pass as `container` for its members.
        """
        record = _Def(name, kind, scopes, parent, container, exported, top_level, listed_only, signature)
        if comment_anchor is None:
            start_node, comment = self._leading(node)
        else:
            start_node, comment = node, self._leading(comment_anchor)[1]
        record.start_row = start_node.start_point.row
        record.start_byte = start_node.start_byte
        record.end_byte = node.end_byte
        end = node.end_point
        # A node that swallows its trailing newline ends at column 0 of the next line.
        record.end_row = end.row - 1 if end.column == 0 and end.row > record.start_row else end.row
        record.doc = _clip(doc) if doc else comment
        self.defs.append(record)
        if not scopes:
            self._top_level[name] = len(self.defs) - 1
        return len(self.defs) - 1

    def _leading(self, node: Node) -> tuple[Node, str]:
        """The first node of the definition's span (decorators / attributes) and its leading comment block."""
        start = node
        top_row = node.start_point.row
        comments: list[Node] = []
        sibling = node.prev_named_sibling
        while sibling is not None:
            kind = sibling.type
            if kind not in _COMMENT_TYPES and kind not in _SPAN_EXTENDERS:
                break
            if _end_row(sibling) < top_row - 1:
                sibling = None  # a blank line separates it: not this definition's
                break
            if kind in _SPAN_EXTENDERS:
                if comments:
                    break  # an attribute above the comment belongs to something else
                start = sibling
            else:
                raw = sibling.text or b""
                if raw.startswith((b"//!", b"/*!")):
                    sibling = None  # an inner doc comment documents the enclosing module
                    break
                comments.append(sibling)
            top_row = sibling.start_point.row
            sibling = sibling.prev_named_sibling
        if comments and sibling is not None and _end_row(sibling) >= comments[-1].start_point.row:
            comments.pop()  # a trailing comment of the statement before (`x = 1  # note`)
        if not comments:
            return start, ""
        return start, _clean_comment(b"\n".join(c.text or b"" for c in reversed(comments)))

    def text(self, node: Node | None) -> str:
        if node is None:
            return ""
        return self.source[node.start_byte : node.end_byte].decode("utf-8", "replace")

    # -- finishing -------------------------------------------------------------------------------------------
    def finish(self) -> list[SymbolDef]:
        exported = self._resolve_exports()
        keep = [True] * len(self.defs)
        seen_assignments: set[str] = set()
        full_names = {
            (d.scopes, d.name) for d in self.defs if not d.signature and d.kind in ("function", "method", "class")
        }
        for index, record in enumerate(self.defs):
            if record.listed_only and not self._is_listed(record.name):
                keep[index] = False
            elif record.signature and (record.scopes, record.name) in full_names:
                keep[index] = False  # an overload signature of a function defined in full
            elif record.kind in ("constant", "variable"):
                key = ".".join((*record.scopes, record.name))
                if key in seen_assignments:
                    keep[index] = False  # re-assigned (if/else branches): the first assignment defines it
                seen_assignments.add(key)
        order = sorted(
            (i for i in range(len(self.defs)) if keep[i]),
            key=lambda i: (self.defs[i].start_byte, -self.defs[i].end_byte, i),
        )
        for record in self.defs:
            if record.top_level and record.name in self.public_names:
                record.aliases = tuple(dict.fromkeys((*record.aliases, *self.public_names[record.name])))
        return [self._symbol(self.defs[i], exported[i]) for i in order]

    def _is_listed(self, name: str) -> bool:
        return self.listed is not None and name in self.listed

    def _resolve_exports(self) -> list[bool]:
        resolved: list[bool] = []
        python = self.language == "python"
        for record in self.defs:
            value = record.own_exported
            if record.top_level:
                if python and self.listed is not None:
                    value = record.name in self.listed or (not self.listed_complete and value)
                elif not python:
                    value = value or self._is_listed(record.name)
            if record.container is not None:
                value = value and resolved[record.container]
            resolved.append(value)
        return resolved

    def _symbol(self, record: _Def, exported: bool) -> SymbolDef:
        body = self.source[record.start_byte : record.end_byte]
        qualified = ".".join(part for part in (self.module, *record.scopes, record.name) if part)
        return SymbolDef(
            name=record.name,
            kind=record.kind,
            qualified_name=qualified,
            file_path=self.file_path,
            language=self.language,
            start_line=record.start_row + 1,
            end_line=max(record.end_row, record.start_row) + 1,
            exported=exported,
            docstring=record.doc,
            parent=record.parent,
            body_hash=body_hash(body, record.name),
            aliases=record.aliases,
            reexport_from=record.reexport_from,
        )


# ---- helpers ---------------------------------------------------------------------------------------------------
def _end_row(node: Node) -> int:
    end = node.end_point
    return end.row - 1 if end.column == 0 and end.row > node.start_point.row else end.row


def _clip(text: str) -> str:
    """Collapse whitespace and cut at a word boundary so the result has at most `MAX_DOC_CHARS` characters."""
    collapsed = " ".join(text.split())
    if len(collapsed) <= MAX_DOC_CHARS:
        return collapsed
    cut = collapsed[:MAX_DOC_CHARS]
    space = cut.rfind(" ")
    return cut[:space] if space > MAX_DOC_CHARS // 2 else cut


def _clean_comment(raw: bytes) -> str:
    """Comment markers (`//`, `///`, `/* */`, `/** */`, leading `*`, `#`) stripped, whitespace collapsed."""
    lines = []
    for line in raw.decode("utf-8", "replace").splitlines():
        line = _COMMENT_SUFFIX_RE.sub("", _COMMENT_PREFIX_RE.sub("", line, count=1), count=1)
        lines.append(line)
    return _clip(" ".join(lines))


def doc_comment_text(comment: str) -> str:
    """
    The docstring the extractor makes of a leading comment block (markers stripped, whitespace collapsed, clipped).

    :param comment: The comment's source lines.
    """
    return _clean_comment(comment.encode("utf-8", "surrogatepass"))


def _python_string(raw: str) -> str:
    """The contents of a Python string literal (prefix and quotes removed; escapes kept as written)."""
    body = raw.lstrip("rRbBuUfF")
    for quote in ('"""', "'''", '"', "'"):
        if body.startswith(quote):
            body = body[len(quote) :]
            return body[: -len(quote)] if body.endswith(quote) else body
    return body


def body_hash(body: bytes, name: str) -> str:
    """
    Hash of a definition's text with its own name masked and whitespace collapsed.

    A pure rename leaves it unchanged; any other edit (outside whitespace) changes it.

    :param body: The definition's source bytes.
    :param name: The definition's name; every whole-identifier occurrence of it is masked.
    :returns: The first 16 hex digits of the SHA-1.
    """
    masked = _mask_name(body, name.encode("utf-8", "surrogatepass"))
    return hashlib.sha1(b" ".join(masked.split()), usedforsecurity=False).hexdigest()[:16]


def _mask_name(body: bytes, name: bytes) -> bytes:
    # A split on the name and a boundary check per occurrence: much cheaper than a regex compiled per name.
    if not name or name not in body:
        return body
    pieces = body.split(name)
    out = [pieces[0]]
    previous_byte = pieces[0][-1] if pieces[0] else -1
    for index in range(1, len(pieces)):
        following = pieces[index]
        next_byte = following[0] if following else -1
        whole = previous_byte not in _IDENT_BYTES and next_byte not in _IDENT_BYTES
        out.append(_NAME_PLACEHOLDER if whole else name)
        out.append(following)
        previous_byte = following[-1] if following else name[-1]
    return b"".join(out)


def _field_text(extractor: _Extractor, node: Node, field: str) -> str:
    return extractor.text(node.child_by_field_name(field))


# ---- Python --------------------------------------------------------------------------------------------------
def _walk_python(ex: _Extractor, root: Node) -> None:
    _py_block(ex, root, (), None, None, False)


def _py_block(
    ex: _Extractor, block: Node, scopes: tuple[str, ...], parent: str | None, container: int | None, in_class: bool
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
            name = _field_text(ex, definition, "name")
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
            name = _field_text(ex, definition, "name")
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
    ex: _Extractor, node: Node, scopes: tuple[str, ...], parent: str | None, container: int | None, in_class: bool
) -> None:
    # Definitions under `if TYPE_CHECKING:` / `try: ... except ImportError:` still belong to the module or class.
    for child in node.named_children:
        if child.type == "block":
            _py_block(ex, child, scopes, parent, container, in_class)
        elif child.type in _PY_CLAUSES:
            _py_compound(ex, child, scopes, parent, container, in_class)


def _py_public(name: str) -> bool:
    return not name.startswith("_") or (name.startswith("__") and name.endswith("__") and len(name) > 4)


def _py_docstring(ex: _Extractor, definition: Node) -> str:
    body = definition.child_by_field_name("body")
    if body is None:
        return ""
    for statement in body.named_children:
        if statement.type == "comment":
            continue
        if statement.type == "expression_statement" and statement.named_child_count == 1:
            string = statement.named_children[0]
            if string.type == "string":
                return _python_string(ex.text(string))
        return ""
    return ""


def _py_assignment(
    ex: _Extractor, statement: Node, scopes: tuple[str, ...], parent: str | None, container: int | None
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
            elif _UPPER_CASE_RE.fullmatch(name):
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


def _py_collect_all(ex: _Extractor, node: Node | None) -> None:
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
                ex.listed.add(_python_string(ex.text(element)))
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


def _walk_js(ex: _Extractor, root: Node) -> None:
    ex.listed = set()  # local names exported by `export { a, b }`, `export default a`, `module.exports`
    ex.ambient = bool(_JS_DECLARATION_FILE_RE.search(ex.file_path))
    _js_imports(ex, root)
    _js_statements(ex, root, (), None, True)


def _js_imports(ex: _Extractor, root: Node) -> None:
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
                        imported = _field_text(ex, item, "name")
                        local = _field_text(ex, item, "alias") or imported
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


def _js_statements(
    ex: _Extractor, block: Node, scopes: tuple[str, ...], container: int | None, top_level: bool
) -> None:
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
        elif kind not in _COMMENT_TYPES:
            _js_declaration(ex, statement, statement, scopes, container, ex.ambient, top_level)


def _js_declaration(
    ex: _Extractor,
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
    name = _field_text(ex, node, "name")

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


def _js_function_body(ex: _Extractor, function: Node | None, scopes: tuple[str, ...], container: int) -> None:
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
    ex: _Extractor,
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
        elif ex.function_depth or (not exported and not (is_const and _UPPER_CASE_RE.fullmatch(name)) and not methods):
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


def _js_object_methods(ex: _Extractor, obj: Node | None) -> list[tuple[str, Node]]:
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


def _js_class_body(ex: _Extractor, body: Node | None, scopes: tuple[str, ...], parent: str, container: int) -> None:
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


def _js_export_names(ex: _Extractor, statement: Node) -> None:
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
                own, public = _field_text(ex, item, "name"), _field_text(ex, item, "alias")
                if item.type == "export_specifier" and own and public:
                    _js_reexport(ex, item, statement, public, own, specifier)
        return
    value = _js_guarded(statement.child_by_field_name("value"))
    if value is not None and value.type == "identifier":
        ex.listed.add(ex.text(value))
    elif value is not None and value.type == "object":  # `export default { isArray, kindOf, merge() {} }`
        _js_listed_object(ex, value, statement)
    elif value is not None and (value.type in _JS_FUNCTION_VALUES or value.type in _JS_CLASS_VALUES):
        name = _field_text(ex, value, "name")
        if name:  # `export default supported && function httpAdapter(config) {}`
            _js_assigned(ex, name, value, statement, (), None, None, True)
    for child in statement.named_children:
        if child.type == "export_clause":
            for item in child.named_children:
                if item.type == "export_specifier":
                    own, public = _field_text(ex, item, "name"), _field_text(ex, item, "alias")
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


def _js_reexport(ex: _Extractor, item: Node, statement: Node, public: str, own: str, specifier: str) -> None:
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


def _js_listed_object(ex: _Extractor, obj: Node, statement: Node) -> None:
    """An exported object literal: its shorthand and identifier members are exported, its methods defined."""
    assert ex.listed is not None
    for entry in obj.named_children:
        if entry.type == "shorthand_property_identifier":
            ex.listed.add(ex.text(entry))
        elif entry.type == "pair":
            value = _js_unwrap(entry.child_by_field_name("value"))
            key = _field_text(ex, entry, "key")
            if value is not None and value.type == "identifier":
                ex.listed.add(ex.text(value))
                if key and key != ex.text(value) and key.isidentifier():
                    ex.public_names.setdefault(ex.text(value), []).append(key)
    for name, method in _js_object_methods(ex, obj):
        ex.add(name, "function", method, top_level=True, comment_anchor=None)


def _js_expression(ex: _Extractor, statement: Node) -> None:
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
            name = _field_text(ex, right, "name")
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
    if owner_node.type == "member_expression" and _field_text(ex, owner_node, "property") == "prototype":
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
    ex: _Extractor,
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


# ---- Go ---------------------------------------------------------------------------------------------------------
def _walk_go(ex: _Extractor, root: Node) -> None:
    for declaration in root.named_children:
        kind = declaration.type
        if kind == "function_declaration":
            name = _field_text(ex, declaration, "name")
            if name:
                ex.add(name, "function", declaration, exported=_go_exported(name))
        elif kind == "method_declaration":
            name = _field_text(ex, declaration, "name")
            receiver = _go_receiver(ex, declaration.child_by_field_name("receiver"))
            if name:
                ex.add(
                    name,
                    "method",
                    declaration,
                    scopes=(receiver,) if receiver else (),
                    parent=receiver or None,
                    exported=_go_exported(name) and (not receiver or _go_exported(receiver)),
                )
        elif kind == "type_declaration":
            specs = [child for child in declaration.named_children if child.type in ("type_spec", "type_alias")]
            for spec in specs:
                _go_type(ex, spec, declaration if len(specs) == 1 else spec)
        elif kind in ("const_declaration", "var_declaration"):
            _go_values(ex, declaration, "constant" if kind == "const_declaration" else "variable")


def _go_exported(name: str) -> bool:
    return name[:1].isupper()


def _go_receiver(ex: _Extractor, receiver: Node | None) -> str:
    if receiver is None:
        return ""
    for parameter in receiver.named_children:
        if parameter.type != "parameter_declaration":
            continue
        node = parameter.child_by_field_name("type")
        while node is not None and node.type in ("pointer_type", "generic_type", "parenthesized_type"):
            node = node.child_by_field_name("type") or (node.named_children[0] if node.named_child_count else None)
        return ex.text(node) if node is not None and node.type == "type_identifier" else ""
    return ""


def _go_type(ex: _Extractor, spec: Node, span: Node) -> None:
    name = _field_text(ex, spec, "name")
    if not name:
        return
    type_node = spec.child_by_field_name("type")
    type_kind = type_node.type if type_node is not None else ""
    kind: SymbolKind = (
        "struct" if type_kind == "struct_type" else "interface" if type_kind == "interface_type" else "type"
    )
    if spec.type == "type_alias":
        kind = "type"
    exported = _go_exported(name)
    index = ex.add(name, kind, span, exported=exported)
    if kind == "interface" and type_node is not None:
        for element in type_node.named_children:
            if element.type == "method_elem":
                method = _field_text(ex, element, "name")
                if method:
                    ex.add(
                        method,
                        "method",
                        element,
                        scopes=(name,),
                        parent=name,
                        container=index,
                        exported=_go_exported(method),
                    )


def _go_values(ex: _Extractor, declaration: Node, kind: SymbolKind) -> None:
    specs: list[Node] = []
    for child in declaration.named_children:
        if child.type in ("const_spec", "var_spec"):
            specs.append(child)
        elif child.type == "var_spec_list":
            specs.extend(spec for spec in child.named_children if spec.type == "var_spec")
    for spec in specs:
        span = declaration if len(specs) == 1 else spec
        for name_node in spec.children_by_field_name("name"):
            name = ex.text(name_node)
            if _go_exported(name):  # unexported package-level values are implementation detail
                ex.add(name, kind, span, exported=True)


# ---- Rust -------------------------------------------------------------------------------------------------------
_RUST_ITEMS: dict[str, SymbolKind] = {
    "function_item": "function",
    "function_signature_item": "function",
    "struct_item": "struct",
    "union_item": "struct",
    "enum_item": "enum",
    "type_item": "type",
    "const_item": "constant",
    "static_item": "constant",
}


def _walk_rust(ex: _Extractor, root: Node) -> None:
    _rs_items(ex, root, (), None, "module", None)


def _rs_pub(node: Node) -> bool:
    for child in node.named_children:
        if child.type == "visibility_modifier":
            return child.named_child_count == 0 and (child.text or b"").strip() == b"pub"
    return False


def _rs_type_name(ex: _Extractor, node: Node | None) -> str:
    """`Point<T>`, `&mut Point`, `crate::geo::Point` -> `Point`."""
    while node is not None and node.type != "type_identifier":
        if node.type in ("generic_type", "reference_type", "pointer_type"):
            node = node.child_by_field_name("type")
        elif node.type == "scoped_type_identifier":
            node = node.child_by_field_name("name")
        else:
            return ""
    return ex.text(node)


def _rs_items(
    ex: _Extractor,
    block: Node,
    scopes: tuple[str, ...],
    container: int | None,
    mode: str,
    parent: str | None,
) -> None:
    """Items of a file, `mod {}`, `impl`, `trait` or `extern {}` block; `mode` says which kind of block."""
    for item in block.named_children:
        kind = item.type
        name = _field_text(ex, item, "name")
        if mode in ("impl", "trait", "trait_impl"):
            # Trait items and trait-impl methods carry no `pub`: they are as visible as the trait.
            exported = _rs_pub(item) if mode == "impl" else True
            if kind in ("function_item", "function_signature_item") and name:
                ex.add(name, "method", item, scopes=scopes, parent=parent, container=container, exported=exported)
            elif kind == "const_item" and name:
                ex.add(name, "constant", item, scopes=scopes, parent=parent, container=container, exported=exported)
            continue
        simple = _RUST_ITEMS.get(kind)
        if simple is not None:
            if name:
                if kind == "static_item" and any(child.type == "mutable_specifier" for child in item.named_children):
                    simple = "variable"
                ex.add(name, simple, item, scopes=scopes, container=container, exported=_rs_pub(item))
        elif kind == "trait_item":
            body = item.child_by_field_name("body")
            if name:
                index = ex.add(name, "trait", item, scopes=scopes, container=container, exported=_rs_pub(item))
                if body is not None:
                    _rs_items(ex, body, (*scopes, name), index, "trait", name)
        elif kind == "impl_item":
            type_name = _rs_type_name(ex, item.child_by_field_name("type"))
            body = item.child_by_field_name("body")
            if type_name and body is not None:
                impl_mode = "trait_impl" if item.child_by_field_name("trait") is not None else "impl"
                # The type may be defined in another file, so its methods do not inherit its visibility.
                _rs_items(ex, body, (*scopes, type_name), None, impl_mode, type_name)
        elif kind == "mod_item":
            body = item.child_by_field_name("body")
            if name and body is not None:  # `mod foo;` only points at another file
                index = ex.add(name, "module", item, scopes=scopes, container=container, exported=_rs_pub(item))
                _rs_items(ex, body, (*scopes, name), index, "module", None)
        elif kind == "foreign_mod_item":
            body = item.child_by_field_name("body")
            if body is not None:
                _rs_items(ex, body, scopes, container, "module", parent)
        elif kind == "macro_definition" and name:
            # No macro kind in the model: a macro is the closest thing to a function to look up.
            ex.add(name, "function", item, scopes=scopes, container=container, exported=_rs_macro_export(item))


def _rs_macro_export(item: Node) -> bool:
    sibling = item.prev_named_sibling
    while sibling is not None and sibling.type in ("attribute_item", "line_comment", "block_comment"):
        if sibling.type == "attribute_item" and b"macro_export" in (sibling.text or b""):
            return True
        sibling = sibling.prev_named_sibling
    return False


# ---- Java -------------------------------------------------------------------------------------------------------
_JAVA_TYPES: dict[str, SymbolKind] = {
    "class_declaration": "class",
    "record_declaration": "class",
    "interface_declaration": "interface",
    "annotation_type_declaration": "interface",
    "enum_declaration": "enum",
}


def _walk_java(ex: _Extractor, root: Node) -> None:
    for child in root.named_children:
        if child.type == "package_declaration":
            package = next((n for n in child.named_children if n.type in ("scoped_identifier", "identifier")), None)
            if package is not None:
                ex.module = "".join(ex.text(package).split())
    _java_members(ex, root, (), None, None, False)


def _java_modifiers(node: Node) -> set[str]:
    for child in node.named_children:
        if child.type == "modifiers":
            return {modifier.type for modifier in child.children if not modifier.is_named}
    return set()


def _java_members(
    ex: _Extractor,
    body: Node,
    scopes: tuple[str, ...],
    parent: str | None,
    container: int | None,
    in_interface: bool,
) -> None:
    for member in body.named_children:
        kind = member.type
        if kind == "enum_body_declarations":  # an enum's methods sit one level down
            _java_members(ex, member, scopes, parent, container, in_interface)
            continue
        symbol_kind: SymbolKind | None = _JAVA_TYPES.get(kind)
        names: list[str] = []
        modifiers = _java_modifiers(member)
        if symbol_kind is not None:
            names = [_field_text(ex, member, "name")]
        elif parent is None:
            continue  # methods and fields only exist inside a type
        elif kind in ("method_declaration", "constructor_declaration"):
            symbol_kind, names = "method", [_field_text(ex, member, "name")]
        elif kind == "constant_declaration" or (kind == "field_declaration" and {"static", "final"} <= modifiers):
            # Instance fields are state, not definitions anyone looks up; static finals are constants.
            symbol_kind = "constant"
            names = [_field_text(ex, d, "name") for d in member.children_by_field_name("declarator")]
        else:
            continue
        exported = "public" in modifiers or (in_interface and "private" not in modifiers)
        for name in names:
            if not name:
                continue
            index = ex.add(
                name, symbol_kind, member, scopes=scopes, parent=parent, container=container, exported=exported
            )
            body_node = member.child_by_field_name("body") if kind in _JAVA_TYPES else None
            if body_node is not None:
                interface = kind in ("interface_declaration", "annotation_type_declaration")
                _java_members(ex, body_node, (*scopes, name), name, index, interface)


_WALKERS = {
    "python": _walk_python,
    "vue": _walk_js,
    "javascript": _walk_js,
    "typescript": _walk_js,
    "tsx": _walk_js,
    "go": _walk_go,
    "rust": _walk_rust,
    "java": _walk_java,
}
