"""A Haystack user's `Pipeline.loads(pipelines/query*.yml)` ranks exactly as `code-alias ask` does (issue 42).

The ranking lives inside the pipeline (`CodeRanker`): `CodeSearch.ask` runs it and shapes the answer, nothing is
added after it. Checked here on the fixture repository over many questions, with and without the rewrite, in the
lexical, lexical-with-semantic-hints and hybrid pipelines; `benchmarks/same_rankings.py` does the same on every
dev question (`evaluation/yaml_searcher.py`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from haystack import Pipeline

from haystack_integrations.components.code_alias.app.pipelines import pipeline_file
from haystack_integrations.components.code_alias.app.search import CodeSearch
from tests.support.repos import ACME_REPO

QUESTIONS = [
    "where's the payments retry helper?",
    "who decides what the bouncer lets in",
    "post journal entries to the books",
    "convert currency with the rate table",
    "where do we retry failed stripe calls?",
    "how are access tokens checked?",
    "withStripeBackoff",
    "what does PostJournal do at month end?",
    "where is the ledger",
    "rate table lookup",
    "qwzx flurb blorp",
    "which test covers the retry backoff?",
]


def _user_pipeline(kind: str, index_dir: Path) -> Pipeline:
    """The packaged YAML, loaded as a user loads it: `index_dir: null` set to their folder."""
    text = pipeline_file("embedded", kind).read_text(encoding="utf-8")
    return Pipeline.loads(text.replace("index_dir: null", f"index_dir: {str(index_dir)!r}"))


def _run(pipeline: Pipeline, question: str, *, use_rewrite: bool) -> dict[str, Any]:
    data: dict[str, dict[str, Any]] = {
        name: {"question": question} for name, sockets in pipeline.inputs().items() if "question" in sockets
    }
    data.setdefault("composer", {})["use_rewrite"] = use_rewrite
    return pipeline.run(data)["ranker"]


def _same(search: CodeSearch, pipeline: Pipeline) -> None:
    for question in QUESTIONS:
        for use_rewrite in (True, False):
            asked = search.ask(question, use_rewrite=use_rewrite)
            ranked = _run(pipeline, question, use_rewrite=use_rewrite)
            where = f"{question!r} (rewrite {use_rewrite})"
            assert [(s["file_path"], s["qualified_name"]) for s in ranked["symbols"]] == [
                (s["file_path"], s["qualified_name"]) for s in asked.symbols
            ], where
            assert [f["file_path"] for f in ranked["files"]] == [f["file_path"] for f in asked.files], where
            assert (ranked["confidence"], ranked["abstained"]) == (asked.confidence, asked.abstained), where


def test_the_lexical_yaml_ranks_like_ask(tmp_path: Path) -> None:
    search = CodeSearch(tmp_path / "index", lexical=True)
    search.index(ACME_REPO)
    _same(search, _user_pipeline("query_lexical", tmp_path / "index"))


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["query_lexical_semantic", "query"])
def test_the_semantic_and_hybrid_yaml_rank_like_ask(tmp_path: Path, kind: str) -> None:
    lexical = kind == "query_lexical_semantic"
    search = CodeSearch(tmp_path / "index", lexical=True if lexical else None, semantic_hints=True if lexical else None)
    search.index(ACME_REPO)
    _same(search, _user_pipeline(kind, tmp_path / "index"))


def test_nonsense_abstains_and_still_shows_the_closest_places(tmp_path: Path) -> None:
    search = CodeSearch(tmp_path / "index", lexical=True)
    search.index(ACME_REPO)
    for question in ("qwzx flurb blorp", "how do I bake sourdough bread at home?"):
        answer = search.ask(question)
        assert answer.abstained, (question, answer.confidence)
        assert answer.files, question  # an index with documents never answers empty for a question with words
        assert answer.to_dict()["abstained"] is True and 0.0 <= answer.to_dict()["confidence"] < 1.0
    sure = search.ask("where is withStripeBackoff defined?")
    assert not sure.abstained and sure.symbols[0]["qualified_name"].endswith("withStripeBackoff")
