"""Fit the model that fills the hint list's places (`rewriting.hints.places`) on a recorded benchmark run, and check it.

Like `hint_replay.py`, it rebuilds each corpus's `HintIndex` and symbol cards from the bench cache, embeds the
questions once (cached next to the run) and feeds the recorded first-pass names back as `retrieved`. For every
question with gold symbols it takes `hints.place_pool` (the best `POOL_DEPTH` symbols by word score and by
card similarity, with their features), labels a candidate 1 when one of its definitions is a gold symbol, and fits
a logistic regression (`rewriting.hints.calibration.fit_logistic`, L2 `--l2`).

It reports hint recall (a gold symbol among the definitions of the hints offered, as the harness counts it) three
ways, each by running the real `HintIndex.lookup`:

- ``reserved``: without a places model (the 20 nearest cards keep their places, the rest by word score);
- ``by repository``: each repository's questions with a model fitted on the *other* repositories only (the honest
  figure: nothing of a question's repository was seen by its model);
- ``fitted on all``: the model `--write` stores.

`--write` adds the model as ``places`` to the calibration file (the other models are kept as they are).

    python benchmarks/fit_hint_places.py /work/runs/sem-sweqa --golden ../shared/bench/swe_qa_dev_primary.jsonl \
        --cache-dir /work/bench-cache [--l2 1.0] [--write]
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from haystack_integrations.components.code_alias.core.cards import SymbolCards
from haystack_integrations.components.code_alias.evaluation.bench_searcher import symbol_definitions
from haystack_integrations.components.code_alias.evaluation.metrics import hint_recall
from haystack_integrations.components.code_alias.indexing.card_vectors import load_cards
from haystack_integrations.components.code_alias.indexing.dictionary_handle import DictionaryHandle
from haystack_integrations.components.code_alias.paths import DICTIONARY_FILE
from haystack_integrations.components.code_alias.rewriting.hints import (
    DEFAULT_WEIGHTS,
    HintIndex,
    HintWeights,
    place_pool,
)
from haystack_integrations.components.code_alias.rewriting.hints.calibration import (
    CALIBRATION_FILE,
    HintCalibration,
    Logistic,
    fit_logistic,
)
from haystack_integrations.components.code_alias.rewriting.hints.fit import question_vectors, recorded_retrieved
from haystack_integrations.components.code_alias.rewriting.hints.places import POOL_DEPTH, PlacePool


@dataclass
class Question:
    """One question of the run, with what a lookup needs and its pool's labels."""

    id: str
    repository: str
    text: str
    retrieved: list[str]
    vector: np.ndarray
    gold: list[tuple[str, str]]
    pool: PlacePool
    labels: list[int]


@dataclass
class Corpus:
    index: HintIndex
    cards: SymbolCards
    definitions: dict[str, list[tuple[str, str]]]
    questions: list[Question]


def _repository(row: dict[str, Any]) -> str:
    return str(row.get("repo") or row["id"].rsplit("-", 1)[0])


def load(
    run: Path, golden: Path, cache_dir: Path, calibration: HintCalibration, weights: HintWeights = DEFAULT_WEIGHTS
) -> list[Corpus]:
    texts: dict[str, tuple[str, str]] = {}
    with golden.open(encoding="utf-8") as handle:
        for line in handle:
            item = json.loads(line)
            texts[item["id"]] = (item["question"], str(item.get("repo") or ""))
    with (run / "results.jsonl").open(encoding="utf-8") as handle:
        rows = [r for line in handle if (r := json.loads(line)).get("rewrite") == "dictionary"]
    vectors = question_vectors([texts[r["id"]][0] for r in rows], run / "question_vectors.npz")
    by_corpus: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_corpus[row["corpus"]].append(row)
    corpora = []
    for corpus, items in tqdm(sorted(by_corpus.items()), desc="corpora", unit="corpus"):
        folder = cache_dir / "indexes" / "lexical" / corpus
        dictionary = DictionaryHandle.for_path(folder / DICTIONARY_FILE).dictionary
        index = HintIndex(dictionary, calibration=calibration, weights=weights)
        cards = load_cards(folder)
        if cards is None:
            raise SystemExit(f"{folder}: no symbol cards; the run must be a --semantic-hints one")
        definitions = symbol_definitions(folder)
        questions = []
        for row in items:
            gold = [(str(f), str(n)) for f, n in row.get("gold_functions", [])]
            if not gold:
                continue
            text, repository = texts[row["id"]]
            retrieved = recorded_retrieved(row.get("hints") or [])
            pool = place_pool(
                index,
                text,
                retrieved=retrieved,
                question_vector=vectors[text],
                cards=cards,
                calibration=calibration,
            )
            assert pool is not None
            labels = [
                1 if hint_recall(definitions.get(index.targets[i].name, []), gold).get("sym_hint_recall") else 0
                for i in pool.indexes
            ]
            questions.append(
                Question(row["id"], repository or row["corpus"], text, retrieved, vectors[text], gold, pool, labels)
            )
        corpora.append(Corpus(index, cards, definitions, questions))
    return corpora


