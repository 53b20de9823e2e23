"""The identifier-aware BM25 retriever: tokenisation of identifiers, symbol-aware ranking, persistence."""

from __future__ import annotations

from pathlib import Path

import pytest
from haystack import Document

from haystack_integrations.components.code_alias.indexing.store import CodeIndexDocumentStore
from haystack_integrations.components.code_alias.retrieval import bm25 as bm25_module
from haystack_integrations.components.code_alias.retrieval.bm25 import CodeBM25Retriever


def _chunk(path: str, symbol: str | None, content: str) -> Document:
    return Document(
        content=content,
        meta={"file_path": path, "symbol": symbol, "qualified_name": f"{path[:-3].replace('/', '.')}.{symbol}"},
    )


DOCS = [
    _chunk("pay/retry.py", "with_stripe_backoff", "def with_stripe_backoff(call):\n    return call()"),
    _chunk("pay/client.py", "StripeClient", "class StripeClient:\n    # calls with_stripe_backoff for retries\n"),
    _chunk("ledger/post.py", "post_journal", "def post_journal(entries):\n    pass"),
    _chunk("ledger/util.py", "balance", "def balance(entries):\n    # retry retry retry\n    pass"),
]


def _retriever(tmp_path: Path) -> CodeBM25Retriever:
    store = CodeIndexDocumentStore(index_dir=str(tmp_path))
    store.write_documents(DOCS)
    store.persist()
    return CodeBM25Retriever(document_store=store, top_k=4)


def test_camel_and_snake_case_words_are_searchable(tmp_path: Path) -> None:
    retriever = _retriever(tmp_path)
    found = retriever.run(query="stripe backoff")["documents"]
    assert found[0].meta["file_path"] == "pay/retry.py"
    assert retriever.run(query="withStripeBackoff")["documents"][0].meta["file_path"] == "pay/retry.py"


def test_rewrite_symbol_lifts_its_definition_over_mere_mentions(tmp_path: Path) -> None:
    retriever = _retriever(tmp_path)
    plain = retriever.run(query="balance entries")["documents"]
    assert plain[0].meta["file_path"] == "ledger/util.py"
    retriever.symbol_boost = 1.0  # up to the question's best score
    lifted = retriever.run(query="balance entries", symbols=["post_journal"])["documents"]
    assert lifted[0].meta["file_path"] == "ledger/post.py"
    # the boost is a fraction of the question's best score: with 0 the symbol changes nothing
    retriever.symbol_boost = 0.0
    unboosted = retriever.run(query="balance entries", symbols=["post_journal"])["documents"]
    assert unboosted[0].meta["file_path"] == "ledger/util.py"


def test_filters_and_top_k(tmp_path: Path) -> None:
    retriever = _retriever(tmp_path)
    filtered = retriever.run(
        query="entries retry", filters={"field": "meta.file_path", "operator": "==", "value": "ledger/post.py"}
    )["documents"]
    assert [d.meta["file_path"] for d in filtered] == ["ledger/post.py"]
    assert len(retriever.run(query="entries retry stripe", top_k=1)["documents"]) == 1


def test_index_is_saved_and_reused_by_a_new_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODE_ALIAS_CACHE_DIR", str(tmp_path / "cache"))
    _retriever(tmp_path).warm_up()
    saved = list((tmp_path / "cache" / "bm25").glob("bm25-*"))
    assert len(saved) == 1 and (saved[0] / "head").is_dir()
    assert not list(tmp_path.glob("bm25-*")), "a query must not write into the index folder"
    retriever_store = CodeIndexDocumentStore(index_dir=str(tmp_path))
    retriever_store.derived.forget(retriever_store.index)  # what this process built: gone, as in a new process
    calls: list[int] = []
    original = bm25_module._Bm25Index.build

    def counting_build(*args: object, **kwargs: object) -> object:
        calls.append(1)
        return original(*args, **kwargs)  # type: ignore[arg-type]

    bm25_module._Bm25Index.build = counting_build  # type: ignore[method-assign,assignment]
    try:
        retriever = CodeBM25Retriever(document_store=CodeIndexDocumentStore(index_dir=str(tmp_path)))
        assert retriever.run(query="stripe backoff")["documents"][0].meta["file_path"] == "pay/retry.py"
    finally:
        bm25_module._Bm25Index.build = original  # type: ignore[method-assign]
    assert calls == []


