"""Ask latency, whole and per rewrite, of two checkouts side by side on one tree (the rewrite's cost).

    python benchmarks/ask_latency.py --tree .bench-cache/corpora/Django-3.0 \
        --questions ../shared/bench/swebench_lite.jsonl --repo django/django \
        --checkout before=/tmp/before/components --checkout after=components --lexical --rounds 2

Each checkout runs in its own process (its `components/` first on sys.path) over the same index folder kind,
alternating rounds so the machine's load falls on both alike. Per checkout it prints the dictionary rewrite's
p50/p95 (the rewriter component alone, as the pipeline runs it) and the whole `CodeSearch.ask` p50/p95, and
writes the figures as JSON (`--out`).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

WORKER = r"""
import json, os, sys, time
sys.path.insert(0, sys.argv[1])
os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
from haystack_integrations.components.code_alias.app.search import CodeSearch
tree, index, lexical, questions = sys.argv[2], sys.argv[3], sys.argv[4] == "1", json.loads(sys.argv[5])
search = CodeSearch(index, lexical=lexical)
search.index(tree)
search.warm_up()
pipeline = search.query_pipeline
rewriter = pipeline.get_component("rewriter")
bm25 = pipeline.get_component("bm25_retriever")
for question in questions[:3]:
    search.ask(question)  # warm caches (BM25 index, definition map)
rewrite_ms, ask_ms = [], []
for question in questions:
    documents = bm25.run(query=question)["documents"]
    started = time.perf_counter()
    try:
        rewriter.run(question=question, retrieved_documents=documents)
    except TypeError:  # a checkout whose rewriter takes no retrieved documents
        rewriter.run(question=question)
    rewrite_ms.append((time.perf_counter() - started) * 1000)
    started = time.perf_counter()
    search.ask(question)
    ask_ms.append((time.perf_counter() - started) * 1000)
print(json.dumps({"rewrite_ms": rewrite_ms, "ask_ms": ask_ms}))
"""


def _titles(path: Path, repo: str) -> list[str]:
    titles = []
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row.get("repo") == repo:
            titles.append(row["problem_statement"].strip().splitlines()[0])
    return titles


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    low, high = int(position), min(int(position) + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tree", type=Path, required=True)
    parser.add_argument("--questions", type=Path, required=True, help="SWE-bench JSONL")
    parser.add_argument("--repo", default="django/django")
    parser.add_argument("--checkout", action="append", required=True, help="NAME=PATH/TO/components")
    parser.add_argument("--lexical", action="store_true")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/ask_latency.json"))
    args = parser.parse_args()
    questions = _titles(args.questions, args.repo)
    checkouts = dict(item.split("=", 1) for item in args.checkout)
    samples: dict[str, dict[str, list[float]]] = {name: {"rewrite_ms": [], "ask_ms": []} for name in checkouts}
    with tempfile.TemporaryDirectory() as scratch:
        for round_ in range(args.rounds):
            for name, components in checkouts.items():
                index = Path(scratch) / name
                started = time.perf_counter()
                done = subprocess.run(
                    [
                        sys.executable,
                        "-c",
                        WORKER,
                        str(Path(components).resolve()),
                        str(args.tree),
                        str(index),
                        "1" if args.lexical else "0",
                        json.dumps(questions),
                    ],
                    capture_output=True,
                    text=True,
                    check=True,
                    env={**os.environ, "CODE_ALIAS_PROGRESS": "0"},
                )
                figures = json.loads(done.stdout.strip().splitlines()[-1])
                for key in samples[name]:
                    samples[name][key].extend(figures[key])
                print(f"round {round_ + 1} {name}: {time.perf_counter() - started:.0f} s", file=sys.stderr)
    report: dict[str, Any] = {"questions": len(questions), "rounds": args.rounds, "lexical": args.lexical}
    for name, values in samples.items():
        report[name] = {
            key: {"p50": round(statistics.median(v), 2), "p95": round(_percentile(v, 95), 2), "n": len(v)}
            for key, v in values.items()
        }
        rewrite, ask = report[name]["rewrite_ms"], report[name]["ask_ms"]
        print(
            f"{name:>8}: rewrite p50 {rewrite['p50']:.1f} / p95 {rewrite['p95']:.1f} ms;"
            f" ask p50 {ask['p50']:.1f} / p95 {ask['p95']:.1f} ms"
        )
    report["load_average"] = os.getloadavg()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
