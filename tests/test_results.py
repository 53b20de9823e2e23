"""FileRanker: chunks -> files, and where test files go."""

from __future__ import annotations

import pytest
from haystack import Document, Pipeline

from haystack_integrations.components.code_alias.retrieval.results import FileRanker, asks_about_tests, rank_files


def _chunk(path: str, symbol: str, score: float) -> Document:
    return Document(content=f"def {symbol}(): ...", meta={"file_path": path, "symbol": symbol}, score=score)


RANKED = [
    _chunk("tests/test_retry.py", "test_backoff", 0.9),
    _chunk("pay/retry.py", "with_backoff", 0.8),
    _chunk("pay/test_utils.py", "test_helper", 0.7),
    _chunk("pay/retry.py", "jitter", 0.6),
    _chunk("pay/client.py", "Client", 0.5),
]


def _paths(files: list[dict]) -> list[str]:
    return [f["file_path"] for f in files]


def test_files_rank_by_their_best_chunk_with_hits_best_first() -> None:
    files = rank_files(RANKED)
    assert _paths(files) == ["tests/test_retry.py", "pay/retry.py", "pay/test_utils.py", "pay/client.py"]
    assert [h["symbol"] for h in files[1]["hits"]] == ["with_backoff", "jitter"]
    assert _paths(rank_files(RANKED, top_k=2)) == ["tests/test_retry.py", "pay/retry.py"]


def test_test_files_demoted_or_dropped_unless_the_question_is_about_tests() -> None:
    demoted = rank_files(RANKED, test_files="demote", question="where is the retry backoff?")
    assert _paths(demoted) == ["pay/retry.py", "pay/client.py", "tests/test_retry.py", "pay/test_utils.py"]
    dropped = rank_files(RANKED, test_files="drop", question="where is the retry backoff?")
    assert _paths(dropped) == ["pay/retry.py", "pay/client.py"]
    about_tests = rank_files(RANKED, test_files="demote", question="which test covers the retry backoff?")
    assert _paths(about_tests)[0] == "tests/test_retry.py"
    with pytest.raises(ValueError, match="test_files"):
        rank_files(RANKED, test_files="hide")  # type: ignore[arg-type]


def test_what_counts_as_a_question_about_tests() -> None:
    assert asks_about_tests("where are the unit tests for the parser?")
    assert asks_about_tests("conftest fixture for the database")
    assert not asks_about_tests("pytest crashes when collecting a package")  # a project name, not a test word
    assert not asks_about_tests("where is the retry helper?") and not asks_about_tests(None)
    long_issue = "Parser drops the last token.\n" + "Details of what happens. " * 20 + "The test below fails."
    assert not asks_about_tests(long_issue)  # an issue text mentions tests in passing


def test_component_round_trips_and_takes_the_question() -> None:
    pipeline = Pipeline()
    pipeline.add_component("ranker", FileRanker(top_k=3, test_files="drop"))
    loaded = Pipeline.loads(pipeline.dumps())
    ranker = loaded.get_component("ranker")
    assert isinstance(ranker, FileRanker) and ranker.test_files == "drop" and ranker.top_k == 3
    out = loaded.run({"ranker": {"documents": RANKED, "question": "retry backoff"}})["ranker"]
    assert _paths(out["files"]) == ["pay/retry.py", "pay/client.py"] and out["documents"] == RANKED
    with pytest.raises(ValueError, match="test_files"):
        FileRanker(test_files="sometimes")  # type: ignore[arg-type]
