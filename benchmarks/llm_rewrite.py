"""LLM rewrite benchmark: latency with a cold and a warm cache, faithfulness drops, fallbacks, on a real tree.

Usage (Django 3.0's source from its PyPI wheel, Qwen2.5-Coder 0.5B q4_k_m from the PyPI parts, llama.cpp):

    python benchmarks/llm_rewrite.py --pypi django==3.0 --questions ../shared/bench/swebench_lite.jsonl

or with `--gguf PATH` / `--openai-base-url URL --llm-model NAME` for another model, `--tree PATH` for another
tree. Without a model option it uses `$CODE_ALIAS_TEST_GGUF`, else builds the 0.5B GGUF with
`benchmarks/fetch_qwen_gguf.py`.

Questions: the SWE-bench Lite titles of the tree's project at that version (informal one-line issue titles)
plus hand-written informal questions. Two variants of the rewriter run over them:
- `constrained`: the default; the JSON schema limits `symbols`/`packages` to the offered hints (grammar-
  constrained decoding in llama.cpp), so the filter should drop nothing;
- `free`: the same prompt, schema without the enums: what the model proposes on its own, so the share the
  `SymbolFaithfulnessFilter` drops measures how often a small model mints names.
Each variant: a cold pass (every question a cache miss: one LLM call each), then `--warm-passes` passes of the
same questions re-cased and re-spaced (every one must be a cache hit and make no LLM call; the generator's calls
are counted to prove it). Figures go to stdout and to `--out` (JSON); each rewrite goes to a JSONL rewrite log in
`--log-dir` (not committed), which `rewrite_log.summarise_rewrite_log` reads back as a cross-check.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")
# llama.cpp's OpenMP threads busy-wait by default; on a shared, loaded machine that multiplies latency.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
sys.path.insert(0, str(Path(__file__).parent))

from haystack.utils import deserialize_chatgenerator_inplace

from haystack_integrations.components.code_alias.core.builder import DictionaryBuilder
from haystack_integrations.components.code_alias.rewriting.faithfulness import SymbolFaithfulnessFilter
from haystack_integrations.components.code_alias.rewriting.generators import chat_generator_spec
from haystack_integrations.components.code_alias.rewriting.rewrite_log import (
    read_rewrite_log,
    summarise_rewrite_log,
)
from haystack_integrations.components.code_alias.rewriting.rewriter import ConstrainedQueryRewriter

INFORMAL_QUESTIONS = [
    "where does django hash user passwords?",
    "which function renders a template into an http response?",
    "where is the csrf token checked on post requests?",
    "how do I paginate a queryset?",
    "where are url patterns matched to views?",
    "what sends the password reset email?",
    "why does the migration autodetector think my field was renamed?",
    "where is the session cookie set on the response?",
    "how does the admin build the changelist search query?",
    "which middleware adds the X-Frame-Options header?",
    "where are model signals like post_save sent?",
    "how to cache a whole view?",
]


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def latency(values: list[float]) -> dict[str, Any]:
    p50, p95 = percentile(values, 0.5), percentile(values, 0.95)
    return {
        "p50_ms": None if p50 is None else round(p50, 3),
        "p95_ms": None if p95 is None else round(p95, 3),
        "max_ms": round(max(values), 3) if values else None,
        "n": len(values),
    }


def swebench_titles(path: str | None, project: str, version: str | None) -> list[str]:
    """First lines of the SWE-bench issues of `project` (at `version` when given)."""
    if not path:
        return []
    titles = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            if record["repo"].split("/")[-1] == project and (version is None or record["version"] == version):
                titles.append(record["problem_statement"].strip().splitlines()[0].strip())
    return titles


def load_generator(args: argparse.Namespace) -> tuple[Any, dict[str, Any]]:
    if args.openai_base_url:
        spec = chat_generator_spec(openai_base_url=args.openai_base_url, model=args.llm_model, timeout=args.timeout)
    else:
        gguf = args.gguf or os.environ.get("CODE_ALIAS_TEST_GGUF")
        if not gguf:
            from fetch_qwen_gguf import fetch

            gguf = str(fetch("0.5b"))
        spec = chat_generator_spec(gguf=gguf, n_threads=args.threads or os.cpu_count(), n_ctx=args.n_ctx)
    holder: dict[str, Any] = {"chat_generator": json.loads(json.dumps(spec))}
    deserialize_chatgenerator_inplace(holder, key="chat_generator")
    return holder["chat_generator"], spec


def count_calls(generator: Any) -> dict[str, int]:
    """Wrap the generator's `run` (and `run_async`) to count LLM calls; the signature is kept."""
    counter = {"calls": 0}
    original = generator.run

    @functools.wraps(original)
    def run(*args: Any, **kwargs: Any) -> Any:
        counter["calls"] += 1
        return original(*args, **kwargs)

    generator.run = run
    return counter


