"""
Progressive indexing (issue 15): `index` answers before the chunk vectors exist, fills them most-likely-asked
first, saves them as it goes, and an interrupted fill resumes without computing a finished batch again.

The model is replaced by a small deterministic bag-of-words embedder (patched into `embedders`, where the chunk
and question embedders build theirs), so these tests load no MiniLM and count every chunk the "model" embeds.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest
from haystack import Document
from haystack_integrations.components.embedders import sentence_transformers as sentence_transformers_components

from haystack_integrations.components.code_alias import cli
from haystack_integrations.components.code_alias.app.search import CodeSearch
from haystack_integrations.components.code_alias.indexing.vector_fill import (
    STATUS_FILE,
    VectorFiller,
    chunk_priority,
    priority_order,
    read_fill_status,
    vector_count,
    vector_status,
)
from haystack_integrations.components.code_alias.retrieval import embedders

DIMENSIONS = 64
QUESTION = "where do we retry failed stripe calls?"


def _vector(text: str) -> list[float]:
    vector = np.zeros(DIMENSIONS, dtype=np.float32)
    for word in re.findall(r"[a-z]+", text.lower()):
        vector[int(hashlib.sha1(word.encode()).hexdigest(), 16) % DIMENSIONS] += 1.0
    return vector.tolist()


class FakeModel:
    """Stands in for the sentence-transformers embedders: counts calls and chunks, can fail on a given call."""

    calls: ClassVar[int] = 0
    chunks: ClassVar[list[str]] = []
    fail_on_call: ClassVar[int | None] = None
    failure: ClassVar[type[BaseException]] = RuntimeError

    def __init__(self, **_kwargs: Any) -> None:
        pass

    def warm_up(self) -> None:
        pass

    def run(self, documents: list[Document] | None = None, text: str | None = None) -> dict[str, Any]:
        if text is not None:
            return {"embedding": _vector(text)}
        assert documents is not None
        if documents and all("file_path" not in d.meta for d in documents):
            # symbol cards (`indexing.card_vectors`, embedded before the chunks): not what these tests count
            return {"documents": [Document(content=d.content, embedding=_vector(d.content or "")) for d in documents]}
        FakeModel.calls += 1
        if FakeModel.fail_on_call is not None and FakeModel.calls >= FakeModel.fail_on_call:
            raise FakeModel.failure("killed")
        FakeModel.chunks += [d.content or "" for d in documents]
        return {
            "documents": [
                Document(content=d.content, meta=d.meta, embedding=_vector(d.content or "")) for d in documents
            ]
        }


@pytest.fixture
def fake_model(monkeypatch: pytest.MonkeyPatch) -> type[FakeModel]:
    # The embedders import the sentence-transformers components inside warm_up (a slow import kept off the
    # lexical path), so the stand-in replaces them where that import reads them; the numpy question encoder is
    # declined so that the question's vector comes from the stand-in too.
    monkeypatch.setattr(sentence_transformers_components, "SentenceTransformersDocumentEmbedder", FakeModel)
    monkeypatch.setattr(sentence_transformers_components, "SentenceTransformersTextEmbedder", FakeModel)
    monkeypatch.setattr(embedders.BertSentenceEncoder, "supports", staticmethod(lambda _path: False))
    monkeypatch.setattr(FakeModel, "calls", 0)
    monkeypatch.setattr(FakeModel, "chunks", [])
    monkeypatch.setattr(FakeModel, "fail_on_call", None)
    monkeypatch.setattr(FakeModel, "failure", RuntimeError)
    return FakeModel


def _filler(search: CodeSearch, **kwargs: Any) -> VectorFiller:
    embedder = search.chunk_embedder()
    embedder.batch_size = 2
    return VectorFiller(search.index_dir, embedder=embedder, checkpoint_seconds=0.0, round_size=4, **kwargs)


def test_index_answers_lexically_first_then_fuses_every_vector(
    acme_repo: Path, tmp_path: Path, fake_model: Any
) -> None:
    folder = tmp_path / "idx"
    early: dict[str, Any] = {}

    def answerable(stats: dict[str, Any]) -> None:  # questions work before any vector is computed
        search = CodeSearch(folder)
        answer = search.ask(QUESTION)
        early.update(vectors=stats["vectors"], calls=fake_model.calls, retrieval=search.answering_with, answer=answer)

    stats = CodeSearch(folder).index(acme_repo, on_answerable=answerable)
    assert early["calls"] == 0 and early["vectors"]["embedded"] == 0 and early["vectors"]["total"] > 0
    assert early["retrieval"] == "lexical"
    assert early["answer"].files and not early["answer"].embedding_documents
    assert stats["vectors"]["embedded"] == stats["vectors"]["total"] == early["vectors"]["total"]
    search = CodeSearch(folder)
    answer = search.ask(QUESTION)
    assert search.answering_with == "hybrid"
    assert answer.bm25_documents and answer.embedding_documents
    # A refresh with nothing changed computes nothing.
    calls = fake_model.calls
    again = CodeSearch(folder).index(acme_repo)
    assert fake_model.calls == calls and again["vectors"]["embedded"] == again["vectors"]["total"]


def test_a_partly_vectorised_index_answers_with_both_lists(acme_repo: Path, tmp_path: Path, fake_model: Any) -> None:
    folder = tmp_path / "idx"
    search = CodeSearch(folder)
    search.index(acme_repo, vectors=False)
    assert search.ask(QUESTION).embedding_documents == []  # no vector yet: lexical
    fake_model.fail_on_call = 3  # one round of 4 chunks (2 batches) finishes, then the "model" dies
    with pytest.raises(RuntimeError, match="killed"):
        _filler(search).run()
    count = vector_count(folder)
    assert count is not None and 0 < count.embedded < count.total
    answer = search.ask(QUESTION)  # the same CodeSearch switches to hybrid once vectors exist
    assert search.answering_with == "hybrid"
    assert answer.bm25_documents and answer.embedding_documents
    store = search.query_pipeline.get_component("embedding_retriever").document_store
    with_vector = {d.id for d in store.storage.values() if d.embedding is not None}
    assert len(with_vector) == count.embedded
    assert {d.id for d in answer.embedding_documents} <= with_vector
    record = read_fill_status(folder)
    assert record is not None and record["state"] == "failed" and "killed" in record["error"]


def test_an_interrupted_fill_resumes_without_recomputing_finished_batches(
    acme_repo: Path, tmp_path: Path, fake_model: Any
) -> None:
    folder = tmp_path / "idx"
    search = CodeSearch(folder)
    search.index(acme_repo, vectors=False)
    total = vector_count(folder).total  # type: ignore[union-attr]
    fake_model.fail_on_call = 4
    fake_model.failure = KeyboardInterrupt  # Ctrl-C during the second round's second batch
    with pytest.raises(KeyboardInterrupt):
        _filler(search).run()
    first = list(fake_model.chunks)
    assert len(first) == 6  # 3 finished batches of 2
    kept = vector_count(folder)
    assert kept is not None and kept.embedded >= 4  # the finished round was saved; the half round is in the cache
    assert json.loads((folder / STATUS_FILE).read_text())["state"] == "interrupted"
    fake_model.fail_on_call = None
    fake_model.chunks = []
    result = _filler(search).run()
    assert not set(fake_model.chunks) & set(first)  # nothing embedded twice
    assert len(first) + len(fake_model.chunks) == len({*first, *fake_model.chunks})
    assert result["vectors"] == {"embedded": total, "total": total, "percent": 100.0}
    assert read_fill_status(folder)["state"] == "done"  # type: ignore[index]


def test_status_reports_how_far_the_vectors_are(
    acme_repo: Path, tmp_path: Path, fake_model: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "idx"
    search = CodeSearch(folder)
    search.index(acme_repo, vectors=False)
    fake_model.fail_on_call = 3
    with pytest.raises(RuntimeError):
        _filler(search).run()
    count = vector_count(folder)
    assert count is not None
    status = vector_status(folder)
    assert status["vectors"]["embedded"] == count.embedded and status["vectors"]["total"] == count.total
    assert status["vectors"]["percent"] == round(100 * count.embedded / count.total, 1)
    assert cli.main(["status", "--index-dir", str(folder)]) == 0
    shown = capsys.readouterr().out
    assert f"vectors: {count.embedded:,} / {count.total:,} ({int(100 * count.embedded / count.total)} %)" in shown
    assert "code-alias embed" in shown
    fake_model.fail_on_call = None
    assert cli.main(["embed", "--index-dir", str(folder), "--no-progress"]) == 0
    assert f"{count.total:,} / {count.total:,} (100 %)" in capsys.readouterr().out


def test_cli_index_says_when_it_can_answer_and_how_far_the_vectors_are(
    acme_repo: Path, tmp_path: Path, fake_model: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "idx"
    assert cli.main(["index", str(acme_repo), "--index-dir", str(folder), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "Answerable now" in out
    total = vector_count(folder).total  # type: ignore[union-attr]
    assert f"vectors: {total:,} / {total:,} (100 %)" in out


def test_background_index_returns_at_once_and_starts_a_worker(
    acme_repo: Path,
    tmp_path: Path,
    fake_model: Any,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import subprocess

    started: list[list[str]] = []
    real_popen = subprocess.Popen

    class Worker:
        pid = 4242

    def popen(command: list[str], **kwargs: Any) -> Any:
        if not kwargs.get("start_new_session"):  # git and friends, while indexing
            return real_popen(command, **kwargs)
        started.append(command)
        return Worker()

    monkeypatch.setattr(subprocess, "Popen", popen)
    folder = tmp_path / "idx"
    assert cli.main(["index", str(acme_repo), "--index-dir", str(folder), "--background"]) == 0
    assert fake_model.calls == 0
    assert started and started[0][-6:] == [
        "embed",
        "--index-dir",
        str(folder),
        "--backend",
        "embedded",
        "--no-progress",
    ]
    assert "background (pid 4242" in capsys.readouterr().out
    assert cli.main(["index", str(acme_repo), "--index-dir", str(tmp_path / "lex"), "--lexical", "--background"]) == 2


def test_a_background_index_leaves_the_symbol_cards_to_the_fill(
    acme_repo: Path, tmp_path: Path, fake_model: Any
) -> None:
    """
    `index --background` returns once questions work: the symbol cards (the model's load and ~100 cards/s) went
    with the vectors to the detached fill, which makes them current before the chunks (60 of the 68 s that
    `index --background` took on pytest's 260 files were the cards).
    """
    from haystack_integrations.components.code_alias.core.cards import newest_cards_file

    folder = tmp_path / "idx"
    search = CodeSearch(folder)
    stats = search.index(acme_repo, vectors=False)
    assert stats["cards_deferred"] is True and "cards" not in stats
    assert newest_cards_file(folder) is None
    assert search.ask(QUESTION).files  # answers meanwhile, without semantic evidence
    filled = search.fill_vectors(cards=True)
    assert filled["cards"]["cards"] > 0 and newest_cards_file(folder) is not None
    assert vector_count(folder).complete  # type: ignore[union-attr]
    again = search.fill_vectors(cards=True)
    assert again["cards"]["embedded"] == 0 and again["embedded"] == 0  # nothing left to do, nothing redone
    whole = CodeSearch(tmp_path / "whole").index(acme_repo)  # in the foreground, both as before
    assert whole["cards"]["cards"] == filled["cards"]["cards"] and "cards_deferred" not in whole


def _chunk(path: str, qualified: str | None, content: str = "x = 1") -> Document:
    return Document(
        content=content,
        meta={"file_path": path, "qualified_name": qualified, "symbol": (qualified or "").rsplit(".", 1)[-1] or None},
    )


def test_vector_order_puts_documented_or_exported_non_test_definitions_first() -> None:
    chunks = [
        _chunk("tests/test_retry.py", "test_retry", '"""Checks retry."""'),
        _chunk("pay/retry.py", None),  # module remainder
        _chunk("pay/retry.py", "_backoff_delay", "def _backoff_delay(): pass"),  # private, undocumented
        _chunk("pay/retry.py", "with_backoff", "def with_backoff(): pass"),  # public
        _chunk("pay/_util.py", "_jitter", 'def _jitter():\n    """Random jitter."""'),  # documented
        _chunk("pay/retry_test.go", "TestRetry", "func TestRetry() {}"),
    ]
    ordered = [(d.meta["file_path"], d.meta["qualified_name"]) for d in priority_order(chunks)]
    assert ordered[:2] == [("pay/_util.py", "_jitter"), ("pay/retry.py", "with_backoff")]
    assert ordered[2:4] == [("pay/retry.py", "_backoff_delay"), ("pay/retry.py", None)]
    assert {p for p, _ in ordered[4:]} == {"tests/test_retry.py", "pay/retry_test.go"}
    assert chunk_priority(chunks[0])[0] == 1 and chunk_priority(chunks[3])[0] == 0


def test_a_real_index_vectorises_non_test_definitions_first(acme_repo: Path, tmp_path: Path, fake_model: Any) -> None:
    from haystack_integrations.components.code_alias.core.testfiles import is_test_file

    folder = tmp_path / "idx"
    search = CodeSearch(folder)
    search.index(acme_repo, vectors=False)
    fake_model.fail_on_call = 5  # two rounds of 4 chunks (2 batches each) finish, then the "model" dies
    with pytest.raises(RuntimeError):
        _filler(search).run()
    store = search.query_pipeline.get_component("bm25_retriever").document_store
    done = [d for d in store.storage.values() if d.embedding is not None]
    assert len(done) == 8
    assert all(d.meta.get("qualified_name") and not is_test_file(d.meta["file_path"]) for d in done)


def test_a_server_reports_the_vectors_and_answers_while_they_arrive(
    acme_repo: Path, tmp_path: Path, fake_model: Any
) -> None:
    from haystack_integrations.components.code_alias.serving.service import CodeAliasService, ServiceSettings

    folder = tmp_path / "idx"
    CodeSearch(folder).index(acme_repo, vectors=False)
    service = CodeAliasService(ServiceSettings(index_dir=folder, torch_threads=None))
    before = service.status()
    assert before["ready"] and before["vectors"] is not None
    assert before["vectors"]["vectors"]["embedded"] == 0 and before["vectors"]["vectors"]["total"] > 0
    first = service._search().ask(QUESTION)
    assert first.files and not first.embedding_documents
    fake_model.fail_on_call = 3
    with pytest.raises(RuntimeError):
        _filler(CodeSearch(folder)).run()
    after = service.status()["vectors"]
    assert after is not None and 0 < after["vectors"]["embedded"] < after["vectors"]["total"]
    assert service._search().ask(QUESTION).embedding_documents  # the same server now fuses the vectors


def test_status_names_a_background_fill_from_its_start(
    acme_repo: Path, tmp_path: Path, fake_model: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """Just after `index --background` the fill has not written its own record yet: status must not say "resume"."""
    import subprocess
    import sys

    from haystack_integrations.components.code_alias.indexing.vector_fill import record_fill_started

    folder = tmp_path / "idx"
    CodeSearch(folder).index(acme_repo, vectors=False)
    worker = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])  # stands for `code-alias embed`
    try:
        record_fill_started(folder, worker.pid)
        assert cli.main(["status", "--index-dir", str(folder)]) == 0
        ready, vectors, *_ = capsys.readouterr().out.splitlines()
        assert ready == "ready: yes, lexical for now (no chunk vectors yet)"
        assert vectors.startswith("vectors: 0 / ") and vectors.endswith(f"a fill is running (pid {worker.pid})")
    finally:
        worker.kill()
        worker.wait()
    assert cli.main(["status", "--index-dir", str(folder)]) == 0
    assert "`code-alias embed` resumes" in capsys.readouterr().out.splitlines()[1]
