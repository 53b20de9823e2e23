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
    hit_at_k,
    local_name,
    mrr,
    ndcg_at_k,
    paired_comparison,
    percentile,
    recall_at_k,
    sign_test_p_value,
    symbol_hit_at_k,
    symbol_metrics,
    symbol_mrr,
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


def test_file_hit_needs_any_gold_file() -> None:
    # deduplicated: a b c d e; gold c (rank 3) and z (absent)
    gold = ["c", "z"]
    assert [hit_at_k(RANKED, gold, k) for k in (1, 2, 3, 10)] == [0.0, 0.0, 1.0, 1.0]
    assert acc_at_k(RANKED, gold, 10) == 0.0  # Acc needs every gold file; hit needs one
    assert hit_at_k(RANKED, ["a", "e"], 1) == 1.0
    assert hit_at_k(RANKED, [], 10) == 0.0
    values = file_metrics(RANKED, gold)
    assert (values["hit@1"], values["hit@3"], values["hit@5"], values["hit@10"]) == (0.0, 1.0, 1.0, 1.0)
    assert values["acc@3"] == 0.0


# Distinct (file, local name): (a.py, f) (b.py, C.m) (c.py, g) (c.py, C.m) -- the second line is the first again.
SYMBOLS = [
    ("pkg/a.py", "pkg.a.f"),
    ("pkg/a.py", "f"),
    ("b.py", "b.C.m"),
    ("c.py", "g"),
    ("c.py", "c.C.m"),
]


def test_symbol_hit_counts_distinct_symbols_by_file_and_qualified_name() -> None:
    # the duplicate of (pkg/a.py, f) does not take a slot: g is the 3rd distinct symbol, not the 4th
    assert [symbol_hit_at_k(SYMBOLS, [("c.py", "g")], k) for k in (2, 3)] == [0.0, 1.0]
    assert symbol_mrr(SYMBOLS, [("c.py", "g")]) == pytest.approx(1 / 3)
    # any gold symbol is enough (Acc would need both)
    gold = [("c.py", "g"), ("pkg/a.py", "f")]
    assert symbol_hit_at_k(SYMBOLS, gold, 1) == 1.0 and function_acc_at_k(SYMBOLS, gold, 1) == 0.0
    # same local name in another file is another symbol: (c.py, C.m) is 4th, (b.py, C.m) 2nd
    assert symbol_mrr(SYMBOLS, [("c.py", "C.m")]) == pytest.approx(1 / 4)
    assert symbol_hit_at_k(SYMBOLS, [("other.py", "f")], 10) == 0.0
    assert symbol_mrr(SYMBOLS, [("other.py", "f")]) == 0.0
    # a bare gold name matches the first function of any file whose scope path ends with it
    assert symbol_mrr(SYMBOLS, [("", "m")]) == pytest.approx(1 / 2)
    # a method's name alone does not match a file-qualified gold for the class
    assert symbol_hit_at_k(SYMBOLS, [("b.py", "C")], 10) == 0.0


@pytest.mark.parametrize(
    "retrieved",
    [
        "_pytest.python.Function.setup",  # module path without src/
        "src._pytest.python.Function.setup",  # module path with it
        "python.Function.setup",  # the last module part only
        "Function.setup",  # already local
    ],
)
def test_symbol_hit_tolerates_module_prefixes(retrieved: str) -> None:
    ranked = [("src/_pytest/main.py", "_pytest.main.Session"), ("src/_pytest/python.py", retrieved)]
    gold = [("src/_pytest/python.py", "Function.setup")]
    assert symbol_hit_at_k(ranked, gold, 1) == 0.0
    assert symbol_hit_at_k(ranked, gold, 2) == 1.0
    assert symbol_metrics(ranked, gold)["sym_mrr"] == pytest.approx(0.5)


def test_symbol_metrics_bundle_and_no_gold() -> None:
    values = symbol_metrics(SYMBOLS, [("c.py", "g")])
    assert set(values) == {*(f"sym_hit@{k}" for k in range(1, 11)), "sym_mrr"}
    assert [values[f"sym_hit@{k}"] for k in (1, 2, 3, 10)] == [0.0, 0.0, 1.0, 1.0]
    assert values["sym_mrr"] == pytest.approx(1 / 3)
    assert symbol_metrics(SYMBOLS, []) == {}  # no gold symbol: no score at all, not a 0
    assert symbol_metrics([], [("c.py", "g")])["sym_hit@10"] == 0.0


def test_hint_recall_any_gold_among_the_offered_definitions() -> None:
    from haystack_integrations.components.code_alias.evaluation.metrics import hint_recall

    offered = [("pkg/retry.py", "pkg.retry.with_backoff"), ("pkg/client.py", "pkg.client.Client.send")]
    assert hint_recall(offered, [("pkg/retry.py", "with_backoff")]) == {"sym_hint_recall": 1.0}
    assert hint_recall(offered, [("pkg/ledger.py", "with_backoff")]) == {"sym_hint_recall": 0.0}  # other file
    assert hint_recall(offered, [("", "Client.send")]) == {"sym_hint_recall": 1.0}  # a bare gold name
    assert hint_recall([], [("pkg/retry.py", "with_backoff")]) == {"sym_hint_recall": 0.0}
    assert hint_recall(offered, []) == {}
