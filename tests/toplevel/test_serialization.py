"""`serialization.py`: the components' one `to_dict` / `from_dict`, written from their `__init__` parameters."""

from __future__ import annotations

import copy
import importlib
import inspect
import pkgutil
from pathlib import Path
from typing import Any

import pytest
from haystack import component
from haystack.document_stores.types import FilterPolicy

import haystack_integrations.components.code_alias as package
from haystack_integrations.components.code_alias import (
    AliasDictionaryBuilder,
    CodeBM25Retriever,
    CodeDocumentEmbedder,
    CodeEmbeddingRetriever,
    CodeFileReader,
    CodeIndexDocumentStore,
    CodeRanker,
    CodeSplitter,
    CodeTextEmbedder,
    ConstrainedQueryRewriter,
    DocumentStorePersister,
    IndexSyncPlanner,
    IndexSyncWriter,
    QueryComposer,
    SymbolDefinitionRetriever,
    SymbolFaithfulnessFilter,
)
from haystack_integrations.components.code_alias.retrieval.embedders import CodeQuestionEmbedder
from haystack_integrations.components.code_alias.serialization import SerializedByInitParameters, init_parameters

PACKAGE = package.__name__


@component
class _Echo(SerializedByInitParameters):
    _not_serialized = frozenset({"scratch"})

    def __init__(self, *, inner: Any = None, policy: str | FilterPolicy = "replace", scratch: Any = None) -> None:
        self.inner = inner
        self.policy = FilterPolicy.from_str(policy) if isinstance(policy, str) else policy  # as Haystack's retrievers
        self.scratch = scratch

    @component.output_types(text=str)
    def run(self, text: str) -> dict[str, str]:
        return {"text": text}


def test_to_dict_writes_every_init_parameter_in_order_nested_components_and_enums_serialised() -> None:
    echo = _Echo(inner=CodeSplitter(max_chunk_lines=7), policy=FilterPolicy.MERGE, scratch="run-time only")
    data = echo.to_dict()
    assert data == {
        "type": f"{__name__}._Echo",
        "init_parameters": {
            "inner": {"type": f"{PACKAGE}.indexing.splitter.CodeSplitter", "init_parameters": {"max_chunk_lines": 7}},
            "policy": "merge",
        },
    }
    assert list(data["init_parameters"]) == ["inner", "policy"]  # the signature's order (YAML stays put)
    back = _Echo.from_dict(data)
    assert isinstance(back.inner, CodeSplitter) and back.inner.max_chunk_lines == 7
    assert back.policy is FilterPolicy.MERGE and back.scratch is None
    assert init_parameters(echo, leave_out={"policy"}).keys() == {"inner", "scratch"}


def test_from_dict_reads_the_old_flat_module_path() -> None:
    old = {"type": f"{PACKAGE}.splitter.CodeSplitter", "init_parameters": {"max_chunk_lines": 12}}
    assert CodeSplitter.from_dict(old).max_chunk_lines == 12


def _instances(tmp_path: Path) -> list[Any]:
    """One instance of each of the package's classes that use the mixin (the Elasticsearch ones aside)."""
    store = CodeIndexDocumentStore(index_dir=str(tmp_path / "index"), return_embedding=True, writer="a run")
    index_dir = str(tmp_path / "index")
    return [
        store,
        CodeRanker(top_k=7),
        CodeBM25Retriever(document_store=store, top_k=4, k1=1.1),
        SymbolDefinitionRetriever(document_store=store, top_k=3),
        CodeEmbeddingRetriever(document_store=store, min_definition_lines=2),
        CodeDocumentEmbedder(batch_size=8, text="summary"),
        CodeTextEmbedder(max_batch_size=4),
        CodeQuestionEmbedder(max_batch_size=2),
        ConstrainedQueryRewriter(index_dir=index_dir, max_hints=9, text_embedder=CodeTextEmbedder()),
        QueryComposer(use_rewrite=False),
        SymbolFaithfulnessFilter(index_dir=index_dir, scrub_text=False),
        AliasDictionaryBuilder(index_dir=index_dir, embedder=CodeDocumentEmbedder(), save=False),
        IndexSyncPlanner(document_store=store),
        IndexSyncWriter(document_store=store, batch_size=9),
        CodeSplitter(max_chunk_lines=30),
        CodeFileReader(exclude_dirs=["build"], progress_bar=False),
        DocumentStorePersister(document_store=store),
    ]


def test_every_component_round_trips_with_each_init_parameter(tmp_path: Path) -> None:
    instances = _instances(tmp_path)
    for instance in instances:
        data = instance.to_dict()
        wanted = [
            name
            for name in inspect.signature(type(instance).__init__).parameters
            if name != "self" and name not in type(instance)._not_serialized
        ]
        assert list(data["init_parameters"]) == wanted, type(instance).__name__
        # a copy: the rewriter's and builder's `from_dict` rebuild their nested component in the data itself
        assert type(instance).from_dict(copy.deepcopy(data)).to_dict() == data, type(instance).__name__
    assert "writer" not in instances[0].to_dict()["init_parameters"]  # a run's private copy is not saved


def test_the_round_trip_test_covers_every_user_of_the_mixin(tmp_path: Path) -> None:
    users = set()
    for info in pkgutil.walk_packages(package.__path__, prefix=f"{PACKAGE}."):
        if info.name.startswith(f"{PACKAGE}.elasticsearch"):
            continue  # the optional extra; its unit tests round-trip its components
        module = importlib.import_module(info.name)
        for _, value in inspect.getmembers(module, inspect.isclass):
            if value.__module__ == info.name and issubclass(value, SerializedByInitParameters):
                users.add(value.__name__)
    users.discard(SerializedByInitParameters.__name__)
    assert len(users) >= 15
    assert users == {type(instance).__name__ for instance in _instances(tmp_path)}


def test_a_parameter_not_stored_under_its_name_fails_loudly() -> None:
    @component
    class Forgetful(SerializedByInitParameters):
        def __init__(self, *, size: int = 1) -> None:
            self._size = size

        @component.output_types(size=int)
        def run(self) -> dict[str, int]:
            return {"size": self._size}

    with pytest.raises(AttributeError, match="size"):
        Forgetful().to_dict()


# Components that write their own `to_dict` / `from_dict` instead of (or beside) the mixin's, and why.
OWN_SERIALISATION = {
    "CodeElasticsearchEmbeddingRetriever": "the integration's to_dict (store, filter policy) + min_definition_lines",
    "OpenAICompatibleChatGenerator": "OpenAIChatGenerator's own (its API key stays an env reference)",
    "ConstrainedQueryRewriter": "from_dict only: the chat generator and text embedder rebuilt by Haystack's helpers",
    "AliasDictionaryBuilder": "from_dict only: the embedder rebuilt by Haystack's helper",
}


def test_every_component_serialises_through_the_mixin_or_says_why_not() -> None:
    from haystack.core.component.component import component as registry_owner

    for info in pkgutil.walk_packages(package.__path__, prefix=f"{PACKAGE}."):
        importlib.import_module(info.name)
    components = {cls for cls in registry_owner.registry.values() if cls.__module__.startswith(f"{PACKAGE}.")}
    assert len(components) >= 19  # the walk did register the package's components
    own = {
        cls.__name__
        for cls in components
        if "to_dict" in vars(cls) or "from_dict" in vars(cls) or not issubclass(cls, SerializedByInitParameters)
    }
    assert own == set(OWN_SERIALISATION)
