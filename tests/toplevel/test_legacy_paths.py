"""The module paths from before the stage folders keep working: same module objects, old YAML `type:` paths load.

Users have pipeline YAML files and imports that name `haystack_integrations.components.code_alias.bm25` and the
like; `_legacy.py` makes each old path an alias of the moved module, and components now serialise to the new paths.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys

import pytest
from haystack import Pipeline

from haystack_integrations.components.code_alias import _legacy
from haystack_integrations.components.code_alias.rewriting.composer import QueryComposer
from haystack_integrations.components.code_alias.rewriting.faithfulness import SymbolFaithfulnessFilter
from tests.support.repos import PIPELINES

PACKAGE = "haystack_integrations.components.code_alias"

# old module (directly under the package, before the stage folders) -> where it lives now
OLD_TO_NEW = {
    "bench_searcher": "evaluation.bench_searcher",
    "bench_variants": "evaluation.bench_variants",
    "bm25": "retrieval.bm25",
    "bm25_build": "indexing.bm25_build",
    "cache": "rewriting.cache",
    "composer": "rewriting.composer",
    "definitions": "retrieval.definitions",
    "dictionary_builder": "indexing.dictionary_builder",
    "dictionary_handle": "indexing.dictionary_handle",
    "embedders": "retrieval.embedders",
    "embedding_retriever": "retrieval.embedding_retriever",
    "embedding_text": "retrieval.embedding_text",
    "faithfulness": "rewriting.faithfulness",
    "hayhooks_wrappers": "serving.hayhooks_wrappers",
    "index_delta": "indexing.index_delta",
    "index_files": "indexing.index_files",
    "index_mode": "indexing.index_mode",
    "live": "serving.live",
    "push_sync": "app.push_sync",
    "reader": "indexing.reader",
    "repositories": "indexing.repositories",
    "repository_evidence": "retrieval.repository_evidence",
    "rewrite_log": "rewriting.rewrite_log",
    "rewriter": "rewriting.rewriter",
    "search": "app.search",
    "retrieval.search": "app.search",
    "server": "serving.server",
    "server_discovery": "serving.server_discovery",
    "splitter": "indexing.splitter",
    "store": "indexing.store",
    "store_cache": "indexing.store_cache",
    "sync": "indexing.sync",
    "vector_fill": "indexing.vector_fill",
}

OLD_YAML = f"""
components:
  composer:
    type: {PACKAGE}.composer.QueryComposer
    init_parameters:
      filter_by_package: true
  faithfulness:
    type: {PACKAGE}.faithfulness.SymbolFaithfulnessFilter
    init_parameters:
      index_dir: some-index
connections: []
"""


def test_the_legacy_table_is_the_list_of_moved_modules() -> None:
    assert _legacy.MOVED == OLD_TO_NEW


def test_every_old_path_is_the_new_module() -> None:
    for old, new in OLD_TO_NEW.items():
        module = importlib.import_module(f"{PACKAGE}.{new}")
        assert importlib.import_module(f"{PACKAGE}.{old}") is module, old
        assert sys.modules[f"{PACKAGE}.{old}"] is module
        assert module.__name__ == f"{PACKAGE}.{new}", "the moved module keeps its own name and spec"
        assert module.__spec__ is not None and module.__spec__.name == f"{PACKAGE}.{new}"


def test_old_from_imports_give_the_same_classes() -> None:
    from haystack_integrations.components.code_alias.bm25 import CodeBM25Retriever as Old  # type: ignore[import-not-found]

    from haystack_integrations.components.code_alias.retrieval.bm25 import CodeBM25Retriever

    assert Old is CodeBM25Retriever


def test_the_old_serving_module_is_read_through_the_serving_folder() -> None:
    """`code_alias.serving` is the folder now; the old module's names are looked up in `serving.service`."""
    from haystack_integrations.components.code_alias.serving import ServiceSettings, get_service, service

    assert ServiceSettings is service.ServiceSettings
    assert get_service is service.get_service
    from haystack_integrations.components.code_alias.serving import server  # a module of the folder, not a name

    assert server.__name__ == f"{PACKAGE}.serving.server"


def test_a_pipeline_with_old_type_paths_loads_and_saves_the_new_ones() -> None:
    pipeline = Pipeline.loads(OLD_YAML)
    composer = pipeline.get_component("composer")
    faithfulness = pipeline.get_component("faithfulness")
    assert type(composer) is QueryComposer
    assert composer.filter_by_package is True
    assert type(faithfulness) is SymbolFaithfulnessFilter
    assert faithfulness.index_dir == "some-index"
    saved = pipeline.to_dict()["components"]
    assert saved["composer"]["type"] == f"{PACKAGE}.rewriting.composer.QueryComposer"
    assert saved["faithfulness"]["type"] == f"{PACKAGE}.rewriting.faithfulness.SymbolFaithfulnessFilter"
    assert Pipeline.loads(pipeline.dumps()).to_dict() == pipeline.to_dict()


@pytest.mark.parametrize("name", ["query_lexical.yml", "indexing_lexical.yml"])
def test_a_shipped_pipeline_written_with_the_old_paths_loads(name: str) -> None:
    """Nested stores (`document_store: {type: ...code_alias.store...}`) are rebuilt from their old paths too."""
    current = (PIPELINES / name).read_text(encoding="utf-8")
    old = current
    for old_name, new in OLD_TO_NEW.items():
        old = old.replace(f"{PACKAGE}.{new}.", f"{PACKAGE}.{old_name}.")
    assert old != current and f"{PACKAGE}.store.CodeIndexDocumentStore" in old
    assert Pipeline.loads(old).to_dict() == Pipeline.loads(current).to_dict()


def test_importing_the_package_imports_no_stage_module() -> None:
    """The alias finder is lazy: importing the package loads no moved module (nor haystack, nor torch)."""
    code = (
        f"import json, sys, {PACKAGE}\n"
        f"prefix = {PACKAGE!r} + '.'\n"
        "loaded = sorted(m[len(prefix):] for m in sys.modules if m.startswith(prefix))\n"
        "print(json.dumps([loaded, 'haystack' in sys.modules, 'torch' in sys.modules]))\n"
    )
    environment = {**os.environ, "HAYSTACK_TELEMETRY_ENABLED": "False", "HF_HUB_OFFLINE": "1"}
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=environment, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr[-3000:]
    loaded, haystack_loaded, torch_loaded = json.loads(result.stdout.strip().splitlines()[-1])
    assert loaded == ["_legacy", "deferred_torch"]
    assert not haystack_loaded and not torch_loaded


def test_the_generator_helpers_are_still_found_in_the_rewriter() -> None:
    """`rewriter.chat_generator_spec` & co. moved to `rewriting.generators`; the old module path still has them."""
    generators = importlib.import_module(f"{PACKAGE}.rewriting.generators")
    for old in (f"{PACKAGE}.rewriter", f"{PACKAGE}.rewriting.rewriter"):
        rewriter = importlib.import_module(old)
        for name in (
            "chat_generator_spec",
            "usable_chat_generator_spec",
            "LLAMA_CPP_GENERATOR",
            "OPENAI_GENERATOR",
            "OPENAI_KEY_ENV_VARS",
            "STRUCTURED_OUTPUTS",
        ):
            assert getattr(rewriter, name) is getattr(generators, name), (old, name)
