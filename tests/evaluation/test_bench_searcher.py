"""The benchmark's real searcher (the product's YAML pipelines) on the fixture repo, LLM rows included."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from haystack.core.serialization import allow_deserialization_module

from haystack_integrations.components.code_alias.evaluation.bench_searcher import PipelineSearcher
from haystack_integrations.components.code_alias.evaluation.runner import bench_main
from tests.support.fakes import FakeChatGenerator
from tests.support.repos import FIXTURES

REPO = FIXTURES / "evaluation" / "minirepo"


def test_grid_with_llm_rows_runs_the_real_pipelines(tmp_path: Path) -> None:
    repo = tmp_path / "minirepo"
    shutil.copytree(REPO, repo)
    golden = tmp_path / "golden.jsonl"
    golden.write_text(
        json.dumps(
            {
                "id": "q1",
                "question": "retry backoff when the provider times out",
                "gold_files": ["src/payments/retry.py"],
                "gold_symbols": ["src/payments/retry.py::with_stripe_backoff"],
            }
        )
        + "\n"
    )
    answer = json.dumps(
        {"rewritten": "with_stripe_backoff retry", "symbols": ["with_stripe_backoff"], "packages": [], "intent": "bug"}
    )
    generator = FakeChatGenerator(answer=answer).to_dict()
    allow_deserialization_module("tests.support.fakes")  # a test double; real generators are allowlisted
    made: list[PipelineSearcher] = []

    def factory(args: object) -> PipelineSearcher:
        made.append(PipelineSearcher(tmp_path / "cache", chat_generator=generator, rewriter_params={"timeout": 30.0}))
        return made[-1]

    out = tmp_path / "bench"
    argv = ["run", "--golden", str(golden), "--corpus", "local", "--local-root", str(repo)]
    argv += ["--cache-dir", str(tmp_path / "cache"), "--out", str(out), "--queries", "title"]
    argv += ["--rewrites", "none,dictionary,llm", "--no-progress"]
    assert bench_main(argv, searcher_factory=factory) == 0
    records = {r["config"]: r for r in map(json.loads, (out / "results.jsonl").read_text().splitlines())}
    assert set(records) == {
        f"title/{r}/{m}" for r in ("none", "dictionary", "llm") for m in ("bm25", "embedding", "hybrid")
    }
    llm = records["title/llm/hybrid"]
    assert llm["extra"]["symbols"] == ["with_stripe_backoff"] and llm["extra"]["fallback"] is None
    assert llm["rewritten"] == "with_stripe_backoff retry"
    assert llm["files"][0] == "src/payments/retry.py" and llm["metrics"]["acc@1"] == 1.0
    # symbol level through the real pipelines: the record keeps each definition under its local name
    assert llm["functions"][0] == ["src/payments/retry.py", "with_stripe_backoff"]
    assert llm["metrics"]["sym_hit@1"] == 1.0 and llm["metrics"]["hit@1"] == 1.0
    assert records["title/none/hybrid"]["rewritten"] is None
    assert records["title/dictionary/hybrid"]["extra"]["fallback"] is None
    assert made[0].supports("llm", "hybrid") and not PipelineSearcher(tmp_path).supports("llm", "bm25")
