"""Which candidates get the hint list's places: a model fitted on where they stand, not a fixed share.

The hint list is capped (`HintIndex.lookup`'s `limit`, 40), and two rankings compete for it: word overlap (the
lexical score) and card similarity (`core.cards`). Reserving the 20 nearest cards a place and giving the rest to
the best word hints leaves gold names out at the 21st card or the 21st word hint while weak names of either list
are kept. Instead, the best `POOL_DEPTH` of each ranking form a pool, and a logistic model of "this candidate is a
gold symbol" rates each from its rank in both lists, its card's similarity (and gap to the nearest card), its
share of the best word score and which evidence it has. The likeliest `limit` keep their places; a name near the
top of *both* lists beats one that is 18th in one and absent from the other.

The model is fitted on SWE-QA dev and checked repository by repository (`benchmarks/fit_hint_places.py`; figures
and the command in BENCHMARKS.md 12e) and stored as ``places`` in `config/hint_calibration.json`. It only chooses
*which* names are offered; their order, score and confidence are the ones `HintIndex.lookup` gives them anyway,
so the rewrite still chooses only from the list and the faithfulness filter is unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence, Set
from dataclasses import dataclass

import numpy as np

from .calibration import Logistic

#: How deep each ranking (word overlap, card similarity) is read into the pool: 60 and 150 kept fewer gold names
#: than 100 in the repository-by-repository check (BENCHMARKS.md 12e).
POOL_DEPTH = 100
#: A rank past this (or no rank at all) counts as this: the feature is the log of the rank.
RANK_CAP = 4 * POOL_DEPTH
#: The evidence kinds the model reads, as presence (their strength is in the ranks).
PLACE_KINDS = (
    "exact",
    "fuzzy",
    "nickname",
    "alias",
    "retrieved",
    "words",
    "doc",
    "all-words",
    "abbreviation",
    "described",
)


def place_features(
    *,
    word_rank: int | None,
    word_share: float,
    card_rank: int | None,
    similarity: float | None,
    best_similarity: float,
    kinds: Iterable[str],
) -> dict[str, float]:
    """
    The features of one pool candidate.

    :param word_rank: Its 0-based rank by lexical score among the symbols with any (None: no word evidence).
    :param word_share: Its lexical score over the best one (0..1).
    :param card_rank: Its 0-based rank by card similarity (None: no card, or past `RANK_CAP`).
    :param similarity: Its card's cosine similarity to the question (None: no card).
    :param best_similarity: The nearest card's similarity.
    :param kinds: Its evidence kinds ("semantic" is ignored: the card features carry it).
    """
    present = set(kinds)
    features = {
        "word_listed": 0.0 if word_rank is None else 1.0,
        "word_log_rank": math.log1p(RANK_CAP if word_rank is None else min(word_rank, RANK_CAP)),
        "word_share": word_share,
        "card_listed": 0.0 if card_rank is None else 1.0,
        "card_log_rank": math.log1p(RANK_CAP if card_rank is None else min(card_rank, RANK_CAP)),
        "card_similarity": 0.0 if similarity is None else similarity,
        "card_gap": -1.0 if similarity is None else similarity - best_similarity,
    }
    features.update({f"has_{kind}": 1.0 if kind in present else 0.0 for kind in PLACE_KINDS})
    return features


@dataclass(frozen=True)
class PlacePool:
    """The candidates competing for the symbol places of one lookup, with their features (for fitting too)."""

    indexes: list[int]
    features: list[dict[str, float]]

    def choose(self, model: Logistic, count: int, *, exclude: Set[int] = frozenset()) -> list[int]:
        """
        The `count` candidates `model` rates likeliest gold, those in `exclude` left out; ties keep the pool's order
        (word list first).
        """
        if count <= 0:
            return []
        rated = [
            (-model(**features), position)
            for position, features in enumerate(self.features)
            if self.indexes[position] not in exclude
        ]
        return [self.indexes[position] for _, position in sorted(rated)[:count]]


def card_ranks(similarity: np.ndarray, candidates: Sequence[int], cap: int = RANK_CAP) -> dict[int, int]:
    """
    0-based rank by similarity (NaN: no card) of each candidate that has a card and ranks below `cap`.

    O(targets): only the `cap` best similarities are sorted, so a lookup stays fast on large dictionaries.
    """
    filled = np.where(np.isnan(similarity), -np.inf, similarity)
    if filled.size == 0:
        return {}
    depth = min(cap, filled.size)
    best = np.sort(np.partition(filled, filled.size - depth)[filled.size - depth :])[::-1]
    ranks: dict[int, int] = {}
    for index in candidates:
        value = filled[index]
        if not np.isfinite(value):
            continue
        # how many of the best are strictly more similar; ties share the rank
        above = int(np.searchsorted(-best, -value, side="left"))
        if above < depth:  # else it is not among the `cap` best
            ranks[index] = above
    return ranks
