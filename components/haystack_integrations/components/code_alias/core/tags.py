"""Tag queries: what names each definition and each use of a name, from the grammars' own `queries/tags.scm`.

Every tree-sitter grammar wheel we install ships a `queries/tags.scm` (the query GitHub's code navigation and
aider's repository map run) that captures definitions (`@definition.function`, `@definition.class`, ...) and
references (`@reference.call`, `@reference.type`, ...), each with the identifier as `@name`. One query per language
is compiled from that file plus ours, `queries/<language>-tags.scm` next to this module, which adds what the wheels
leave out and the project needs (Go's constants and interface methods, Rust's consts and `use` lists, Java's
constructors, enums and records, imports and inheritance everywhere, ...). TypeScript's and TSX's wheel file
assumes the JavaScript one, as its grammar extends JavaScript's, so both are read for them.

Framework-free. A query runs once per parsed file (`run_tags`): the definitions of Go, Rust and Java and the
references of all six languages come from the same matches. Languages are compiled once per process.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import NamedTuple

from tree_sitter import Language, Node, Query, QueryCursor

__all__ = ["Tag", "TagQuery", "run_tags", "tag_query", "wheel_tags_file"]

# language -> the grammar modules whose `queries/tags.scm` it reads, in order
_WHEEL_TAGS: dict[str, tuple[str, ...]] = {
    "python": ("tree_sitter_python",),
    "javascript": ("tree_sitter_javascript",),
    "typescript": ("tree_sitter_javascript", "tree_sitter_typescript"),
    "tsx": ("tree_sitter_javascript", "tree_sitter_typescript"),
    "go": ("tree_sitter_go",),
    "rust": ("tree_sitter_rust",),
    "java": ("tree_sitter_java",),
}
# Our additions, per language (`core/queries/<name>-tags.scm`): `ecmascript` holds for JavaScript, TypeScript and
# TSX; `jsx` for JavaScript and TSX (the TypeScript grammar has no JSX nodes, and a query naming a node type its
# grammar lacks, or a shape it cannot have, does not compile).
_OWN_TAGS: dict[str, tuple[str, ...]] = {
    "python": ("python",),
    "javascript": ("ecmascript", "javascript", "jsx"),
    "typescript": ("ecmascript", "typescript"),
    "tsx": ("ecmascript", "jsx", "typescript"),
    "go": ("go",),
    "rust": ("rust",),
    "java": ("java",),
}


class Tag(NamedTuple):
    """
    One match: a definition or a reference.

    :param role: "definition" or "reference".
    :param kind: What the query calls it (`function`, `class`, `call`, `type`, `import`, ...).
    :param node: The node the tag spans (the definition, the call, the import statement).
    :param name: The `@name` node (the identifier), when the pattern captures one.
    """

    role: str
    kind: str
    node: Node
    name: Node | None


@dataclass(frozen=True)
class TagQuery:
    """A compiled tags query and the files it was read from (for error messages and the docs)."""

    query: Query
    sources: tuple[str, ...]
    #: capture name -> (role, kind), for the captures that tag something (`@definition.*`, `@reference.*`)
    roles: dict[str, tuple[str, str]]


def wheel_tags_file(module_name: str) -> Path | None:
    """The `queries/tags.scm` shipped inside a grammar wheel, or None when that build of the wheel has none."""
    module = importlib.import_module(module_name)
    path = Path(module.__file__ or "").parent / "queries" / "tags.scm"
    return path if path.is_file() else None


@cache
def tag_query(language: str, grammar: Language, *, definitions: bool = True) -> TagQuery:
    """
    The tags query of `language` (compiled once per process): the wheels' `tags.scm` and ours.

    A wheel without a `tags.scm` (a build that leaves the queries out) still gets ours, which the extraction relies on;
    only references that the wheel alone tags would be missing, and tests check the wheels we pin have them.

    :param language: One of the six languages (tsx included).
    :param grammar: Its compiled grammar.
    :param definitions: False: the patterns that only tag definitions are turned off (Python and JavaScript read
        their definitions with walkers, and a query's cost grows with what it matches).
    """
    texts: list[str] = []
    sources: list[str] = []
    for module_name in _WHEEL_TAGS[language]:
        path = wheel_tags_file(module_name)
        if path is not None:
            texts.append(path.read_text(encoding="utf-8"))
            sources.append(f"{module_name}/queries/tags.scm")
    for name in _OWN_TAGS[language]:
        resource = resources.files(__package__ or "").joinpath(f"queries/{name}-tags.scm")
        texts.append(resource.read_text(encoding="utf-8"))
        sources.append(f"core/queries/{name}-tags.scm")
    text = "\n".join(texts)
    query = Query(grammar, text)
    if not definitions:
        raw = text.encode("utf-8")
        for index in range(query.pattern_count):
            pattern = raw[query.start_byte_for_pattern(index) : query.end_byte_for_pattern(index)]
            if b"@definition." in pattern and b"@reference." not in pattern:
                query.disable_pattern(index)
    roles: dict[str, tuple[str, str]] = {}
    for index in range(query.capture_count):
        role, _, kind = query.capture_name(index).partition(".")
        if role in ("definition", "reference") and kind:
            roles[query.capture_name(index)] = (role, kind)
    return TagQuery(query, tuple(sources), roles)


def run_tags(query: TagQuery, root: Node) -> list[Tag]:
    """
    Every definition and reference the query tags in the tree under `root`, in the order the matches come (by the
    position of their first node). A pattern without a `@definition.*` / `@reference.*` capture tags nothing.
    """
    tags: list[Tag] = []
    roles = query.roles
    for _, captures in QueryCursor(query.query).matches(root):
        names = captures.get("name")
        name = names[0] if names else None
        for capture, nodes in captures.items():
            tagged = roles.get(capture)
            if tagged is not None:
                tags.extend(Tag(tagged[0], tagged[1], node, name) for node in nodes)
    return tags
