# long: the uses of names for every language's tag queries, one reader per kind of use
"""The uses of names in a source file (calls, types, inheritance, imports, typed variables), from the tag queries.

Framework-free. `collect_references` turns the `@reference.*` tags of one parsed file (`core/tags.py`: the wheels'
`tags.scm` and ours) into `Reference` records: the name used, its line, the receiver or path written before it
(`self`, `utils`, `crate.util`), and for imports the module and the local name bound. Nothing is resolved here: the
reference graph (`core/graph.py`) resolves each record against the dictionary's definitions, since a name may be
defined in a file parsed later. Records are what a file says, so they are refreshed with the file alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from tree_sitter import Node

from .model import Reference
from .tags import Tag

__all__ = ["MAX_REFERENCES_PER_FILE", "collect_references"]

#: A file with more uses than this keeps none (generated code: a 1 MB table of calls would swell the dictionary,
#: and no one asks who calls into it). Hand-written modules have a few thousand at most.
MAX_REFERENCES_PER_FILE = 20_000
# The query's reference kinds -> ours (`Reference.kind`); `implementation` is told apart by its node.
_KINDS = {"call": "call", "class": "new", "type": "type", "inherit": "inherit", "implementation": "inherit"}
# When two patterns tag one identifier, the kind kept: a base class is also a type use, a constructor call a call.
_PRIORITY = {"inherit": 3, "new": 2, "call": 1, "type": 0}
# The field that holds the receiver or path written before a name, by the name's parent node type.
_RECEIVER_FIELDS = {
    "attribute": "object",
    "member_expression": "object",
    "selector_expression": "operand",
    "field_expression": "value",
    "scoped_identifier": "path",
    "scoped_type_identifier": "path",
    "method_invocation": "object",
    "field_access": "object",
    "qualified_type": "package",
}
# Nodes a pattern may capture as `@name` whole (a path, not an identifier).
_CAPTURED_PATHS = frozenset({"member_expression", "scoped_identifier", "scoped_type_identifier", "attribute"})
# Parents whose `name` field is a type used, not one declared (`Foo<T>`, `a::Foo`).
_TYPE_PATHS = frozenset({"generic_type", "scoped_type_identifier"})
_SIMPLE_PATH = re.compile(r"[A-Za-z_$][\w$]*(?:(?:\.|::)[A-Za-z_$][\w$]*)*")
_IDENTIFIER = re.compile(r"^[A-Za-z_$][\w$]*$")
# Receivers read as a path (`a.b.c`); anything else (a call's result, an index) is "?".
_PATH_NODES = frozenset(
    {
        "identifier",
        "attribute",
        "member_expression",
        "selector_expression",
        "field_expression",
        "scoped_identifier",
        "field_access",
        "this",
        "self",
        "super",
        "crate",
        "property_identifier",
        "field_identifier",
        "type_identifier",
        "package_identifier",
        "scoped_type_identifier",
        "qualified_type",
    }
)


class _File:
    """One file's source and where its references go."""

    def __init__(self, source: bytes, language: str) -> None:
        self.source = source
        self.language = language
        self.found: list[Reference] = []
        self._seen: dict[tuple[int, str, str], int] = {}

    def text(self, node: Node | None) -> str:
        if node is None:
            return ""
        return self.source[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def add(self, kind: str, name: str, node: Node, qualifier: str = "", binding: str = "") -> None:
        """Record a use; a module import has no `name` (`import a.b`, `import * as ns`), every other use has one."""
        if not name and kind not in ("import", "reexport"):
            return
        mark = (node.start_byte, name, binding)
        seen = self._seen.get(mark)
        record = Reference(kind, name, node.start_point.row + 1, qualifier, binding)
        if seen is None:
            self._seen[mark] = len(self.found)
            self.found.append(record)
        elif _PRIORITY.get(kind, 0) > _PRIORITY.get(self.found[seen].kind, 0):
            # Two patterns tag one identifier (`implements I` is a type use too): the more specific kind stands.
            self.found[seen] = record

    def path(self, node: Node | None) -> str:
        """A receiver or module path as dotted names (`self.x`, `crate.util`, `pkg.Type`); "?" when not one."""
        if node is None:
            return ""
        if node.type in _PATH_NODES:
            text = self.text(node)
            if _SIMPLE_PATH.fullmatch(text):  # the common case, without walking the node
                return text.replace("::", ".")
        made = _instance_of(self, node)
        if made is not None:
            return made
        if node.type not in _PATH_NODES:
            return "?"
        if node.type == "generic_type":
            node = node.child_by_field_name("type") or node
        parts: list[str] = []
        for child in _leaves(node):
            if child.type not in _PATH_NODES:
                return "?"
            parts.append(self.text(child))
        return ".".join(part for part in parts if part) or "?"


def _instance_of(file: _File, node: Node) -> str | None:
    """
    A receiver that makes an instance of a named class: `Foo()` (Python, a capitalised callee), `new Foo()`
    (JavaScript, Java), `Foo{}` (Go): "Foo()", read as "an instance of Foo"; Python's `super()` as itself.
    None for any other node.
    """
    kind = node.type
    if kind == "parenthesized_expression" and node.named_child_count == 1:
        return _instance_of(file, node.named_children[0])
    if kind == "call" and file.language == "python":
        callee = node.child_by_field_name("function")
        path = file.path(callee)
        if path == "super":
            return "super()"
        return f"{path}()" if path != "?" and path.rsplit(".", 1)[-1][:1].isupper() else None
    if kind in ("new_expression", "object_creation_expression", "composite_literal"):
        path = file.path(node.child_by_field_name("constructor") or node.child_by_field_name("type"))
        return f"{path}()" if path not in ("?", "") else None
    return None


def _leaves(node: Node) -> list[Node]:
    """The named leaves of a path expression, in order (`a.b.c`, `a::b::c`, `this.x`)."""
    if node.named_child_count == 0:
        return [node]
    leaves: list[Node] = []
    for child in node.named_children:
        leaves.extend(_leaves(child))
    return leaves


def collect_references(tags: list[Tag], source: bytes, language: str) -> list[Reference]:
    """
    The references of one parsed file, in the order the query found them.

    :param tags: `run_tags` over the file's tree (the definitions among them are ignored here).
    :param source: The bytes the tree was parsed from.
    :param language: The grammar's language (`javascript`, `typescript`, `tsx`, `python`, `go`, `rust`, `java`).
    :returns: At most `MAX_REFERENCES_PER_FILE` records; none for a file with more.
    """
    file = _File(source, language)
    family = "ecmascript" if language in ("javascript", "typescript", "tsx") else language
    imports = _IMPORTS.get(family)
    binds = _BINDS.get(family)
    for tag in tags:
        if tag.role != "reference":
            continue
        if tag.kind == "import":
            if imports is not None:
                imports(file, tag.node)
        elif tag.kind == "bind":
            if binds is not None:
                binds(file, tag.node)
        elif tag.name is not None and tag.kind in _KINDS:
            _use(file, tag)
        if len(file.found) > MAX_REFERENCES_PER_FILE:
            return []
    return file.found


def _use(file: _File, tag: Tag) -> None:
    assert tag.name is not None
    name_node = tag.name
    kind = _KINDS[tag.kind]
    parent = name_node.parent
    if tag.kind == "implementation" and tag.node.type == "impl_item" and tag.node.child_by_field_name("trait") is None:
        return  # `impl Type { ... }` defines methods of Type: no use of it
    if tag.kind == "class" and tag.node.type == "superclass":
        kind = "inherit"  # Java's wheel tags `extends Base` as a class reference
    if kind == "type" and parent is not None and parent.type not in _TYPE_PATHS:
        own = "type" if parent.type == "impl_item" else "name"
        if parent.child_by_field_name(own) == name_node:
            # the type's own declaration (`type T struct`, `interface I`, `<T>`), or `impl Trait for Type`: a
            # block of Type's methods, no use of Type
            return
    qualifier = ""
    if name_node.type in _CAPTURED_PATHS:
        # `new a.B()`, `<a.B/>`: the query captured the whole path
        qualifier = file.path(name_node.child_by_field_name("object") or name_node.child_by_field_name("path"))
        name_node = (
            name_node.child_by_field_name("property")
            or name_node.child_by_field_name("name")
            or name_node.child_by_field_name("attribute")
            or name_node
        )
    elif parent is not None:
        field = _RECEIVER_FIELDS.get(parent.type)
        if field is not None:
            receiver = parent.child_by_field_name(field)
            if receiver is not None and receiver.end_byte <= name_node.start_byte:
                qualifier = file.path(receiver)
        elif parent.type == "method_reference" and parent.named_child_count > 1:  # Java `Type::method`
            qualifier = file.path(parent.named_children[0])
    name = file.text(name_node)
    if _IDENTIFIER.match(name):
        file.add(kind, name, name_node, qualifier)


# ---- imports ---------------------------------------------------------------------------------------------------
def _python_import(file: _File, node: Node) -> None:
    if node.type == "import_statement":  # import a.b.c / import a.b as x
        for item in node.named_children:
            if item.type == "dotted_name":
                file.add("import", "", item, file.text(item), file.text(item))
            elif item.type == "aliased_import":
                dotted = item.child_by_field_name("name")
                file.add("import", "", item, file.text(dotted), file.text(item.child_by_field_name("alias")))
        return
    if node.type != "import_from_statement":
        return
    module_node = node.child_by_field_name("module_name")
    module = "".join(file.text(module_node).split())
    for item in node.children_by_field_name("name"):
        if item.type == "dotted_name":
            name = file.text(item)
            file.add("import", name, item, module, name)
        elif item.type == "aliased_import":
            name = file.text(item.child_by_field_name("name"))
            file.add("import", name, item, module, file.text(item.child_by_field_name("alias")))
    if any(child.type == "wildcard_import" for child in node.named_children):
        file.add("import", "*", node, module, "")


def _string_value(file: _File, node: Node | None) -> str:
    text = file.text(node)
    return text[1:-1] if len(text) >= 2 and text[0] in "'\"`" and text[-1] == text[0] else ""


def _ecmascript_import(file: _File, node: Node) -> None:
    source = node.child_by_field_name("source")
    specifier = _string_value(file, source)
    if not specifier:
        return
    if node.type == "export_statement":  # export * from './x' / export { a as b } from './x' / export * as ns from
        clause = next((c for c in node.named_children if c.type == "export_clause"), None)
        namespace = next((c for c in node.named_children if c.type == "namespace_export"), None)
        if clause is not None:
            for item in clause.named_children:
                if item.type == "export_specifier":
                    name = file.text(item.child_by_field_name("name"))
                    alias = file.text(item.child_by_field_name("alias")) or name
                    file.add("reexport", name, item, specifier, alias)
        elif namespace is not None:
            # `export * as ns from`; the name may be a string (`export * as "a-b" from`), which has no named child
            names = namespace.named_children
            if names:
                alias = _string_value(file, names[-1]) or file.text(names[-1])
            else:
                alias = file.text(namespace).rsplit(" as ", 1)[-1].strip()
            file.add("reexport", "", namespace, specifier, alias)
        else:
            file.add("reexport", "*", node, specifier, "")
        return
    for clause in node.named_children:
        if clause.type != "import_clause":
            continue
        for binding in clause.named_children:
            if binding.type == "identifier":
                file.add("import", "default", binding, specifier, file.text(binding))
            elif binding.type == "namespace_import":
                local = next((c for c in binding.named_children if c.type == "identifier"), None)
                file.add("import", "", binding, specifier, file.text(local))
            elif binding.type == "named_imports":
                for item in binding.named_children:
                    if item.type == "import_specifier":
                        name = file.text(item.child_by_field_name("name"))
                        alias = file.text(item.child_by_field_name("alias")) or name
                        file.add("import", name, item, specifier, alias)


def _go_import(file: _File, node: Node) -> None:
    path = _string_value(file, node.child_by_field_name("path"))
    if path:
        alias = file.text(node.child_by_field_name("name"))
        file.add("import", "", node, path, "" if alias == "_" else alias)


def _rust_import(file: _File, node: Node) -> None:
    argument = node.child_by_field_name("argument")
    if argument is not None:
        _rust_use(file, argument, "")


def _rust_use(file: _File, node: Node, prefix: str) -> None:
    """One `use` tree: `a::b`, `a::b as c`, `a::{b, c::d}`, `a::*`, with the path above it in `prefix`."""

    def joined(path: str) -> str:
        path = path.replace("::", ".")
        return f"{prefix}.{path}" if prefix and path else prefix or path

    kind = node.type
    if kind in ("identifier", "scoped_identifier", "crate", "self", "super"):
        full = joined("".join(file.text(node).split()))
        module, _, name = full.rpartition(".")
        if name == "self":  # `use a::b::{self}` binds the module b
            module, _, name = module.rpartition(".")
            file.add("import", "", node, f"{module}.{name}" if module else name, name)
        else:
            file.add("import", name, node, module, name)
    elif kind == "use_as_clause":
        path = joined("".join(file.text(node.child_by_field_name("path")).split()))
        module, _, name = path.rpartition(".")
        file.add("import", name, node, module, file.text(node.child_by_field_name("alias")))
    elif kind == "use_wildcard":
        inner = node.named_children[0] if node.named_child_count else None
        file.add("import", "*", node, joined("".join(file.text(inner).split())) if inner is not None else prefix, "")
    elif kind == "scoped_use_list":
        path_node = node.child_by_field_name("path")
        inner_prefix = joined("".join(file.text(path_node).split())) if path_node is not None else prefix
        items = node.child_by_field_name("list")
        for item in items.named_children if items is not None else ():
            _rust_use(file, item, inner_prefix)
    elif kind == "use_list":
        for item in node.named_children:
            _rust_use(file, item, prefix)


def _java_import(file: _File, node: Node) -> None:
    path = next((c for c in node.named_children if c.type in ("scoped_identifier", "identifier")), None)
    if path is None:
        return
    full = "".join(file.text(path).split())
    if any(child.type == "asterisk" for child in node.named_children):
        file.add("import", "*", node, full, "")
        return
    module, _, name = full.rpartition(".")
    file.add("import", name, node, module, name)


# ---- typed variables -------------------------------------------------------------------------------------------
def _type_path(file: _File, node: Node | None) -> str:
    """The class a type annotation names (`Foo`, `pkg.Foo`), its wrappers and arguments removed; "" otherwise."""
    while node is not None:
        kind = node.type
        if kind in (
            "type_annotation",
            "type",
            "pointer_type",
            "reference_type",
            "parenthesized_type",
            "dynamic_type",
            "abstract_type",
        ):
            node = node.child_by_field_name("type") or (node.named_children[-1] if node.named_child_count else None)
        elif kind == "generic_type":
            inner = node.child_by_field_name("type") or node.child_by_field_name("name")
            if inner is None:
                inner = node.named_children[0] if node.named_child_count else None
            if inner is not None and file.text(inner) in ("Optional", "Option", "Box", "Rc", "Arc"):
                arguments = node.child_by_field_name("type_arguments") or (
                    node.named_children[-1] if node.named_child_count > 1 else None
                )
                node = arguments.named_children[0] if arguments is not None and arguments.named_child_count else None
            else:
                node = inner
        elif kind == "subscript" and file.language == "python":  # Optional[Foo]
            value = node.child_by_field_name("value")
            node = node.child_by_field_name("subscript") if file.text(value) == "Optional" else value
        elif kind in ("type_arguments",):
            node = node.named_children[0] if node.named_child_count else None
        else:
            break
    if node is None:
        return ""
    path = file.path(node)
    return "" if path == "?" else path


def _python_bind(file: _File, node: Node) -> None:
    if node.type == "assignment":
        left = node.child_by_field_name("left")
        if left is None or left.type not in ("identifier", "attribute"):
            return
        target = file.path(left)
        annotation = node.child_by_field_name("type")
        right = node.child_by_field_name("right")
        if annotation is not None:
            kind = _type_path(file, annotation)
        elif right is not None and right.type == "call":
            kind = file.path(right.child_by_field_name("function"))
            if not kind.rsplit(".", 1)[-1][:1].isupper():
                return  # `x = make()`: what a function returns is not stated; `x = Foo()` makes a Foo
        else:
            return
        if target != "?" and kind and kind != "?":
            file.add("bind", target, left, kind)
        return
    name = node.child_by_field_name("name") or (node.named_children[0] if node.named_child_count else None)
    kind = _type_path(file, node.child_by_field_name("type"))
    if name is not None and name.type == "identifier" and kind:
        file.add("bind", file.text(name), name, kind)


def _ecmascript_bind(file: _File, node: Node) -> None:
    if node.type == "variable_declarator":
        name = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        if value is not None and value.type == "call_expression":
            callee = value.child_by_field_name("function")
            arguments = value.child_by_field_name("arguments")
            if file.text(callee) == "require" and arguments is not None and arguments.named_child_count:
                _require(file, name, _string_value(file, arguments.named_children[0]))
                return
        if name is None or name.type != "identifier":
            return
        kind = _type_path(file, node.child_by_field_name("type"))
        if not kind and value is not None and value.type == "new_expression":
            kind = file.path(value.child_by_field_name("constructor"))
        if kind and kind != "?":
            file.add("bind", file.text(name), name, kind)
    elif node.type == "assignment_expression":  # this.x = new Foo()
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if right is not None and right.type == "new_expression" and left is not None:
            kind = file.path(right.child_by_field_name("constructor"))
            if kind != "?":
                file.add("bind", file.path(left), left, kind)
    elif node.type in ("required_parameter", "optional_parameter"):
        pattern = node.child_by_field_name("pattern")
        kind = _type_path(file, node.child_by_field_name("type"))
        if pattern is not None and pattern.type == "identifier" and kind:
            file.add("bind", file.text(pattern), pattern, kind)
    elif node.type == "public_field_definition":
        name = node.child_by_field_name("name")
        kind = _type_path(file, node.child_by_field_name("type"))
        if not kind:
            value = node.child_by_field_name("value")
            if value is not None and value.type == "new_expression":
                kind = file.path(value.child_by_field_name("constructor"))
        if name is not None and kind and kind != "?":
            file.add("bind", f"this.{file.text(name)}", name, kind)


def _require(file: _File, name: Node | None, specifier: str) -> None:
    """`const x = require('./x')` binds the module; `const { a, b: c } = require('./x')` its members."""
    if not specifier or name is None:
        return
    if name.type == "identifier":
        file.add("import", "", name, specifier, file.text(name))
    elif name.type == "object_pattern":
        for item in name.named_children:
            if item.type == "shorthand_property_identifier_pattern":
                file.add("import", file.text(item), item, specifier, file.text(item))
            elif item.type == "pair_pattern":
                key, value = item.child_by_field_name("key"), item.child_by_field_name("value")
                if value is not None and value.type == "identifier":
                    file.add("import", file.text(key), item, specifier, file.text(value))


def _go_bind(file: _File, node: Node) -> None:
    if node.type in ("parameter_declaration", "var_spec"):
        kind = _type_path(file, node.child_by_field_name("type"))
        if kind:
            for name in node.children_by_field_name("name"):
                file.add("bind", file.text(name), name, kind)
        return
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")  # x := T{...} / &T{...}
    if left is None or right is None:
        return
    for target, value in zip(left.named_children, right.named_children, strict=False):
        while value.type == "unary_expression" and value.named_child_count:
            value = value.named_children[-1]
        if target.type == "identifier" and value.type == "composite_literal":
            kind = _type_path(file, value.child_by_field_name("type"))
            if kind:
                file.add("bind", file.text(target), target, kind)


def _rust_bind(file: _File, node: Node) -> None:
    pattern = node.child_by_field_name("pattern")
    while pattern is not None and pattern.type in ("mut_pattern", "ref_pattern") and pattern.named_child_count:
        pattern = pattern.named_children[-1]
    if pattern is None or pattern.type != "identifier":
        return
    kind = _type_path(file, node.child_by_field_name("type"))
    value = node.child_by_field_name("value")
    if not kind and value is not None:
        if value.type == "struct_expression":
            kind = _type_path(file, value.child_by_field_name("name"))
        elif value.type == "call_expression":  # let x = Foo::new(...): a path whose owner is a type
            callee = value.child_by_field_name("function")
            owner = callee.child_by_field_name("path") if callee is not None else None
            path = file.path(owner) if owner is not None else ""
            if path and path != "?" and path.rsplit(".", 1)[-1][:1].isupper():
                kind = path
    if kind:
        file.add("bind", file.text(pattern), pattern, kind)


def _java_bind(file: _File, node: Node) -> None:
    type_node = node.child_by_field_name("type")
    kind = _type_path(file, type_node)
    if node.type == "formal_parameter":
        name = node.child_by_field_name("name")
        if name is not None and kind:
            file.add("bind", file.text(name), name, kind)
        return
    for declarator in node.children_by_field_name("declarator"):
        name = declarator.child_by_field_name("name")
        own = kind
        value = declarator.child_by_field_name("value")
        if (not own or own == "var") and value is not None and value.type == "object_creation_expression":
            own = _type_path(file, value.child_by_field_name("type"))
        if name is not None and own and own != "var":
            file.add("bind", file.text(name), name, own)
            if node.type == "field_declaration":
                file.add("bind", f"this.{file.text(name)}", name, own)


_IMPORTS: dict[str, Callable[[_File, Node], None]] = {
    "python": _python_import,
    "ecmascript": _ecmascript_import,
    "go": _go_import,
    "rust": _rust_import,
    "java": _java_import,
}
_BINDS: dict[str, Callable[[_File, Node], None]] = {
    "python": _python_bind,
    "ecmascript": _ecmascript_bind,
    "go": _go_bind,
    "rust": _rust_bind,
    "java": _java_bind,
}
