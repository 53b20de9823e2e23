"""Fit how much semantic hint evidence counts (`calibration`), from benchmark runs that recorded their hints.

A `code-alias bench run --semantic-hints` (or a hybrid run) writes every rewrite's candidate hints into
`results.jsonl` (name, evidence, card similarity, definitions). This script labels each hint "gold" when its name is
a gold symbol of the question, and fits logistic regressions (`calibration`):

- ``semantic``: P(gold) of a hint among the nearest cards, from its similarity, its rank and its gap to the nearest;
- ``combined``: P(gold) of any hint from all its evidence (lexical values, semantic features, card similarity),
  which replaces the noisy-OR combination where the index has cards;
- ``scale``: P(gold) of a lexical hint from its hand-set confidence, to put semantic P(gold) on that scale;
- ``words``: P(gold) of a hint backed only by shared words (words, doc, abbreviation, all words), from its card
  similarity.

It prints both with their AUC, and, for comparison, a logistic over every evidence kind against the hand-set
noisy-OR confidence (`evidence.combine_confidence`); with `--write` it stores the models in
`config/hint_calibration.json`. `benchmarks/fit_hint_calibration.py` is its command line:

    python benchmarks/fit_hint_calibration.py /work/bench-runs/sem1-sweqa [more runs] --write
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .calibration import CALIBRATION_FILE, HintCalibration, combined_features, fit_logistic, semantic_features
from .kinds import WORD_ONLY

KINDS = ("exact", "fuzzy", "nickname", "alias", "retrieved", "all-words", "words", "doc", "semantic")


def _gold_names(row: dict[str, Any]) -> set[str]:
    return {str(name).rsplit(".", 1)[-1] for _, name in row.get("gold_functions", [])}


def examples(rows: list[dict[str, Any]]) -> dict[str, tuple[list[dict[str, float]], list[int]]]:
    """(features, labels) per model, from the dictionary-rewrite rows that recorded hints."""
    semantic: tuple[list[dict[str, float]], list[int]] = ([], [])
    words: tuple[list[dict[str, float]], list[int]] = ([], [])
    every: tuple[list[dict[str, float]], list[int]] = ([], [])
    scale: tuple[list[dict[str, float]], list[int]] = ([], [])
    combined: tuple[list[dict[str, float]], list[int]] = ([], [])
    for row in rows:
        gold = _gold_names(row)
        hints = [h for h in row.get("hints") or [] if h.get("kind", "symbol") == "symbol"]
        if not gold or not hints:
            continue
        near = sorted(
            (h for h in hints if "semantic" in (h.get("evidence") or {}) and h.get("similarity") is not None),
            key=lambda h: -float(h["similarity"]),
        )
        best = float(near[0]["similarity"]) if near else 0.0
        ranks = {hint["name"]: rank for rank, hint in enumerate(near)}
        for rank, hint in enumerate(near):
            semantic[0].append(semantic_features(float(hint["similarity"]), rank, best))
            semantic[1].append(int(hint["name"] in gold))
        for hint in hints:
            evidence = hint.get("evidence") or {}
            label = int(hint["name"] in gold)
            if set(evidence) <= WORD_ONLY and hint.get("similarity") is not None:
                words[0].append({"similarity": float(hint["similarity"])})
                words[1].append(label)
            features = {kind: float(evidence.get(kind, 0.0)) for kind in KINDS}
            features["noisy_or"] = float(hint.get("confidence") or 0.0)
            every[0].append(features)
            every[1].append(label)
            if "semantic" not in evidence:
                scale[0].append({"confidence": features["noisy_or"]})
                scale[1].append(label)
            similarity = hint.get("similarity")
            semantic_info = None
            if hint["name"] in ranks and similarity is not None:
                semantic_info = (float(similarity), ranks[hint["name"]], best)
            lexical = {k: float(v) for k, v in evidence.items() if k != "semantic"}
            combined[0].append(
                combined_features(lexical, semantic_info, None if similarity is None else float(similarity))
            )
            combined[1].append(label)
    return {"semantic": semantic, "words": words, "every": every, "scale": scale, "combined": combined}


def auc(scores: list[float], labels: list[int]) -> float:
    """Area under the ROC curve (rank statistic), NaN with one class."""
    positives = [s for s, y in zip(scores, labels, strict=True) if y]
    negatives = [s for s, y in zip(scores, labels, strict=True) if not y]
    if not positives or not negatives:
        return math.nan
    order = sorted(zip(scores, labels, strict=True))
    rank_sum, rank = 0.0, 0
    i = 0
    while i < len(order):
        j = i
        while j < len(order) and order[j][0] == order[i][0]:
            j += 1
        average = (i + j + 1) / 2  # 1-based average rank of the tie group
        rank_sum += average * sum(1 for k in range(i, j) if order[k][1])
        rank += j - i
        i = j
    return (rank_sum - len(positives) * (len(positives) + 1) / 2) / (len(positives) * len(negatives))


def held_out(question_id: str, share: float) -> bool:
    """Whether a question is in the held-out share (a stable hash of its id, the same split on every run)."""
    if share <= 0:
        return False
    digest = int(hashlib.sha1(question_id.encode("utf-8")).hexdigest()[:8], 16)
    return digest / 0xFFFFFFFF < share


def main(argv: Sequence[str] | None = None) -> None:
    """The fit's command line (`benchmarks/fit_hint_calibration.py`)."""
    parser = argparse.ArgumentParser(prog="fit_hint_calibration.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path, help="benchmark run folders (results.jsonl inside)")
    parser.add_argument("--write", action="store_true", help=f"store the fitted models in {CALIBRATION_FILE}")
    parser.add_argument("--l2", type=float, default=1.0)
    parser.add_argument(
        "--held-out",
        type=float,
        default=0.0,
        help="share of the questions (by a hash of their id) left out of the fit and scored apart",
    )
    parser.add_argument("--output", type=Path, default=CALIBRATION_FILE, help="where --write stores the fit")
    args = parser.parse_args(argv)
    rows = []
    for run in args.runs:
        with (run / "results.jsonl").open(encoding="utf-8") as handle:
            rows += [r for line in handle if (r := json.loads(line)).get("rewrite") == "dictionary"]
    left_out = [r for r in rows if held_out(str(r.get("id", "")), args.held_out)]
    rows = [r for r in rows if not held_out(str(r.get("id", "")), args.held_out)]
    data = examples(rows)
    unseen = examples(left_out) if left_out else None
    fitted = {}
    for name in ("semantic", "words", "scale", "combined"):
        features, labels = data[name]
        model = fit_logistic(features, labels, l2=args.l2)
        scores = [model(**f) for f in features]
        fitted[name] = model
        line = f"{name}: n {len(labels)}, gold {sum(labels)}, AUC {auc(scores, labels):.3f}"
        if unseen is not None and unseen[name][0]:
            other, other_labels = unseen[name]
            line += f"; held out ({len(left_out)} questions) AUC {auc([model(**f) for f in other], other_labels):.3f}"
        print(f"{line}, model {model.to_dict()}")
    features, labels = data["every"]
    noisy = [f["noisy_or"] for f in features]
    plain = [{k: v for k, v in f.items() if k != "noisy_or"} for f in features]
    model = fit_logistic(plain, labels, l2=args.l2)
    print(
        f"every kind: n {len(labels)}, gold {sum(labels)}; AUC hand-set noisy-OR {auc(noisy, labels):.3f}, "
        f"fitted logistic {auc([model(**f) for f in plain], labels):.3f}; model {model.to_dict()}"
    )
    if args.write:
        # A word hint keeps its full confidence where the words model reaches the base rate of word hints.
        features, labels = data["words"]
        base = min(max(sum(labels) / len(labels), 1e-6), 1 - 1e-6)
        slope = fitted["words"].coefficients.get("similarity", 0.0)
        logit = math.log(base / (1 - base))
        words_reference = (logit - fitted["words"].intercept) / slope if slope > 0 else 0.0
        print(f"words reference similarity {words_reference:.3f} (base rate {base:.4f})")
        # The places model is fitted by its own command (fit_hint_places.py) and kept as it is.
        kept = HintCalibration.load(args.output) if args.output.is_file() else None
        calibration = HintCalibration(
            places=kept.places if kept is not None else None,
            places_source=kept.places_source if kept is not None else "",
            semantic=fitted["semantic"],
            words=fitted["words"],
            words_reference=words_reference,
            scale=fitted["scale"],
            combined=fitted["combined"],
            source=(
                f"benchmarks/fit_hint_calibration.py {' '.join(str(r) for r in args.runs)} --l2 {args.l2} --write "
                f"({len(rows)} dictionary rows"
                + (f", {len(left_out)} held out" if left_out else "")
                + f", {datetime.date.today().isoformat()})"
            ),
        )
        args.output.write_text(json.dumps(calibration.to_dict(), indent=2) + "\n", encoding="utf-8")
        print(f"wrote {args.output}")



_RETRIEVED = re.compile(r"^retrieved:#(\d+)$")


def recorded_retrieved(hints: list[dict[str, Any]]) -> list[str]:
    """The first pass's names as a run's recorded hints show them ("retrieved:#k" reasons), in rank order: what a
    replay of the lookup passes as `retrieved`."""
    ranked: list[tuple[int, str]] = []
    for hint in hints:
        for reason in hint.get("reasons") or []:
            match = _RETRIEVED.match(str(reason))
            if match:
                ranked.append((int(match.group(1)), str(hint["name"])))
    if not ranked:  # the harness keeps no reasons: the evidence value gives the order (it decays with rank)
        by_value = [
            (-float(h["evidence"]["retrieved"]), str(h["name"]))
            for h in hints
            if "retrieved" in (h.get("evidence") or {})
        ]
        return [name for _, name in sorted(by_value)]
    return [name for _, name in sorted(ranked)]


def question_vectors(questions: list[str], path: Path) -> dict[str, np.ndarray]:
    """MiniLM vectors of `questions`, cached in `path` (an .npz keyed by position in a stored list)."""
    known: dict[str, np.ndarray] = {}
    if path.is_file():
        with np.load(path, allow_pickle=False) as data:
            known = {str(q): v for q, v in zip(data["questions"], data["vectors"], strict=True)}
    todo = [q for q in dict.fromkeys(questions) if q not in known]
    if todo:
        from ...retrieval.embedders import CodeQuestionEmbedder

        embedder = CodeQuestionEmbedder()
        embedder.warm_up()
        for question in todo:
            known[question] = np.asarray(embedder.run(question=question)["vector"], dtype=np.float32)
        names = list(known)
        np.savez(path, questions=np.asarray(names, dtype=str), vectors=np.vstack([known[q] for q in names]))
    return known
