"""The query pipeline through `Pipeline.run_async`: the CPU-bound components have no `run_async` (Haystack then runs
their `run` in a worker thread instead of on the event loop), and the answer is the synchronous run's."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from haystack import Pipeline

from haystack_integrations.components.code_alias.app.search import CodeSearch
from tests.support.repos import ACME_REPO

QUESTION = "where do we retry failed stripe calls?"


def _inputs(pipeline: Pipeline) -> dict[str, dict[str, Any]]:
    return {name: {"question": QUESTION} for name, sockets in pipeline.inputs().items() if "question" in sockets}


def test_the_lexical_query_pipeline_answers_the_same_through_run_async(tmp_path: Path) -> None:
    search = CodeSearch(tmp_path / "idx", lexical=True)
    search.index(ACME_REPO)
    pipeline = search.load_pipeline("query_lexical")
    for name in ("bm25_retriever", "ranker", "composer", "definitions"):
        assert not hasattr(pipeline.get_component(name), "run_async"), name
    expected = pipeline.run(_inputs(pipeline))["ranker"]["files"]  # bound to the folder when loaded
    answered = asyncio.run(pipeline.run_async(_inputs(pipeline)))["ranker"]["files"]
    assert [hit["file_path"] for hit in answered] == [hit["file_path"] for hit in expected]
    assert answered[0]["file_path"] == "packages/payments-core/src/retry.ts"
