"""Fitting the ranking model on recorded candidate pools, with folds grouped by repository.

A benchmark run with the recording searcher (`evaluation.ranking_data`) leaves `pools.jsonl` (what the ranker saw)
beside `results.jsonl` (the harness's records, with each question's gold files and symbols). `load_runs` joins
them into a `Dataset`: one row per candidate with its features (`ranking.features`) and a graded label (2 defines
a gold symbol, 1 in a gold file, 0 neither), grouped by question. `fit_ranker` fits LightGBM's LambdaMART on it;
`out_of_fold` scores every question with a model fitted without its repository, and `evaluate` turns scores into
the answer's files and symbols (`ranking.answer`, as the pipeline does) and the harness's metrics.

Fitting needs `lightgbm` (a runtime dependency: the shipped model is a LightGBM text model) and numpy.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..evaluation.metrics import file_metrics, local_name, ranked_for_metrics, symbol_metrics
from .answer import rank_pool
from .candidates import CandidatePool
from .features import FEATURES, INDEX, feature_matrix
from .model import CONFIDENCE_FEATURES, ConfidenceModel, answer_facts

#: LambdaMART settings of the shipped model (small trees: ~100k rows of a few dozen features).
DEFAULT_PARAMS: dict[str, Any] = {
    "objective": "lambdarank",
    "metric": "ndcg",
    "eval_at": [1, 5],
    "learning_rate": 0.05,
    "num_leaves": 15,
    "min_data_in_leaf": 50,
    "feature_fraction": 0.8,
    "bagging_fraction": 0.8,
    "bagging_freq": 1,
    "lambda_l2": 1.0,
    "lambdarank_truncation_level": 20,
    "verbose": -1,
    "num_threads": 2,
    "seed": 7,
    "deterministic": True,
}
DEFAULT_ROUNDS = 300


@dataclass
class Question:
    """One question of a dataset: its pool, gold, and where its rows are."""

    key: str  # set:corpus:id:query:rewrite
    set_name: str
    repo: str
    corpus: str
    item_id: str
    query: str
    rewrite: str
    pool: CandidatePool
    gold_files: list[str]
    gold_functions: list[tuple[str, str]]
    baseline: dict[str, float] = field(default_factory=dict)
    start: int = 0
    stop: int = 0


@dataclass
class Dataset:
    """Rows of candidates (features `X`, labels `y`) grouped by question (`questions[i].start:stop`)."""

    questions: list[Question]
    X: np.ndarray
    y: np.ndarray
    #: Scores given by `out_of_fold(..., extra=...)` to a dataset that was only scored.
    scores: np.ndarray | None = None

    def rows(self, questions: Sequence[Question]) -> np.ndarray:
        return np.concatenate([np.arange(q.start, q.stop) for q in questions]) if questions else np.array([], int)


def _labels(pool: CandidatePool, gold_files: Iterable[str], gold_functions: Iterable[tuple[str, str]]) -> np.ndarray:
    files = {path.lstrip("/") for path in gold_files}
    functions = {(path.lstrip("/"), name) for path, name in gold_functions}
    labels = np.zeros(len(pool.candidates), dtype=np.float64)
    for position, candidate in enumerate(pool.candidates):
        path = candidate.file_path.lstrip("/")
        if path not in files:
            continue
        labels[position] = 1.0
        name = candidate.name
        if name and (path, local_name(path, name)) in functions:
            labels[position] = 2.0
    return labels


def _baseline_metrics(folder: Path | None) -> dict[tuple[str, str, str, str], dict[str, float]]:
    """(corpus, id, query, rewrite) -> the metrics of a plain benchmark run's records (the ranking to compare with)."""
    if folder is None:
        return {}
    metrics = {}
    for line in (folder / "results.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        key = (record["corpus"], record["id"], record["query"], record["rewrite"])
        metrics[key] = dict(record.get("metrics") or {})
    return metrics


def load_runs(
    runs: Mapping[str, Path], *, retrieval: str | None = None, baselines: Mapping[str, Path] | None = None
) -> Dataset:
    """
    Join the pools and harness records of benchmark runs (name -> run folder) into one dataset.

    :param retrieval: Keep the records of this retrieval config (default: each run's first).
    :param baselines: Name -> a plain run of the same questions on the same indexes, whose metrics each question is
        compared with (`Question.baseline`; default: the recording run's own records). A question it lacks is left
        out, so every comparison is paired.
    """
    questions: list[Question] = []
    blocks: list[np.ndarray] = []
    labels: list[np.ndarray] = []
    start = 0
    for set_name, folder in runs.items():
        pools: dict[tuple[str, str, str], dict[str, Any]] = {}
        for line in (folder / "pools.jsonl").read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            pools[(row["corpus"], row["question"], row["rewrite"])] = row["pool"]
        records = [json.loads(line) for line in (folder / "results.jsonl").read_text(encoding="utf-8").splitlines()]
        wanted = retrieval or (records[0]["retrieval"] if records else None)
        baseline = _baseline_metrics((baselines or {}).get(set_name))
        for record in records:
            if record.get("retrieval") != wanted:
                continue
            compared = record.get("metrics") or {}
            if baseline:
                found_baseline = baseline.get((record["corpus"], record["id"], record["query"], record["rewrite"]))
                if found_baseline is None:
                    continue
                compared = found_baseline
            found = pools.get((record["corpus"], record["question"], record["rewrite"]))
            if found is None:
                continue
            pool = CandidatePool.from_record(found)
            functions = [(str(f), str(n)) for f, n in record.get("gold_functions") or []]
            matrix = feature_matrix(pool)
            label = _labels(pool, record.get("gold_files") or [], functions)
            question = Question(
                key=f"{set_name}:{record['corpus']}:{record['id']}:{record['query']}:{record['rewrite']}",
                set_name=set_name,
                repo=str(record.get("repo") or record["corpus"]),
                corpus=str(record["corpus"]),
                item_id=str(record["id"]),
                query=str(record["query"]),
                rewrite=str(record["rewrite"]),
                pool=pool,
                gold_files=list(record.get("gold_files") or []),
                gold_functions=functions,
                baseline=dict(compared),
                start=start,
                stop=start + len(pool.candidates),
            )
            start = question.stop
            questions.append(question)
            blocks.append(matrix)
            labels.append(label)
    X = np.vstack(blocks) if blocks else np.zeros((0, len(FEATURES)))
    y = np.concatenate(labels) if labels else np.zeros(0)
    return Dataset(questions=questions, X=X, y=y)


#: What each model learns to put first: the files model, a chunk of a gold file (2 when it also defines a gold
#: symbol, so the file's best chunk is its answer); the symbols model, a chunk defining a gold symbol.
LABELS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "files": lambda y: y,
    "symbols": lambda y: (y >= 2).astype(np.float64),
}
#: Per model: which candidates it is fitted on (the symbols model on the chunks that define something: a module
#: remainder is never a symbol of the answer).
ROWS: dict[str, Callable[[np.ndarray], np.ndarray] | None] = {
    "files": None,
    "symbols": lambda X: X[:, INDEX["defines"]] == 1.0,
}
#: Per model: LightGBM settings over `DEFAULT_PARAMS`, and boosting rounds.
MODEL_SETTINGS: dict[str, tuple[dict[str, Any], int]] = {
    "files": ({"num_leaves": 7, "min_data_in_leaf": 100, "label_gain": [0, 1, 7]}, 150),
    "symbols": ({"num_leaves": 7, "min_data_in_leaf": 100}, 150),
}