def variant(name: str, s: str) -> str:
    """A re-cased, re-spaced copy of a question: the same question to the cache."""
    return f"  {s.upper()}  " if name == "upper" else "  ".join(s.split()).lower()


def run_variant(
    label: str,
    rewriter: ConstrainedQueryRewriter,
    check: SymbolFaithfulnessFilter,
    questions: list[str],
    calls: dict[str, int],
    warm_passes: int,
) -> dict[str, Any]:
    cold_wall: list[float] = []
    cold_llm: list[float] = []
    fallbacks: dict[str, int] = {}
    proposed = dropped = dropped_text = kept = 0
    examples: list[dict[str, Any]] = []
    before = calls["calls"]
    for question in questions:
        started = time.perf_counter()
        out = rewriter.run(question=question)
        cold_wall.append((time.perf_counter() - started) * 1000)
        meta = out["meta"]
        if meta["fallback"]:
            reason = meta["fallback"].split(":")[0]
            fallbacks[reason] = fallbacks.get(reason, 0) + 1
        else:
            cold_llm.append(meta["llm_latency_ms"])
            checked = check.run(
                rewritten=out["rewritten"], symbols=out["symbols"], packages=out["packages"], question=question
            )
            proposed += len(out["symbols"]) + len(out["packages"])
            kept += len(checked["symbols"]) + len(checked["packages"])
            dropped += checked["counts"]["dropped_symbols"] + checked["counts"]["dropped_packages"]
            dropped_text += checked["counts"]["dropped_text"]
            if len(examples) < 6:
                examples.append(
                    {
                        "question": question,
                        "llm": {k: out[k] for k in ("rewritten", "symbols", "packages", "intent")},
                        "kept": {k: checked[k] for k in ("rewritten", "symbols", "packages")},
                        "dropped": checked["dropped"],
                    }
                )
    cold_calls = calls["calls"] - before

    warm: list[float] = []
    misses = 0
    before = calls["calls"]
    for number in range(warm_passes):
        for question in questions:
            asked = variant("upper" if number % 2 else "spaced", question)
            started = time.perf_counter()
            out = rewriter.run(question=asked)
            elapsed = (time.perf_counter() - started) * 1000
            if out["meta"]["cache_hit"]:
                warm.append(elapsed)
            else:
                misses += 1  # a question whose cold run fell back (fallbacks are not cached)
    warm_calls = calls["calls"] - before
    cold_fallbacks = sum(fallbacks.values())
    result = {
        "variant": label,
        "questions": len(questions),
        "cold": {
            "wall": latency(cold_wall),
            "llm_only": latency(cold_llm),
            "llm_calls": cold_calls,
            "fallbacks": cold_fallbacks,
            "fallback_rate": round(cold_fallbacks / len(questions), 4),
            "fallback_reasons": fallbacks,
        },
        "warm": {
            "passes": warm_passes,
            "cache_hits": len(warm),
            "misses_after_fallback": misses,
            "hit_latency": latency(warm),
            "llm_calls": warm_calls,
            "llm_calls_on_hits": warm_calls - misses,
        },
        "faithfulness": {
            "proposed_identifiers": proposed,
            "kept": kept,
            "dropped": dropped,
            "dropped_share": round(dropped / proposed, 4) if proposed else None,
            "dropped_from_text": dropped_text,
        },
        "cache": rewriter.cache_stats(),
        "examples": examples,
    }
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", help="a source tree (default: the --pypi release's wheel, unpacked)")
    parser.add_argument("--pypi", default="django==3.0", help="a release whose wheel is the tree")
    parser.add_argument("--questions", help="swebench_lite.jsonl: adds the project's issue titles at --version")
    parser.add_argument("--version", default=None, help="SWE-bench version of the titles (default: --pypi's)")
    parser.add_argument("--gguf", help="a GGUF model (llama.cpp)")
    parser.add_argument("--openai-base-url", help="an OpenAI-compatible server instead of a GGUF")
    parser.add_argument("--llm-model", default=None, help="model name on that server")
    parser.add_argument("--threads", type=int, default=None, help="llama.cpp threads (default: all cores)")
    parser.add_argument("--n-ctx", type=int, default=4096)
    parser.add_argument("--max-hints", type=int, default=40)
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds before the dictionary fallback")
    parser.add_argument("--max-output-tokens", type=int, default=256)
    parser.add_argument("--warm-passes", type=int, default=4)
    parser.add_argument("--variants", default="constrained,free")
    parser.add_argument("--out", default="benchmarks/results/llm_rewrite.json")
    parser.add_argument("--log-dir", default=".bench-cache/logs", help="where the JSONL rewrite logs go")
    args = parser.parse_args()

    load_at_start = list(os.getloadavg())
    project, _, release = args.pypi.partition("==")
    if args.tree:
        tree = Path(args.tree)
    else:
        from foundation import fetch_tree

        tree = fetch_tree(args.pypi)
    started = time.perf_counter()
    dictionary = DictionaryBuilder().build(tree)[0]
    build_s = time.perf_counter() - started
    version = args.version or (".".join(release.split(".")[:2]) if release else None)
    questions = list(dict.fromkeys(swebench_titles(args.questions, project, version) + INFORMAL_QUESTIONS))
    print(
        f"tree {tree}: {len(dictionary.symbols)} symbols, {len(dictionary.packages)} packages "
        f"(dictionary built in {build_s:.1f} s); {len(questions)} questions",
        flush=True,
    )

    started = time.perf_counter()
    generator, spec = load_generator(args)
    calls = count_calls(generator)
    if hasattr(generator, "warm_up"):
        generator.warm_up()
    load_s = time.perf_counter() - started
    # One throwaway generation pages the weights in; "cold" below means a cache miss, not a cold process.
    from haystack.dataclasses import ChatMessage

    started = time.perf_counter()
    generator.run(messages=[ChatMessage.from_user("Answer with {}")], generation_kwargs={"max_tokens": 4})
    first_call_s = time.perf_counter() - started
    print(
        f"model {spec['init_parameters'].get('model')} loaded in {load_s:.1f} s, first generation {first_call_s:.1f} s",
        flush=True,
    )

    out_path = Path(args.out)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    check = SymbolFaithfulnessFilter.from_dictionary(dictionary)
    dictionary_only = ConstrainedQueryRewriter.from_dictionary(dictionary, max_hints=args.max_hints)
    dictionary_ms = []
    for question in questions:
        begun = time.perf_counter()
        dictionary_only.run(question=question)
        dictionary_ms.append((time.perf_counter() - begun) * 1000)

    results = []
    for label in [v.strip() for v in args.variants.split(",") if v.strip()]:
        log_path = Path(args.log_dir) / f"{out_path.stem}.{label}.jsonl"
        log_path.parent.mkdir(parents=True, exist_ok=True)
        log_path.unlink(missing_ok=True)
        rewriter = ConstrainedQueryRewriter.from_dictionary(
            dictionary,
            chat_generator=generator,
            max_hints=args.max_hints,
            timeout=args.timeout,
            max_output_tokens=args.max_output_tokens,
            constrain_to_hints=(label != "free"),
            log_path=str(log_path),
        )
        print(f"\n== {label}: cold pass ({len(questions)} LLM calls) ...", flush=True)
        result = run_variant(label, rewriter, check, questions, calls, args.warm_passes)
        result["log"] = str(log_path)
        result["log_summary"] = summarise_rewrite_log(read_rewrite_log(log_path))
        results.append(result)
        cold, warm, faithful = result["cold"], result["warm"], result["faithfulness"]
        print(
            f"   cold  wall p50 {cold['wall']['p50_ms']:.0f} ms  p95 {cold['wall']['p95_ms']:.0f} ms"
            f"  (LLM only p50 {cold['llm_only']['p50_ms']} ms, p95 {cold['llm_only']['p95_ms']} ms);"
            f"  LLM calls {cold['llm_calls']};"
            f" fallbacks {cold['fallbacks']}/{len(questions)} {cold['fallback_reasons']}"
        )
        print(
            f"   warm  {warm['cache_hits']} cache hits: p50 {warm['hit_latency']['p50_ms']} ms"
            f"  p95 {warm['hit_latency']['p95_ms']} ms  max {warm['hit_latency']['max_ms']} ms;"
            f"  LLM calls on hits {warm['llm_calls_on_hits']}"
        )
        print(
            f"   faithfulness: {faithful['dropped']}/{faithful['proposed_identifiers']} LLM-proposed identifiers "
            f"dropped (share {faithful['dropped_share']}); {faithful['dropped_from_text']} invented words "
            f"scrubbed from rewritten text"
        )

    report = {
        "tree": str(tree),
        "pypi": args.pypi,
        "symbols": len(dictionary.symbols),
        "packages": len(dictionary.packages),
        "questions": questions,
        "model": spec,
        "model_load_s": round(load_s, 2),
        "first_generation_s": round(first_call_s, 2),
        "load_average": {"start": load_at_start, "end": list(os.getloadavg())},
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()},
        "settings": {
            "max_hints": args.max_hints,
            "timeout_s": args.timeout,
            "max_output_tokens": args.max_output_tokens,
            "warm_passes": args.warm_passes,
        },
        "dictionary_only_latency": latency(dictionary_ms),
        "variants": results,
        "command": " ".join(["python", *sys.argv]),
    }
    out_path.write_text(json.dumps(report, indent=2, default=str), encoding="utf-8")
    print(
        f"\ndictionary-only rewrite: p50 {report['dictionary_only_latency']['p50_ms']} ms, "
        f"p95 {report['dictionary_only_latency']['p95_ms']} ms"
    )
    print(f"report: {out_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
