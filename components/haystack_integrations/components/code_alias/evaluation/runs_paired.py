"""The same rows of two harness runs (two commits, or two settings), paired by instance: what a change moved.

    python benchmarks/runs_paired.py --before <old run folder> --after <new run folder> [--json out.json]

Reads both runs' `results.jsonl` (partial runs too: only instances both runs have are paired) and prints, per
config the two runs share (`title/dictionary/bm25`, ...), each run's file Acc@1/5, file hit@5, symbol hit@1/5 and
MRR, then after vs before as delta (wins / losses, two-sided sign test p), and the instances whose first file or
first symbol changed. The LLM rows of an `--after` run that replayed the `--before` run's rewrites from the
product's cache measure the change alone: the same rewrites, a different ranking.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import llm_paired

METRICS: tuple[str, ...] = llm_paired.METRICS


def _first_moved(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """What changed at the top of one instance's answer: its first file and its first symbol."""
    moved = []
    for field, label in (("files", "file"), ("functions", "symbol")):
        old, new = (before.get(field) or [None])[0], (after.get(field) or [None])[0]
        if old != new:
            moved.append(f"{label}: {old} -> {new}")
    return moved


def compare(before: Sequence[dict[str, Any]], after: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Per config both runs have: each run's summary on the shared instances, the paired deltas, what moved."""
    old = {(r["config"], r["id"]): r for r in before}
    new = {(r["config"], r["id"]): r for r in after}
    result: dict[str, Any] = {}
    for config in sorted({c for c, _ in old} & {c for c, _ in new}):
        shared = sorted(i for c, i in old if c == config and (c, i) in new)
        if not shared:
            continue
        before_rows = {i: old[(config, i)] for i in shared}
        after_rows = {i: new[(config, i)] for i in shared}
        result[config] = {
            "paired_instances": len(shared),
            "before": llm_paired.row_summary(list(before_rows.values())),
            "after": llm_paired.row_summary(list(after_rows.values())),
            "after vs before": llm_paired.paired_cells(before_rows, after_rows, shared),
            "top_moved": {i: m for i in shared if (m := _first_moved(before_rows[i], after_rows[i]))},
        }
    return result


def render(result: dict[str, Any]) -> str:
    lines = ["| config | n | run | " + " | ".join(METRICS) + " |", "|" + "---|" * (len(METRICS) + 3)]
    for config, entry in result.items():
        for run in ("before", "after"):
            figures = " | ".join(str(entry[run][m]) for m in METRICS)
            lines.append(f"| {config} | {entry['paired_instances']} | {run} | {figures} |")
        deltas = [llm_paired.cell_text(c) for c in entry["after vs before"].values()]
        lines.append(f"| {config} | | after vs before | " + " | ".join(deltas) + " |")
    lines.append("")
    for config, entry in result.items():
        for instance, moved in entry["top_moved"].items():
            lines.append(f"- {config} {instance}: " + "; ".join(moved))
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, required=True, help="the old run's output folder")
    parser.add_argument("--after", type=Path, required=True, help="the new run's output folder")
    parser.add_argument("--json", type=Path, help="also write the comparison here")
    args = parser.parse_args(argv)
    for folder in (args.before, args.after):
        if not (folder / "results.jsonl").is_file():
            parser.error(f"{folder}/results.jsonl does not exist")
    result = compare(llm_paired.load(args.before), llm_paired.load(args.after))
    llm_paired.publish(result, render(result), args.json)
    return 0