def test_round_trip(tmp_path: Path) -> None:
    retriever = _retriever(tmp_path)
    again = CodeBM25Retriever.from_dict(retriever.to_dict())
    assert again.to_dict() == retriever.to_dict()
    assert again.document_store.index_dir == str(tmp_path)


def test_symbols_without_words_are_ignored(tmp_path: Path) -> None:
    retriever = _retriever(tmp_path)
    # `_` has no letters: it must neither match nor break scoring (bm25s keeps an empty token internally)
    found = retriever.run(query="stripe backoff", symbols=["_", "__"])["documents"]
    assert found[0].meta["file_path"] == "pay/retry.py"


def test_embedding_retriever_ranks_by_cosine_and_filters(tmp_path: Path) -> None:
    from haystack_integrations.components.code_alias.retrieval.embedding_retriever import CodeEmbeddingRetriever

    store = CodeIndexDocumentStore(index_dir=str(tmp_path))
    store.write_documents(
        [
            Document(content="a", meta={"file_path": "a.py"}, embedding=[1.0, 0.0]),
            Document(content="b", meta={"file_path": "b.py"}, embedding=[0.7, 0.7]),
            Document(content="c", meta={"file_path": "c.py"}, embedding=[-1.0, 0.0]),
            Document(content="no vector", meta={"file_path": "d.py"}),
        ]
    )
    retriever = CodeEmbeddingRetriever(document_store=store, top_k=3)
    found = retriever.run(query_embedding=[2.0, 0.1])["documents"]
    assert [d.meta["file_path"] for d in found] == ["a.py", "b.py", "c.py"]
    assert found[0].score is not None and abs(found[0].score - 0.99875) < 1e-3
    assert found[0].embedding is None
    only_b = retriever.run(
        query_embedding=[2.0, 0.1], filters={"field": "meta.file_path", "operator": "==", "value": "b.py"}
    )["documents"]
    assert [d.meta["file_path"] for d in only_b] == ["b.py"]
    scaled = retriever.run(query_embedding=[2.0, 0.1], scale_score=True, top_k=3)["documents"]
    assert scaled[-1].score is not None and 0.0 <= scaled[-1].score < 0.01
    import pytest

    with pytest.raises(ValueError, match="same embedding model"):
        retriever.run(query_embedding=[1.0, 0.0, 0.0])
    assert CodeEmbeddingRetriever.from_dict(retriever.to_dict()).to_dict() == retriever.to_dict()


def test_issue_template_noise_is_not_searched_for(tmp_path: Path) -> None:
    """`clean_query`: HTML comments, task-list boilerplate and URL payloads of a pasted issue add no terms."""
    plain = _retriever(tmp_path)
    assert plain.clean_query is False  # off by default
    retriever = CodeBM25Retriever(document_store=plain.document_store, top_k=4, clean_query=True)
    question = (
        "stripe backoff\n<!-- Please retry: post your journal entries, balance entries, retry retry -->\n"
        "- [ ] Would you like to post journal entries for a fix?\n"
        "https://play.example.org/#post/journal/entries/balance?retry=retry\n"
    )
    ranked = [d.meta["file_path"] for d in retriever.run(query=question)["documents"]]
    assert ranked == [d.meta["file_path"] for d in retriever.run(query="stripe backoff play.example.org")["documents"]]
    assert ranked[0] == "pay/retry.py"
    raw = CodeBM25Retriever.from_dict(
        {**retriever.to_dict(), "init_parameters": {**retriever.to_dict()["init_parameters"], "clean_query": False}}
    )
    assert raw.clean_query is False and CodeBM25Retriever.from_dict(retriever.to_dict()).clean_query is True
    assert raw.run(query=question)["documents"][0].meta["file_path"] != "pay/retry.py"
