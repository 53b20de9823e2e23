"""What the hint places model costs a lookup: `HintIndex.lookup` with and without it, side by side in one process.

Replays each question of a recorded `--lexical --semantic-hints` run (as `hint_replay.py` does: the corpus's hint
index and cards from the bench cache, question vectors cached next to the run, the first pass read back from the
recorded hints) `--rounds` times, alternating the order of the two variants each round, and prints p50 / p95 per
corpus. The variants: the packaged calibration (the places model fills the 40 places) and the same without it (the
20 nearest cards keep reserved places).

    python benchmarks/hint_lookup_cost.py /work/runs/sem-sweqa --golden ../shared/bench/swe_qa_dev_primary.jsonl \
        --cache-dir /work/bench-cache [--rounds 3] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
from hint_replay import question_vectors, recorded_retrieved

from haystack_integrations.components.code_alias.indexing.card_vectors import load_cards
from haystack_integrations.components.code_alias.indexing.dictionary_handle import DictionaryHandle
from haystack_integrations.components.code_alias.paths import DICTIONARY_FILE
from haystack_integrations.components.code_alias.rewriting.hints import HintIndex
from haystack_integrations.components.code_alias.rewriting.hints.calibration import HintCalibration


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="a --lexical --semantic-hints bench run folder (results.jsonl)")
    parser.add_argument("--golden", type=Path, required=True, help="the run's golden file (question texts)")
    parser.add_argument("--cache-dir", type=Path, default=Path(".bench-cache"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args()
    texts = {}
    with args.golden.open(encoding="utf-8") as handle:
        for line in handle:
            item = json.loads(line)
            texts[item["id"]] = item["question"]
    with (args.run / "results.jsonl").open(encoding="utf-8") as handle:
        rows = [r for line in handle if (r := json.loads(line)).get("rewrite") == "dictionary"]
    vectors = question_vectors([texts[r["id"]] for r in rows], args.run / "question_vectors.npz")
    places = HintCalibration.load()
    variants = {"places": places, "reserved": replace(places, places=None)}
    report = {}
    for corpus in sorted({r["corpus"] for r in rows}):
        folder = args.cache_dir / "indexes" / "lexical" / corpus
        index = HintIndex(DictionaryHandle.for_path(folder / DICTIONARY_FILE).dictionary, calibration=places)
        cards = load_cards(folder)
        timings: dict[str, list[float]] = {name: [] for name in variants}
        for round_number in range(args.rounds):
            order = list(variants) if round_number % 2 == 0 else list(reversed(variants))
            for row in (r for r in rows if r["corpus"] == corpus):
                question, retrieved = texts[row["id"]], recorded_retrieved(row.get("hints") or [])
                for name in order:
                    start = time.perf_counter()
                    index.lookup(
                        question,
                        limit=40,
                        retrieved=retrieved,
                        question_vector=vectors[question],
                        cards=cards,
                        calibration=variants[name],
                    )
                    timings[name].append(1000 * (time.perf_counter() - start))
        report[corpus] = {"names": len(index.targets)} | {
            name: {"p50_ms": round(float(np.percentile(v, 50)), 2), "p95_ms": round(float(np.percentile(v, 95)), 2)}
            for name, v in timings.items()
        }
        print(corpus, json.dumps(report[corpus]))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
