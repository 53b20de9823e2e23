"""The benchmark's LLM rows with a scripted ChatGenerator (no model download): the lexical and the unconstrained
(`llm-free`) variants, and a stopped run that resumes and a rerun that replays through the product's rewrite cache
and JSONL log."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any, ClassVar

import pytest
import yaml
from haystack import component, default_from_dict, default_to_dict
from haystack.core.serialization import allow_deserialization_module
from haystack.dataclasses import ChatMessage

from haystack_integrations.components.code_alias.evaluation.bench_searcher import PipelineSearcher
from haystack_integrations.components.code_alias.evaluation.bench_variants import variant_pipeline_dict
from haystack_integrations.components.code_alias.evaluation.runner import bench_main
from haystack_integrations.components.code_alias.rewriting.rewrite_log import read_rewrite_log
from tests.support.repos import FIXTURES, PIPELINES

REPO = FIXTURES / "evaluation" / "minirepo"
# Question -> (symbols the scripted model names: one real, one invented, gold file).
SCRIPT: dict[str, tuple[list[str], str]] = {
    "retry backoff when the provider times out": (
        ["with_stripe_backoff", "retry_with_jitter"],
        "src/payments/retry.py",
    ),
    "where is a charge written to the books": (["record_charge", "LedgerWriter"], "src/payments/ledger.py"),
    "give the customer their money back": (["refund", "issue_refund_now"], "src/payments/client.py"),
}
INVENTED = {"retry_with_jitter", "LedgerWriter", "issue_refund_now"}


class Stopped(BaseException):
    """Stands for Ctrl-C / a killed run: not an `Exception`, so no fallback swallows it."""


@component
class ScriptedChatGenerator:
    """Answers each question of `SCRIPT` (found in the prompt) with its names; counts calls across instances."""

    calls: ClassVar[list[str]] = []
    stop_at_call: ClassVar[int | None] = None

    def __init__(self, *, tag: str = "scripted") -> None:
        self.tag = tag

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], generation_kwargs: dict[str, Any] | None = None) -> dict[str, Any]:
        prompt = "\n".join(m.text or "" for m in messages)
        match = re.search(r"QUESTION: (.+)", prompt)
        question = match.group(1).strip() if match else ""
        if self.stop_at_call is not None and len(self.calls) + 1 >= self.stop_at_call:
            raise Stopped(question)
        type(self).calls.append(question)
        symbols, _ = SCRIPT[question]
        answer = {"rewritten": " ".join(symbols), "symbols": symbols, "packages": [], "intent": "locate_symbol"}
        return {"replies": [ChatMessage.from_assistant(json.dumps(answer))]}

    def to_dict(self) -> dict[str, Any]:
        return default_to_dict(self, tag=self.tag)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ScriptedChatGenerator:
        return default_from_dict(cls, data)


@pytest.fixture
def bench(tmp_path: Path) -> dict[str, Any]:
    ScriptedChatGenerator.calls = []
    ScriptedChatGenerator.stop_at_call = None
    allow_deserialization_module("tests.evaluation.test_llm_bench")  # a test double; real generators are allowlisted
    repo = tmp_path / "minirepo"
    shutil.copytree(REPO, repo)
    golden = tmp_path / "golden.jsonl"
    lines = [
        json.dumps({"id": f"q{n}", "question": question, "gold_files": [gold]})
        for n, (question, (_, gold)) in enumerate(SCRIPT.items(), 1)
    ]
    golden.write_text("\n".join(lines) + "\n")
    return {"tmp": tmp_path, "repo": repo, "golden": golden, "store": tmp_path / "rewrites"}


def run(
    bench: dict[str, Any], out: Path, rewrites: str = "none,dictionary,llm,llm-free", *, semantic_hints: bool = False
) -> int:
    generator = ScriptedChatGenerator().to_dict()

    def factory(args: object) -> PipelineSearcher:
        return PipelineSearcher(
            bench["tmp"] / "cache",
            lexical=True,
            chat_generator=generator,
            rewriter_params={"timeout": 30.0},
            rewrite_store=bench["store"],
            semantic_hints=True if semantic_hints else None,
        )

    argv = ["run", "--golden", str(bench["golden"]), "--corpus", "local", "--local-root", str(bench["repo"])]
    argv += ["--cache-dir", str(bench["tmp"] / "cache"), "--out", str(out), "--queries", "title", "--lexical"]
    argv += ["--rewrites", rewrites, "--no-progress"] + (["--semantic-hints"] if semantic_hints else [])
    return bench_main(argv, searcher_factory=factory)


def records(out: Path) -> dict[tuple[str, str], dict[str, Any]]:
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines() if line.strip()]
    return {(r["config"], r["id"]): r for r in rows}


def comparable(record: dict[str, Any]) -> tuple[Any, ...]:
    return record["files"], record["functions"], record["rewritten"], record["extra"], record["metrics"]


def test_variant_pipeline_removes_only_what_it_names() -> None:
    data = yaml.safe_load((PIPELINES / "query_llm.yml").read_text())
    lexical = variant_pipeline_dict(json.loads(json.dumps(data)), lexical=True, free=False)
    assert "text_embedder" not in lexical["components"] and "faithfulness" in lexical["components"]
    assert {"sender": "faithfulness.symbols", "receiver": "composer.symbols"} in lexical["connections"]
    free = variant_pipeline_dict(json.loads(json.dumps(data)), lexical=False, free=True)
    assert "faithfulness" not in free["components"] and "embedding_retriever" in free["components"]
    assert free["components"]["rewriter"]["init_parameters"]["constrain_to_hints"] is False
    assert {"sender": "rewriter.symbols", "receiver": "composer.symbols"} in free["connections"]
    assert not any("faithfulness" in c["sender"] + c["receiver"] for c in free["connections"])
    with pytest.raises(ValueError, match="rewriter"):
        variant_pipeline_dict({"components": {"composer": {}}}, lexical=True, free=True)
    # a plain lexical index is model-free; one built with --semantic-hints keeps the question's vector for the hints
    assert "question_embedder" not in lexical["components"]
    semantic = variant_pipeline_dict(json.loads(json.dumps(data)), lexical=True, free=False, semantic_hints=True)
    assert "question_embedder" in semantic["components"] and "text_embedder" not in semantic["components"]
    assert {"sender": "question_embedder.vector", "receiver": "rewriter.question_vector"} in semantic["connections"]


@pytest.mark.slow
def test_llm_rows_on_a_lexical_index_with_semantic_hints_ask_the_model_over_card_hints(bench: dict[str, Any]) -> None:
    # These rows were once the dictionary rewrite under another name: the variant fell back to the dictionary
    # pipeline on an index with cards. Now the model is asked, and its hint list holds near cards.
    out = bench["tmp"] / "semantic"
    assert run(bench, out, rewrites="none,dictionary,llm", semantic_hints=True) == 0
    rows = records(out)
    assert len(ScriptedChatGenerator.calls) == 3
    for n in (1, 2, 3):
        llm = rows[("title/llm/bm25", f"q{n}")]
        assert llm["extra"]["fallback"] is None and llm["extra"]["proposed"] == 2 and llm["dropped_symbols"] == 1
        assert any(h.get("similarity") is not None for h in llm["hints"])  # the offered hints came with card vectors


def test_lexical_llm_rows_and_the_unconstrained_anchor(bench: dict[str, Any]) -> None:
    out = bench["tmp"] / "bench"
    assert run(bench, out) == 0
    rows = records(out)
    assert {config for config, _ in rows} == {f"title/{r}/bm25" for r in ("none", "dictionary", "llm", "llm-free")}
    for n in (1, 2, 3):
        llm, free = rows[("title/llm/bm25", f"q{n}")], rows[("title/llm-free/bm25", f"q{n}")]
        # constrained: the filter dropped the invented name; unconstrained: it went to retrieval, counted
        assert not INVENTED & set(llm["extra"]["symbols"]) and llm["extra"]["dropped"] == 1
        assert llm["extra"]["proposed"] == 2 and llm["dropped_symbols"] == 1
        assert INVENTED & set(free["extra"]["symbols"]) and free["extra"]["invented"] == 1
        assert free["extra"]["proposed"] == 2 and free["dropped_symbols"] == 1
        assert llm["extra"]["fallback"] is None and free["extra"]["fallback"] is None
    assert rows[("title/llm/bm25", "q1")]["files"][0] == "src/payments/retry.py"
    # each question was asked of the model once per variant (3 questions x 2 variants)
    assert len(ScriptedChatGenerator.calls) == 6
    report = json.loads((out / "report.json").read_text())
    assert "title/llm-free/bm25" in json.dumps(report)


def test_a_stopped_run_resumes_and_a_rerun_replays(bench: dict[str, Any]) -> None:
    whole = bench["tmp"] / "whole"
    ScriptedChatGenerator.stop_at_call = 3  # the third question's constrained rewrite never answers
    with pytest.raises(Stopped):
        run(bench, bench["tmp"] / "stopped", rewrites="none,dictionary,llm")
    before = records(bench["tmp"] / "stopped")
    assert ("title/llm/bm25", "q2") in before and ("title/llm/bm25", "q3") not in before
    assert len(ScriptedChatGenerator.calls) == 2

    ScriptedChatGenerator.stop_at_call = None
    assert run(bench, bench["tmp"] / "stopped", rewrites="none,dictionary,llm") == 0
    assert len(ScriptedChatGenerator.calls) == 3  # only the missing question reached the model
    resumed = records(bench["tmp"] / "stopped")
    assert len(resumed) == 9

    # A rerun into a fresh folder: every LLM rewrite comes from the cache, and matches the live one.
    assert run(bench, whole, rewrites="none,dictionary,llm") == 0
    assert len(ScriptedChatGenerator.calls) == 3
    replayed = records(whole)
    for key, record in resumed.items():
        live, again = comparable(record), comparable(replayed[key])
        assert live == again, key
        if key[0] == "title/llm/bm25":
            assert replayed[key]["cache_hit"] is True and record["cache_hit"] is False

    # The JSONL log: one live line per question, then a cache-hit line with the same final rewrite.
    log = [r for r in read_rewrite_log(bench["store"] / "rewrites-llm.jsonl") if r["mode"] == "llm"]
    live = {r["question"]: r["rewrite"] for r in log if not r["cache_hit"]}
    hits = {r["question"]: r["rewrite"] for r in log if r["cache_hit"]}
    assert set(live) == set(SCRIPT) and hits == live
    assert all(d["name"] in INVENTED for r in log for d in r["dropped"] if d["kind"] == "symbol")


def test_llm_threads_reach_the_gguf_generator(tmp_path: Path) -> None:
    """`bench run --llm-threads N`: llama.cpp's default is half the cores, one thread on a 2-core machine."""
    import argparse

    from haystack_integrations.components.code_alias.evaluation.bench_searcher import make_searcher

    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"GGUF")
    args = argparse.Namespace(cache_dir=tmp_path, llm_gguf=str(gguf), llm_threads=2, out=tmp_path / "out")
    searcher = make_searcher(args)
    assert searcher.chat_generator is not None
    assert searcher.chat_generator["init_parameters"]["model_kwargs"]["n_threads"] == 2
    default = make_searcher(argparse.Namespace(cache_dir=tmp_path, llm_gguf=str(gguf), out=None))
    assert default.chat_generator is not None
    assert "n_threads" not in default.chat_generator["init_parameters"]["model_kwargs"]


def test_llm_rewritten_chooses_who_writes_the_text(tmp_path: Path) -> None:
    import argparse

    from haystack_integrations.components.code_alias.evaluation.bench_searcher import make_searcher

    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"GGUF")
    for choice, expected in (("composed", False), ("model", True)):
        args = argparse.Namespace(cache_dir=tmp_path, llm_gguf=str(gguf), llm_rewritten=choice, out=None)
        assert make_searcher(args).rewriter_params["model_writes_rewritten"] is expected
    plain = make_searcher(argparse.Namespace(cache_dir=tmp_path, llm_gguf=str(gguf), out=None))
    assert "model_writes_rewritten" not in (plain.rewriter_params or {})