@dataclass
class TrainingRows:
    """What one model kind learns from: per question with a positive, its rows, labels and weights (`groups`: the
    number of rows of each question, in order)."""

    X: np.ndarray
    y: np.ndarray
    weights: np.ndarray
    groups: list[int]


def training_rows(
    dataset: Dataset,
    questions: Sequence[Question],
    *,
    kind: str = "files",
    set_weights: Mapping[str, float] | None = None,
) -> TrainingRows:
    """
    The rows a model of one kind (`LABELS`, `ROWS`) is fitted on: questions with no positive teach nothing to a
    ranking loss and are left out; each dev set weighs the same in total, whatever its number of questions, times its
    `set_weights` share.
    """
    label, keep = LABELS[kind], ROWS[kind]
    # Bug-report titles must not drown the "where/how" questions, nor the other way round.
    per_set: dict[str, int] = {}
    for question in questions:
        per_set[question.set_name] = per_set.get(question.set_name, 0) + 1
    blocks, labels, groups, weights = [], [], [], []
    for question in questions:
        X, y = dataset.X[question.start : question.stop], label(dataset.y[question.start : question.stop])
        if keep is not None:
            chosen = keep(X)
            X, y = X[chosen], y[chosen]
        if y.max(initial=0.0) > 0:
            blocks.append(X)
            labels.append(y)
            groups.append(len(y))
            relative = (set_weights or {}).get(question.set_name, 1.0)
            weights.append(np.full(len(y), relative * len(questions) / (len(per_set) * per_set[question.set_name])))
    return TrainingRows(
        X=np.vstack(blocks) if blocks else np.zeros((0, dataset.X.shape[1])),
        y=np.concatenate(labels) if labels else np.zeros(0),
        weights=np.concatenate(weights) if weights else np.zeros(0),
        groups=groups,
    )


