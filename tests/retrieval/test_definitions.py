"""SymbolDefinitionRetriever: the rewrite's symbols -> their defining chunks, fused with the other rankings."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from haystack import Document, Pipeline
from haystack.components.joiners import DocumentJoiner
from haystack.document_stores.in_memory import InMemoryDocumentStore

from haystack_integrations.components.code_alias.indexing.store import CodeIndexDocumentStore
from haystack_integrations.components.code_alias.retrieval.definitions import SymbolDefinitionRetriever


def _chunk(path: str, symbol: str, content: str = "") -> Document:
    module = path[:-3].replace("/", ".")
    return Document(
        content=content or f"def {symbol}(): pass",
        meta={"file_path": path, "symbol": symbol, "qualified_name": f"{module}.{symbol}"},
    )


DOCS = [
    _chunk("pay/retry.py", "with_stripe_backoff"),
    _chunk("pay/client.py", "StripeClient"),
    _chunk("ledger/post.py", "post_journal"),
    *[_chunk(f"models/m{i}.py", "save") for i in range(5)],  # a name defined everywhere
]


@pytest.fixture
def store(tmp_path: Path) -> CodeIndexDocumentStore:
    store = CodeIndexDocumentStore(index_dir=str(tmp_path))
    store.write_documents(DOCS)
    store.persist()
    return store


def _paths(documents: list[Document]) -> list[str]:
    return [d.meta["file_path"] for d in documents]


def test_definitions_come_in_the_rewrite_order(store: CodeIndexDocumentStore) -> None:
    retriever = SymbolDefinitionRetriever(document_store=store)
    found = retriever.run(symbols=["post_journal", "pay.retry.with_stripe_backoff", "missing"])["documents"]
    assert _paths(found) == ["ledger/post.py", "pay/retry.py"]
    assert found[0].score is not None and found[1].score is not None and found[0].score > found[1].score
    assert retriever.run(symbols=None)["documents"] == [] and retriever.run(symbols=[])["documents"] == []


def test_ambiguous_names_are_skipped_and_filters_apply(store: CodeIndexDocumentStore) -> None:
    retriever = SymbolDefinitionRetriever(document_store=store, max_files_per_symbol=3)
    assert retriever.run(symbols=["save"])["documents"] == []
    retriever.max_files_per_symbol = 5
    assert len(retriever.run(symbols=["save"])["documents"]) == 5
    only = {"field": "meta.file_path", "operator": "==", "value": "models/m2.py"}
    assert _paths(retriever.run(symbols=["save", "post_journal"], filters=only)["documents"]) == ["models/m2.py"]
    assert len(retriever.run(symbols=["save"], top_k=2)["documents"]) == 2


def test_sees_documents_written_after_the_first_query(store: CodeIndexDocumentStore) -> None:
    retriever = SymbolDefinitionRetriever(document_store=store)
    assert retriever.run(symbols=["refund"])["documents"] == []
    store.write_documents([_chunk("pay/refund.py", "refund")])
    assert _paths(retriever.run(symbols=["refund"])["documents"]) == ["pay/refund.py"]


class _FilterOnlyStore(InMemoryDocumentStore):
    """A store the retriever cannot special-case: it must go through `filter_documents` (as on Elasticsearch)."""

    def __init__(self) -> None:
        super().__init__()
        self.filters_seen: list[dict[str, Any]] = []

    def filter_documents(self, filters: dict[str, Any] | None = None) -> list[Document]:
        self.filters_seen.append(filters or {})
        return super().filter_documents(filters)


def test_any_store_is_queried_through_filters(monkeypatch: pytest.MonkeyPatch) -> None:
    other = _FilterOnlyStore()
    other.write_documents(DOCS)
    retriever = SymbolDefinitionRetriever(document_store=other)
    monkeypatch.setattr(
        "haystack_integrations.components.code_alias.retrieval.definitions.InMemoryDocumentStore", type(None)
    )
    found = retriever.run(symbols=["post_journal", "StripeClient"])["documents"]
    assert _paths(found) == ["ledger/post.py", "pay/client.py"]
    assert other.filters_seen and other.filters_seen[0]["operator"] == "OR"


def test_fused_with_a_ranking_it_lifts_the_definition_without_hiding_the_rest(store: CodeIndexDocumentStore) -> None:
    bm25_like = [DOCS[1], DOCS[0], DOCS[3]]  # client first, the retry helper second
    definitions = SymbolDefinitionRetriever(document_store=store).run(symbols=["with_stripe_backoff"])["documents"]
    fused = DocumentJoiner(join_mode="reciprocal_rank_fusion").run([bm25_like, definitions])["documents"]
    assert _paths(fused)[0] == "pay/retry.py"
    assert set(_paths(fused)) == {"pay/retry.py", "pay/client.py", "models/m0.py"}


def test_serialises_with_its_store_in_a_pipeline(store: CodeIndexDocumentStore, tmp_path: Path) -> None:
    pipeline = Pipeline()
    pipeline.add_component("definitions", SymbolDefinitionRetriever(document_store=store, top_k=7))
    loaded = Pipeline.loads(pipeline.dumps())
    component = loaded.get_component("definitions")
    assert isinstance(component, SymbolDefinitionRetriever)
    assert component.top_k == 7 and component.max_files_per_symbol == 3
    assert isinstance(component.document_store, CodeIndexDocumentStore)
    assert _paths(loaded.run({"definitions": {"symbols": ["post_journal"]}})["definitions"]["documents"]) == [
        "ledger/post.py"
    ]
    with pytest.raises(ValueError, match="top_k"):
        SymbolDefinitionRetriever(document_store=store, top_k=0)
