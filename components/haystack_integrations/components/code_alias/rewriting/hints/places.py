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
from collections.abc import Iterable, Mapping, Set
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .calibration import Logistic
from .kinds import LookupEvidence, nearest_targets, unique_ints

if TYPE_CHECKING:
    from .index import HintIndex

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


#: The model's features, in the order of `PlacePool.matrix`'s columns.
FEATURES: tuple[str, ...] = (
    "word_listed",
    "word_log_rank",
    "word_share",
    "card_listed",
    "card_log_rank",
    "card_similarity",
    "card_gap",
    *(f"has_{kind}" for kind in PLACE_KINDS),
)


def place_matrix(
    *,
    word_rank: np.ndarray,
    word_share: np.ndarray,
    card_rank: np.ndarray,
    similarity: np.ndarray,
    best_similarity: float,
    kinds: Mapping[str, np.ndarray],
) -> np.ndarray:
    """
    The features (`FEATURES`, one row per candidate) of pool candidates, computed as arrays: a lookup rates
    about 200 of them, and a Python loop over dicts cost several milliseconds on large dictionaries.

    :param word_rank: 0-based rank by lexical score among the symbols with any; -1: no word evidence.
    :param word_share: Lexical score over the best one (0..1).
    :param card_rank: 0-based rank by card similarity; -1: no card, or past `RANK_CAP`.
    :param similarity: The card's cosine similarity to the question; NaN: no card.
    :param best_similarity: The nearest card's similarity.
    :param kinds: Evidence kind -> whether each candidate has it (kinds not in `PLACE_KINDS` are ignored).
    """
    count = len(word_rank)
    word_listed = word_rank >= 0
    card_listed = card_rank >= 0
    has_card = ~np.isnan(similarity)
    columns = [
        word_listed.astype(float),
        np.log1p(np.where(word_listed, np.minimum(word_rank, RANK_CAP), RANK_CAP)),
        np.asarray(word_share, dtype=float),
        card_listed.astype(float),
        np.log1p(np.where(card_listed, np.minimum(card_rank, RANK_CAP), RANK_CAP)),
        np.where(has_card, similarity, 0.0),
        np.where(has_card, similarity - best_similarity, -1.0),
    ]
    columns += [np.asarray(kinds.get(kind, np.zeros(count, dtype=bool)), dtype=float) for kind in PLACE_KINDS]
    return np.column_stack(columns) if count else np.zeros((0, len(FEATURES)))


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
    The features of one candidate, by name (`place_matrix` for one row; "semantic" is ignored: the card features
    carry it).
    """
    present = set(kinds)
    row = place_matrix(
        word_rank=np.array([-1 if word_rank is None else word_rank]),
        word_share=np.array([word_share]),
        card_rank=np.array([-1 if card_rank is None else card_rank]),
        similarity=np.array([math.nan if similarity is None else similarity]),
        best_similarity=best_similarity,
        kinds={kind: np.array([kind in present]) for kind in PLACE_KINDS},
    )[0]
    return {name: float(value) for name, value in zip(FEATURES, row, strict=True)}


@dataclass(frozen=True)
class PlacePool:
    """The candidates competing for the symbol places of one lookup, with their features (for fitting too)."""

    indexes: list[int]
    matrix: np.ndarray  # one row per candidate, columns `FEATURES`

    @property
    def features(self) -> list[dict[str, float]]:
        """Each candidate's features by name (what `fit_logistic` reads)."""
        return [{name: float(v) for name, v in zip(FEATURES, row, strict=True)} for row in self.matrix]

    def choose(self, model: Logistic, count: int, *, exclude: Set[int] = frozenset()) -> list[int]:
        """
        The `count` candidates `model` rates likeliest gold, those in `exclude` left out; ties keep the pool's order
        (word list first).
        """
        if count <= 0 or not self.indexes:
            return []
        weights = np.array([model.coefficients.get(name, 0.0) for name in FEATURES])
        logits = self.matrix @ weights + model.intercept  # the sigmoid keeps the order: rank by the logit
        order = np.lexsort((np.arange(len(self.indexes)), -logits))
        chosen = []
        for position in order:
            index = self.indexes[int(position)]
            if index not in exclude:
                chosen.append(index)
                if len(chosen) == count:
                    break
        return chosen


