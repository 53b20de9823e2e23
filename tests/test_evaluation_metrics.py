"""Metrics against hand-computed values, and against Haystack's own evaluators."""

from __future__ import annotations

import math

import pytest

from haystack_integrations.components.code_alias.evaluation.metrics import (
    acc_at_k,
    dedupe,
    file_metrics,
    function_acc_at_k,
    function_metrics,
    haystack_file_metrics,
    local_name,
    mrr,
    ndcg_at_k,
    paired_comparison,
    percentile,
    recall_at_k,
    sign_test_p_value,
)

# Deduplicated: a b c d e; gold c (rank 3) and e (rank 5).
RANKED = ["a", "b", "a", "c", "d", "e"]
GOLD = ["c", "e"]


def test_dedupe_keeps_best_rank() -> None:
    assert dedupe(RANKED) == ["a", "b", "c", "d", "e"]


def test_acc_needs_every_gold_file() -> None:
    assert [acc_at_k(RANKED, GOLD, k) for k in (1, 2, 3, 4, 5, 10)] == [0.0, 0.0, 0.0, 0.0, 1.0, 1.0]
    assert acc_at_k(RANKED, [], 5) == 0.0


def test_recall_is_the_fraction_found() -> None:
    assert [recall_at_k(RANKED, GOLD, k) for k in (1, 3, 4, 5)] == [0.0, 0.5, 0.5, 1.0]


def test_mrr_is_the_first_gold_rank() -> None:
    assert mrr(RANKED, GOLD) == pytest.approx(1 / 3)
    assert mrr(["x", "y"], GOLD) == 0.0
    assert mrr(["e"], GOLD) == 1.0


def test_ndcg_binary_relevance_by_hand() -> None:
    # DCG = 1/log2(3+1) + 1/log2(5+1) = 0.5 + 0.386852807...; IDCG = 1 + 1/log2(3) = 1.630929753...
    assert ndcg_at_k(RANKED, GOLD, 10) == pytest.approx((0.5 + 0.3868528072) / 1.6309297536, abs=1e-9)
    assert ndcg_at_k(RANKED, GOLD, 10) == pytest.approx(0.5437713, abs=1e-6)
    # cut at 4: only c counts; IDCG still for two gold files
    assert ndcg_at_k(RANKED, GOLD, 4) == pytest.approx(0.5 / 1.6309297536, abs=1e-9)
    assert ndcg_at_k(["c", "e"], GOLD, 10) == pytest.approx(1.0)
    # one gold file at rank 2: 1/log2(3)
    assert ndcg_at_k(["x", "c"], ["c"], 10) == pytest.approx(0.6309297536, abs=1e-9)


def test_file_metrics_bundle() -> None:
    values = file_metrics(RANKED, GOLD)
    assert values["acc@1"] == 0.0 and values["acc@5"] == 1.0 and values["acc@10"] == 1.0
    assert values["recall@3"] == 0.5 and values["recall@5"] == 1.0
    assert values["mrr"] == pytest.approx(1 / 3)
    assert values["ndcg@10"] == pytest.approx(0.5437713, abs=1e-6)
    assert sorted(key for key in values if key.startswith("acc@")) == sorted(f"acc@{k}" for k in range(1, 11))


CASES = [
    (["a", "b", "c", "d"], ["c"]),
    (["c", "x", "y"], ["c", "y"]),
    (["p", "q", "r", "s", "t", "u", "v", "w", "x", "y", "z"], ["z"]),  # beyond the top 10
    (["p", "q"], ["m", "n"]),
    (["n", "p", "m", "n"], ["m", "n"]),
]


def test_cross_check_against_haystack_evaluators() -> None:
    scores = haystack_file_metrics([ranked for ranked, _ in CASES], [gold for _, gold in CASES], k=10)
    for index, (ranked, gold) in enumerate(CASES):
        assert scores["recall"][index] == pytest.approx(recall_at_k(ranked, gold, 10))
        assert scores["ndcg"][index] == pytest.approx(ndcg_at_k(ranked, gold, 10))
        assert scores["mrr"][index] == pytest.approx(mrr(dedupe(ranked)[:10], gold))
    assert scores["mrr"] == pytest.approx([1 / 3, 1.0, 0.0, 0.0, 1.0])
    assert scores["recall"] == pytest.approx([1.0, 1.0, 0.0, 0.0, 1.0])


@pytest.mark.parametrize(
    ("file_path", "qualified", "expected"),
    [
        ("src/_pytest/python.py", "_pytest.python.Function.setup", "Function.setup"),
        ("src/_pytest/python.py", "src._pytest.python.Function.setup", "Function.setup"),
        ("django/db/models/query.py", "django.db.models.query.QuerySet.filter", "QuerySet.filter"),
        ("pkg/__init__.py", "pkg.helper", "helper"),
        ("pkg/mod.py", "Klass.method", "Klass.method"),  # no module prefix: unchanged
        ("pkg/mod.py", "mod.f", "f"),
    ],
)
def test_local_name(file_path: str, qualified: str, expected: str) -> None:
    assert local_name(file_path, qualified) == expected


def test_function_acc_distinct_functions_and_name_forms() -> None:
    ranked = [
        ("pkg/a.py", "pkg.a.f"),
        ("pkg/a.py", "f"),  # the same function spelled without its module: not a new entry
        ("b.py", "b.C.m"),
        ("c.py", "g"),
    ]
    gold = [("pkg/a.py", "f"), ("b.py", "C.m")]
    assert function_acc_at_k(ranked, gold, 1) == 0.0
    assert function_acc_at_k(ranked, gold, 2) == 1.0  # the duplicate does not use up a slot
    assert function_acc_at_k(ranked, [("c.py", "g"), ("pkg/a.py", "f")], 2) == 0.0
    assert function_acc_at_k(ranked, [("c.py", "g"), ("pkg/a.py", "f")], 3) == 1.0
    # a gold function in another file with the same name does not count
    assert function_acc_at_k(ranked, [("other.py", "f")], 10) == 0.0
    # a bare gold name (no file) matches any file's function whose scope path ends with it
    assert function_acc_at_k(ranked, [("", "m")], 2) == 1.0
    assert function_acc_at_k(ranked, [("", "m")], 1) == 0.0
    assert function_acc_at_k(ranked, [], 10) == 0.0
    assert function_metrics(ranked, gold) == {"fn_acc@5": 1.0, "fn_acc@10": 1.0}


def test_paired_comparison_by_hand() -> None:
    baseline = {"1": 0.0, "2": 1.0, "3": 0.0, "4": 1.0}
    candidate = {"1": 1.0, "2": 1.0, "3": 1.0, "4": 0.0, "5": 1.0}  # "5" has no pair
    result = paired_comparison(baseline, candidate, metric="acc@5")
    assert (result.n, result.wins, result.losses, result.ties) == (4, 2, 1, 1)
    assert result.delta == pytest.approx(0.25)
    # sign test on 2 wins vs 1 loss: 2 * P(X <= 1 | n=3) = 2 * 4/8 = 1.0
    assert result.p_value == pytest.approx(1.0)
    assert result.to_dict()["metric"] == "acc@5"


def test_sign_test_and_percentiles() -> None:
    assert sign_test_p_value(10, 0) == pytest.approx(2 / 1024)
    assert sign_test_p_value(0, 0) == 1.0
    assert sign_test_p_value(5, 5) == 1.0
    assert percentile([4, 1, 3, 2], 50) == pytest.approx(2.5)
    assert percentile([1, 2, 3, 4], 95) == pytest.approx(3.85)
    assert percentile([7], 95) == 7.0
    assert math.isnan(percentile([], 50))
