"""The answer's JSON (`AskResult.to_dict`): one form for the REST and MCP answer and for `code-alias ask --json`."""

from __future__ import annotations

from typing import Any

from haystack_integrations.components.code_alias.app.answer import HITS_PER_FILE, AskResult
from haystack_integrations.components.code_alias.ranking.answer import evidence_record, why_strings
from haystack_integrations.components.code_alias.serving.service import AskResponse


def _symbol(rank: int, name: str) -> dict[str, Any]:
    record = evidence_record({"bm25": rank}, name, ["exact"], 0.5)
    return {"rank": 9, "qualified_name": name, "symbol": name, "kind": "function", "file_path": f"{name}.py"} | {
        "start_line": 1, "end_line": 2, "package": None, "score": 1.0 / rank, "why": why_strings(record),
        "evidence": record,
    }  # fmt: skip


def test_the_answer_json_is_the_rest_answer() -> None:
    hits = [{"symbol": f"h{n}", "start_line": n} for n in range(8)]
    answer = AskResult(
        question="where is retry?",
        files=[{"file_path": "a.py", "score": None, "rank": 4, "hits": hits, "repo": "acme/pay"}],
        documents=[],
        rewrite={"rewritten": None, "symbols": ["retry"], "used": False, "hints": [{"name": "retry"}], "meta": {}},
        symbols=[_symbol(n, f"f{n}") for n in (1, 2, 3)],
        top_k=2,
        seconds=0.123456,
        confidence=0.25,
    )
    payload = answer.to_dict(mode="llm")
    fields = {"question", "symbols", "files", "mode", "rewrite", "seconds", "confidence", "abstained", "generation"}
    assert set(payload) == fields and fields <= set(AskResponse.__annotations__)  # the REST answer's (no `hints`)
    assert list(payload)[:3] == ["question", "symbols", "files"]  # what the question asks for comes first
    assert [(s["rank"], s["qualified_name"]) for s in payload["symbols"]] == [(1, "f1"), (2, "f2")]  # top_k, renumbered
    assert payload["symbols"][0]["why"] == ["bm25 #1", "rewrite: f1 (exact, confidence 0.50)"]
    assert payload["symbols"][0]["evidence"]["rewrite"] == {"symbol": "f1", "reasons": ["exact"], "confidence": 0.5}
    assert payload["files"] == [
        {"rank": 1, "file_path": "a.py", "score": 0.0, "hits": hits[:HITS_PER_FILE], "repo": "acme/pay"}
    ]
    assert payload["rewrite"] == {
        "rewritten": "where is retry?",
        "symbols": ["retry"],
        "packages": [],
        "intent": None,
        "dropped": [],
        "meta": {"used": False},
    }
    assert (payload["mode"], payload["seconds"], payload["confidence"], payload["abstained"]) == (
        "llm",
        0.1235,
        0.25,
        False,
    )
