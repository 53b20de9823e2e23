"""How much semantic evidence counts: small logistic models fitted on the dev sets, not hand-set weights.

`benchmarks/fit_hint_calibration.py` fits them from benchmark runs (`results.jsonl` rows record every hint offered
with its evidence and card similarity, `evaluation.runner`) and writes `config/hint_calibration.json`; the fitting
command and the coefficients are in BENCHMARKS.md. Two models:

- ``semantic``: P(this hint is a gold symbol | it is among the nearest cards), from its cosine similarity to the
  question and its rank among the cards; the confidence of "semantic" evidence.
- ``words``: P(gold | a hint backed only by shared words), from the same similarity; a word-overlap hint whose card
  is far from the question loses confidence in proportion (`word_factor`), one that is near keeps it.
- ``combined``: P(gold | every piece of evidence of a hint): the lexical kinds' hand-set values, the semantic
  features when it is among the nearest cards, and its card's similarity whatever its evidence. Where the index has
  cards it replaces the hand-set noisy-OR combination (`rewriting.hints`), mapped onto the same scale (``scale``).
- ``places``: P(gold | where a candidate stands in the word and card rankings, and its evidence kinds): which
  candidates get the capped hint list's places (`rewriting.hints.places`; fitted by `benchmarks/fit_hint_places.py`).
- ``scale``: P(gold | the hand-set noisy-OR confidence) of the hints without semantic evidence. A semantic hint's
  P(gold) is turned into the confidence that lexical hints *equally often right* have (the inverse of `scale`), so
  the thresholds downstream (`rewriting.rewrite.STRONG_CONFIDENCE`, the ranking stage) read both kinds alike.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

#: Semantic evidence never reaches the confidence of an identifier written out (0.95): it is a guess.
MAX_SEMANTIC_CONFIDENCE = 0.9
#: A hint's fitted confidence from all its evidence stops where an identifier written out starts.
MAX_FITTED_CONFIDENCE = 0.95
CALIBRATION_FILE = Path(__file__).resolve().parents[2] / "config" / "hint_calibration.json"


def _sigmoid(value: float) -> float:
    if value >= 0:
        return 1.0 / (1.0 + math.exp(-value))
    exp = math.exp(value)
    return exp / (1.0 + exp)


@dataclass(frozen=True)
class Logistic:
    """``sigmoid(intercept + sum(coefficient * feature))`` over named features."""

    intercept: float
    coefficients: dict[str, float] = field(default_factory=dict)

    def __call__(self, **features: float) -> float:
        return _sigmoid(self.intercept + sum(self.coefficients.get(k, 0.0) * v for k, v in features.items()))

    def to_dict(self) -> dict[str, Any]:
        return {"intercept": self.intercept, "coefficients": dict(self.coefficients)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Logistic:
        return cls(
            intercept=float(data["intercept"]),
            coefficients={str(k): float(v) for k, v in dict(data.get("coefficients") or {}).items()},
        )


def semantic_features(similarity: float, rank: int, best: float) -> dict[str, float]:
    """
    The features of a semantic candidate: its similarity and the log of its 1-based rank among the cards. (`best`,
    the nearest card's similarity, is kept in the signature: a gap-to-best feature was tried and dropped, its
    fitted sign said a card *further* below the best is likelier gold, a question-level artefact.)
    """
    return {"similarity": similarity, "log_rank": math.log(rank + 1)}


#: The lexical evidence kinds the combined model reads (their hand-set values, `rewriting.hints.EVIDENCE_CONFIDENCE`).
LEXICAL_KINDS = ("exact", "fuzzy", "nickname", "alias", "retrieved", "package", "all-words", "words", "doc")


def combined_features(
    evidence: dict[str, float], semantic: tuple[float, int, float] | None, similarity: float | None
) -> dict[str, float]:
    """The features of the combined model (`HintCalibration.combined`)."""
    features = {kind: float(evidence.get(kind, 0.0)) for kind in LEXICAL_KINDS}
    near = semantic_features(*semantic) if semantic is not None else {"similarity": 0.0, "log_rank": 0.0}
    features.update({"semantic": 1.0 if semantic is not None else 0.0, **{f"semantic_{k}": v for k, v in near.items()}})
    features["card_similarity"] = similarity if similarity is not None else 0.0
    return features


@dataclass(frozen=True)
class HintCalibration:
    """
    The fitted models (module docstring).

    :param semantic: P(gold) of a semantic candidate.
    :param words: P(gold) of a word-overlap-only hint from its card's similarity; None = no damping.
    :param words_reference: The similarity at which `words` gives a word hint its full confidence back.
    :param scale: P(gold) of a lexical hint from its hand-set confidence (maps fitted P(gold) onto that scale).
    :param combined: P(gold) of a hint from all its evidence.
    :param places: P(gold) of a pool candidate from its ranks (`rewriting.hints.places`); None = the nearest cards keep
        reserved places.
    :param source: How the models were fitted (command, data, date), shown in reports.
    :param places_source: How `places` was fitted (it is fitted by its own command).
    """

    semantic: Logistic
    words: Logistic | None = None
    words_reference: float = 0.5
    scale: Logistic | None = None
    combined: Logistic | None = None
    places: Logistic | None = None
    source: str = ""
    places_source: str = ""

    def hint_confidence(
        self, evidence: dict[str, float], semantic: tuple[float, int, float] | None, similarity: float | None
    ) -> float | None:
        """
        The fitted confidence of a hint (`combined` on the noisy-OR scale), or None without a `combined` model.

        :param evidence: Its lexical evidence (kind -> hand-set value); "semantic" is ignored (see `semantic`).
        :param semantic: (similarity, rank, best) when it is among the nearest cards.
        :param similarity: Its card's similarity to the question (None: no card).
        """
        if self.combined is None:
            return None
        features = combined_features(evidence, semantic, similarity)
        return self.on_confidence_scale(self.combined(**features), ceiling=MAX_FITTED_CONFIDENCE)

    def on_confidence_scale(self, probability: float, ceiling: float | None = None) -> float:
        """A P(gold) as the confidence that lexical hints equally often right have (the inverse of `scale`)."""
        slope = self.scale.coefficients.get("confidence", 0.0) if self.scale is not None else 0.0
        if self.scale is None or slope <= 0:
            return probability
        probability = min(max(probability, 1e-9), 1 - 1e-9)
        logit = math.log(probability / (1 - probability))
        top = MAX_SEMANTIC_CONFIDENCE if ceiling is None else ceiling
        return min(top, max(0.0, (logit - self.scale.intercept) / slope))

    def semantic_probability(self, similarity: float, rank: int, best: float) -> float:
        """P(gold) of the `rank`-th nearest card (0-based) at `similarity`, the nearest being at `best`."""
        return self.semantic(**semantic_features(similarity, rank, best))

    def semantic_confidence(self, similarity: float, rank: int, best: float) -> float:
        """The confidence of semantic evidence: its P(gold) on the lexical hints' confidence scale (`scale`)."""
        return self.on_confidence_scale(self.semantic_probability(similarity, rank, best))

    def word_factor(self, similarity: float) -> float:
        """In [0, 1]: how much of its word confidence a word-only hint keeps at this card similarity."""
        if self.words is None:
            return 1.0
        reference = self.words(similarity=self.words_reference)
        return min(1.0, self.words(similarity=similarity) / reference) if reference > 0 else 1.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "semantic": self.semantic.to_dict(),
            "words": self.words.to_dict() if self.words is not None else None,
            "words_reference": self.words_reference,
            "scale": self.scale.to_dict() if self.scale is not None else None,
            "combined": self.combined.to_dict() if self.combined is not None else None,
            "places": self.places.to_dict() if self.places is not None else None,
            "source": self.source,
            "places_source": self.places_source,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> HintCalibration:
        words = data.get("words")
        scale = data.get("scale")
        combined = data.get("combined")
        places = data.get("places")
        return cls(
            places=Logistic.from_dict(places) if places else None,
            combined=Logistic.from_dict(combined) if combined else None,
            scale=Logistic.from_dict(scale) if scale else None,
            semantic=Logistic.from_dict(data["semantic"]),
            words=Logistic.from_dict(words) if words else None,
            words_reference=float(data.get("words_reference", 0.5)),
            source=str(data.get("source", "")),
            places_source=str(data.get("places_source", "")),
        )

    @classmethod
    def load(cls, path: Path = CALIBRATION_FILE) -> HintCalibration:
        """
        :raises ValueError: The file is not a calibration (named).
        """
        try:
            return cls.from_dict(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise ValueError(f"{path}: not a hint calibration ({error})") from error


def fit_logistic(rows: list[dict[str, float]], labels: list[int], *, l2: float = 1.0, steps: int = 50) -> Logistic:
    """
    Logistic regression by Newton's method with an L2 penalty (not on the intercept): small, exact, no new
    dependency. Features are the keys of the first row.

    :param rows: Feature dicts, one per example.
    :param labels: 1 (gold) or 0, one per row.
    :raises ValueError: No rows, or only one class.
    """
    if not rows or len(rows) != len(labels):
        raise ValueError("fit_logistic needs as many labels as rows, and at least one row")
    if len(set(labels)) < 2:
        raise ValueError("fit_logistic needs examples of both classes")
    names = list(rows[0])
    x = np.array([[1.0] + [float(row.get(n, 0.0)) for n in names] for row in rows])
    y = np.asarray(labels, dtype=float)
    weights = np.zeros(x.shape[1])
    penalty = np.eye(x.shape[1]) * l2
    penalty[0, 0] = 0.0
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-(x @ weights)))
        gradient = x.T @ (p - y) + penalty @ weights
        hessian = (x.T * (p * (1 - p))) @ x + penalty
        step = np.linalg.solve(hessian, gradient)
        weights -= step
        if float(np.max(np.abs(step))) < 1e-8:
            break
    return Logistic(
        intercept=float(weights[0]), coefficients={n: float(w) for n, w in zip(names, weights[1:], strict=True)}
    )
