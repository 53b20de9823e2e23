"""Reports: aggregation, subsets, paired comparison, Markdown, JSON and the PNG plot."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from haystack_integrations.components.code_alias.evaluation.metrics import file_metrics
from haystack_integrations.components.code_alias.evaluation.report import (
    aggregate,
    build_report,
    render_markdown,
    write_plot,
    write_report,
)


def _record(config: str, item: str, repo: str, rank: int | None, names_file: bool | None, **extra: object) -> dict:
    ranked = [f"f{n}.py" for n in range(1, 11)]
    gold = [f"f{rank}.py"] if rank is not None else ["absent.py"]
    metrics = file_metrics(ranked, gold)
    if extra.pop("fn", None) is not None:
        metrics.update({"fn_acc@5": 1.0 if rank is not None and rank <= 5 else 0.0, "fn_acc@10": 1.0})
        extra.setdefault("functions_complete", True)
    return {"config": config, "id": item, "repo": repo, "names_file": names_file, "metrics": metrics, **extra}


RECORDS = [
    # baseline: gold at ranks 1, 6, none
    _record("title/none/bm25", "a", "acme/x", 1, False, fn=True, rewrite_ms=0, search_ms=10),
    _record("title/none/bm25", "b", "acme/x", 6, True, search_ms=20),
    _record("title/none/bm25", "c", "acme/y", None, False, search_ms=30),
    # dictionary rewrite: ranks 2, 1, 3
    _record("title/dictionary/hybrid", "a", "acme/x", 2, False, fn=True, rewrite_ms=2, dropped_symbols=1),
    _record("title/dictionary/hybrid", "b", "acme/x", 1, True, rewrite_ms=4, cache_hit=True),
    _record("title/dictionary/hybrid", "c", "acme/y", 3, False, rewrite_ms=6, dropped_symbols=2),
]
COVERAGE = [
    {"id": "a", "repo": "acme/x", "covered": True},
    {"id": "b", "repo": "acme/x", "covered": True},
    {"id": "c", "repo": "acme/y", "covered": True},
    {"id": "d", "repo": "acme/y", "covered": False, "error": "gold files not in y-1.0: gone.py"},
]


def test_aggregate_by_hand() -> None:
    summary = aggregate(RECORDS[3:])
    assert summary["n"] == 3
    assert summary["acc@1"] == pytest.approx(1 / 3)
    assert summary["acc@3"] == pytest.approx(1.0)
    assert summary["mrr"] == pytest.approx((1 / 2 + 1 + 1 / 3) / 3)
    assert summary["n_functions"] == 1 and summary["fn_acc@5"] == 1.0
    assert summary["rewrite_ms_p50"] == pytest.approx(4.0)
    assert summary["rewrite_ms_p95"] == pytest.approx(5.8)  # 4 + 0.9 * (6 - 4)
    assert summary["dropped_symbols_total"] == 3
    assert summary["dropped_symbols_per_query"] == pytest.approx(1.0)
    assert summary["cache_hit_rate"] == pytest.approx(1 / 3)
    assert aggregate([]) == {"n": 0}


def test_build_report_subsets_repos_and_pairs() -> None:
    report = build_report(RECORDS, coverage=COVERAGE, config_order=["title/none/bm25", "title/dictionary/hybrid"])
    assert report["configs"] == ["title/none/bm25", "title/dictionary/hybrid"]
    assert report["overall"]["title/none/bm25"]["acc@5"] == pytest.approx(1 / 3)
    assert report["overall"]["title/none/bm25"]["acc@10"] == pytest.approx(2 / 3)
    no_hint = report["no_file_hint"]["title/none/bm25"]
    assert no_hint["n"] == 2 and no_hint["acc@1"] == pytest.approx(0.5)
    assert report["per_repo"]["acme/y"]["title/dictionary/hybrid"]["acc@5"] == 1.0
    assert report["per_repo"]["acme/x"]["title/none/bm25"]["n"] == 2
    pair = report["paired"]["title/dictionary/hybrid"]
    assert pair["baseline"] == "title/none/bm25"
    # Acc@1: a loses (1 -> 0), b wins (0 -> 1), c ties (0 -> 0); Acc@5: b and c win
    assert (pair["acc@1"]["wins"], pair["acc@1"]["losses"], pair["acc@1"]["ties"]) == (1, 1, 1)
    assert (pair["acc@5"]["wins"], pair["acc@5"]["losses"]) == (2, 0)
    assert pair["acc@5"]["delta"] == pytest.approx(2 / 3)
    assert "title/none/bm25" not in report["paired"]
    # the rewrite's own lift needs its no-rewrite twin (title/none/hybrid), which this run lacks
    assert report["rewrite_lift"] == {}
    twin = [dict(r, config="title/none/hybrid") for r in RECORDS[:3]]
    lift = build_report([*RECORDS, *twin])["rewrite_lift"]
    assert set(lift) == {"title/dictionary/hybrid"}
    assert lift["title/dictionary/hybrid"]["baseline"] == "title/none/hybrid"
    assert lift["title/dictionary/hybrid"]["acc@5"]["delta"] == pytest.approx(2 / 3)
    assert "## The rewrite's own lift" in render_markdown(build_report([*RECORDS, *twin]))
    assert report["coverage"]["covered"] == 3 and report["coverage"]["instances"] == 4
    assert report["coverage"]["not_covered"][0]["id"] == "d"
    curve = report["curves"]["title/dictionary/hybrid"]["all"]
    assert curve[:3] == pytest.approx([1 / 3, 2 / 3, 1.0]) and len(curve) == 10


def test_markdown_tables() -> None:
    report = build_report(RECORDS, coverage=COVERAGE, run_info={"command": "code-alias bench run --subset 3"})
    text = render_markdown(report, title="Lite")
    assert text.startswith("# Lite\n")
    assert "code-alias bench run --subset 3" in text
    assert "Coverage: 3 of 4 instances" in text
    header = (
        "| config | n | Acc@1 | Acc@5 | hit@1 | hit@5 | MRR | n sym | sym hit@1 | sym hit@5 | sym MRR | hint recall | "
        "rewrite ms p50/p95 | dropped/q | cache hits | Acc@5 W/L vs raw BM25 |"
    )
    assert header in text
    # dictionary row: Acc@1 33.3, Acc@5 100.0, hit = Acc with one gold file; no symbol gold; wins/losses on Acc@5
    row = next(line for line in text.splitlines() if line.startswith("| `title/dictionary/hybrid` | 3 |"))
    assert row.startswith("| `title/dictionary/hybrid` | 3 | 33.3 | 100.0 | 33.3 | 100.0 | 61.1 | 0 | – | – | – | – |")
    assert "| 4 / 6 |" in row and "+2 / −0" in row
    assert "| config | n | Acc@3 | Acc@10 | hit@3 | hit@10 | R@5 | nDCG@10 |" in text  # the second table
    assert "## Issues that do not name the file" in text
    assert "| acme/y | 1 | 0.0 | 100.0 |" in text  # per-repo Acc@5
    assert "`d`: gold files not in y-1.0: gone.py" in text


def test_write_report_json_is_standard_and_plot_is_png(tmp_path: Path) -> None:
    only_baseline = [r for r in RECORDS if r["config"] == "title/none/bm25"]
    report = build_report(only_baseline, coverage=COVERAGE)
    paths = write_report(report, tmp_path / "out", title="T")
    data = json.loads(paths["json"].read_text(), parse_constant=lambda name: pytest.fail(f"non-standard {name}"))
    # a subset without records has no metrics: NaN became null, not NaN
    assert data["overall"]["title/none/bm25"]["n"] == 3
    assert data["curves"]["title/none/bm25"]["all"][0] == pytest.approx(1 / 3)
    assert paths["markdown"].read_text().startswith("# T")
    png = paths["plot"].read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000
    import matplotlib.image

    image = matplotlib.image.imread(paths["plot"])
    assert image.shape[0] > 300 and image.shape[1] > 800


def test_searcher_without_functions_has_no_function_score() -> None:
    records = [
        {**record, "functions": [], "functions_complete": True}
        for record in RECORDS
        if record["config"] == "title/none/bm25" and "fn_acc@5" in record["metrics"]
    ]
    summary = aggregate(records)
    assert summary["n_functions"] == 1 and math.isnan(summary["fn_acc@5"])
    ranked = [{**record, "functions": [["f1.py", "f"]]} for record in records]
    assert aggregate(ranked)["fn_acc@5"] == 1.0


def test_plot_with_nan_curves(tmp_path: Path) -> None:
    report = {"curves": {"full/none/bm25": {"all": [0.1] * 10, "no_file_hint": [float("nan")] * 10}}}
    path = write_plot(report, tmp_path / "p.png")
    assert path.read_bytes()[:4] == b"\x89PNG"


def _symbol_record(config: str, item: str, file_rank: int, symbol_rank: int | None, named: bool | None) -> dict:
    """A record with stored rankings only (no metrics): the report derives them (backfill)."""
    files = [f"f{n}.py" for n in range(1, 11)]
    functions = [[f"f{n}.py", f"f{n}.C.m"] for n in range(1, 11)]
    gold_functions = [[f"f{symbol_rank}.py", "C.m"]] if symbol_rank is not None else []
    return {
        "config": config,
        "id": item,
        "repo": "acme/x",
        "names_file": None,
        "names_gold_symbol": named,
        "files": files,
        "gold_files": [f"f{file_rank}.py", "absent.py"],
        "functions": functions,
        "gold_functions": gold_functions,
        "metrics": {"acc@1": 0.0, "acc@5": 0.0, "acc@10": 0.0, "mrr": 1 / file_rank},
    }


# (id, file rank, symbol rank without / with the rewrite, question names a gold symbol)
SYMBOL_CASES = [("s1", 1, 2, 1, False), ("s2", 3, 6, 4, False), ("s3", 2, 1, 3, True), ("s4", 7, None, None, False)]
SYMBOL_RECORDS = [
    record
    for item, file_rank, before, after, named in SYMBOL_CASES
    for record in (
        _symbol_record("title/none/hybrid", item, file_rank, before, named),
        _symbol_record("title/dictionary/hybrid", item, 1 if item == "s2" else file_rank, after, named),
    )
]


def test_symbol_metrics_backfill_denominators_and_paired_rows() -> None:
    report = build_report(SYMBOL_RECORDS)
    raw = report["overall"]["title/none/hybrid"]
    # file hit: any gold file (the second is never there), ranks 1, 3, 2, 7
    assert raw["n"] == 4
    assert (raw["hit@1"], raw["hit@3"], raw["hit@5"], raw["hit@10"]) == pytest.approx((0.25, 0.75, 0.75, 1.0))
    # symbols: s4 has no gold symbol, so the symbol means are over 3: ranks 2, 6, 1
    assert raw["n_symbols"] == 3
    assert raw["sym_hit@1"] == pytest.approx(1 / 3) and raw["sym_hit@5"] == pytest.approx(2 / 3)
    assert raw["sym_mrr"] == pytest.approx((1 / 2 + 1 / 6 + 1) / 3)
    lift = report["rewrite_lift"]["title/dictionary/hybrid"]
    assert lift["baseline"] == "title/none/hybrid"
    # sym hit@1: s1 wins (2 -> 1), s3 loses (1 -> 3); sym hit@5: s2 wins (6 -> 4), s3 ties
    assert (lift["sym_hit@1"]["n"], lift["sym_hit@1"]["wins"], lift["sym_hit@1"]["losses"]) == (3, 1, 1)
    assert (lift["sym_hit@5"]["wins"], lift["sym_hit@5"]["losses"], lift["sym_hit@5"]["ties"]) == (1, 0, 2)
    assert lift["sym_hit@5"]["delta"] == pytest.approx(1 / 3)
    # file hit@1: s2 moves its gold file from 3 to 1; the pairs cover all four questions
    assert (lift["hit@1"]["n"], lift["hit@1"]["wins"], lift["hit@1"]["losses"]) == (4, 1, 0)
    assert lift["hit@1"]["p_value"] == pytest.approx(1.0)
    assert set(lift) >= {"acc@1", "acc@5", "hit@1", "hit@5", "sym_hit@1", "sym_hit@5"}


def test_golden_subset_that_names_no_gold_symbol() -> None:
    report = build_report(SYMBOL_RECORDS)
    subset = report["subsets"]["no_gold_symbol_named"]
    assert "names_gold_symbol == false" in subset["label"]
    rows = subset["overall"]["title/none/hybrid"]
    assert rows["n"] == 3 and rows["n_symbols"] == 2  # s3 names its symbol; s4 has none
    assert rows["sym_hit@1"] == 0.0 and rows["sym_hit@5"] == pytest.approx(0.5)
    lift = subset["rewrite_lift"]["title/dictionary/hybrid"]["sym_hit@1"]
    assert (lift["n"], lift["wins"], lift["losses"]) == (2, 1, 0)
    assert report["subsets"]["no_file_hint"]["overall"]["title/none/hybrid"]["n"] == 0
    assert report["curves"]["title/none/hybrid"]["symbols"][:2] == pytest.approx([1 / 3, 2 / 3])
    text = render_markdown(report)
    assert "## Questions that name no gold symbol (`meta.names_gold_symbol == false`)" in text
    assert "## Issues that do not name the file" not in text  # no question in that subset
    assert "| config | baseline | n | n sym | Acc@1 | Acc@5 | hit@1 | hit@5 | sym hit@1 | sym hit@5 |" in text
    rows = [line for line in text.splitlines() if line.startswith("| `title/dictionary/hybrid` | `title/none")]
    subset_row, overall_row = rows  # the subset's lift comes first, with its own n
    assert "| 3 | 2 |" in subset_row and "+50.0 (1/0, p 1)" in subset_row
    assert "| 4 | 3 |" in overall_row and "+25.0 (1/0, p 1)" in overall_row
    assert "## Symbol hit@5 per repository" in text


def test_plot_has_a_symbol_panel(tmp_path: Path) -> None:
    import matplotlib.image

    path = write_plot(build_report(SYMBOL_RECORDS), tmp_path / "s.png")
    image = matplotlib.image.imread(path)
    assert image.shape[1] > 1.4 * image.shape[0] * 2  # three panels side by side