def fit(questions: list[Question], l2: float) -> Logistic:
    rows = [features for q in questions for features in q.pool.features]
    labels = [label for q in questions for label in q.labels]
    return fit_logistic(rows, labels, l2=l2)


def recall(corpora: list[Corpus], calibration_of: Any, limit: int) -> float:
    """Hint recall of the real lookup, the calibration chosen per question by `calibration_of(question)`."""
    hits = []
    for corpus in corpora:
        for q in corpus.questions:
            found = corpus.index.lookup(
                q.text,
                limit=limit,
                retrieved=q.retrieved,
                question_vector=q.vector,
                cards=corpus.cards,
                calibration=calibration_of(q),
            )
            offered = [d for h in found if h.kind == "symbol" for d in corpus.definitions.get(h.name, [])]
            hits.append(hint_recall(offered, q.gold)["sym_hint_recall"])
    return round(100 * float(np.mean(hits)), 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="a --lexical --semantic-hints bench run folder (results.jsonl)")
    parser.add_argument("--golden", type=Path, required=True, help="the run's golden file (question texts)")
    parser.add_argument("--cache-dir", type=Path, default=Path(".bench-cache"))
    parser.add_argument("--l2", type=float, default=1.0, help="L2 penalty of the fit")
    parser.add_argument("--limit", type=int, default=40, help="hints offered")
    parser.add_argument("--calibration", type=Path, default=CALIBRATION_FILE, help="the calibration to start from")
    parser.add_argument("--nearest-kept", type=int, default=None, help="PLACES_NEAREST_KEPT for the check")
    parser.add_argument("--write", action="store_true", help="store the model as 'places' in --calibration")
    args = parser.parse_args()
    weights = DEFAULT_WEIGHTS
    if args.nearest_kept is not None:
        weights = replace(weights, places_nearest_kept=args.nearest_kept)
    base = replace(HintCalibration.load(args.calibration), places=None)
    corpora = load(args.run, args.golden, args.cache_dir, base, weights)
    questions = [q for c in corpora for q in c.questions]
    repositories = sorted({q.repository for q in questions})
    by_repository = {
        repository: replace(base, places=fit([q for q in questions if q.repository != repository], args.l2))
        for repository in repositories
    }
    model = fit(questions, args.l2)
    fitted = replace(base, places=model)
    pool_recall = round(100 * float(np.mean([max(q.labels, default=0) for q in questions])), 1)
    report = {
        "questions": len(questions),
        "repositories": len(repositories),
        "pool_depth": POOL_DEPTH,
        "pool recall (any gold in the pool)": pool_recall,
        "reserved (no places model)": recall(corpora, lambda q: base, args.limit),
        "by repository (fitted on the others)": recall(corpora, lambda q: by_repository[q.repository], args.limit),
        "fitted on all": recall(corpora, lambda q: fitted, args.limit),
        "coefficients": {"intercept": round(model.intercept, 4)}
        | {k: round(v, 4) for k, v in model.coefficients.items()},
    }
    print(json.dumps(report, indent=1))
    if args.write:
        source = (
            f"places: benchmarks/fit_hint_places.py RUN --l2 {args.l2} --write on {args.run.name} "
            f"({len(questions)} questions with gold symbols, {len(repositories)} repositories); hint recall "
            f"{report['reserved (no places model)']} reserved, {report['by repository (fitted on the others)']} "
            "with each repository's model fitted on the others"
        )
        stored = replace(HintCalibration.load(args.calibration), places=model, places_source=source)
        args.calibration.write_text(json.dumps(stored.to_dict(), indent=2) + "\n", encoding="utf-8")
        print(f"wrote 'places' to {args.calibration}")


if __name__ == "__main__":
    main()
