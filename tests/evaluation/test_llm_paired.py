"""benchmarks/llm_paired.py: rows of other runs (`--with NAME=FOLDER`) paired with this run's rows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from haystack_integrations.components.code_alias.evaluation import llm_paired, llm_plot, runs_paired


def _record(rewrite: str, instance: str, acc1: float) -> dict[str, Any]:
    return {
        "config": f"title/{rewrite}/bm25",
        "query": "title",
        "rewrite": rewrite,
        "retrieval": "bm25",
        "id": instance,
        "rewrite_ms": 1000.0 if rewrite.startswith("llm") else 1.0,
        "metrics": {"acc@1": acc1, "acc@5": 1.0},
        "extra": {"proposed": 2, "dropped": 0, "invented": 1 if rewrite == "llm-free" else 0},
    }


def _write(folder: Path, records: list[dict[str, Any]]) -> Path:
    folder.mkdir()
    (folder / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return folder


def test_other_runs_llm_rows_are_paired_on_shared_instances(tmp_path: Path) -> None:
    paired = llm_paired
    main_run = _write(
        tmp_path / "big",
        [_record(r, i, 1.0 if r == "llm" else 0.0) for i in ("a", "b", "c") for r in ("none", "dictionary", "llm")],
    )
    # the other run lacks instance c and has its own none row, which must not replace this run's
    other = _write(
        tmp_path / "small",
        [_record("none", i, 1.0) for i in ("a", "b")]
        + [_record(r, i, 0.0) for i in ("a", "b") for r in ("llm", "llm-free")],
    )
    out = tmp_path / "paired.json"
    assert paired.main(["--out", str(main_run), "--with", f"small={other}", "--json", str(out)]) == 0
    entry = json.loads(out.read_text())["title/bm25"]
    assert entry["paired_instances"] == 2
    assert set(entry["rows"]) == {"none", "dictionary", "llm", "small", "small-free"}
    assert entry["rows"]["none"]["acc@1"] == 0.0  # this run's none row, not the other run's
    assert entry["rows"]["small-free"]["invented"] == 2
    assert entry["rows"]["small"]["rewrite_ms_p50"] == 1000  # a renamed LLM row keeps its latency
    versus = entry["comparisons"]["llm vs small"]["acc@1"]
    assert (versus["wins"], versus["losses"]) == (2, 0)
    assert "small vs dictionary" in entry["comparisons"]


def test_a_with_spec_without_results_is_refused(tmp_path: Path) -> None:
    paired = llm_paired
    main_run = _write(tmp_path / "run", [_record("none", "a", 1.0)])
    with pytest.raises(SystemExit):
        paired.main(["--out", str(main_run), "--with", f"x={tmp_path / 'missing'}"])
    with pytest.raises(SystemExit):
        paired.main(["--out", str(main_run), "--with", "no-equals-sign"])


def test_the_plot_reads_what_llm_paired_writes(tmp_path: Path) -> None:
    """benchmarks/llm_plot.py draws a panel per set from `llm_paired.py --json` files, and names a bad one."""
    paired = llm_paired
    run = _write(tmp_path / "run", [_record(r, i, 1.0) for i in ("a", "b") for r in ("none", "dictionary", "llm")])
    comparison = tmp_path / "paired.json"
    assert paired.main(["--out", str(run), "--json", str(comparison)]) == 0
    plot = llm_plot
    png = tmp_path / "rows.png"
    assert plot.main(["--set", f"A={comparison}", "--set", f"B={comparison}", "--out", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    assert plot.panels([f"A={comparison}"])[0][0] == "A, n 2"
    with pytest.raises(SystemExit):
        plot.main(["--set", f"A={tmp_path / 'missing.json'}", "--out", str(png)])


def test_two_runs_of_the_same_rows_are_paired_by_instance(tmp_path: Path) -> None:
    runs = runs_paired
    before = [_record(r, i, 0.0) | {"files": ["old.py"]} for i in ("a", "b", "c") for r in ("none", "dictionary")]
    after = [_record("dictionary", i, 1.0 if i != "c" else 0.0) | {"files": ["new.py"]} for i in ("a", "b", "c")]
    after.append(_record("dictionary", "d", 1.0))  # only in the new run: not paired
    out = tmp_path / "runs.json"
    args = ["--before", str(_write(tmp_path / "old", before)), "--after", str(_write(tmp_path / "new", after))]
    assert runs.main([*args, "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    assert list(result) == ["title/dictionary/bm25"]  # the none row is in one run only
    entry = result["title/dictionary/bm25"]
    assert entry["paired_instances"] == 3 and entry["before"]["acc@1"] == 0.0 and entry["after"]["acc@1"] == 66.7
    cell = entry["after vs before"]["acc@1"]
    assert (cell["wins"], cell["losses"]) == (2, 0)
    assert entry["top_moved"]["a"] == ["file: old.py -> new.py"]
    with pytest.raises(SystemExit):
        runs.main(["--before", str(tmp_path / "missing"), "--after", str(tmp_path / "new")])
