"""What the LLM rewrite costs against `max_hints` and the answer's form: prompt / answer tokens, latency p50/p95.

Usage (SWE-QA dev questions over the git mirrors; Qwen2.5-Coder 0.5B q4_k_m from the PyPI parts, llama.cpp):

    OMP_WAIT_POLICY=PASSIVE python benchmarks/llm_prompt_cost.py \\
        --golden ../shared/bench/swe_qa_dev_primary.jsonl --git-root /work/.mirror --cache-dir $PWD/.bench-cache \\
        --subset 15 --max-hints 10,20,40 --gguf ~/.cache/code-alias/models/qwen2.5-coder-0.5b-q4_k_m.gguf

Each question of the harness's deterministic spread subset (`select_subset`) is rewritten once per setting: a
`max_hints` value times who writes the rewritten text (`--rewritten model,composed`: the model, or composed from
the names it chose, `model_writes_rewritten=False`), the settings interleaved per question so load changes touch
them alike, with the rewriter the product
ships (`ConstrainedQueryRewriter`, the shipped prompt, the answer schema limited to the offered hints) and the
hints the shipped pipeline offers: the dictionary's plus the symbols of BM25's best chunks for the raw question
(the harness's lexical index of the corpus, built on first use). The cache is off, so every rewrite is an LLM
call. Per rewrite: prompt and answer tokens (llama.cpp's usage), the rewriter's latency, the hints offered, the
fallback if any, the symbols chosen, and whether one of them is a gold symbol of the question. A setting is
named `<max_hints>/<rewritten>` (`20/composed`); agreement is against the largest `max_hints` with the first
`--rewritten` value.

Rows go to `--rows` (JSONL, appended: a stopped run resumes where it stopped); the summary (per setting: tokens,
latency p50/p95, fallbacks, gold symbols named, agreement with the largest setting) to `--out` (JSON). The
machine's load (`os.getloadavg`) is recorded before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")
# llama.cpp's OpenMP threads busy-wait by default; on a shared, loaded machine that multiplies latency.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from haystack.utils import deserialize_chatgenerator_inplace

from haystack_integrations.components.code_alias.app.search import CodeSearch
from haystack_integrations.components.code_alias.evaluation.corpus import CorpusCache, CorpusError, CorpusResolver
from haystack_integrations.components.code_alias.evaluation.golden import GoldenItem, load_golden
from haystack_integrations.components.code_alias.evaluation.runner import select_subset
from haystack_integrations.components.code_alias.rewriting.generators import chat_generator_spec
from haystack_integrations.components.code_alias.rewriting.rewriter import ConstrainedQueryRewriter

ROOT = Path(__file__).resolve().parents[1]


def percentile(values: Sequence[float], q: float) -> float | None:
    """Nearest-rank percentile (`q` in 0..1); None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def load_generator(gguf: Path, threads: int | None, n_ctx: int) -> tuple[Any, dict[str, Any]]:
    """The llama.cpp ChatGenerator, its `run` wrapped to keep the last reply's usage (prompt/answer tokens)."""
    spec = chat_generator_spec(gguf=str(gguf), n_threads=threads, n_ctx=n_ctx)
    holder: dict[str, Any] = {"chat_generator": json.loads(json.dumps(spec))}
    deserialize_chatgenerator_inplace(holder, key="chat_generator")
    generator = holder["chat_generator"]
    generator.warm_up()
    original = generator.run
    usage: dict[str, Any] = {}

    def run(*args: Any, **kwargs: Any) -> Any:
        usage.clear()
        output = original(*args, **kwargs)
        replies = output.get("replies") or []
        if replies:
            usage.update(replies[0].meta.get("usage") or {})
        return output

    generator.run = run
    generator.last_usage = usage
    return generator, spec


def gold_named(item: GoldenItem, symbols: Sequence[str]) -> bool:
    """Whether a chosen symbol is one of the item's gold symbols (qualified name, or its last part)."""
    gold: set[str] = set()
    for entry in item.gold_symbols:
        name = entry.split("::", 1)[-1]
        gold.update({name, name.rsplit(".", 1)[-1]})
    return any(symbol in gold or symbol.rsplit(".", 1)[-1] in gold for symbol in symbols)


