"""Linear rankers with scikit-learn, measured against the shipped LambdaMART (`benchmarks/ranking_variants.py
--learner`; not shipped: BENCHMARKS.md 21).

The ranking issue asks for LightGBM's LambdaMART or a pointwise / pairwise logistic model, whichever measures
better. Both linear models here learn from exactly the rows and weights LambdaMART does (`fit.training_rows`):

- `logistic`: pointwise, "is this candidate a positive" (a chunk of a gold file for the files model, a gold
  symbol's definition for the symbols model; a gold symbol in a gold file counts 7 times, LambdaMART's label gain);
- `pairwise`: RankNet-style logistic regression on feature differences, a positive against up to 20 negatives of
  the same question (drawn with the seed), in both orders.

Features are standardised over their known values; a missing value (NaN: the candidate is not in that list, no hint
names it) scores 0 there and sets an indicator column of its own, as LightGBM treats missing values as their own case.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import fit

LEARNERS = ("lambdamart", "logistic", "pairwise")
#: Negatives drawn per positive for the pairwise model.
NEGATIVES_PER_POSITIVE = 20
#: How much more a gold symbol's chunk counts than another chunk of a gold file (LambdaMART's label gain 7 vs 1).
GOLD_SYMBOL_WEIGHT = 7.0


@dataclass
class LinearRanker:
    """A linear score over standardised features and missing-value indicators (`predict`, as a LightGBM booster)."""

    mean: np.ndarray
    scale: np.ndarray
    missing_columns: np.ndarray
    coefficients: np.ndarray
    intercept: float

    def transform(self, X: np.ndarray) -> np.ndarray:
        known = ~np.isnan(X)
        standardised = np.where(known, (X - self.mean) / self.scale, 0.0)
        return np.hstack([standardised, (~known[:, self.missing_columns]).astype(np.float64)])

    def predict(self, X: np.ndarray) -> np.ndarray:
        return self.transform(X) @ self.coefficients + self.intercept


def fit_linear(
    dataset: fit.Dataset,
    questions: Sequence[fit.Question],
    *,
    kind: str,
    learner: str,
    set_weights: Mapping[str, float] | None = None,
    seed: int = 7,
    regularisation: float = 1.0,
) -> LinearRanker:
    """A `logistic` or `pairwise` linear ranker of one kind fitted on `questions` (module docstring)."""
    from sklearn.linear_model import LogisticRegression

    if learner not in ("logistic", "pairwise"):
        raise ValueError(f"learner must be 'logistic' or 'pairwise', got {learner!r}")
    rows = fit.training_rows(dataset, questions, kind=kind, set_weights=set_weights)
    mean, scale = fit.standardisation(rows.X)
    unfitted = LinearRanker(mean, scale, np.flatnonzero(np.isnan(rows.X).any(axis=0)), np.zeros(0), 0.0)
    Z = unfitted.transform(rows.X)
    regression = LogisticRegression(C=regularisation, max_iter=2000, fit_intercept=learner == "logistic")
    if learner == "logistic":
        weights = rows.weights * np.where(rows.y >= 2, GOLD_SYMBOL_WEIGHT, 1.0)
        regression.fit(Z, (rows.y > 0).astype(int), sample_weight=weights)
    else:
        differences, weights = _pairs(Z, rows, np.random.default_rng(seed))
        targets = np.concatenate([np.ones(len(differences)), np.zeros(len(differences))]).astype(int)
        regression.fit(np.vstack([differences, -differences]), targets, sample_weight=np.concatenate([weights] * 2))
    intercept = float(regression.intercept_[0]) if learner == "logistic" else 0.0
    return dataclasses.replace(unfitted, coefficients=regression.coef_[0], intercept=intercept)


def _pairs(Z: np.ndarray, rows: fit.TrainingRows, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Per question: each candidate against up to `NEGATIVES_PER_POSITIVE` of lower label, as feature differences."""
    differences: list[np.ndarray] = []
    weights: list[np.ndarray] = []
    start = 0
    for size in rows.groups:
        labels = rows.y[start : start + size]
        block = Z[start : start + size]
        weight = rows.weights[start]
        for level in np.unique(labels[labels > 0]):
            better = np.flatnonzero(labels == level)
            worse = np.flatnonzero(labels < level)
            if not len(worse):
                continue
            for position in better:
                drawn = rng.choice(worse, size=min(NEGATIVES_PER_POSITIVE, len(worse)), replace=False)
                differences.append(block[position] - block[drawn])
                weights.append(np.full(len(drawn), weight))
        start += size
    if not differences:
        return np.zeros((0, Z.shape[1])), np.zeros(0)
    return np.vstack(differences), np.concatenate(weights)


def fitter(
    learner: str,
    kind: str,
    *,
    set_weights: Mapping[str, float],
    seed: int,
    params: Mapping[str, Any] | None = None,
    rounds: int | None = None,
    feature_names: Sequence[str] = fit.FEATURES,
) -> Callable[[fit.Dataset, Sequence[fit.Question]], Any]:
    """A `fit.out_of_fold` fit function of one learner and model kind (`params`, `rounds`: LambdaMART's only)."""
    settings = {**(params or {}), "seed": seed}

    def fit_one(data: fit.Dataset, chosen: Sequence[fit.Question]) -> Any:
        if learner == "lambdamart":
            return fit.fit_ranker(
                data,
                chosen,
                kind=kind,
                set_weights=set_weights,
                params=settings,
                rounds=rounds,
                feature_names=feature_names,
            )
        return fit_linear(data, chosen, kind=kind, learner=learner, set_weights=set_weights, seed=seed)

    return fit_one
