"""Replay the rewrite's hint lookup of a recorded benchmark run, offline, to study semantic hints quickly.

A `code-alias bench run --lexical --semantic-hints` run records, per question, the hints offered (with their
evidence, "retrieved" ranks included). This script rebuilds each corpus's `HintIndex` and symbol cards from the
bench cache's index folders, embeds the questions once (vectors cached next to the output), feeds the recorded
first-pass names back as `retrieved`, and scores the lookup the way the harness does:

- ``hint recall``: a gold symbol among the definitions of the hints offered (the harness's `sym_hint_recall`);
- ``chosen gold``: a gold symbol among the symbols the dictionary rewrite puts into the query (a proxy of the
  rewrite's symbol hit, without retrieval);
- ``chosen``: symbols per rewrite.

It changes no code: the replay's index takes other weights (``--depth``, ``--min-similarity``: `HintWeights`)
and ``--calibration`` reads another fit. A full `bench run` stays the measurement; this is for choosing what to
measure. Load: one MiniLM call per question (first time), then about a second per corpus.

    python benchmarks/hint_replay.py /work/runs/sem-sweqa --golden ../shared/bench/swe_qa_dev_primary.jsonl \
        --cache-dir /work/bench-cache [--depth 30] [--calibration cal.json] [--out replay.jsonl]
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from haystack_integrations.components.code_alias.evaluation.bench_searcher import symbol_definitions
from haystack_integrations.components.code_alias.evaluation.metrics import hint_recall
from haystack_integrations.components.code_alias.indexing.card_vectors import load_cards
from haystack_integrations.components.code_alias.indexing.dictionary_handle import DictionaryHandle
from haystack_integrations.components.code_alias.paths import DICTIONARY_FILE
from haystack_integrations.components.code_alias.rewriting.hints import DEFAULT_WEIGHTS, HintIndex, combine_confidence
from haystack_integrations.components.code_alias.rewriting.hints.calibration import HintCalibration
from haystack_integrations.components.code_alias.rewriting.hints.fit import (
    held_out,
    question_vectors,
    recorded_retrieved,
)
from haystack_integrations.components.code_alias.rewriting.rewrite import dictionary_rewrite


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="a bench run folder (results.jsonl) with semantic hints")
    parser.add_argument("--golden", type=Path, required=True, help="the run's golden file (question texts)")
    parser.add_argument("--cache-dir", type=Path, default=Path(".bench-cache"))
    parser.add_argument("--depth", type=int, default=None, help="SEMANTIC_DEPTH for the replay")
    parser.add_argument("--min-similarity", type=float, default=None, help="SEMANTIC_MIN_SIMILARITY")
    parser.add_argument("--limit", type=int, default=40, help="hints offered")
    parser.add_argument("--calibration", type=Path, default=None, help="a calibration JSON (default: packaged)")
    parser.add_argument("--vectors", type=Path, default=None, help="question-vector cache (.npz)")
    parser.add_argument("--held-out", type=float, default=0.0, help="also score the held-out share of the fit")
    parser.add_argument("--out", type=Path, default=None, help="write replayed rows (results.jsonl-like)")
    args = parser.parse_args()
    weights = DEFAULT_WEIGHTS
    if args.depth is not None:
        weights = replace(weights, semantic_depth=args.depth)
    if args.min_similarity is not None:
        weights = replace(weights, semantic_min_similarity=args.min_similarity)
    calibration = HintCalibration.load(args.calibration) if args.calibration else HintCalibration.load()

    questions = {}
    with args.golden.open(encoding="utf-8") as handle:
        for line in handle:
            item = json.loads(line)
            questions[item["id"]] = item["question"]
    rows = []
    with (args.run / "results.jsonl").open(encoding="utf-8") as handle:
        rows = [r for line in handle if (r := json.loads(line)).get("rewrite") == "dictionary"]
    vectors = question_vectors([questions[r["id"]] for r in rows], args.vectors or args.run / "question_vectors.npz")
    by_corpus: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_corpus[row["corpus"]].append(row)
    totals: dict[str, list[float]] = defaultdict(list)
    out = args.out.open("w", encoding="utf-8") if args.out else None
    for corpus, items in sorted(by_corpus.items()):
        folder = args.cache_dir / "indexes" / "lexical" / corpus
        dictionary = DictionaryHandle.for_path(folder / DICTIONARY_FILE).dictionary
        index = HintIndex(dictionary, calibration=calibration, weights=weights)
        cards = load_cards(folder)
        definitions = symbol_definitions(folder)
        for row in items:
            question = questions[row["id"]]
            found = index.lookup(
                question,
                limit=args.limit,
                retrieved=recorded_retrieved(row.get("hints") or []),
                question_vector=vectors[question],
                cards=cards,
                calibration=calibration,
            )
            gold = [tuple(pair) for pair in row.get("gold_functions", [])]
            offered = [d for h in found if h.kind == "symbol" for d in definitions.get(h.name, [])]
            recall = hint_recall(offered, gold).get("sym_hint_recall")
            if recall is None:
                continue
            chosen = [s for s in dictionary_rewrite(question, found).symbols]
            chosen_defs = [d for name in chosen for d in definitions.get(name, [])]
            if held_out(row["id"], args.held_out):
                totals["held-out hint recall"].append(recall)
            totals["hint recall"].append(recall)
            totals["chosen gold"].append(hint_recall(chosen_defs, gold)["sym_hint_recall"])
            totals["chosen"].append(len(chosen))
            totals["recorded recall"].append(float(row.get("metrics", {}).get("sym_hint_recall", float("nan"))))
            if out is not None:
                record = {
                    "id": row["id"],
                    "corpus": corpus,
                    "rewrite": "dictionary",
                    "gold_functions": row.get("gold_functions", []),
                    "chosen": chosen,
                    "metrics": {"sym_hint_recall": recall},
                    # "confidence": the hand-set noisy-OR of the evidence (what `fit_hint_calibration.py`'s
                    # `scale` reads), the fitted one beside it
                    "hints": [
                        {
                            **h.to_dict(),
                            "confidence": round(combine_confidence(h.evidence.values()), 4),
                            "fitted_confidence": round(h.confidence, 4),
                            "definitions": definitions.get(h.name, [])[:5],
                        }
                        for h in found
                    ],
                }
                out.write(json.dumps(record) + "\n")
    if out is not None:
        out.close()
    n = len(totals["hint recall"])
    summary = {key: round(100 * float(np.nanmean(values)), 1) for key, values in totals.items() if key != "chosen"}
    summary["chosen per rewrite"] = round(float(np.mean(totals["chosen"])), 2)
    print(json.dumps({"questions": n, **summary}))


if __name__ == "__main__":
    main()
