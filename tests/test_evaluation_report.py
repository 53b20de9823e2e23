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
    header = "| config | n | Acc@1 | Acc@5 | Acc@10 | R@5 | MRR | nDCG@10 | fn Acc@5 | fn Acc@10 |"
    assert header in text
    # dictionary row: Acc@1 33.3, Acc@5 100.0, wins/losses on Acc@5
    row = next(line for line in text.splitlines() if line.startswith("| `title/dictionary/hybrid` | 3 |"))
    assert "| 33.3 | 100.0 | 100.0 |" in row and "+2 / −0" in row
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
