"""Foundation benchmark: dictionary build vs Universal Ctags, refresh, hint lookup, rewrite, index build, ask.

Usage (Django 3.0's 831 .py files, the tree BENCHMARKS.md quotes):

    python benchmarks/foundation.py --pypi django==3.0 --questions ../shared/bench/swebench_lite.jsonl

Prints the figures and writes benchmarks/results/foundation.json. Timings are medians / percentiles over
repeated runs in one process; the ctags ratio is measured side by side in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from haystack_integrations.components.code_alias.app.search import CodeSearch
from haystack_integrations.components.code_alias.core.builder import DictionaryBuilder
from haystack_integrations.components.code_alias.rewriting.hints import HintIndex
from haystack_integrations.components.code_alias.rewriting.rewriter import ConstrainedQueryRewriter

CACHE = Path(".bench-cache")
FALLBACK_QUESTIONS = [
    "queryset filter by related field",
    "how to add a custom template tag",
    "where is the csrf middleware",
    "session cookie expiry",
    "prefetch_related with to_attr",
    "QuerySet.bulk_create ignore conflicts",
    "migration squash fails with a circular dependency",
    "password reset token generator",
]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def summary(values: list[float]) -> dict[str, float]:
    return {
        "p50_ms": round(percentile(values, 0.5) * 1000, 3),
        "p95_ms": round(percentile(values, 0.95) * 1000, 3),
        "n": len(values),
    }


def fetch_tree(requirement: str) -> Path:
    """Download a release wheel from PyPI (no build) and unpack it under .bench-cache/trees/."""
    target = CACHE / "trees" / requirement.replace("==", "-")
    if target.is_dir():
        return target
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:", requirement, "-d", tmp],
            check=True,
        )
        wheel = next(Path(tmp).glob("*.whl"))
        partial = target.with_suffix(".partial")
        shutil.rmtree(partial, ignore_errors=True)
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(partial)
        partial.rename(target)
    return target


def questions_from(path: str | None, repo_hint: str) -> list[str]:
    if not path:
        return FALLBACK_QUESTIONS
    titles = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            if repo_hint in record["repo"]:
                titles.append(record["problem_statement"].strip().splitlines()[0])
    return titles or FALLBACK_QUESTIONS


def time_runs(function: Any, runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        started = time.perf_counter()
        function()
        out.append(time.perf_counter() - started)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tree", help="a source tree to measure")
    parser.add_argument("--pypi", default="django==3.0", help="or: a release to download (wheel)")
    parser.add_argument("--questions", help="SWE-bench JSONL: titles of this repo's issues become the questions")
    parser.add_argument("--repo-hint", default="django", help="which repo's titles to use")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--skip-index", action="store_true", help="skip the (slow) embedding index build")
    parser.add_argument("--out", default="benchmarks/results/foundation.json")
    args = parser.parse_args()

    tree = Path(args.tree) if args.tree else fetch_tree(args.pypi)
    py_files = sum(1 for _ in tree.rglob("*.py"))
    print(f"tree {tree} ({py_files} .py files)", flush=True)
    report: dict[str, Any] = {
        "tree": str(tree),
        "py_files": py_files,
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
    }

    # 1. dictionary build vs ctags, side by side
    builder = DictionaryBuilder()
    dictionary, stats = builder.build(tree)
    build = time_runs(lambda: builder.build(tree), args.runs)
    ctags_out = Path(tempfile.mkdtemp()) / "tags"
    ctags = time_runs(
        lambda: subprocess.run(
            ["ctags", "-R", "--languages=Python", "-f", str(ctags_out), str(tree)], check=True, capture_output=True
        ),
        args.runs,
    )
    ctags_tags = sum(1 for line in ctags_out.read_text(errors="replace").splitlines() if not line.startswith("!"))
    report["dictionary_build"] = {
        "median_s": round(statistics.median(build), 3),
        "ctags_median_s": round(statistics.median(ctags), 3),
        "ratio_vs_ctags": round(statistics.median(build) / statistics.median(ctags), 2),
        "symbols": len(dictionary.symbols),
        "ctags_tags": ctags_tags,
        "files_parsed": stats.files_parsed,
    }
    print("dictionary build", report["dictionary_build"], flush=True)

    # 2. refresh after touching one file, and after editing one
    victim = next(p for p in sorted(tree.rglob("*.py")) if p.stat().st_size > 20_000)
    original = victim.read_bytes()

    def touch() -> None:
        os.utime(victim)
        builder.refresh(tree, dictionary)

    def edit() -> None:
        victim.write_bytes(original + f"\n\ndef added_{time.perf_counter_ns()}():\n    pass\n".encode())
        builder.refresh(tree, dictionary)

    try:
        report["refresh"] = {
            "file": str(victim.relative_to(tree)),
            "touched_median_ms": round(statistics.median(time_runs(touch, args.runs * 2)) * 1000, 1),
            "edited_median_ms": round(statistics.median(time_runs(edit, args.runs * 2)) * 1000, 1),
        }
    finally:
        victim.write_bytes(original)
    print("refresh", report["refresh"], flush=True)

    # 3. hint lookup and dictionary-only rewrite
    questions = questions_from(args.questions, args.repo_hint)
    hints = HintIndex(dictionary)
    lookups = [t for _ in range(3) for q in questions for t in time_runs(lambda q=q: hints.lookup(q), 1)]
    report["hint_lookup"] = {**summary(lookups), "questions": len(questions)}
    rewriter = ConstrainedQueryRewriter.from_dictionary(dictionary)
    rewrites = [t for _ in range(3) for q in questions for t in time_runs(lambda q=q: rewriter.run(question=q), 1)]
    report["dictionary_rewrite"] = summary(rewrites)
    print("hint lookup", report["hint_lookup"], "rewrite", report["dictionary_rewrite"], flush=True)

    # 4. index build and ask latency per stage
    if not args.skip_index:
        index_dir = CACHE / "foundation-index"
        shutil.rmtree(index_dir, ignore_errors=True)
        search = CodeSearch(index_dir)
        started = time.perf_counter()
        index_stats = search.index(tree)
        report["index_build"] = {
            "seconds": round(time.perf_counter() - started, 1),
            "chunks": index_stats["sync"].get("documents"),
            "files": index_stats["files"],
        }
        started = time.perf_counter()
        search.index(tree)
        report["index_build"]["noop_refresh_s"] = round(time.perf_counter() - started, 2)
        print("index build", report["index_build"], flush=True)
        report["ask"] = ask_latency(search, questions)
        print("ask", report["ask"], flush=True)
    report["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=2))
    print(json.dumps(report, indent=2))
    return 0


def ask_latency(search: CodeSearch, questions: list[str]) -> dict[str, Any]:
    """Per-stage latency from the loaded query pipeline's own components, plus whole-pipeline `ask`."""
    search.warm_up()
    pipeline = search.query_pipeline
    component = pipeline.get_component
    stages: dict[str, list[float]] = {k: [] for k in ("rewrite", "bm25", "embedding", "fusion", "total_stages")}
    for question in questions:
        t0 = time.perf_counter()
        rewrite = component("rewriter").run(question=question)
        composed = component("composer").run(
            question=question, rewritten=rewrite["rewritten"], symbols=rewrite["symbols"], packages=rewrite["packages"]
        )
        t1 = time.perf_counter()
        bm25 = component("bm25_retriever").run(
            query=composed["bm25_query"], symbols=composed["symbols"], packages=composed["packages"]
        )
        t2 = time.perf_counter()
        embedding = component("text_embedder").run(text=composed["embedding_query"])["embedding"]
        dense = component("embedding_retriever").run(query_embedding=embedding)
        t3 = time.perf_counter()
        component("joiner").run(documents=[bm25["documents"], dense["documents"]])
        t4 = time.perf_counter()
        for name, value in zip(stages, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t4 - t0), strict=True):
            stages[name].append(value)
    whole = [t for q in questions for t in time_runs(lambda q=q: search.ask(q), 1)]
    return {**{name: summary(values) for name, values in stages.items()}, "ask_pipeline": summary(whole)}


if __name__ == "__main__":
    sys.exit(main())
