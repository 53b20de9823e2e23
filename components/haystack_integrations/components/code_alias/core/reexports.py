"""Link renamed JavaScript / TypeScript re-exports to the definitions they name.

`export { BaseComponent as Component } from './component'` in preact's `src/index.js` makes `Component` the
public name of `BaseComponent`, defined in `src/component.js`. The extractor records the re-export in the
file that makes it (a "variable" named `Component`, `aliases=("BaseComponent",)`, `reexport_from="./component"`,
see :mod:`.symbols`); this module resolves the specifier against the indexed files, follows chains of
re-exports, and says which definition gets which public name, so the dictionary can list the public name as an
alias of the definition (keeping the definition's own name) and drop the re-export record it has resolved.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping

from .model import FileRecord, SymbolDef
from .symbols import module_name_for

__all__ = ["ReexportLinks", "declaration_stem", "link_reexports", "resolve_module"]

# What a relative specifier may leave out, in the order bundlers and TypeScript try them.
_SOURCE_SUFFIXES = (".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts", ".vue")
_MAX_HOPS = 5
_DECLARATION = re.compile(r"^(?P<stem>.+)\.d\.(?:ts|mts|cts)$")
_JS_LANGUAGES = frozenset({"javascript", "typescript", "tsx", "vue"})


def declaration_stem(path: str) -> str | None:
    """The module a TypeScript declaration file declares (`hooks/src/index.d.ts` -> `hooks/src/index`), else None."""
    match = _DECLARATION.match(path)
    return match.group("stem") if match else None


class ReexportLinks:
    """
    The result of :func:`link_reexports`.

    :param aliases: (file path, qualified name) of a definition -> the public names re-exports give it.
    :param resolved: (file path, qualified name) of the re-export records that reached a definition.
    """

    def __init__(self) -> None:
        self.aliases: dict[tuple[str, str], list[str]] = {}
        self.resolved: set[tuple[str, str]] = set()

    def aliases_for(self, definition: SymbolDef) -> list[str]:
        """The public names re-exports elsewhere give `definition`."""
        return self.aliases.get((definition.file_path, definition.qualified_name), [])

    def is_resolved(self, definition: SymbolDef) -> bool:
        """Whether `definition` is a re-export record whose target was found (the dictionary leaves it out)."""
        return (definition.file_path, definition.qualified_name) in self.resolved


def resolve_module(importer: str, specifier: str, files: Mapping[str, object]) -> str | None:
    """
    The indexed file a relative module specifier names, as a bundler would find it.

    `./component` from `src/index.js` -> `src/component.js` (or `.ts`, `.tsx`, `/index.ts`...); a `.js`
    specifier also finds the `.ts` source TypeScript compiles to it. Bare specifiers (packages) resolve to None.

    :param importer: POSIX path of the file holding the specifier.
    :param specifier: The module specifier, quotes removed.
    :param files: The indexed files, keyed by POSIX path.
    """
    if not specifier.startswith("."):
        return None
    base = posixpath.normpath(posixpath.join(posixpath.dirname(importer), specifier))
    if base.startswith("../") or base == "..":
        return None
    stem, extension = posixpath.splitext(base)
    candidates = [base]
    if extension in (".js", ".jsx", ".mjs", ".cjs"):
        candidates += [stem + suffix for suffix in (".ts", ".tsx", ".mts", ".cts")]
    candidates += [base + suffix for suffix in _SOURCE_SUFFIXES]
    candidates += [f"{base}/index{suffix}" for suffix in _SOURCE_SUFFIXES]
    for candidate in candidates:
        if candidate in files:
            return candidate
    return None


def link_reexports(files: Mapping[str, FileRecord]) -> ReexportLinks:
    """
    Resolve every renamed re-export among `files` to the definition it names.

    :param files: The dictionary's file records, keyed by POSIX path.
    :returns: The public names per definition, and which re-export records resolved.
    """
    links = ReexportLinks()
    for path in sorted(files):
        for record in files[path].symbols:
            if record.reexport_from is None or not record.aliases:
                continue
            target = _follow(path, record.reexport_from, record.aliases[0], files)
            if target is None:
                continue
            names = links.aliases.setdefault((target.file_path, target.qualified_name), [])
            if record.name not in names and record.name != target.name:
                names.append(record.name)
            links.resolved.add((path, record.qualified_name))
    return links


def _follow(importer: str, specifier: str, own: str, files: Mapping[str, FileRecord]) -> SymbolDef | None:
    """The module-level definition `own` in the module `specifier` names, through re-export chains."""
    for _ in range(_MAX_HOPS):
        module = resolve_module(importer, specifier, files)
        if module is None:
            return None
        record = files[module]
        definition = next((s for s in record.symbols if s.name == own and _top(s)), None)
        if definition is None:
            return None
        if definition.reexport_from is None or not definition.aliases:
            return definition
        importer, specifier, own = module, definition.reexport_from, definition.aliases[0]
    return None


def _top(definition: SymbolDef) -> bool:
    """A module-level definition (not a method, not a function nested in another)."""
    if definition.parent is not None or definition.language not in _JS_LANGUAGES:
        return False
    module = module_name_for(definition.file_path, definition.language)
    return definition.qualified_name == (f"{module}.{definition.name}" if module else definition.name)
