# long: one resolution rule per kind of reference, each a method of one resolver
"""Resolve each reference of the indexed files to the definition it names (the rules: `graph_scope.py`'s docstring).

Framework-free. `Resolver.resolve(file, reference, caller)` answers one `Reference`; what it finds for a file's
imports, for a receiver path in a scope and for a class's bases is memoised on the resolver (one per graph build).
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable

from .graph_scope import (
    CLASS_KINDS,
    Definition,
    FileScope,
    Resolution,
    Scopes,
    Target,
    builtin_names,
    is_super,
    self_names,
)
from .model import Reference
from .reexports import resolve_module

__all__ = ["Resolver"]

_MAX_HOPS = 5
EXTERNAL = Resolution("external", (), "defined outside the index")
UNRESOLVED = Resolution("unresolved", (), "no definition of this name in scope")
_EXTERNAL_TARGET = Target("external")
_GO_VERSION_SUFFIX = ("v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9")


def _unique(ids: list[int] | tuple[int, ...]) -> tuple[int, ...]:
    return tuple(dict.fromkeys(ids))


class Resolver:
    """Resolves references against one `Scopes` index."""

    def __init__(self, scopes: Scopes) -> None:
        self.scopes = scopes
        self._paths: dict[tuple[int, str, int | None], Target | None] = {}
        self._bases: dict[int, tuple[int, ...]] = {}
        # file -> (definition, or -1 - class id for the class's methods together, variable) -> stated type
        self._binds: dict[int, dict[tuple[int | None, str], str]] = {}
        self._classes: dict[int | None, Definition | None] = {}
        self._callers: dict[int, list[int | None]] = {}
        self._scope_defs: dict[int, dict[tuple[str, ...], Definition]] = {}
        self._inheritors: dict[str, set[int]] | None = None  # a base's name -> the classes that write it

    # ---- one reference ----------------------------------------------------------------------------------------------
    def resolve(self, file: FileScope, reference: Reference, caller: int | None) -> Resolution:
        """What `reference` (of `file`, made inside definition `caller`, None at module level) refers to."""
        name, qualifier = reference.name, reference.qualifier
        if reference.kind == "import":
            return self._import(file, reference)
        if not qualifier:
            return self._bare(file, name, caller, reference.kind)
        if qualifier == "?":
            return self._by_name(file, name, "the receiver is an expression whose type is not known", methods=True)
        target = self.path(file, qualifier, caller)
        if target is None:
            return self._by_name(file, name, f"the type of `{qualifier}` is not known", methods=True)
        if target.kind == "external":
            return EXTERNAL
        if target.kind == "module":
            found = self.in_module(target.files, name)
        elif is_super(qualifier):  # the nearest base that defines it
            found = next((m for base in target.ids if (m := self.scopes.members(self.definition(base), name))), [])
        else:
            found = list(self.member(target.ids, name))
        if not found:
            if target.kind == "symbols" and qualifier.split(".")[0] in self_names(file.family):
                return self._in_subclasses(target.ids, name)
            return UNRESOLVED if target.kind == "module" else Resolution("unresolved", (), "not a member of its class")
        return self._chosen(found, "scope")

    def carry(self, previous: Resolver, *, keep: Callable[[int], bool]) -> None:
        """
        Take over what `previous` (the resolver of the graph a refresh starts from) worked out for the files `keep`
        accepts: each use's enclosing definition and the types the file states, which depend on that file alone.
        """
        self._callers = {index: found for index, found in previous._callers.items() if keep(index)}
        self._binds = {index: table for index, table in previous._binds.items() if keep(index)}
        self._scope_defs = {index: table for index, table in previous._scope_defs.items() if keep(index)}

    def definition(self, ident: int) -> Definition:
        return self.scopes.definitions[ident]

    def _chosen(self, found: tuple[int, ...] | list[int], how: str) -> Resolution:
        ids = _unique(found)
        if len(ids) == 1 or len({self.scopes.definitions[i].qualified_name for i in ids}) == 1:
            return Resolution("resolved", ids, how)  # one definition, or one name's overloads
        return Resolution("ambiguous", ids, f"{len(ids)} definitions in scope")

    def _by_name(self, file: FileScope, name: str, why: str, *, methods: bool) -> Resolution:
        """The last resort: every definition of the name in the language, reported as ambiguous (never chosen)."""
        candidates = [i for i in self.scopes.named(file.family, name) if (self.definition(i).scopes != ()) == methods]
        if not candidates:
            return EXTERNAL if methods else UNRESOLVED
        count = len(candidates)
        return Resolution("ambiguous", tuple(candidates[:50]), f"{why}; {count} definition(s) of `{name}` by name only")

    def _in_subclasses(self, classes: tuple[int, ...], name: str) -> Resolution:
        """`self.f()` where the class and its bases define no `f`: the subclasses that do (abstract / mixin style)."""
        found = [
            member
            for cls in classes
            for sub in self._subclasses_of(cls)
            for member in self.scopes.members(self.definition(sub), name)
        ]
        if not found:
            return Resolution("unresolved", (), "not defined in the class or its bases")
        return Resolution("ambiguous", _unique(found), "defined in subclasses only")

    def _subclasses_of(self, class_id: int) -> list[int]:
        """The classes that inherit from `class_id`, transitively (found through the names bases are written as)."""
        if self._inheritors is None:
            self._inheritors = {}
            for file in self.scopes.live_files():
                callers = self.callers_of_references(file)
                for reference, owner in zip(file.references, callers, strict=True):
                    if reference.kind == "inherit" and owner is not None:
                        self._inheritors.setdefault(reference.name, set()).add(owner)
        found: list[int] = []
        frontier = [class_id]
        while frontier:
            current = frontier.pop()
            for candidate in sorted(self._inheritors.get(self.definition(current).name, ())):
                if candidate not in found and candidate != class_id and current in self.ancestors(candidate):
                    found.append(candidate)
                    frontier.append(candidate)
        return found

    # ---- bare names -------------------------------------------------------------------------------------------------
    def _bare(self, file: FileScope, name: str, caller: int | None, kind: str) -> Resolution:
        found = self._in_enclosing(file, name, caller)
        if found:
            return self._chosen(found, "scope")
        found = self.scopes.top(file.repo, file.family, file.unit, name)
        if found:
            return self._chosen(found, "scope")
        bound = self.bindings(file).get(name)
        if bound:
            return self._target_resolution(bound, name)
        for star in self.stars(file):
            found = self.in_module(star.files, name) if star.kind == "module" else []
            if found:
                return self._chosen(found, "star import")
        if name in builtin_names(file.family):
            return EXTERNAL
        if file.family == "java" and name[:1].isupper() and kind in ("type", "new", "inherit"):
            return EXTERNAL  # a class of java.lang or an unindexed import
        return self._by_name(file, name, "not defined or imported in this file", methods=False)

    def _target_resolution(self, bound: list[Target], name: str) -> Resolution:
        ids: list[int] = []
        for target in bound:
            if target.kind == "symbols":
                ids.extend(target.ids)
        if ids:
            return self._chosen(ids, "import")
        if any(target.kind == "external" for target in bound):
            return EXTERNAL
        if any(target.kind == "module" for target in bound):
            return Resolution("unresolved", (), f"`{name}` names a module")
        return Resolution("unresolved", (), f"the module imported defines no `{name}`")

    def _in_enclosing(self, file: FileScope, name: str, caller: int | None) -> list[int]:
        """Definitions named `name` nested in the caller's enclosing functions (and, in Java, classes)."""
        if caller is None:
            return []
        definition = self.scopes.definitions[caller]
        chain = (*definition.scopes, definition.name)
        for depth in range(len(chain), 0, -1):
            scope = chain[:depth]
            owner = self._scope_definition(file, scope)
            is_class = owner is not None and owner.kind in CLASS_KINDS
            if is_class and file.family != "java":
                continue  # a class body is no enclosing scope of its methods' bare names (Python, JS, Rust, Go)
            found = self.scopes.scope_members(file, scope, name)
            if found:
                return found
            if is_class and owner is not None:
                inherited = self.member(self.ancestors(owner.id), name)
                if inherited:
                    return list(inherited)
        return []

    def _scope_definition(self, file: FileScope, scope: tuple[str, ...]) -> Definition | None:
        table = self._scope_defs.get(file.index)
        if table is None:
            table = self._scope_defs[file.index] = {}
            for _, _, ident in file.spans:
                definition = self.definition(ident)
                table.setdefault((*definition.scopes, definition.name), definition)
        return table.get(scope)

    def callers_of_references(self, file: FileScope) -> list[int | None]:
        """The enclosing definition of each of the file's references (`Scopes.enclosing`), computed once."""
        if file.index not in self._callers:
            self._callers[file.index] = self.scopes.enclosing(file)
        return self._callers[file.index]

    # ---- qualified names --------------------------------------------------------------------------------------------
    def path(self, file: FileScope, qualifier: str, caller: int | None) -> Target | None:
        """What a receiver or path stands for in `caller`'s scope: a module, class definitions, or external."""
        key = (file.index, qualifier, caller)
        if key not in self._paths:
            self._paths[key] = None  # a path that leads back to itself (`x = x.copy()`) stands for nothing known
            self._paths[key] = self._path(file, qualifier, caller)
        return self._paths[key]

    def _path(self, file: FileScope, qualifier: str, caller: int | None) -> Target | None:
        if qualifier.endswith("()") and not is_super(qualifier):  # an instance made there: `Foo().f()`
            return self._type_target(file, qualifier[:-2], caller)
        parts = qualifier.split(".")
        head = parts[0]
        target: Target | None
        rest = parts[1:]
        if head in self_names(file.family) or is_super(head):
            cls = self._enclosing_class(caller)
            if cls is None:
                return None
            if is_super(head):
                target = Target("symbols", ids=self.ancestors(cls.id)) if self.ancestors(cls.id) else None
            else:
                target = Target("symbols", ids=(cls.id,))
            if rest and target is not None:  # self.x: the type its class states for x
                kind = self._bind_type(file, f"{head}.{rest[0]}", caller, cls)
                target = self._type_target(file, kind, caller) if kind else None
                rest = rest[1:]
        elif file.family == "rust" and head in ("crate", "super"):
            return self._rust_module(file, parts)
        else:
            target, rest = self._head(file, parts, caller)
        for part in rest:
            if target is None or target.kind == "external":
                return target
            target = self._step(target, part)
        return target

    def _head(self, file: FileScope, parts: list[str], caller: int | None) -> tuple[Target | None, list[str]]:
        """The longest imported prefix of a dotted path (`os.path`, `a.b.c`), else its first name in scope."""
        bindings = self.bindings(file)
        for size in range(len(parts), 0, -1):
            bound = bindings.get(".".join(parts[:size]))
            if bound:
                return self._merge(bound), parts[size:]
        head = parts[0]
        kind = self._bind_type(file, head, caller, None)
        if kind:
            return self._type_target(file, kind, caller), parts[1:]
        found = [*self._in_enclosing(file, head, caller), *self.scopes.top(file.repo, file.family, file.unit, head)]
        classes = [i for i in found if self.scopes.definitions[i].kind in CLASS_KINDS]
        if classes:
            return Target("symbols", ids=tuple(classes)), parts[1:]
        for star in self.stars(file):
            found = self.in_module(star.files, head) if star.kind == "module" else []
            if found:
                return Target("symbols", ids=tuple(found)), parts[1:]
        if head in builtin_names(file.family):
            return _EXTERNAL_TARGET, []
        return None, []

    def _merge(self, bound: list[Target]) -> Target:
        files = tuple(f for t in bound if t.kind == "module" for f in t.files)
        ids = tuple(i for t in bound if t.kind == "symbols" for i in t.ids)
        if ids:
            return Target("symbols", ids=ids)
        if files:
            return Target("module", files=files)
        return _EXTERNAL_TARGET

    def _step(self, target: Target, part: str) -> Target | None:
        """`module.part` or `Class.part`: a submodule, a nested class, a member."""
        if target.kind == "module":
            first = self.scopes.files[target.files[0]] if target.files else None
            if first is not None and first.family == "python":
                sub = self.scopes.unit_files(first.repo, "python", f"{first.module}.{part}")
                if sub:
                    return Target("module", files=tuple(sub))
            found = self.in_module(target.files, part)
        else:
            found = list(self.member(target.ids, part))
        classes = [i for i in found if self.scopes.definitions[i].kind in CLASS_KINDS]
        return Target("symbols", ids=tuple(classes)) if classes else None

    def _type_target(self, file: FileScope, kind: str, caller: int | None) -> Target | None:
        """The classes a stated type names (`Foo`, `pkg.Foo`, `models.Model`)."""
        parts = kind.split(".")
        if len(parts) == 1:
            found = self._in_enclosing(file, kind, caller) or self.scopes.top(file.repo, file.family, file.unit, kind)
            classes = [i for i in found if self.scopes.definitions[i].kind in CLASS_KINDS]
            if classes:
                return Target("symbols", ids=tuple(classes))
            bound = self.bindings(file).get(kind)
            if bound:
                merged = self._merge(bound)
                return merged if merged.kind != "module" else None
            for star in self.stars(file):
                found = self.in_module(star.files, kind) if star.kind == "module" else []
                classes = [i for i in found if self.scopes.definitions[i].kind in CLASS_KINDS]
                if classes:
                    return Target("symbols", ids=tuple(classes))
            return _EXTERNAL_TARGET if kind in builtin_names(file.family) else None
        target = self.path(file, kind, caller)
        return target if target is None or target.kind != "module" else None

    def _enclosing_class(self, caller: int | None) -> Definition | None:
        """The class whose method (or nested function of a method) `caller` is (memoised)."""
        if caller not in self._classes:
            self._classes[caller] = self._find_enclosing_class(caller)
        return self._classes[caller]

    def _find_enclosing_class(self, caller: int | None) -> Definition | None:
        if caller is None:
            return None
        definition = self.scopes.definitions[caller]
        if definition.kind in CLASS_KINDS and definition.kind != "module":
            return definition
        file = self.scopes.file_of(definition)
        chain = definition.scopes
        for depth in range(len(chain), 0, -1):
            owner = self._scope_definition(file, chain[:depth])
            if owner is not None and owner.kind in CLASS_KINDS and owner.kind != "module":
                return owner
            if owner is None and file.family in ("go", "rust") and depth == len(chain):
                # A Go method's receiver type, a Rust impl's type: defined in another file of the package / crate.
                return self._type_elsewhere(file, chain[depth - 1])
        return None

    def _type_elsewhere(self, file: FileScope, name: str) -> Definition | None:
        candidates = self.scopes.top(file.repo, file.family, file.unit, name)
        if file.family == "rust":
            candidates = [
                i
                for i in self.scopes.named("rust", name)
                if self.scopes.definitions[i].kind in CLASS_KINDS
                and self.scopes.crate_of(self.scopes.file_of(self.scopes.definitions[i])) == self.scopes.crate_of(file)
            ]
        classes = [self.scopes.definitions[i] for i in candidates if self.scopes.definitions[i].kind in CLASS_KINDS]
        return classes[0] if len(classes) == 1 else None

    # ---- typed variables ---------------------------------------------------------------------------------------------
    def _bind_type(self, file: FileScope, variable: str, caller: int | None, cls: Definition | None) -> str:
        """The type stated for `variable` in the caller (then in its class, for `self.x` and Java fields)."""
        table = self._binds.get(file.index)
        if table is None:
            table = self._binds[file.index] = {}
            for reference, where in zip(file.references, self.callers_of_references(file), strict=True):
                if reference.kind != "bind":
                    continue
                table.setdefault((where, reference.name), reference.qualifier)
                holder = self._enclosing_class(where)
                # `self.x = Foo()` in any method states x's type for the whole class, and so does a field declared
                # in the class body (`Foo x;`, `x: Foo`); a method's local variable stays the method's.
                member = reference.name.split(".", 1)[0] in self_names(file.family)
                if holder is not None and (member or (where is not None and where == holder.id)):
                    table.setdefault((-1 - holder.id, reference.name), reference.qualifier)
        kind = table.get((caller, variable))
        if kind:
            return kind
        owner = cls if cls is not None else self._enclosing_class(caller)
        if owner is None:
            return ""
        kind = table.get((-1 - owner.id, variable))
        if not kind and file.family == "java" and variable.startswith("this."):
            kind = table.get((-1 - owner.id, variable[5:]))
        return kind or ""

    # ---- modules, classes, bases -------------------------------------------------------------------------------------
    def in_module(self, files: tuple[int, ...], name: str, hops: int = 0) -> list[int]:
        """Top-level definitions named `name` in a module's files, following its imports and re-exports."""
        if not files or hops > _MAX_HOPS:
            return []
        first = self.scopes.files[files[0]]
        found = list(self.scopes.top(first.repo, first.family, first.unit, name))
        if found:
            return found
        for index in files:
            file = self.scopes.files[index]
            bound = self.bindings(file).get(name)
            for target in bound or ():
                if target.kind == "symbols":
                    found.extend(target.ids)
            for star in self.stars(file, reexports_only=file.family == "ecmascript"):
                if star.kind == "module" and star.files != files:
                    found.extend(self.in_module(star.files, name, hops + 1))
        return found

    def member(self, classes: tuple[int, ...] | list[int], name: str, *, bases_only: bool = False) -> tuple[int, ...]:
        """Members named `name` of the classes, else of their bases (nearest first)."""
        owners = [self.scopes.definitions[i] for i in classes]
        if not bases_only:
            found = [m for owner in owners for m in self.scopes.members(owner, name)]
            if found:
                return _unique(found)
        for owner in owners:
            for base in self.ancestors(owner.id):
                found = list(self.scopes.members(self.scopes.definitions[base], name))
                if found:
                    return _unique(found)
        return ()

    def ancestors(self, class_id: int) -> tuple[int, ...]:
        """The base classes (and implemented interfaces / traits) of a class, transitively, nearest first."""
        if class_id in self._bases:
            return self._bases[class_id]
        self._bases[class_id] = ()  # a cycle stops here
        definition = self.scopes.definitions[class_id]
        file = self.scopes.file_of(definition)
        found: list[int] = []
        callers = self.callers_of_references(file)
        for reference, owner in zip(file.references, callers, strict=True):
            if reference.kind != "inherit" or owner != class_id:
                continue
            base = self.resolve(file, Reference("type", reference.name, reference.line, reference.qualifier), None)
            for ident in base.targets if base.status == "resolved" else ():
                if self.scopes.definitions[ident].kind in CLASS_KINDS and ident != class_id:
                    found.append(ident)
                    found.extend(self.ancestors(ident))
        self._bases[class_id] = _unique(found)
        return self._bases[class_id]

    # ---- imports -----------------------------------------------------------------------------------------------------
    def _import(self, file: FileScope, reference: Reference) -> Resolution:
        if not reference.name or reference.name == "*":
            return Resolution("unresolved", (), "imports a module")
        bound = self.bindings(file).get(self._local_name(file, reference))
        return self._target_resolution(bound or [_EXTERNAL_TARGET], reference.name)

    @staticmethod
    def _local_name(file: FileScope, reference: Reference) -> str:
        if file.family == "go" and not reference.binding:
            return go_package_name(reference.qualifier)
        return reference.binding or reference.name

    def bindings(self, file: FileScope) -> dict[str, list[Target]]:
        """What each name the file imports is bound to (a module, definitions, or something outside the index)."""
        if file.bindings is None:
            file.bindings = {}
            file.stars = []
            file.reexported_stars = []
            for reference in file.references:
                if reference.kind not in ("import", "reexport"):
                    continue
                module = self.module_target(file, reference.qualifier)
                if reference.name == "*" or (file.family == "go" and reference.binding == "."):
                    if module is not None and reference.kind == "import":
                        file.stars.append(module)
                    elif module is not None:  # `export * from './x'` binds nothing in the file itself
                        file.reexported_stars.append(module)
                    continue
                if reference.kind == "reexport" and not reference.binding:
                    continue
                local = self._local_name(file, reference)
                target = self._imported(file, module, reference)
                file.bindings.setdefault(local, []).append(target)
                if not reference.name and file.family == "python":
                    # `import a.b.c` makes `a` and `a.b` usable too.
                    parts = local.split(".")
                    for size in range(1, len(parts)):
                        prefix = ".".join(parts[:size])
                        file.bindings.setdefault(prefix, []).append(
                            self.module_target(file, prefix) or _EXTERNAL_TARGET
                        )
        return file.bindings

    def stars(self, file: FileScope, *, reexports_only: bool = False) -> list[Target]:
        """The modules whose names a file imports wholesale (`from x import *`, `use a::*`), or with `reexports_only`
        re-exports wholesale (`export * from './x'`)."""
        self.bindings(file)
        return (file.reexported_stars if reexports_only else file.stars) or []

    def _imported(self, file: FileScope, module: Target | None, reference: Reference) -> Target:
        if module is None:
            return _EXTERNAL_TARGET
        if not reference.name:
            return module
        if reference.name == "default" and file.family == "ecmascript":
            found = self.in_module(module.files, reference.binding) if module.kind == "module" else []
            return Target("symbols", ids=tuple(found)) if found else Target("unresolved")
        if file.family == "python" and module.kind == "module":  # `from pkg import submodule`
            first = self.scopes.files[module.files[0]]
            sub = self.scopes.unit_files(first.repo, "python", f"{first.module}.{reference.name}")
            if sub:
                return Target("module", files=tuple(sub))
        if module.kind == "symbols":  # Java static import, Rust `use a::Type::method`
            found = list(self.member(module.ids, reference.name))
        else:
            found = self.in_module(module.files, reference.name, 1)
        if file.family == "rust" and not found and module.kind == "module":  # `use crate::a::b` where b is a module
            submodule = self._rust_submodule(module, reference.name)
            if submodule is not None:
                return submodule
        return Target("symbols", ids=tuple(found)) if found else Target("unresolved")

    def module_target(self, file: FileScope, specifier: str) -> Target | None:
        """The module (its files) an import specifier names in this file's language; None outside the index."""
        family = file.family
        if family == "python":
            return self._python_module(file, specifier)
        if family == "ecmascript":
            return self._ecmascript_module(file, specifier)
        if family == "go":
            return self._go_package(file, specifier)
        if family == "rust":
            return self._rust_module(file, specifier.split("."))
        if family == "java":
            files = self.scopes.unit_files(file.repo, "java", specifier)
            if files:
                return Target("module", files=tuple(files))
            package, _, cls = specifier.rpartition(".")  # `import static a.b.C.m`: the class C
            found = self.scopes.top(file.repo, "java", package, cls)
            return Target("symbols", ids=tuple(found)) if found else None
        return None

    def _python_module(self, file: FileScope, specifier: str) -> Target | None:
        if specifier.startswith("."):
            level = len(specifier) - len(specifier.lstrip("."))
            package = file.module.split(".") if file.path.endswith("__init__.py") else file.module.split(".")[:-1]
            if level > 1:
                package = package[: len(package) - (level - 1)]
            rest = specifier[level:]
            specifier = ".".join([*package, *([rest] if rest else [])])
        files = self.scopes.unit_files(file.repo, "python", specifier)
        return Target("module", files=tuple(files)) if files else None

    def _ecmascript_module(self, file: FileScope, specifier: str) -> Target | None:
        paths = self.scopes.paths(file.repo)
        if specifier.startswith("."):
            found = resolve_module(file.path, specifier, paths)
            return Target("module", files=(paths[found],)) if found is not None else None
        for package in self.scopes.packages("npm", file.repo):
            names = (package.name, *package.aliases)
            name = next((n for n in names if specifier == n or specifier.startswith(n + "/")), None)
            if name is None:
                continue
            root = package.root.rstrip("/")
            sub = specifier[len(name) :].lstrip("/")
            if sub:
                found = resolve_module(f"{root}/index.js" if root else "index.js", f"./{sub}", paths)
                if found is not None:
                    return Target("module", files=(paths[found],))
            files = tuple(
                index
                for path, index in paths.items()
                if (not root or path.startswith(root + "/")) and not self.scopes.files[index].test
            )
            return self._package_exports(files) if files else None
        return None

    def _package_exports(self, files: tuple[int, ...]) -> Target:
        """A package imported by name: its files' exported top-level definitions, as one module."""
        return Target("module", files=files)

    def _go_package(self, file: FileScope, path: str) -> Target | None:
        for package in self.scopes.packages("go", file.repo):
            if path == package.name or path.startswith(package.name + "/"):
                folder = posixpath.join(package.root, path[len(package.name) :].lstrip("/")).strip("/")
                files = self.scopes.unit_files(file.repo, "go", folder)
                return Target("module", files=tuple(files)) if files else None
        return None

    def _rust_module(self, file: FileScope, parts: list[str]) -> Target | None:
        crate = self.scopes.crate_of(file)
        module = file.module.split(".") if file.module else []
        head, rest = parts[0], parts[1:]
        if head == "crate":
            path: list[str] = []
        elif head == "super":
            path = module[:-1]
            while rest and rest[0] == "super":
                path, rest = path[:-1], rest[1:]
        elif head == "self":
            path = module
        else:
            packages = {p.name.replace("-", "_"): p for p in self.scopes.packages("cargo", file.repo)}
            if head in packages:  # another crate of the workspace, by name
                crate, path = packages[head].root.rstrip("/"), []
            else:  # a path from the current module (`use pricing::total` in lib.rs names the child module)
                inner = self.scopes.top(file.repo, "rust", file.unit, head)  # an inline `mod head {}` of this file
                if inner and not rest:
                    return Target("symbols", ids=tuple(inner))
                path, rest = module, parts
        for size in range(len(rest), -1, -1):
            files = self.scopes.unit_files(file.repo, "rust", f"{crate}::{'.'.join([*path, *rest[:size]])}")
            if files:
                target = Target("module", files=tuple(files))
                for part in rest[size:]:
                    stepped = self._step(target, part)
                    if stepped is None:
                        return None
                    target = stepped
                return target
        return None

    def _rust_submodule(self, module: Target, name: str) -> Target | None:
        first = self.scopes.files[module.files[0]]
        crate, _, path = first.unit.partition("::")
        files = self.scopes.unit_files(first.repo, "rust", f"{crate}::{path + '.' if path else ''}{name}")
        return Target("module", files=tuple(files)) if files else None


def go_package_name(path: str) -> str:
    """The name an import path's package is used by, when the import gives none (`github.com/x/y/v2` -> `y`)."""
    parts = [part for part in path.split("/") if part]
    if len(parts) > 1 and parts[-1] in _GO_VERSION_SUFFIX:
        parts.pop()
    return parts[-1].removeprefix("go-").split(".")[0] if parts else ""
