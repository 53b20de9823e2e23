"""The fitted model that fills the hint list's places (`rewriting.hints.places`): features, pool, choice, fit."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from haystack_integrations.components.code_alias.core.cards import SymbolCards
from haystack_integrations.components.code_alias.core.identifiers import split_identifier
from haystack_integrations.components.code_alias.core.model import AliasDictionary, SymbolEntry
from haystack_integrations.components.code_alias.rewriting.hints import HintIndex, place_pool
from haystack_integrations.components.code_alias.rewriting.hints.calibration import (
    HintCalibration,
    Logistic,
    fit_logistic,
)
from haystack_integrations.components.code_alias.rewriting.hints.places import (
    FEATURES,
    RANK_CAP,
    PlacePool,
    card_ranks,
    place_features,
)

#: Ranks matter, nothing else: the nearer a candidate stands in either list, the likelier it is gold.
RANKS_ONLY = Logistic(intercept=0.0, coefficients={"word_log_rank": -1.0, "card_log_rank": -1.0})


def _entry(name: str, file: str) -> SymbolEntry:
    return SymbolEntry(
        name=name,
        kind="function",
        qualified_name=f"{file[:-3]}.{name}",
        file_path=file,
        language="python",
        start_line=1,
        end_line=3,
        exported=True,
        words=split_identifier(name),
    )


def test_features_say_where_a_candidate_stands_in_both_lists() -> None:
    both = place_features(
        word_rank=0, word_share=1.0, card_rank=2, similarity=0.6, best_similarity=0.7, kinds={"words", "semantic"}
    )
    assert (
        both["word_listed"] == 1.0
        and both["word_log_rank"] == 0.0
        and both["card_log_rank"] == pytest.approx(math.log1p(2))
    )
    assert both["card_gap"] == pytest.approx(-0.1) and both["has_words"] == 1.0 and "has_semantic" not in both
    absent = place_features(
        word_rank=None, word_share=0.0, card_rank=None, similarity=None, best_similarity=0.7, kinds=()
    )
    assert absent["word_listed"] == absent["card_listed"] == 0.0
    assert absent["word_log_rank"] == absent["card_log_rank"] == pytest.approx(math.log1p(RANK_CAP))
    assert absent["card_similarity"] == 0.0 and absent["card_gap"] == -1.0
    far = place_features(
        word_rank=10_000, word_share=0.1, card_rank=None, similarity=0.1, best_similarity=0.7, kinds=()
    )
    assert far["word_log_rank"] == pytest.approx(math.log1p(RANK_CAP))  # capped


def test_card_ranks_share_ties_skip_missing_cards_and_stop_past_the_nearest() -> None:
    similarity = np.array([0.9, np.nan, 0.5, 0.9, 0.1, 0.7])
    every = np.array([0.9, 0.9, 0.7, 0.5, 0.1])  # all the cards, most similar first
    assert card_ranks(every, similarity).tolist() == [0, -1, 3, 0, 4, 2]
    assert card_ranks(every[:3], similarity).tolist() == [0, -1, -1, 0, -1, 2]  # only the 3 nearest known
    assert card_ranks(np.zeros(0), similarity).tolist() == [-1] * 6


def _pool(indexes: list[int], rows: list[dict[str, float]]) -> PlacePool:
    return PlacePool(indexes=indexes, matrix=np.array([[row[name] for name in FEATURES] for row in rows]))


def test_the_pool_chooses_the_likeliest_and_leaves_out_what_is_already_placed() -> None:
    def at(word: int, card: int) -> dict[str, float]:
        return place_features(
            word_rank=word, word_share=0.5, card_rank=card, similarity=0.5, best_similarity=0.5, kinds=()
        )

    pool = _pool([10, 11, 12, 13], [at(0, 300), at(5, 5), at(300, 0), at(5, 5)])
    # 11 and 13 tie (2nd and 5th in both) and beat a first place in one list and nothing in the other
    assert pool.choose(RANKS_ONLY, 2) == [11, 13]
    assert pool.choose(RANKS_ONLY, 2, exclude={11}) == [13, 10]
    assert pool.choose(RANKS_ONLY, 0) == []


def _index_and_cards() -> tuple[HintIndex, SymbolCards, list[str]]:
    # 30 names share the question's words, in descending strength; their cards run from near to far. `retry_both`
    # is the 12th word hint and the 3rd nearest card: a reserved split of 5 + 5 offers it nowhere.
    names = [f"payment_retry_{'x' * (30 - i)}" for i in range(30)]
    entries = [_entry(name, f"m{i}.py") for i, name in enumerate(names)]
    index = HintIndex(AliasDictionary(symbols=entries).seal())
    order = [h.name for h in index.lookup("payment retry", limit=40)]
    both = order[11]
    closeness = {order[20]: 0.95, order[21]: 0.9, both: 0.85}  # two card-only favourites, then `both`
    vectors = np.zeros((30, 8))
    for row, name in enumerate(names):
        cosine = closeness.get(name, 0.3 - 0.005 * row)  # the question's vector is the first axis
        vectors[row, 0], vectors[row, 1] = cosine, math.sqrt(1 - cosine**2)
    return index, SymbolCards(names, vectors, names, version="v"), [both, order[20], order[21], *order[:3]]


def test_a_fitted_places_model_fills_the_list_from_both_rankings() -> None:
    index, cards, (both, *_) = _index_and_cards()
    question = np.eye(8)[0]
    base = HintCalibration(semantic=Logistic(intercept=-1.0, coefficients={"similarity": 2.0}))
    reserved = [
        h.name for h in index.lookup("payment retry", limit=6, question_vector=question, cards=cards, calibration=base)
    ]
    with_places = HintCalibration(semantic=base.semantic, places=RANKS_ONLY)
    placed = [
        h.name
        for h in index.lookup("payment retry", limit=6, question_vector=question, cards=cards, calibration=with_places)
    ]
    assert len(placed) == len(reserved) == 6
    assert both in placed
    # the pool is what lookup chose from, with `both` in it at its two ranks
    pool = place_pool(index, "payment retry", question_vector=question, cards=cards, calibration=with_places)
    assert pool is not None
    position = pool.indexes.index(next(i for i, t in enumerate(index.targets) if t.name == both))
    assert pool.features[position]["word_log_rank"] == pytest.approx(math.log1p(11))
    assert pool.features[position]["card_log_rank"] == pytest.approx(math.log1p(2))
    # the lookup's arrays and the one-candidate form agree
    one = place_features(
        word_rank=11,
        word_share=pool.features[position]["word_share"],
        card_rank=2,
        similarity=0.85,
        best_similarity=0.95,
        kinds={"words"},
    )
    assert pool.features[position] == pytest.approx(one, abs=1e-6)  # float32 card vectors
    # no cards, no pool: nothing to fit on, and the plain lookup is untouched
    assert place_pool(index, "payment retry") is None


def test_the_nearest_cards_keep_a_place_whatever_the_model_says() -> None:
    index, cards, (_, first, second, *_) = _index_and_cards()
    prefers_words = Logistic(intercept=0.0, coefficients={"word_log_rank": -5.0})
    calibration = HintCalibration(
        semantic=Logistic(intercept=-1.0, coefficients={"similarity": 2.0}), places=prefers_words
    )
    names = [
        h.name
        for h in index.lookup(
            "payment retry", limit=6, question_vector=np.eye(8)[0], cards=cards, calibration=calibration
        )
    ]
    assert first in names and second in names  # card-only names the model alone would never place


def test_fitting_places_on_a_small_hand_made_pool() -> None:
    rows, labels = [], []
    for word, card, gold in [
        (0, 50, 1),
        (1, 1, 1),
        (2, 0, 1),
        (30, 40, 0),
        (50, 2, 0),
        (60, 70, 0),
        (80, 90, 0),
        (3, 3, 1),
        (40, 60, 0),
        (70, 5, 0),
    ]:
        rows.append(
            place_features(
                word_rank=word, word_share=0.5, card_rank=card, similarity=0.5, best_similarity=0.6, kinds=()
            )
        )
        labels.append(gold)
    model = fit_logistic(rows, labels, l2=1.0)
    assert model.coefficients["word_log_rank"] < 0 and model.coefficients["card_log_rank"] < 0
    assert sorted(_pool(list(range(10)), rows).choose(model, 4)) == [0, 1, 2, 7]  # the gold ones


def test_the_places_model_round_trips_and_the_packaged_one_says_where_it_came_from(tmp_path: Path) -> None:
    packaged = HintCalibration.load()
    assert packaged.places is not None and "fit_hint_places.py" in packaged.places_source
    path = tmp_path / "calibration.json"
    path.write_text(json.dumps(packaged.to_dict()), encoding="utf-8")
    again = HintCalibration.load(path)
    assert again.places == packaged.places and again.places_source == packaged.places_source