def fit_ranker(
    dataset: Dataset,
    questions: Sequence[Question],
    *,
    kind: str = "files",
    params: Mapping[str, Any] | None = None,
    rounds: int | None = None,
    set_weights: Mapping[str, float] | None = None,
    feature_names: Sequence[str] = FEATURES,
) -> Any:
    """A LightGBM LambdaMART booster of one kind (`LABELS`) fitted on `questions` of `dataset` (`training_rows`).

    :param set_weights: each dev set's share of the total weight, relative to the others (a set not named: 1.0);
        by default every set weighs the same in total, whatever its number of questions.
    :param feature_names: The names of `dataset.X`'s columns (an experiment may append columns after `FEATURES`).
    """
    import lightgbm

    settings, default_rounds = MODEL_SETTINGS[kind]
    rows = training_rows(dataset, questions, kind=kind, set_weights=set_weights)
    train = lightgbm.Dataset(
        rows.X,
        label=rows.y,
        weight=rows.weights if len(rows.weights) else None,
        group=rows.groups,
        feature_name=list(feature_names),
        free_raw_data=False,
    )
    merged = {**DEFAULT_PARAMS, **settings, **(params or {})}
    return lightgbm.train(merged, train, num_boost_round=rounds or default_rounds)


def repository_folds(questions: Sequence[Question]) -> dict[str, list[Question]]:
    """Questions by repository (a fold each): a question is never scored by a model that saw its repository."""
    folds: dict[str, list[Question]] = {}
    for question in questions:
        folds.setdefault(question.repo, []).append(question)
    return folds


def out_of_fold(
    dataset: Dataset,
    *,
    fit: Callable[[Dataset, Sequence[Question]], Any] | None = None,
    progress: Callable[[str], None] | None = None,
    extra: Dataset | None = None,
) -> np.ndarray:
    """
    Every row's score from a model fitted on the other repositories' questions.

    :param extra: Rows to score with the same fold models, never fitted on (off-topic questions): each by the model
        that did not see its `repo`; their scores are written into `extra.scores`.
    """
    fit = fit or (lambda data, chosen: fit_ranker(data, chosen, kind="files"))
    scores = np.zeros(len(dataset.y))
    extra_scores = np.zeros(len(extra.y)) if extra is not None else None
    folds = repository_folds(dataset.questions)
    for repo, held_out in folds.items():
        training = [q for q in dataset.questions if q.repo != repo]
        model = fit(dataset, training)
        rows = dataset.rows(held_out)
        scores[rows] = model.predict(dataset.X[rows])
        if extra is not None and extra_scores is not None:
            others = [q for q in extra.questions if q.repo == repo]
            if others:
                extra_rows = extra.rows(others)
                extra_scores[extra_rows] = model.predict(extra.X[extra_rows])
        if progress:
            progress(f"fold {repo}: {len(held_out)} questions")
    if extra is not None:
        extra.scores = extra_scores
    return scores


