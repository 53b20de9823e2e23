"""Fit the ranking stage's models (`ranking.fit`) on recorded benchmark runs, report out-of-fold, ship the model.

Each `--run NAME=FOLDER` is a `code-alias bench run ... --searcher
haystack_integrations.components.code_alias.evaluation.ranking_data:make_recording_searcher` output folder (its
`pools.jsonl` and `results.jsonl`). Folds are repositories: every figure printed and written is out of fold (each
question scored by models fitted without its repository), paired against the run's own records (the ranking the
run was made with). Then the models are fitted on everything and written, with their provenance, to `--model`.

    python benchmarks/fit_ranking.py \\
        --run sweqa=.bench-cache/runs/rec-sweqa-lexsem --run jsts=.bench-cache/runs/rec-jsts-lexsem \\
        --run lite=.bench-cache/runs/rec-lite-lexsem --run sweqa-hybrid=.bench-cache/runs/rec-sweqa-hybrid \\
        --out benchmarks/results/ranking \\
        --model components/haystack_integrations/components/code_alias/config/ranking_model.json
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import json
import shlex
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from haystack_integrations.components.code_alias.evaluation.metrics import sign_test_p_value
from haystack_integrations.components.code_alias.ranking import fit
from haystack_integrations.components.code_alias.ranking.model import CONFIDENCE_FEATURES, MODEL_KINDS, RankingModel

METRICS = ("acc@1", "acc@5", "hit@1", "hit@5", "sym_hit@1", "sym_hit@5")


def _say(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def paired_table(
    dataset: fit.Dataset, metrics: Sequence[dict[str, float]], *, group_by: tuple[str, ...] = ("set_name", "query")
) -> list[dict[str, object]]:
    """Per (set, query, rewrite): the fitted ranking's mean of each metric, the run's own, and wins / losses."""
    rows: list[dict[str, object]] = []
    keys = sorted({tuple(getattr(q, g) for g in group_by) for q in dataset.questions})
    for key in keys:
        for rewrite in ("none", "dictionary"):
            chosen = [
                (q, m)
                for q, m in zip(dataset.questions, metrics, strict=True)
                if tuple(getattr(q, g) for g in group_by) == key and q.rewrite == rewrite
            ]
            if not chosen:
                continue
            row: dict[str, object] = {"set": "/".join(key), "rewrite": rewrite, "n": len(chosen)}
            for name in METRICS:
                pairs = [(m[name], q.baseline[name]) for q, m in chosen if name in m and name in q.baseline]
                if not pairs:
                    continue
                new = 100.0 * sum(a for a, _ in pairs) / len(pairs)
                old = 100.0 * sum(b for _, b in pairs) / len(pairs)
                wins = sum(1 for a, b in pairs if a > b)
                losses = sum(1 for a, b in pairs if a < b)
                row[name] = {
                    "fitted": round(new, 1),
                    "before": round(old, 1),
                    "wins": wins,
                    "losses": losses,
                    "p": round(sign_test_p_value(wins, losses), 4),
                }
            rows.append(row)
    return rows


def lift_table(dataset: fit.Dataset, metrics: Sequence[dict[str, float]]) -> list[dict[str, object]]:
    """The rewrite's own lift under the fitted ranking: dictionary vs none on the same questions (paired)."""
    by_key: dict[tuple[str, str, str], dict[str, dict[str, float]]] = {}
    for question, values in zip(dataset.questions, metrics, strict=True):
        key = (question.set_name, question.query, f"{question.repo}:{question.item_id}")
        by_key.setdefault(key, {})[question.rewrite] = values
    rows = []
    for set_query in sorted({(s, q) for s, q, _ in by_key}):
        both = [v for k, v in by_key.items() if k[:2] == set_query and {"none", "dictionary"} <= set(v)]
        row: dict[str, object] = {"set": "/".join(set_query), "n": len(both)}
        for name in METRICS:
            pairs = [(v["dictionary"][name], v["none"][name]) for v in both if name in v["dictionary"]]
            if pairs:
                wins = sum(1 for a, b in pairs if a > b)
                losses = sum(1 for a, b in pairs if a < b)
                delta = 100.0 * sum(a - b for a, b in pairs) / len(pairs)
                row[name] = {"lift": round(delta, 1), "wins": wins, "losses": losses}
        rows.append(row)
    return rows


