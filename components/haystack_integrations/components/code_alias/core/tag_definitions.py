"""Go, Rust and Java definitions from the tag queries (`core/tags.py`), in place of hand-written tree walkers.

The queries (the wheels' `tags.scm` plus ours) find every definition node of the file; this module keeps those at a
declaration level (the file, a Go type declaration, a Rust `mod {}` / `impl` / `trait` / `extern {}` block, a Java
type body) and drops locals (a Rust `fn` or Java class inside a method's body, a Go type declared in a function),
then gives each its qualified scope, its kind and whether it is exported. What is extracted, and the export rules,
are listed in `symbols.py`'s module docstring; the records are the ones the earlier walkers made (checked on gin,
serde_json and gson: `benchmarks/symbol_snapshot.py`, BENCHMARKS.md section 15).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from tree_sitter import Node

from .extraction import Extractor, field_text
from .model import SymbolKind
from .tags import Tag

__all__ = ["define_from_tags"]

NodeKey = tuple[int, int, str]


def _key(node: Node) -> NodeKey:
    return node.start_byte, node.end_byte, node.type


def _definitions(tags: Iterable[Tag]) -> list[Tag]:
    """The definition tags in source order (containers before their members), each node once (its names are read
    from the node: a pattern matches a declaration of several names once)."""
    seen: set[NodeKey] = set()
    found: list[Tag] = []
    for tag in tags:
        if tag.role == "definition" and _key(tag.node) not in seen:
            seen.add(_key(tag.node))
            found.append(tag)
    found.sort(key=lambda t: (t.node.start_byte, -t.node.end_byte))
    return found


def define_from_tags(ex: Extractor, root: Node, tags: list[Tag]) -> None:
    """Record the definitions of a Go, Rust or Java file (`ex.language`) that `tags` hold."""
    definers: dict[str, Callable[[Extractor, Node, list[Tag]], None]] = {
        "go": _go,
        "rust": _rust,
        "java": _java,
    }
    definers[ex.language](ex, root, _definitions(tags))


# ---- Go -----------------------------------------------------------------------------------------------------------
def _go_exported(name: str) -> bool:
    return name[:1].isupper()


def _go_receiver(ex: Extractor, receiver: Node | None) -> str:
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


def _top(node: Node | None) -> bool:
    return node is not None and node.type == "source_file"


def _go(ex: Extractor, root: Node, tags: list[Tag]) -> None:
    types: dict[NodeKey, tuple[int, str]] = {}  # a type_spec -> its record and name (for interface methods)
    for tag in tags:
        node, kind = tag.node, tag.node.type
        if kind == "function_declaration" and _top(node.parent):
            name = field_text(ex, node, "name")
            if name:
                ex.add(name, "function", node, exported=_go_exported(name))
        elif kind == "method_declaration" and _top(node.parent):
            name = field_text(ex, node, "name")
            receiver = _go_receiver(ex, node.child_by_field_name("receiver"))
            if name:
                ex.add(
                    name,
                    "method",
                    node,
                    scopes=(receiver,) if receiver else (),
                    parent=receiver or None,
                    exported=_go_exported(name) and (not receiver or _go_exported(receiver)),
                )
        elif kind in ("type_spec", "type_alias"):
            declaration = node.parent
            if declaration is None or declaration.type != "type_declaration" or not _top(declaration.parent):
                continue  # a type declared inside a function
            specs = [child for child in declaration.named_children if child.type in ("type_spec", "type_alias")]
            name = field_text(ex, node, "name")
            if not name:
                continue
            type_node = node.child_by_field_name("type")
            type_kind = type_node.type if type_node is not None else ""
            symbol_kind: SymbolKind = (
                "struct" if type_kind == "struct_type" else "interface" if type_kind == "interface_type" else "type"
            )
            if kind == "type_alias":
                symbol_kind = "type"
            index = ex.add(name, symbol_kind, declaration if len(specs) == 1 else node, exported=_go_exported(name))
            types[_key(node)] = (index, name)
        elif kind == "method_elem":
            interface = node.parent
            spec = interface.parent if interface is not None else None
            owner = types.get(_key(spec)) if spec is not None and interface is not None else None
            name = field_text(ex, node, "name")
            if owner is not None and interface is not None and interface.type == "interface_type" and name:
                index, type_name = owner
                ex.add(
                    name,
                    "method",
                    node,
                    scopes=(type_name,),
                    parent=type_name,
                    container=index,
                    exported=_go_exported(name),
                )
        elif kind in ("const_spec", "var_spec"):
            declaration = node.parent
            if declaration is not None and declaration.type == "var_spec_list":
                declaration = declaration.parent
            if declaration is None or not _top(declaration.parent):
                continue
            span = declaration if _go_value_specs(declaration) == 1 else node
            # A query pattern matches a spec once, at its first name: `A, B = 2, 3` names two.
            for name_node in node.children_by_field_name("name"):
                name = ex.text(name_node)
                if _go_exported(name):  # unexported package-level values are implementation detail
                    ex.add(name, "constant" if kind == "const_spec" else "variable", span)


def _go_value_specs(declaration: Node) -> int:
    count = 0
    for child in declaration.named_children:
        if child.type in ("const_spec", "var_spec"):
            count += 1
        elif child.type == "var_spec_list":
            count += sum(spec.type == "var_spec" for spec in child.named_children)
    return count


# ---- Rust ---------------------------------------------------------------------------------------------------------
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
# (mode, scopes, container, parent): mode is "module", "impl", "trait_impl" or "trait", as the block an item is in.
RustScope = tuple[str, tuple[str, ...], int | None, str | None]


def _rs_pub(node: Node) -> bool:
    for child in node.named_children:
        if child.type == "visibility_modifier":
            return child.named_child_count == 0 and (child.text or b"").strip() == b"pub"
    return False


def _rs_type_name(ex: Extractor, node: Node | None) -> str:
    """`Point<T>`, `&mut Point`, `crate::geo::Point` -> `Point`."""
    while node is not None and node.type != "type_identifier":
        if node.type in ("generic_type", "reference_type", "pointer_type"):
            node = node.child_by_field_name("type")
        elif node.type == "scoped_type_identifier":
            node = node.child_by_field_name("name")
        else:
            return ""
    return ex.text(node)


def _rs_macro_export(item: Node) -> bool:
    sibling = item.prev_named_sibling
    while sibling is not None and sibling.type in ("attribute_item", "line_comment", "block_comment"):
        if sibling.type == "attribute_item" and b"macro_export" in (sibling.text or b""):
            return True
        sibling = sibling.prev_named_sibling
    return False


class _RustScopes:
    """The block each item sits in, worked out once per block; None for a block inside a function (locals)."""

    def __init__(self, ex: Extractor) -> None:
        self.ex = ex
        self.containers: dict[NodeKey, int] = {}  # a `mod {}` or trait item -> its record
        self._known: dict[NodeKey, RustScope | None] = {}

    def of(self, item: Node) -> RustScope | None:
        parent = item.parent
        if parent is None:
            return None
        if parent.type == "source_file":
            return ("module", (), None, None)
        if parent.type != "declaration_list" or parent.parent is None:
            return None  # in a function body, a block, a macro: not a declaration level
        owner = parent.parent
        key = _key(owner)
        if key not in self._known:
            self._known[key] = self._owner_scope(owner)
        return self._known[key]

    def _owner_scope(self, owner: Node) -> RustScope | None:
        outer = self.of(owner)
        if outer is None:
            return None
        _, scopes, container, parent = outer
        name = field_text(self.ex, owner, "name")
        if owner.type == "mod_item":
            return ("module", (*scopes, name), self.containers.get(_key(owner)), None)
        if owner.type == "foreign_mod_item":
            return ("module", scopes, container, parent)
        if owner.type == "trait_item":
            return ("trait", (*scopes, name), self.containers.get(_key(owner)), name)
        if owner.type == "impl_item":
            type_name = _rs_type_name(self.ex, owner.child_by_field_name("type"))
            if not type_name:
                return None
            mode = "trait_impl" if owner.child_by_field_name("trait") is not None else "impl"
            # The type may be defined in another file, so its methods do not inherit its visibility.
            return (mode, (*scopes, type_name), None, type_name)
        return None


def _rust(ex: Extractor, root: Node, tags: list[Tag]) -> None:
    scopes_of = _RustScopes(ex)
    for tag in tags:
        item, kind = tag.node, tag.node.type
        scope = scopes_of.of(item)
        if scope is None:
            continue
        mode, scopes, container, parent = scope
        name = field_text(ex, item, "name")
        if not name:
            continue
        if mode in ("impl", "trait", "trait_impl"):
            # Trait items and trait-impl methods carry no `pub`: they are as visible as the trait.
            exported = _rs_pub(item) if mode == "impl" else True
            if kind in ("function_item", "function_signature_item"):
                ex.add(name, "method", item, scopes=scopes, parent=parent, container=container, exported=exported)
            elif kind == "const_item":
                ex.add(name, "constant", item, scopes=scopes, parent=parent, container=container, exported=exported)
            continue
        simple = _RUST_ITEMS.get(kind)
        if simple is not None:
            if kind == "static_item" and any(child.type == "mutable_specifier" for child in item.named_children):
                simple = "variable"
            ex.add(name, simple, item, scopes=scopes, container=container, exported=_rs_pub(item))
        elif kind == "trait_item":
            index = ex.add(name, "trait", item, scopes=scopes, container=container, exported=_rs_pub(item))
            scopes_of.containers[_key(item)] = index
        elif kind == "mod_item" and item.child_by_field_name("body") is not None:  # `mod foo;` points elsewhere
            index = ex.add(name, "module", item, scopes=scopes, container=container, exported=_rs_pub(item))
            scopes_of.containers[_key(item)] = index
        elif kind == "macro_definition":
            # No macro kind in the model: a macro is the closest thing to a function to look up.
            ex.add(name, "function", item, scopes=scopes, container=container, exported=_rs_macro_export(item))


# ---- Java ---------------------------------------------------------------------------------------------------------
_JAVA_TYPES: dict[str, SymbolKind] = {
    "class_declaration": "class",
    "record_declaration": "class",
    "interface_declaration": "interface",
    "annotation_type_declaration": "interface",
    "enum_declaration": "enum",
}
_JAVA_BODIES = frozenset({"class_body", "interface_body", "annotation_type_body", "enum_body"})
# (scopes, parent, container, in_interface) of the members of a type body.
JavaScope = tuple[tuple[str, ...], str | None, int | None, bool]


def _java_modifiers(node: Node) -> set[str]:
    for child in node.named_children:
        if child.type == "modifiers":
            return {modifier.type for modifier in child.children if not modifier.is_named}
    return set()


def _java(ex: Extractor, root: Node, tags: list[Tag]) -> None:
    for child in root.named_children:
        if child.type == "package_declaration":
            package = next((n for n in child.named_children if n.type in ("scoped_identifier", "identifier")), None)
            if package is not None:
                ex.module = "".join(ex.text(package).split())
    bodies: dict[NodeKey, JavaScope] = {}  # a declared type's body -> what its members get
    for tag in tags:
        member, kind = tag.node, tag.node.type
        holder = member.parent
        if holder is not None and holder.type == "enum_body_declarations":  # an enum's methods sit one level down
            holder = holder.parent
        if holder is not None and holder.type == "program":
            scope: JavaScope | None = ((), None, None, False)
        else:
            scope = bodies.get(_key(holder)) if holder is not None else None
        if scope is None:
            continue  # a local or anonymous class's member, or a type declared in a method
        scopes, parent, container, in_interface = scope
        symbol_kind = _JAVA_TYPES.get(kind)
        modifiers = _java_modifiers(member)
        if symbol_kind is not None:
            name = field_text(ex, member, "name")
        elif parent is None:
            continue  # methods and fields only exist inside a type
        elif kind in ("method_declaration", "constructor_declaration"):
            symbol_kind, name = "method", field_text(ex, member, "name")
        elif kind == "constant_declaration" or (kind == "field_declaration" and {"static", "final"} <= modifiers):
            # Instance fields are state, not definitions anyone looks up; static finals are constants.
            exported = "public" in modifiers or (in_interface and "private" not in modifiers)
            for declarator in member.children_by_field_name("declarator"):
                name = field_text(ex, declarator, "name")
                if name:
                    ex.add(
                        name, "constant", member, scopes=scopes, parent=parent, container=container, exported=exported
                    )
            continue
        else:
            continue
        if not name:
            continue
        exported = "public" in modifiers or (in_interface and "private" not in modifiers)
        index = ex.add(name, symbol_kind, member, scopes=scopes, parent=parent, container=container, exported=exported)
        body = member.child_by_field_name("body") if kind in _JAVA_TYPES else None
        if body is not None and body.type in _JAVA_BODIES:
            interface = kind in ("interface_declaration", "annotation_type_declaration")
            bodies[_key(body)] = ((*scopes, name), name, index, interface)