def question_metrics(
    question: Question, scores: np.ndarray, symbol_scores: np.ndarray | None = None
) -> dict[str, float]:
    """The harness's file and symbol metrics of one question, ranked by `scores` (its rows)."""
    symbols, files = rank_pool(question.pool, scores, symbol_scores=symbol_scores)
    ranked_files, ranked_functions = ranked_for_metrics(
        (f["file_path"] for f in files), ((s["file_path"], s["qualified_name"]) for s in symbols)
    )
    values = file_metrics(ranked_files, question.gold_files)
    values.update(symbol_metrics(ranked_functions, question.gold_functions))
    return values


def evaluate(dataset: Dataset, scores: np.ndarray, symbol_scores: np.ndarray | None = None) -> list[dict[str, float]]:
    """Per question (dataset order): its metrics under `scores` (and `symbol_scores` for the symbols)."""
    return [
        question_metrics(
            q, scores[q.start : q.stop], None if symbol_scores is None else symbol_scores[q.start : q.stop]
        )
        for q in dataset.questions
    ]


# ---- the answer's confidence ------------------------------------------------------------------------------------
def confidence_facts(dataset: Dataset, file_scores: np.ndarray) -> np.ndarray:
    """Per question (dataset order): `model.answer_facts` of its answer under `file_scores`, as rows of
    `model.CONFIDENCE_FEATURES`."""
    rows = []
    for question in dataset.questions:
        scores = file_scores[question.start : question.stop]
        facts = answer_facts(question.pool, scores, dataset.X[question.start : question.stop])
        rows.append([facts[name] for name in CONFIDENCE_FEATURES])
    return np.array(rows, dtype=np.float64).reshape(len(dataset.questions), len(CONFIDENCE_FEATURES))


def standardisation(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each column's mean and standard deviation over its known (not NaN) values; a constant or empty column
    scales by 1."""
    known = ~np.isnan(X)
    counts = np.maximum(known.sum(axis=0), 1)
    mean = np.where(known, X, 0.0).sum(axis=0) / counts
    scale = np.sqrt(np.where(known, (X - mean) ** 2, 0.0).sum(axis=0) / counts)
    scale[~(scale > 0)] = 1.0
    return mean, scale


def fit_confidence(facts: np.ndarray, correct: np.ndarray, *, regularisation: float = 1.0) -> Any:
    """A logistic regression of "the first file is right" on standardised answer facts (`model.ConfidenceModel`)."""
    from sklearn.linear_model import LogisticRegression

    # An absent fact (NaN: no cards, no embedding list, no hint, an index that cannot tell its term coverage) is
    # left out of its column's mean and scale and weighs nothing either way (z = 0), here and in `probability`.
    mean, scale = standardisation(facts)
    regression = LogisticRegression(C=regularisation, max_iter=1000)
    regression.fit(np.where(np.isnan(facts), 0.0, (facts - mean) / scale), correct.astype(int))
    return ConfidenceModel(
        features=CONFIDENCE_FEATURES,
        mean=[float(v) for v in mean],
        scale=[float(v) for v in scale],
        weights=[float(v) for v in regression.coef_[0]],
        intercept=float(regression.intercept_[0]),
    )


def out_of_fold_confidence(repos: Sequence[str], facts: np.ndarray, correct: np.ndarray) -> np.ndarray:
    """Each answer's confidence from a model fitted on the other repositories' answers (`repos`: one per row)."""
    probabilities = np.zeros(len(repos))
    by_repo = np.array(repos)
    for repo in sorted(set(repos)):
        held = by_repo == repo
        model = fit_confidence(facts[~held], correct[~held])
        probabilities[held] = [model.probability(dict(zip(model.features, row, strict=True))) for row in facts[held]]
    return probabilities


def abstention_threshold(confidence: np.ndarray, correct: np.ndarray, *, right_abstaining: float = 0.05) -> float:
    """The highest threshold below which at most `right_abstaining` of the answers whose first file is right fall."""
    right = np.sort(confidence[correct.astype(bool)])
    if not len(right):
        return 0.0
    allowed = int(np.floor(right_abstaining * len(right)))
    return float(right[allowed]) if allowed < len(right) else float(right[-1])