def _cell(value: object) -> str:
    if not isinstance(value, dict):
        return str(value)
    if "fitted" in value:
        return f"{value['fitted']:.1f} ({value['before']:.1f}; {value['wins']}/{value['losses']})"
    return f"{value['lift']:+.1f} ({value['wins']}/{value['losses']})"


def markdown(rows: Sequence[dict[str, object]], columns: Sequence[str]) -> str:
    head = "| " + " | ".join(columns) + " |\n|" + "---|" * len(columns) + "\n"
    return head + "".join("| " + " | ".join(_cell(row.get(c, "")) for c in columns) + " |\n" for row in rows)


def reliability(confidence: np.ndarray, correct: np.ndarray, path: Path, *, bins: int = 10) -> list[dict[str, float]]:
    """Predicted vs observed accuracy in equal-width bins, drawn to `path` (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    edges = np.linspace(0.0, 1.0, bins + 1)
    table = []
    for low, high in itertools.pairwise(edges):
        inside = (confidence >= low) & ((confidence < high) if high < 1.0 else (confidence <= high))
        if inside.any():
            table.append(
                {
                    "low": float(low),
                    "high": float(high),
                    "n": int(inside.sum()),
                    "predicted": float(confidence[inside].mean()),
                    "observed": float(correct[inside].mean()),
                }
            )
    figure, axis = plt.subplots(figsize=(5, 5))
    axis.plot([0, 1], [0, 1], color="grey", linestyle="--", linewidth=1, label="perfectly calibrated")
    axis.plot([r["predicted"] for r in table], [r["observed"] for r in table], marker="o", label="out of fold")
    for row in table:
        axis.annotate(
            str(row["n"]), (row["predicted"], row["observed"]), fontsize=7, xytext=(3, -9), textcoords="offset points"
        )
    axis.set_xlabel("predicted probability that the first file is right")
    axis.set_ylabel("observed share right")
    axis.set_title("Answer confidence, out of fold by repository")
    axis.legend(loc="upper left")
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return table


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run", action="append", required=True, help="NAME=FOLDER of a recording bench run")
    parser.add_argument(
        "--baseline",
        action="append",
        default=[],
        help="NAME=FOLDER: a plain bench run of the same questions on the same indexes (the ranking "
        "to compare with); default: the recording run's own records",
    )
    parser.add_argument(
        "--off-topic",
        action="append",
        default=[],
        help="NAME=FOLDER of `record_off_topic.py` output: questions asked of another repository, "
        "negatives for the confidence model only",
    )
    parser.add_argument(
        "--held-out",
        action="append",
        default=[],
        help="NAME=FOLDER of a recorded run never fitted on (e.g. the informal questions), scored by "
        "the final model and reported beside its --baseline NAME=...",
    )
    parser.add_argument(
        "--set-weight",
        action="append",
        default=[],
        help="NAME=W: that run's share of the training weight relative to the others (default: every run the same)",
    )
    parser.add_argument("--out", type=Path, required=True, help="folder for report.json, report.md, reliability.png")
    parser.add_argument("--model", type=Path, help="where to write the fitted model (default: do not write one)")
    parser.add_argument(
        "--right-abstaining",
        type=float,
        default=0.05,
        help="share of right first files that may abstain (sets the threshold)",
    )
    args = parser.parse_args(argv)
    runs = {name: Path(folder) for name, folder in (item.split("=", 1) for item in args.run)}
    baselines = {name: Path(folder) for name, folder in (item.split("=", 1) for item in args.baseline)}
    set_weights = {name: float(value) for name, value in (item.split("=", 1) for item in args.set_weight)}
    args.out.mkdir(parents=True, exist_ok=True)

    _say(f"loading {', '.join(runs)}")
    dataset = fit.load_runs(runs, baselines=baselines)
    repos = sorted({q.repo for q in dataset.questions})
    _say(f"{len(dataset.questions)} questions, {len(dataset.y)} candidates, {len(repos)} repositories (folds)")
    off_runs = {name: Path(folder) for name, folder in (item.split("=", 1) for item in args.off_topic)}
    off_topic = fit.load_runs(off_runs) if off_runs else None
    if off_topic is not None:
        repo_of = {q.corpus: q.repo for q in dataset.questions}
        for question in off_topic.questions:  # the fold of the corpus it was asked of
            question.repo = repo_of.get(question.corpus, question.repo)
        _say(f"{len(off_topic.questions)} off-topic questions for the confidence model")
    scores = {
        kind: fit.out_of_fold(
            dataset,
            fit=lambda data, chosen, kind=kind: fit.fit_ranker(data, chosen, kind=kind, set_weights=set_weights),
            progress=lambda text, kind=kind: _say(f"{kind}: {text}"),
            extra=off_topic if kind == "files" else None,
        )
        for kind in MODEL_KINDS
    }
    metrics = fit.evaluate(dataset, scores["files"], scores["symbols"])
    table = paired_table(dataset, metrics)
    by_repository = paired_table(dataset, metrics, group_by=("set_name", "query", "repo"))
    lifts = lift_table(dataset, metrics)

    facts = fit.confidence_facts(dataset, scores["files"])
    correct = np.array([m.get("hit@1", 0.0) for m in metrics]) > 0
    all_facts, all_correct, all_repos = facts, correct, [q.repo for q in dataset.questions]
    if off_topic is not None and off_topic.scores is not None:
        all_facts = np.vstack([facts, fit.confidence_facts(off_topic, off_topic.scores)])
        all_correct = np.concatenate([correct, np.zeros(len(off_topic.questions), dtype=bool)])
        all_repos = all_repos + [q.repo for q in off_topic.questions]
    every = fit.out_of_fold_confidence(all_repos, all_facts, all_correct)
    confidence = every[: len(dataset.questions)]  # the dev answers: the threshold and calibration are theirs
    off_topic_abstaining: float | None = None
    threshold = fit.abstention_threshold(confidence, correct, right_abstaining=args.right_abstaining)
    abstaining_right = float(np.mean(confidence[correct] < threshold)) if correct.any() else 0.0
    if off_topic is not None:
        off_topic_abstaining = float(np.mean(every[len(dataset.questions) :] < threshold))
    abstaining_all = float(np.mean(confidence < threshold))
    calibration = reliability(confidence, correct.astype(float), args.out / "reliability.png")
    brier = float(np.mean((confidence - correct) ** 2))

    command = " ".join(shlex.quote(part) for part in ["python", "benchmarks/fit_ranking.py", *(argv or sys.argv[1:])])
    report = {
        "command": command,
        "date": datetime.date.today().isoformat(),
        "runs": {name: str(folder) for name, folder in runs.items()},
        "baselines": {name: str(folder) for name, folder in baselines.items()},
        "questions": len(dataset.questions),
        "candidates": len(dataset.y),
        "folds": repos,
        "out_of_fold": table,
        "rewrite_lift": lifts,
        "out_of_fold_by_repository": by_repository,
        "confidence": {
            "threshold": round(threshold, 4),
            "right_first_files_abstaining": round(abstaining_right, 4),
            "all_abstaining": round(abstaining_all, 4),
            "brier": round(brier, 4),
            "off_topic_abstaining": None if off_topic_abstaining is None else round(off_topic_abstaining, 4),
            "reliability": calibration,
        },
    }
    (args.out / "report.json").write_text(json.dumps(report, indent=1), encoding="utf-8")
    columns = ["set", "rewrite", "n", *METRICS]
    text = (
        f"# Fitted ranking, out of fold by repository ({report['date']})\n\n`{command}`\n\n"
        f"{len(dataset.questions)} question rows, {len(repos)} repositories as folds. Each cell: fitted "
        "(the run's own ranking; wins/losses of the fitted one).\n\n"
        + markdown(table, columns)
        + "\n## The rewrite's lift under the fitted ranking (dictionary vs none, paired)\n\n"
        + markdown(lifts, ["set", "n", *METRICS])
        + "\n## Per repository (out of fold)\n\n"
        + markdown(by_repository, columns)
        + f"\n## Answer confidence\n\nThreshold {threshold:.3f}: {100 * abstaining_right:.1f} % of right first "
        f"files and {100 * abstaining_all:.1f} % of all dev answers abstain"
        + (f", {100 * off_topic_abstaining:.1f} % of off-topic ones" if off_topic_abstaining is not None else "")
        + f"; Brier {brier:.4f}. "
        "![reliability](reliability.png)\n"
    )
    (args.out / "report.md").write_text(text, encoding="utf-8")
    print(text)

    held_runs = {name: Path(folder) for name, folder in (item.split("=", 1) for item in args.held_out)}
    if args.model or held_runs:
        _say("fitting the final models on every question")
        boosters = {
            kind: fit.fit_ranker(dataset, dataset.questions, kind=kind, set_weights=set_weights) for kind in MODEL_KINDS
        }
        model = RankingModel.from_boosters(
            boosters,
            confidence=fit.fit_confidence(all_facts, all_correct),
            abstain_below=round(threshold, 4),
            provenance={
                "command": command,
                "date": report["date"],
                "runs": report["runs"],
                "off_topic": {name: str(folder) for name, folder in off_runs.items()},
                "questions": report["questions"],
                "folds": repos,
                "settings": {kind: fit.MODEL_SETTINGS[kind] for kind in MODEL_KINDS},
                "set_weights": set_weights,
                "out_of_fold_report": str(args.out / "report.md"),
            },
        )
        if args.model:
            _say(f"wrote {model.save(args.model)}")
        for name, folder in held_runs.items():
            held = fit.load_runs({name: folder}, baselines={name: baselines[name]} if name in baselines else None)
            held_files = model.score(held.X, "files")
            held_metrics = fit.evaluate(held, held_files, model.score(held.X, "symbols"))
            held_table, held_lifts = paired_table(held, held_metrics), lift_table(held, held_metrics)
            held_facts = fit.confidence_facts(held, held_files)
            held_abstains = np.array(
                [
                    model.abstains(model.answer_confidence(dict(zip(CONFIDENCE_FEATURES, row, strict=True))))
                    for row in held_facts
                ]
            )
            held_right = np.array([m.get("hit@1", 0.0) > 0 for m in held_metrics])
            abstaining = {
                "all": round(float(np.mean(held_abstains)), 4) if len(held_abstains) else None,
                "right_first_files": round(float(np.mean(held_abstains[held_right])), 4) if held_right.any() else None,
            }
            report.setdefault("held_out", {})[name] = {
                "table": held_table,
                "rewrite_lift": held_lifts,
                "abstaining": abstaining,
            }
            text = (
                f"\n## Held out: {name} (never fitted on; the final model)\n\n"
                + markdown(held_table, columns)
                + "\nThe rewrite's lift:\n\n"
                + markdown(held_lifts, ["set", "n", *METRICS])
                + f"\nAbstaining: {abstaining['all']} of all answers, {abstaining['right_first_files']} of right first "
                "files.\n"
            )
            with (args.out / "report.md").open("a", encoding="utf-8") as handle:
                handle.write(text)
            print(text)
        (args.out / "report.json").write_text(json.dumps(report, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
