"""The index as one object (`CodeIndex`): each folder's chunks and dictionary on their own object, reached by
parameter, never through the environment; two indexes of one process answer side by side and concurrently."""

from __future__ import annotations

import gc
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
import yaml
from haystack import Document, Pipeline

from haystack_integrations.components.code_alias.app.pipelines import bind_to_index, pipeline_file
from haystack_integrations.components.code_alias.app.search import CodeSearch
from haystack_integrations.components.code_alias.indexing.code_index import CodeIndex
from haystack_integrations.components.code_alias.indexing.store import CodeIndexDocumentStore, serve_documents
from haystack_integrations.components.code_alias.paths import INDEX_DIR_ENV
from tests.support.repos import ACME_REPO, FIXTURES

JSTS_REPO = FIXTURES / "jsts_repo"
ACME_QUESTION = "where do we retry failed stripe calls?"
JSTS_QUESTION = "where is the teleport hydrated?"


def _files(search: CodeSearch, question: str) -> list[str]:
    return [f["file_path"] for f in search.ask(question, top_k=5).files]


@pytest.fixture(scope="module")
def two_indexes(tmp_path_factory: pytest.TempPathFactory) -> tuple[CodeSearch, CodeSearch]:
    acme = CodeSearch(tmp_path_factory.mktemp("acme") / "idx", lexical=True)
    acme.index(ACME_REPO)
    jsts = CodeSearch(tmp_path_factory.mktemp("jsts") / "idx", lexical=True)
    jsts.index(JSTS_REPO)
    return acme, jsts


def test_two_searches_in_one_process_answer_each_from_its_own_index(
    two_indexes: tuple[CodeSearch, CodeSearch],
) -> None:
    acme, jsts = two_indexes
    assert acme.code_index is not jsts.code_index
    acme_files, jsts_files = _files(acme, ACME_QUESTION), _files(jsts, JSTS_QUESTION)
    assert acme_files[0] == "packages/payments-core/src/retry.ts"
    assert jsts_files[0] == "packages/runtime-core/src/components/Teleport.ts"
    assert all((ACME_REPO / path).is_file() for path in acme_files)
    assert all((JSTS_REPO / path).is_file() for path in jsts_files)
    # each asked the other's question still answers from its own files only
    assert all((ACME_REPO / path).is_file() for path in _files(acme, JSTS_QUESTION))
    assert all((JSTS_REPO / path).is_file() for path in _files(jsts, ACME_QUESTION))


def test_two_searches_answer_concurrently_from_threads_as_they_do_alone(
    two_indexes: tuple[CodeSearch, CodeSearch],
) -> None:
    acme, jsts = two_indexes
    expected = {"acme": _files(acme, ACME_QUESTION), "jsts": _files(jsts, JSTS_QUESTION)}
    acme.close()  # both load again, at the same time, in threads
    jsts.close()
    start = threading.Barrier(8)

    def ask(which: str) -> tuple[str, list[str]]:
        start.wait()
        search, question = (acme, ACME_QUESTION) if which == "acme" else (jsts, JSTS_QUESTION)
        return which, _files(search, question)

    with ThreadPoolExecutor(max_workers=8) as pool:
        answers = list(pool.map(ask, ["acme", "jsts"] * 4 + ["jsts", "acme"] * 8))
    assert len(answers) == 24
    for which, files in answers:
        assert files == expected[which], which


