"""Old module paths keep working: `code_alias.bm25` is `code_alias.retrieval.bm25`, the same module object.

The package's modules moved into folders named after the pipeline's stages (`indexing/`, `rewriting/`,
`retrieval/`, `serving/`, `evaluation/`). Saved pipeline YAML files (`type: ...code_alias.bm25.CodeBM25Retriever`),
user imports and `mock.patch` targets name the old paths; `install()` (called when the package is imported) appends a
finder to `sys.meta_path` that answers only for `{package}.<old name>`: it imports the new module and registers it
under the old name as well, so classes are identical, and adds the old `type:` names of its components to Haystack's
component registry (which `Pipeline.loads` looks up by the dotted name it reads). Nothing is imported until an old
path is asked for. `code_alias.serving` is now the folder itself; `serving/__init__.py` forwards the old module's names.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
import types
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from importlib.abc import Loader

PACKAGE = __name__.rpartition(".")[0]

# old module (relative to the package: directly under it, or in a stage folder) -> its new place
MOVED: dict[str, str] = {
    "dictionary_builder": "indexing.dictionary_builder",
    "dictionary_handle": "indexing.dictionary_handle",
    "reader": "indexing.reader",
    "splitter": "indexing.splitter",
    "index_files": "indexing.index_files",
    "index_delta": "indexing.index_delta",
    "index_mode": "indexing.index_mode",
    "store": "indexing.store",
    "store_cache": "indexing.store_cache",
    "vector_fill": "indexing.vector_fill",
    "bm25_build": "indexing.bm25_build",
    "repositories": "indexing.repositories",
    "sync": "indexing.sync",
    "rewriter": "rewriting.rewriter",
    "faithfulness": "rewriting.faithfulness",
    "composer": "rewriting.composer",
    "rewrite_log": "rewriting.rewrite_log",
    "cache": "rewriting.cache",
    "bm25": "retrieval.bm25",
    "embedders": "retrieval.embedders",
    "embedding_retriever": "retrieval.embedding_retriever",
    "embedding_text": "retrieval.embedding_text",
    "definitions": "retrieval.definitions",
    "search": "app.search",
    "repository_evidence": "retrieval.repository_evidence",
    "server": "serving.server",
    "server_discovery": "serving.server_discovery",
    "hayhooks_wrappers": "serving.hayhooks_wrappers",
    "live": "serving.live",
    "push_sync": "app.push_sync",
    "bench_searcher": "evaluation.bench_searcher",
    "bench_variants": "evaluation.bench_variants",
    # moved again, out of a stage folder: the application is not a stage (`app/`)
    "retrieval.search": "app.search",
}


class _LegacyLoader:  # duck-typed loader (`importlib.abc` would import importlib.resources)
    """Makes the old module name an alias of the new module."""

    def __init__(self, new_name: str) -> None:
        self.new_name = new_name

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return None  # a placeholder: `exec_module` replaces it in `sys.modules` with the real module

    def exec_module(self, module: types.ModuleType) -> None:
        old_name = module.__name__
        real = importlib.import_module(self.new_name)
        sys.modules[old_name] = real  # the import system returns what `sys.modules` holds after this call
        _register_old_types(real, old_name)


def _register_old_types(real: types.ModuleType, old_name: str) -> None:
    """`Pipeline.loads` looks a `type:` up in Haystack's component registry: give the old names the same classes."""
    haystack_component = sys.modules.get("haystack.core.component.component")
    registry = getattr(getattr(haystack_component, "component", None), "registry", None)
    if not isinstance(registry, dict):
        return  # Haystack is not imported: nothing in the module is a registered component
    prefix = real.__name__ + "."
    for key, cls in list(registry.items()):
        if key.startswith(prefix) and "." not in key[len(prefix) :]:
            registry.setdefault(old_name + "." + key[len(prefix) :], cls)


class _LegacyFinder:  # duck-typed meta path finder
    """Finds `<package>.<old name>` for the modules in `MOVED` (`retrieval.search` too), and nothing else."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        new = MOVED.get(fullname[len(PACKAGE) + 1 :]) if fullname.startswith(PACKAGE + ".") else None
        if new is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, cast("Loader", _LegacyLoader(f"{PACKAGE}.{new}")))


def install() -> None:
    """Append the finder to `sys.meta_path` once (after the path finder: a real module always wins)."""
    if not any(isinstance(finder, _LegacyFinder) for finder in sys.meta_path):
        sys.meta_path.append(_LegacyFinder())


def with_current_type(data: dict[str, Any]) -> dict[str, Any]:
    """`data` (a component's or store's `to_dict`) with an old `type` path replaced by the current one.

    Haystack's `default_from_dict` refuses a `type` other than the class's own dotted name; the package's
    `from_dict` methods pass their data through here, so YAML saved before the stage folders still loads.
    """
    type_name = data.get("type")
    if not isinstance(type_name, str):
        return data
    module, _, class_name = type_name.rpartition(".")
    new = MOVED.get(module[len(PACKAGE) + 1 :]) if module.startswith(PACKAGE + ".") else None
    return data if new is None else {**data, "type": f"{PACKAGE}.{new}.{class_name}"}
