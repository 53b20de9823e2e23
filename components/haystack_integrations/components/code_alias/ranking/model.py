"""The fitted ranking model and answer confidence, shipped as data (`config/ranking_model.json`).

The file holds two LightGBM LambdaMART models in LightGBM's own text format (no pickle): one orders the files (its
labels: a chunk of a gold file), one orders the symbols (a chunk defining a gold symbol); the feature names they were
fitted on (`ranking.features.FEATURES` at fitting time: a file of other features is refused, not misread), the
answer-confidence model (a logistic regression over a few facts of the ranked answer, `confidence_features`), the
abstention threshold, and its provenance: the fitting command, the data, the date and the out-of-fold figures.

`RankingModel.load()` reads the packaged file; `score(matrix)` gives each candidate's file and symbol scores;
`answer_confidence(...)` the probability that the answer's first file is right.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..core.model import atomic_write_text
from ..errors import CodeAliasError
from .answer import order
from .candidates import CandidatePool
from .features import FEATURES, INDEX

#: The packaged model.
DEFAULT_MODEL_PATH = Path(__file__).resolve().parents[1] / "config" / "ranking_model.json"
FORMAT = 1


class RankingModelError(ValueError, CodeAliasError):
    """A ranking model file that cannot be used (missing, damaged, or fitted on other features)."""


#: Facts of a ranked answer the confidence model reads (`answer_facts`); not the pool's size, which follows the
#: index's size (a small repository's pool lies far outside the dev indexes' and made nonsense look sure).
CONFIDENCE_FEATURES: tuple[str, ...] = (
    "top_score",
    "margin",
    "term_coverage",
    "best_bm25_relative",
    "best_embedding_score",
    "best_hint_confidence",
    "best_hint_similarity",
    "best_card_similarity",
)


def answer_facts(
    pool: CandidatePool, scores: np.ndarray, matrix: np.ndarray, ranked: Sequence[int] | None = None
) -> dict[str, float]:
    """
    What the confidence model reads of one ranked answer (served by `CodeRanker`, fitted by `ranking.fit`); a fact
    the answer has no evidence for (no embedding list, no hint, no card, an unknown term coverage) is NaN, which the
    model weighs as neither good nor bad.

    :param pool: The candidates (their files, and the question's term coverage).
    :param scores: The candidates' file scores.
    :param matrix: Their features (`ranking.features.feature_matrix`).
    :param ranked: The positions best first (`ranking.answer.order(scores)`), when the caller has them already.
    """
    first_of_file: dict[tuple[str | None, str], int] = {}
    for position in order(scores) if ranked is None else ranked:
        first_of_file.setdefault(pool.candidates[position].file, position)
    file_order = list(first_of_file.values())
    term_coverage = pool.context.term_coverage

    def best(name: str) -> float:
        values = matrix[:, INDEX[name]] if len(matrix) else np.zeros(0)
        values = values[~np.isnan(values)]
        return float(values.max()) if len(values) else math.nan  # absent: no such evidence in this answer

    top = float(scores[file_order[0]]) if file_order else 0.0
    second = float(scores[file_order[1]]) if len(file_order) > 1 else top - 1.0
    return {
        "top_score": top,
        "margin": top - second,
        "term_coverage": math.nan if term_coverage is None else float(term_coverage),  # None: the index cannot say
        "best_bm25_relative": best("bm25_relative_score"),
        "best_embedding_score": best("embedding_score"),
        "best_hint_confidence": best("hint_confidence"),
        "best_hint_similarity": best("hint_similarity"),
        "best_card_similarity": best("card_similarity"),
    }


@dataclass
class ConfidenceModel:
    """Logistic regression of "the first file is right" on `CONFIDENCE_FEATURES` (standardised)."""

    features: tuple[str, ...]
    mean: list[float]
    scale: list[float]
    weights: list[float]
    intercept: float

    def probability(self, facts: Mapping[str, float]) -> float:
        x = np.array([facts.get(name, math.nan) for name in self.features], dtype=np.float64)
        z = (x - np.array(self.mean)) / np.array(self.scale)
        z[np.isnan(z)] = 0.0  # an absent fact weighs nothing either way (as when fitted: `ranking.fit.fit_confidence`)
        logit = float(z @ np.array(self.weights)) + self.intercept
        return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, logit))))

    def to_dict(self) -> dict[str, Any]:
        return {
            "features": list(self.features),
            "mean": self.mean,
            "scale": self.scale,
            "weights": self.weights,
            "intercept": self.intercept,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ConfidenceModel:
        return cls(
            features=tuple(data["features"]),
            mean=[float(v) for v in data["mean"]],
            scale=[float(v) for v in data["scale"]],
            weights=[float(v) for v in data["weights"]],
            intercept=float(data["intercept"]),
        )


MODEL_KINDS: tuple[str, ...] = ("files", "symbols")


@dataclass
class RankingModel:
    """
    The candidate scorers (LightGBM text models), the answer confidence and the abstention threshold.

    :param models: "files" and "symbols" -> LightGBM's text model (`Booster.model_to_string()`).
    :param features: The feature names the boosters were fitted on, in column order.
    :param confidence: The answer-confidence model; None: answers carry no confidence and never abstain.
    :param abstain_below: An answer whose confidence is below this says that nothing matches well.
    :param provenance: How the model was fitted (command, data, date, out-of-fold figures).
    """

    models: dict[str, str]
    features: tuple[str, ...] = FEATURES
    confidence: ConfidenceModel | None = None
    abstain_below: float | None = None
    provenance: dict[str, Any] = field(default_factory=dict)
    _boosters: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_boosters(cls, boosters: Mapping[str, Any], **options: Any) -> RankingModel:
        return cls(models={kind: booster.model_to_string() for kind, booster in boosters.items()}, **options)

    def booster(self, kind: str) -> Any:
        if kind not in self._boosters:
            import lightgbm  # a runtime dependency; imported on first use so that importing the package stays cheap

            self._boosters[kind] = lightgbm.Booster(model_str=self.models[kind])
        return self._boosters[kind]

    def warm_up(self) -> None:
        for kind in self.models:
            self.booster(kind)

    def score(self, matrix: np.ndarray, kind: str = "files") -> np.ndarray:
        """Each candidate's score by one model (higher is better); an empty pool gives an empty array."""
        if len(matrix) == 0:
            return np.zeros(0)
        return np.asarray(self.booster(kind).predict(matrix, num_threads=1), dtype=np.float64)

    def answer_confidence(self, facts: Mapping[str, float]) -> float | None:
        return None if self.confidence is None else self.confidence.probability(facts)

    def abstains(self, confidence: float | None) -> bool:
        return confidence is not None and self.abstain_below is not None and confidence < self.abstain_below

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "features": list(self.features),
            "lightgbm_models": dict(self.models),
            "confidence": None if self.confidence is None else self.confidence.to_dict(),
            "abstain_below": self.abstain_below,
            "provenance": self.provenance,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, source: str = "ranking model") -> RankingModel:
        if data.get("format") != FORMAT:
            raise RankingModelError(f"{source}: format {data.get('format')!r}, expected {FORMAT}")
        features = tuple(data.get("features") or ())
        if features != FEATURES:
            missing = sorted(set(FEATURES) - set(features))
            extra = sorted(set(features) - set(FEATURES))
            raise RankingModelError(
                f"{source}: fitted on other features (missing {missing}, unknown {extra}); refit it with "
                "`python benchmarks/fit_ranking.py`"
            )
        models = data.get("lightgbm_models")
        if not isinstance(models, dict) or set(models) != set(MODEL_KINDS):
            raise RankingModelError(f"{source}: field 'lightgbm_models' must hold {list(MODEL_KINDS)}")
        for kind, text in models.items():
            if not isinstance(text, str) or not text.startswith("tree"):
                raise RankingModelError(f"{source}: lightgbm_models.{kind} is not a LightGBM text model")
        confidence = data.get("confidence")
        threshold = data.get("abstain_below")
        try:
            return cls(
                models=dict(models),
                features=features,
                confidence=ConfidenceModel.from_dict(confidence) if confidence else None,
                abstain_below=float(threshold) if threshold is not None else None,
                provenance=dict(data.get("provenance") or {}),
            )
        except (KeyError, TypeError, ValueError) as error:
            raise RankingModelError(f"{source}: field 'confidence' is malformed ({error})") from error

    @classmethod
    def load(cls, path: str | os.PathLike[str] | None = None) -> RankingModel:
        """The model in `path` (default: the packaged one)."""
        source = Path(path) if path is not None else DEFAULT_MODEL_PATH
        try:
            data = json.loads(source.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise RankingModelError(f"{source}: no ranking model there") from None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
            raise RankingModelError(f"{source}: not a readable ranking model ({error})") from error
        if not isinstance(data, dict):
            raise RankingModelError(f"{source}: not a ranking model (a JSON object is expected)")
        return cls.from_dict(data, source=str(source))

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write atomically, readable by others like any data file (`core.model.atomic_write_text`)."""
        target = Path(path)
        atomic_write_text(target, json.dumps(self.to_dict(), indent=1) + "\n", shared=True)
        return target
