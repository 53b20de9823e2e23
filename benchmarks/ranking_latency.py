"""What the ranking stage costs per question: the pipeline's ranking components timed on their real inputs.

Asks each question once through `CodeSearch.ask` (which records every component's inputs), then times the
pipeline's ranking components alone on those inputs, `--rounds` times each: `ranker` (`CodeRanker`) in today's
pipelines, `joiner` + `ranker` (`RankFusion` + `FileRanker`) in earlier ones, so the same script run on an
earlier checkout (PYTHONPATH) gives the side-by-side figure. Prints p50 / p95 in milliseconds and the whole ask's.

    python benchmarks/ranking_latency.py --index-dir INDEX --questions ../shared/bench/swebench_lite.jsonl \\
        --repo django/django --limit 114 --out benchmarks/results/ranking_latency.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from haystack_integrations.components.code_alias.app.search import CodeSearch

STAGE = ("joiner", "ranker")


def _percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _questions(path: Path, repo: str | None, limit: int) -> list[str]:
    found = []
    for line in path.read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        if repo and item.get("repo") != repo:
            continue
        text = item.get("question") or str(item.get("problem_statement", "")).strip().splitlines()[0]
        found.append(text)
    return found[:limit]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--index-dir", type=Path, required=True)
    parser.add_argument("--questions", type=Path, required=True, help="golden or SWE-bench JSONL")
    parser.add_argument("--repo", help="only this repository's questions")
    parser.add_argument("--limit", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    search = CodeSearch(args.index_dir)
    search.warm_up()
    pipeline = search.query_pipeline
    stage = [name for name in STAGE if name in pipeline.graph.nodes]
    captured: list[dict[str, dict[str, Any]]] = []
    asks: list[float] = []
    for question in _questions(args.questions, args.repo, args.limit):
        inputs: dict[str, dict[str, Any]] = {}
        originals = {}
        for name in stage:
            component = pipeline.get_component(name)
            originals[name] = component.run

            def recording(
                *a: Any, _name: str = name, _run: Any = component.run, _into: dict[str, Any] = inputs, **kw: Any
            ) -> Any:
                _into[_name] = kw
                return _run(*a, **kw)

            component.run = recording
        started = time.perf_counter()
        search.ask(question)
        asks.append(1000.0 * (time.perf_counter() - started))
        for name, run in originals.items():
            pipeline.get_component(name).run = run
        captured.append(inputs)
    timings: list[float] = []
    for _ in range(args.rounds):
        for inputs in captured:
            started = time.perf_counter()
            for name in stage:
                pipeline.get_component(name).run(**inputs[name])
            timings.append(1000.0 * (time.perf_counter() - started))
    report = {
        "stage": stage,
        "questions": len(captured),
        "rounds": args.rounds,
        "stage_ms": {"p50": round(statistics.median(timings), 2), "p95": round(_percentile(timings, 0.95), 2)},
        "ask_ms": {"p50": round(statistics.median(asks), 1), "p95": round(_percentile(asks, 0.95), 1)},
        "command": " ".join(["python", "benchmarks/ranking_latency.py", *(argv or sys.argv[1:])]),
    }
    print(json.dumps(report, indent=1))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