def read_rows(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            rows.append(json.loads(line))
        except ValueError:
            continue  # a line cut short by a stop: that rewrite is redone
    return rows


Setting = tuple[int, str]


def setting_of(row: dict[str, Any]) -> Setting:
    """A row's (max_hints, who wrote the rewritten text); rows written before the second axis are `model`."""
    return int(row["max_hints"]), str(row.get("rewritten_by", "model"))


def setting_name(setting: Setting) -> str:
    return f"{setting[0]}/{setting[1]}"


def summarise(rows: list[dict[str, Any]], settings: list[Setting]) -> dict[str, Any]:
    """Per setting: tokens, latency, fallbacks, gold symbols named, agreement with the reference setting."""
    reference = settings[0]
    largest = {r["id"]: r for r in rows if setting_of(r) == reference}
    summary: dict[str, Any] = {}
    for setting in settings:
        mine = [r for r in rows if setting_of(r) == setting]
        tokens = [r["prompt_tokens"] for r in mine if isinstance(r.get("prompt_tokens"), int)]
        answered = [r for r in mine if not r["fallback"]]
        latencies = [r["latency_ms"] for r in answered]
        same = [r for r in mine if r["id"] in largest and set(r["symbols"]) == set(largest[r["id"]]["symbols"])]
        summary[setting_name(setting)] = {
            "rewrites": len(mine),
            "hints_offered_mean": round(statistics.mean(r["hints_offered"] for r in mine), 1) if mine else None,
            "prompt_tokens_mean": round(statistics.mean(tokens), 1) if tokens else None,
            "prompt_tokens_p50": percentile(tokens, 0.5),
            "prompt_tokens_max": max(tokens) if tokens else None,
            "answer_tokens_mean": round(statistics.mean(r["completion_tokens"] or 0 for r in answered), 1)
            if answered
            else None,
            "latency_ms_p50": percentile(latencies, 0.5),
            "latency_ms_p95": percentile(latencies, 0.95),
            "fallbacks": len(mine) - len(answered),
            "fallback_reasons": sorted({str(r["fallback"]).split(":")[0] for r in mine if r["fallback"]}),
            "gold_symbol_named": sum(1 for r in mine if r["gold_named"]),
            "with_gold_symbols": sum(1 for r in mine if r["has_gold_symbols"]),
            "same_symbols_as_reference": len(same),
        }
    return summary


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--golden", type=Path, default=ROOT.parent / "shared" / "bench" / "swe_qa_dev_primary.jsonl")
    parser.add_argument("--git-root", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--cache-dir", type=Path, default=ROOT / ".bench-cache")
    parser.add_argument("--subset", type=int, default=15)
    parser.add_argument("--max-hints", default="10,20,40", help="comma-separated settings")
    parser.add_argument(
        "--rewritten", default="model", help="comma-separated: model (the model writes the text), composed"
    )
    parser.add_argument(
        "--gguf", type=Path, default=Path.home() / ".cache/code-alias/models/qwen2.5-coder-0.5b-q4_k_m.gguf"
    )
    parser.add_argument("--threads", type=int, default=None, help="llama.cpp threads (default: its own choice)")
    parser.add_argument("--n-ctx", type=int, default=4096)
    parser.add_argument("--timeout", type=float, default=180.0, help="seconds per rewrite before the fallback")
    parser.add_argument("--rows", type=Path, default=ROOT / ".bench-cache/results/llm-prompt-cost/rows.jsonl")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/llm_prompt_cost.json")
    args = parser.parse_args(argv)
    forms = [v.strip() for v in args.rewritten.split(",") if v.strip()]
    if not forms or any(form not in ("model", "composed") for form in forms):
        parser.error("--rewritten takes model and/or composed")
    hint_counts = sorted({int(v) for v in args.max_hints.split(",") if v.strip()}, reverse=True)
    settings: list[Setting] = [(hints, form) for hints in hint_counts for form in forms]
    if not args.gguf.is_file():
        parser.error(f"{args.gguf}: no such GGUF file (python benchmarks/fetch_qwen_gguf.py builds it)")

    items = select_subset(load_golden(args.golden), args.subset)
    args.rows.parent.mkdir(parents=True, exist_ok=True)
    done = {(r["id"], setting_of(r)) for r in read_rows(args.rows)}
    load_before = os.getloadavg()
    started = time.perf_counter()
    generator, spec = load_generator(args.gguf, args.threads, args.n_ctx)
    resolver = CorpusResolver(CorpusCache(args.cache_dir), mode="git", git_root=args.git_root)
    groups: dict[str, list[GoldenItem]] = {}
    for item in items:
        groups.setdefault(resolver.plan_key(item.repo, item.version, item.base_commit), []).append(item)
    skipped: list[dict[str, str]] = []
    with args.rows.open("a", encoding="utf-8") as sink:
        for members in groups.values():
            todo = [i for i in members if any((i.id, h) not in done for h in settings)]
            if not todo:
                continue
            try:
                corpus = resolver.resolve(todo[0].repo, todo[0].version, todo[0].base_commit)
            except CorpusError as error:
                skipped += [{"id": i.id, "why": str(error)} for i in todo]
                continue
            search = CodeSearch(args.cache_dir / "indexes" / "lexical" / corpus.key, lexical=True)
            search.index(corpus.root)
            rewriters = {
                setting: ConstrainedQueryRewriter(
                    index_dir=str(search.index_dir),
                    max_hints=setting[0],
                    model_writes_rewritten=setting[1] == "model",
                    chat_generator=generator,
                    timeout=args.timeout,
                    cache_size=0,
                )
                for setting in settings
            }
            for item in todo:
                first = search.ask(item.question, use_rewrite=False, candidates=100)
                for setting, rewriter in rewriters.items():
                    if (item.id, setting) in done:
                        continue
                    result = rewriter.run(question=item.question, retrieved_documents=first.bm25_documents)
                    meta, usage = result["meta"], dict(generator.last_usage)
                    row = {
                        "id": item.id,
                        "corpus": corpus.key,
                        "max_hints": setting[0],
                        "rewritten_by": setting[1],
                        "hints_offered": meta["hints_offered"],
                        "prompt_tokens": usage.get("prompt_tokens"),
                        "completion_tokens": usage.get("completion_tokens"),
                        "latency_ms": meta["latency_ms"],
                        "llm_ms": meta["llm_latency_ms"],
                        "fallback": meta["fallback"],
                        "symbols": result["symbols"],
                        "has_gold_symbols": bool(item.gold_symbols),
                        "gold_named": gold_named(item, result["symbols"]),
                        "load1": round(os.getloadavg()[0], 2),
                    }
                    sink.write(json.dumps(row) + "\n")
                    sink.flush()
                    print(
                        f"{item.id} {setting_name(setting)} prompt={row['prompt_tokens']} "
                        f"answer={row['completion_tokens']} {row['latency_ms'] / 1000:.1f}s "
                        f"fallback={row['fallback']} symbols={row['symbols']}",
                        file=sys.stderr,
                    )
            search.close()
    rows = [r for r in read_rows(args.rows) if r["id"] in {i.id for i in items} and setting_of(r) in settings]
    report = {
        "command": " ".join([Path(sys.argv[0]).name, *(argv if argv is not None else sys.argv[1:])]),
        "golden": str(args.golden.name),
        "questions": len(items),
        "model": args.gguf.name,
        "generator": spec["init_parameters"] | {"model": args.gguf.name},
        "llama_cpp_threads": getattr(getattr(generator, "_model", None), "n_threads", None),
        "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY"),
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform()},
        "load_before": [round(v, 2) for v in load_before],
        "load_after": [round(v, 2) for v in os.getloadavg()],
        "load1_during": {
            "min": min((r["load1"] for r in rows), default=None),
            "max": max((r["load1"] for r in rows), default=None),
        },
        "seconds_this_run": round(time.perf_counter() - started, 1),
        "skipped": skipped,
        "by_setting": summarise(rows, settings),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.out.with_suffix(".tmp")
    tmp.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    tmp.replace(args.out)
    print(json.dumps(report["by_setting"], indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
