"""How much do the ranking's out-of-fold figures owe to LightGBM's seed, and would graph centrality earn a place?

Fits the shipped settings (`ranking.fit.MODEL_SETTINGS`) out of fold by repository on recorded runs (the same
`--run` / `--set-weight` as `fit_ranking.py`), once per `--seeds` value, and, with `--graph-indexes`, once more with
four columns of the reference graph appended to the features (`ReferenceGraph.centrality()` of each corpus's cached
index: the symbol's in-degree and PageRank rank share, its file's summed in-degree and best share). One row per
variant of the figures the ranking issue's targets name, and the seeds' spread (lowest - highest): a difference
between two fits inside that spread is the seed's, not the change's. `--params KIND=JSON` / `--rounds KIND=N`
fit other LightGBM settings (every variant of the run); `--learner logistic|pairwise` fits scikit-learn logistic
models on the same rows and weights instead (`ranking/linear.py`). Nothing is shipped: the graph columns and the
linear learners exist only here (the pipeline's ranker does not compute or load them).

    python benchmarks/ranking_variants.py \\
        --run sweqa=CACHE/runs/refit-sweqa-lexsem --run lite=CACHE/runs/refit-lite-lexsem \\
        --run jsts=CACHE/runs/refit-jsts-lexsem --run sweqa-hybrid=CACHE/runs/refit-sweqa-hybrid \\
        --set-weight sweqa=2 --seeds 7,1,2,3,4 --graph-indexes CACHE/indexes/lexical \\
        --out benchmarks/results/ranking-variants
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import shlex
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from fit_ranking import lift_table

from haystack_integrations.components.code_alias.ranking import fit
from haystack_integrations.components.code_alias.ranking.features import FEATURES
from haystack_integrations.components.code_alias.ranking.linear import LEARNERS, fitter
from haystack_integrations.components.code_alias.ranking.model import MODEL_KINDS

GRAPH_FEATURES = ("graph_in_degree", "graph_pagerank_share", "file_graph_in_degree", "file_graph_pagerank_share")
#: (column, set, query, metric): a mean over the dictionary rows; "lift:" a paired dictionary-vs-none difference.
FIGURES: tuple[tuple[str, str, str, str], ...] = (
    ("SWE-QA Acc@1", "sweqa", "title", "acc@1"),
    ("SWE-QA sym hit@5", "sweqa", "title", "sym_hit@5"),
    ("SWE-QA lift sym hit@5", "sweqa", "title", "lift:sym_hit@5"),
    ("hybrid Acc@1", "sweqa-hybrid", "title", "acc@1"),
    ("hybrid sym hit@5", "sweqa-hybrid", "title", "sym_hit@5"),
    ("hybrid lift hit@1", "sweqa-hybrid", "title", "lift:hit@1"),
    ("hybrid lift sym hit@1", "sweqa-hybrid", "title", "lift:sym_hit@1"),
    ("Lite titles Acc@1", "lite", "title", "acc@1"),
    ("Lite titles sym hit@1", "lite", "title", "sym_hit@1"),
    ("Lite full Acc@1", "lite", "full", "acc@1"),
    ("Lite full sym hit@1", "lite", "full", "sym_hit@1"),
    ("JS/TS titles Acc@1", "jsts", "title", "acc@1"),
    ("JS/TS full Acc@1", "jsts", "full", "acc@1"),
)


def _say(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def figures(dataset: fit.Dataset, metrics: Sequence[dict[str, float]]) -> dict[str, dict[str, float]]:
    """Each `FIGURES` column: {"value": mean in points} or, for a lift (`fit_ranking.lift_table`), {"value", "wins",
    "losses"}."""
    lifts = {str(row["set"]): row for row in lift_table(dataset, metrics)}
    out: dict[str, dict[str, float]] = {}
    for column, set_name, query, metric in FIGURES:
        if metric.startswith("lift:"):
            lift = lifts.get(f"{set_name}/{query}", {}).get(metric.split(":", 1)[1])
            if isinstance(lift, dict):
                out[column] = {"value": lift["lift"], "wins": lift["wins"], "losses": lift["losses"]}
            continue
        values = [
            m[metric]
            for q, m in zip(dataset.questions, metrics, strict=True)
            if (q.set_name, q.query, q.rewrite) == (set_name, query, "dictionary") and metric in m
        ]
        if values:
            out[column] = {"value": round(100 * float(np.mean(values)), 1)}
    return out


def graph_columns(dataset: fit.Dataset, indexes: Sequence[Path]) -> tuple[np.ndarray, float]:
    """The `GRAPH_FEATURES` of every row (log2(1 + in-degree); a module remainder has no symbol columns: NaN), and
    the share of defining candidates the graph knows."""
    from haystack_integrations.components.code_alias.core.graph import ReferenceGraph
    from haystack_integrations.components.code_alias.indexing.index_delta import load_index_dictionary
    from haystack_integrations.components.code_alias.paths import DICTIONARY_FILE, has_index

    columns = np.full((len(dataset.y), len(GRAPH_FEATURES)), np.nan)
    known = named = 0
    by_corpus: dict[str, list[fit.Question]] = {}
    for question in dataset.questions:
        by_corpus.setdefault(question.corpus, []).append(question)
    for number, (corpus, questions) in enumerate(sorted(by_corpus.items()), 1):
        folder = next((root / corpus for root in indexes if has_index(root / corpus)), None)
        if folder is None:
            raise SystemExit(f"--graph-indexes: no index of corpus {corpus!r} in {', '.join(map(str, indexes))}")
        centrality = ReferenceGraph(load_index_dictionary(folder / DICTIONARY_FILE)).centrality()
        symbols: dict[tuple[str, str], tuple[int, float]] = {}
        files: dict[str, list[float]] = {}
        for key, degree in centrality.in_degree.items():
            share = centrality.rank_share.get(key, 0.0)
            symbols[(key[1], key[2])] = (degree, share)
            summed = files.setdefault(key[1], [0.0, 0.0])
            summed[0] += degree
            summed[1] = max(summed[1], share)
        for question in questions:
            for position, candidate in enumerate(question.pool.candidates):
                row = question.start + position
                degree_sum, best_share = files.get(candidate.file_path, (0.0, 0.0))
                columns[row, 2:] = (math.log2(1 + degree_sum), best_share)
                if candidate.qualified_name:
                    named += 1
                    found = symbols.get((candidate.file_path, candidate.qualified_name))
                    known += found is not None
                    degree, share = found or (0, 0.0)
                    columns[row, :2] = (math.log2(1 + degree), share)
        _say(f"graph {number}/{len(by_corpus)}: {corpus}")
    return columns, known / max(named, 1)


def out_of_fold(
    dataset: fit.Dataset,
    set_weights: dict[str, float],
    *,
    learner: str,
    seed: int,
    feature_names: Sequence[str],
    params: dict[str, dict[str, Any]],
    rounds: dict[str, int],
) -> list[dict[str, float]]:
    scores = {
        kind: fit.out_of_fold(
            dataset,
            fit=fitter(
                learner,
                kind,
                set_weights=set_weights,
                seed=seed,
                params=params.get(kind),
                rounds=rounds.get(kind),
                feature_names=feature_names,
            ),
        )
        for kind in MODEL_KINDS
    }
    return fit.evaluate(dataset, scores["files"], scores["symbols"])


def _cell(figure: dict[str, float] | None) -> str:
    if figure is None:
        return ""
    if "wins" in figure:
        return f"{figure['value']:+.1f} ({figure['wins']:.0f}/{figure['losses']:.0f})"
    return f"{figure['value']:.1f}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run", action="append", required=True, help="NAME=FOLDER of a recording bench run")
    parser.add_argument("--set-weight", action="append", default=[], help="NAME=W, as in fit_ranking.py")
    parser.add_argument("--seeds", default="7", help="LightGBM seeds, comma-separated (the shipped one: 7)")
    parser.add_argument(
        "--graph-indexes", type=Path, action="append", default=[], help="folders of the runs' cached indexes"
    )
    parser.add_argument(
        "--params",
        action="append",
        default=[],
        help="KIND=JSON: LightGBM settings over the shipped ones for that model, e.g. files='{\"num_leaves\": 31}'",
    )
    parser.add_argument("--rounds", action="append", default=[], help="KIND=N: boosting rounds for that model")
    parser.add_argument(
        "--learner",
        choices=LEARNERS,
        default="lambdamart",
        help="the shipped LightGBM LambdaMART, or a pointwise / pairwise logistic model (ranking/linear.py)",
    )
    parser.add_argument("--out", type=Path, required=True, help="folder for report.json and report.md")
    args = parser.parse_args(argv)
    params = {kind: json.loads(value) for kind, value in (item.split("=", 1) for item in args.params)}
    rounds = {kind: int(value) for kind, value in (item.split("=", 1) for item in args.rounds)}
    for kind in (*params, *rounds):
        if kind not in MODEL_KINDS:
            parser.error(f"--params / --rounds: no model {kind!r} (one of {', '.join(MODEL_KINDS)})")
    runs = {name: Path(folder) for name, folder in (item.split("=", 1) for item in args.run)}
    set_weights = {name: float(value) for name, value in (item.split("=", 1) for item in args.set_weight)}
    seeds = [int(seed) for seed in args.seeds.split(",") if seed]
    shipped_seed = int(fit.DEFAULT_PARAMS["seed"])
    args.out.mkdir(parents=True, exist_ok=True)

    _say(f"loading {', '.join(runs)}")
    dataset = fit.load_runs(runs)
    rows: list[tuple[str, dict[str, dict[str, float]]]] = []
    for seed in seeds:
        _say(f"seed {seed}: fitting out of fold")
        metrics = out_of_fold(
            dataset,
            set_weights,
            learner=args.learner,
            seed=seed,
            feature_names=FEATURES,
            params=params,
            rounds=rounds,
        )
        rows.append((f"seed {seed}", figures(dataset, metrics)))
    graph_known: float | None = None
    if args.graph_indexes:
        columns, graph_known = graph_columns(dataset, args.graph_indexes)
        plain = dataset.X
        dataset.X = np.hstack([plain, columns])
        _say(f"graph centrality, seed {shipped_seed}: fitting out of fold")
        metrics = out_of_fold(
            dataset,
            set_weights,
            learner=args.learner,
            seed=shipped_seed,
            feature_names=(*FEATURES, *GRAPH_FEATURES),
            params=params,
            rounds=rounds,
        )
        dataset.X = plain
        rows.append((f"graph centrality, seed {shipped_seed}", figures(dataset, metrics)))

    seed_rows = [found for variant, found in rows if variant.startswith("seed ")]
    spread: dict[str, str] = {}
    for column, *_ in FIGURES:
        values = [found[column]["value"] for found in seed_rows if column in found]
        if len(values) > 1:
            spread[column] = f"{min(values):.1f} - {max(values):.1f}"
    command = " ".join(
        shlex.quote(part) for part in ["python", "benchmarks/ranking_variants.py", *(argv or sys.argv[1:])]
    )
    report = {
        "command": command,
        "date": datetime.date.today().isoformat(),
        "questions": len(dataset.questions),
        "learner": args.learner,
        "variants": [{"variant": variant, "figures": found} for variant, found in rows],
        "seed_spread": spread,
        "graph_symbols_known": None if graph_known is None else round(graph_known, 4),
    }
    (args.out / "report.json").write_text(json.dumps(report, indent=1), encoding="utf-8")
    names = [column for column, *_ in FIGURES]
    lines = ["| variant | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    for variant, found in rows:
        lines.append(f"| {variant} | " + " | ".join(_cell(found.get(name)) for name in names) + " |")
    if spread:
        lines.append("| seeds' spread | " + " | ".join(spread.get(name, "") for name in names) + " |")
    text = (
        f"# The ranking out of fold ({args.learner}): seeds and graph centrality ({report['date']})\n\n`{command}`\n\n"
        f"{len(dataset.questions)} question rows; dictionary rewrite, lifts paired against no rewrite "
        "(wins/losses).\n\n"
        + "\n".join(lines)
        + "\n"
        + (
            f"\nThe graph knows {100 * graph_known:.1f} % of the defining candidates.\n"
            if graph_known is not None
            else ""
        )
    )
    (args.out / "report.md").write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