def card_ranks(nearest: np.ndarray, values: np.ndarray) -> np.ndarray:
    """
    0-based rank by card similarity of candidates with similarities `values` (NaN: no card), given `nearest`, the
    best similarities in descending order (all of them, or the first `RANK_CAP`): the number strictly more
    similar, so ties share a rank; -1 for no card or one less similar than all of `nearest`.
    """
    values = np.asarray(values, dtype=float)
    ranks = np.full(len(values), -1, dtype=np.int64)
    if len(nearest) == 0 or len(values) == 0:
        return ranks
    above = np.searchsorted(-np.asarray(nearest, dtype=float), -values, side="left")
    keep = ~np.isnan(values) & (above < len(nearest))
    ranks[keep] = above[keep]
    return ranks


def pool_of(index: HintIndex, found: LookupEvidence) -> PlacePool:
    """The best `POOL_DEPTH` symbols by word score (sparse kinds but "semantic" included) and by card similarity,
    with their place features."""
    assert found.card_scores is not None and found.words_only is not None  # a pool needs cards
    card_scores = found.card_scores
    lexical = found.words_only.copy()
    for target, amount in found.credits.lexical.items():
        lexical[target] += amount
    symbol_scores = np.where(index.symbol_mask, card_scores, np.nan)
    by_words = index.best(lexical, (lexical > 0) & index.symbol_mask, POOL_DEPTH)
    nearest = nearest_targets(symbol_scores, RANK_CAP, -1.0)  # the card ranks' reference too
    by_cards = nearest[:POOL_DEPTH]
    indexes = unique_ints([*by_words, *by_cards])  # the word list first, in its order
    positions = np.asarray(indexes, dtype=np.int64)
    order = np.arange(len(indexes))
    top = float(lexical[by_words[0]]) if by_words else 0.0
    values = lexical[positions]
    matrix = place_matrix(
        word_rank=np.where(order < len(by_words), order, -1),
        word_share=np.where(values > 0, values / top, 0.0) if top > 0 else np.zeros(len(indexes)),
        card_rank=card_ranks(symbol_scores[nearest], symbol_scores[positions]),
        similarity=card_scores[positions].astype(float),
        best_similarity=float(card_scores[by_cards[0]]) if by_cards else 0.0,
        kinds=_kinds(found, positions),
    )
    return PlacePool(indexes=indexes, matrix=matrix)


def _kinds(found: LookupEvidence, positions: np.ndarray) -> dict[str, np.ndarray]:
    """Evidence kind -> whether each target at `positions` has it (the kinds `Hint.evidence` would show)."""
    words = found.words
    present = {
        "words": words.name_score[positions] > 0,
        "doc": words.doc_score[positions] > 0,
        "all-words": words.all_words[positions],
        "described": words.all_words[positions] & words.short_question,
        "abbreviation": words.abbreviated[positions],
    }
    for row, target in enumerate(positions.tolist()):
        for kind in found.credits.evidence.get(target, ()):
            if kind != "semantic":
                present.setdefault(kind, np.zeros(len(positions), dtype=bool))[row] = True
    return present


def fitted_places(
    index: HintIndex,
    ranked: list[int],
    nearest: list[int],
    pool: PlacePool,
    model: Logistic,
    limit: int,
    found: LookupEvidence,
) -> list[int]:
    """
    The places filled by the fitted model: package hints keep theirs; the very nearest cards keep a place whatever
    the model says (it is linear in the ranks, and a card far nearer than the rest, a whole vocabulary gap bridged,
    is the case it rates worst); the model chooses the rest from the pool. Ordered by score.
    """
    packages = [i for i in ranked if index.targets[i].kind == "package"]
    kept = index.weights.places_nearest_kept
    placed = packages + [i for i in nearest[:kept] if i not in packages][: max(0, limit - len(packages))]
    placed += pool.choose(model, limit - len(placed), exclude=set(placed))
    return index.ordered(np.asarray(placed, dtype=np.int64), found.total)


def reserved_places(
    index: HintIndex, ranked: list[int], nearest: list[int], limit: int, total: np.ndarray
) -> list[int]:
    """Without a places model the nearest cards keep their places: they are the candidates word overlap cannot
    produce; the best of the rest fill what is left."""
    chosen, near = set(ranked), set(nearest)
    kept = [i for i in ranked if i in near]
    # a limit under twice the semantic depth must still hold: kept and missing cards together fill at most it
    missing = [i for i in nearest if i not in chosen][: max(0, limit - len(kept))]
    if not missing:
        return ranked
    others = [i for i in ranked if i not in near][: max(0, limit - len(kept) - len(missing))]
    return index.ordered(np.asarray([*others, *kept, *missing], dtype=np.int64), total)