def test_nothing_reaches_the_pipelines_through_the_environment(
    two_indexes: tuple[CodeSearch, CodeSearch], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    acme, _ = two_indexes
    monkeypatch.setenv(INDEX_DIR_ENV, str(tmp_path / "elsewhere"))  # what a stray environment would point at
    before = dict(os.environ)
    pipeline = acme.load_pipeline("query_lexical")
    stores = {
        id(store): store
        for _, instance in pipeline.walk()
        if isinstance(store := getattr(instance, "document_store", None), CodeIndexDocumentStore)
    }
    assert stores and all(store.code_index is acme.code_index for store in stores.values())
    assert pipeline.get_component("rewriter").index_dir == str(acme.index_dir)
    assert _files(acme, ACME_QUESTION)[0] == "packages/payments-core/src/retry.ts"
    assert dict(os.environ) == before  # loading and asking wrote nothing to the environment
    assert not (tmp_path / "elsewhere").exists()


def test_a_pipeline_loaded_with_plain_pipeline_load_opens_the_folder_from_its_path(
    two_indexes: tuple[CodeSearch, CodeSearch], tmp_path: Path
) -> None:
    acme, _ = two_indexes
    data = yaml.safe_load(pipeline_file("embedded", "query_lexical").read_text(encoding="utf-8"))
    text = yaml.safe_dump(bind_to_index(data, acme.index_dir))  # the YAML a user writes: the path, nothing live
    assert str(acme.index_dir) in text
    pipeline = Pipeline.loads(text)
    inputs = {name: {"question": ACME_QUESTION} for name, sockets in pipeline.inputs().items() if "question" in sockets}
    files = pipeline.run(inputs)["ranker"]["files"]
    assert files[0]["file_path"] == "packages/payments-core/src/retry.ts"
    store = pipeline.get_component("bm25_retriever").document_store
    assert store.code_index is CodeIndex.open(acme.index_dir)  # the same folder: the same live object


def test_a_writers_copy_stays_private_until_it_is_handed_over(tmp_path: Path) -> None:
    served = CodeIndexDocumentStore(index_dir=str(tmp_path))
    served.write_documents([Document(id="a", content="def charge(): pass")])
    served.persist()
    writer = CodeIndexDocumentStore(index_dir=str(tmp_path), writer="run-1")
    assert writer.code_index is served.code_index and writer.storage is not served.storage
    assert writer.count_documents() == 1  # loaded from disk
    writer.write_documents([Document(id="b", content="def refund(): pass")])
    assert served.count_documents() == 1  # not seen by queries before the save
    assert not serve_documents(writer)  # unsaved changes are never handed over
    writer.persist()
    generation = served.generation
    assert serve_documents(writer)
    assert served.count_documents() == 2 and served.generation != generation
    writer.discard()
    assert served.code_index.writers() == []
    assert served.count_documents() == 2


def test_an_index_nobody_holds_is_let_go(tmp_path: Path) -> None:
    store = CodeIndexDocumentStore(index_dir=str(tmp_path))
    store.write_documents([Document(id="a", content="x = 1")])
    index = store.code_index
    assert CodeIndex.opened(tmp_path) is index
    first = index.served.generation
    del store, index
    gc.collect()
    assert CodeIndex.opened(tmp_path) is None
    again = CodeIndexDocumentStore(index_dir=str(tmp_path))
    assert again.count_documents() == 0  # nothing was saved; the unsaved chunk went with its object
    assert again.generation != first  # a new object's values are never mistaken for the old one's


def test_the_vector_search_stacks_the_rows_it_loaded_and_forgets_them_on_any_change(tmp_path: Path) -> None:
    # Loading a hybrid index keeps each chunk's vector as the file's float32 row, so the vector retriever stacks
    # rows instead of converting every list of floats back (1.3 s on Django 3.0's 31,809 chunks).
    from haystack_integrations.components.code_alias.retrieval.embedding_retriever import CodeEmbeddingRetriever

    chunks = [
        Document(id=f"c{n}", content=f"def f{n}():\n    return {n}\n", meta={"kind": "function"}, embedding=vector)
        for n, vector in enumerate([[1.0, 0.0, 0.5], [0.2, 1.0, 0.0], [0.6, 0.6, 0.1]])
    ]
    saved = CodeIndexDocumentStore(index_dir=str(tmp_path))
    saved.write_documents(chunks[:2])
    saved.persist()
    saved.write_documents([chunks[2], Document(id="c3", content="def g():\n    pass\n", meta={"kind": "function"})])
    saved.persist()  # a delta on top of the base file; c3 has no vector yet
    assert saved.loaded_vectors == {}  # written here, never read back: nothing loaded
    loaded = CodeIndexDocumentStore(index_dir=str(tmp_path), writer="reader")  # reads the files
    rows = loaded.loaded_vectors
    assert set(rows) == {"c0", "c1", "c2"}
    for document_id, (document, row) in rows.items():
        assert document is loaded.storage[document_id] and row.dtype == np.float32
        assert row.tolist() == pytest.approx(document.embedding)
    query = [0.9, 0.1, 0.4]
    expected = CodeEmbeddingRetriever(document_store=saved, top_k=3).run(query_embedding=query)["documents"]
    found = CodeEmbeddingRetriever(document_store=loaded, top_k=3).run(query_embedding=query)["documents"]
    assert [(d.id, round(d.score or 0, 6)) for d in found] == [(d.id, round(d.score or 0, 6)) for d in expected]
    loaded.set_embeddings({"c3": [0.0, 0.0, 1.0]})  # a vector fill: the rows no longer describe the chunks
    assert loaded.loaded_vectors == {}
    top = CodeEmbeddingRetriever(document_store=loaded, top_k=1).run(query_embedding=[0.0, 0.0, 1.0])["documents"]
    assert top[0].id == "c3" and top[0].score == pytest.approx(1.0)
    loaded.discard()


def test_indexing_leaves_the_keyword_index_ready_for_the_first_question(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The BM25 index is built at index time (saved in the user cache, keyed by the chunks): the first question of a
    # fresh process loads it instead of building it (about 5 s of a first ask on Django 3.0).
    from haystack_integrations.components.code_alias.retrieval import bm25

    monkeypatch.setenv("CODE_ALIAS_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "index"
    search = CodeSearch(folder, lexical=True)
    search.index(ACME_REPO)
    assert len(list(bm25.bm25_cache_dir().glob("bm25-*"))) == 1  # before any question was asked
    CodeIndex.open(folder).derived.forget(CodeIndex.served_name(folder))  # as a fresh process: nothing in memory

    def no_build(*args: object, **kwargs: object) -> None:
        raise AssertionError("the first question built the BM25 index")

    monkeypatch.setattr(bm25._Bm25Index, "build", no_build)
    assert search.ask(ACME_QUESTION).files[0]["file_path"] == "packages/payments-core/src/retry.ts"
