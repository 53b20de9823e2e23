"""Paired lifts of the LLM rewrite rows of a harness run: `llm` against `none`, `dictionary` and `llm-free`.

    python benchmarks/llm_paired.py --out .bench-cache/results/sweqa-llm-lexical [--json benchmarks/results/x.json]
    python benchmarks/llm_paired.py --out <1.5B run> --with 0.5b=<0.5B run> --with 0.5b-20h=<0.5B, 20 hints run>

Reads the run's `results.jsonl` (partial runs too: only instances every compared row has are paired) and prints,
per query and retrieval: each row's n, file Acc@1/5, file hit@5, symbol hit@1/5, MRR, rewrite ms p50/p95, names
proposed, dropped by the filter (`llm`) or invented and sent to retrieval (`llm-free`), fallbacks; then each
comparison as delta (wins / losses, two-sided sign test p). `--with NAME=FOLDER` adds another run's `llm` row as
the row NAME (and its `llm-free` as NAME-free), compared with `none`, `dictionary` and this run's `llm`: a second
model or another hint count on the same questions, which the harness runs one setting at a time.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

from .metrics import mean, paired_comparison, percentile

METRICS = ("acc@1", "acc@5", "hit@5", "sym_hit@1", "sym_hit@5", "mrr")
COMPARISONS = (
    ("llm", "none"),
    ("llm", "dictionary"),
    ("llm", "llm-free"),
    ("llm-free", "none"),
    ("dictionary", "none"),
)


def load(out: Path, *, label: str | None = None) -> list[dict[str, Any]]:
    """The run's records, one per (config, id); with `label`, only its LLM rows, renamed to `label`."""
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for line in (out / "results.jsonl").read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if label is not None:
            if not str(record["rewrite"]).startswith("llm"):
                continue
            record["rewrite"] = label + str(record["rewrite"])[len("llm") :]
            record["llm_row"] = True
        rows[(record["config"], record["id"])] = record  # a redone search replaces its twin
    return list(rows.values())


def row_summary(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    def metric(name: str) -> float | None:
        values = [float(r["metrics"][name]) for r in records if name in r["metrics"]]
        return round(100 * mean(values), 1) if values else None

    live = [
        float(r["rewrite_ms"])
        for r in records
        if (r["rewrite"].startswith("llm") or r.get("llm_row")) and not r.get("cache_hit")
    ]
    extra = [r.get("extra") or {} for r in records]
    return {
        "n": len(records),
        **{name: metric(name) for name in METRICS},
        "rewrite_ms_p50": round(percentile(live, 50)) if live else None,
        "rewrite_ms_p95": round(percentile(live, 95)) if live else None,
        "proposed": sum(int(e.get("proposed") or 0) for e in extra),
        "dropped": sum(int(e.get("dropped") or 0) for e in extra),
        "invented": sum(int(e.get("invented") or 0) for e in extra),
        "fallbacks": sum(1 for e in extra if e.get("fallback")),
    }


def paired_cells(
    baseline: dict[str, dict[str, Any]], candidate: dict[str, dict[str, Any]], shared: Collection[str]
) -> dict[str, dict[str, Any]]:
    """Per metric, `candidate` against `baseline` (instance id -> record) on the `shared` instances."""
    cells = {}
    for name in METRICS:
        base = {i: float(baseline[i]["metrics"][name]) for i in shared if name in baseline[i]["metrics"]}
        cand = {i: float(candidate[i]["metrics"][name]) for i in shared if name in candidate[i]["metrics"]}
        cells[name] = paired_comparison(base, cand, metric=name).to_dict()
    return cells


def cell_text(cell: dict[str, Any]) -> str:
    """One paired comparison as `delta (wins/losses, p)`, or `-` when no instance has the metric."""
    if not cell["n"]:
        return "-"
    return f"{100 * cell['delta']:+.1f} ({cell['wins']}/{cell['losses']}, p {cell['p_value']:.2f})"


def publish(result: dict[str, Any], text: str, json_path: Path | None) -> None:
    """Print the rendered comparison and, when asked, write it as JSON."""
    print(text)
    if json_path:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


def compare(records: Sequence[dict[str, Any]], extra_labels: Sequence[str] = ()) -> dict[str, Any]:
    """Per `query/retrieval`: row summaries and the paired comparisons, on the instances every row has."""
    comparisons = list(COMPARISONS)
    for label in extra_labels:
        comparisons += [(label, "none"), (label, "dictionary"), ("llm", label)]
    result: dict[str, Any] = {}
    groups = sorted({(r["query"], r["retrieval"]) for r in records})
    for query, retrieval in groups:
        mine = [r for r in records if (r["query"], r["retrieval"]) == (query, retrieval)]
        by_rewrite: dict[str, dict[str, dict[str, Any]]] = {}
        for record in mine:
            by_rewrite.setdefault(record["rewrite"], {})[record["id"]] = record
        shared = set.intersection(*(set(rows) for rows in by_rewrite.values())) if by_rewrite else set()
        entry: dict[str, Any] = {"paired_instances": len(shared), "rows": {}, "comparisons": {}}
        for rewrite, rows in by_rewrite.items():
            entry["rows"][rewrite] = row_summary([rows[i] for i in sorted(shared)])
        for candidate, baseline in comparisons:
            if candidate not in by_rewrite or baseline not in by_rewrite:
                continue
            cells = paired_cells(by_rewrite[baseline], by_rewrite[candidate], shared)
            entry["comparisons"][f"{candidate} vs {baseline}"] = cells
        result[f"{query}/{retrieval}"] = entry
    return result


def render(result: dict[str, Any]) -> str:
    lines: list[str] = []
    for group, entry in result.items():
        lines += [f"## {group} ({entry['paired_instances']} instances in every row)", ""]
        head = ["rewrite", "n", *METRICS, "ms p50/p95", "proposed", "dropped", "invented", "fallbacks"]
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for rewrite, row in entry["rows"].items():
            ms = f"{row['rewrite_ms_p50']} / {row['rewrite_ms_p95']}" if row["rewrite_ms_p50"] is not None else "-"
            cells = [rewrite, row["n"], *(row[m] for m in METRICS), ms, row["proposed"], row["dropped"]]
            cells += [row["invented"], row["fallbacks"]]
            lines.append("| " + " | ".join(str(c) for c in cells) + " |")
        lines += ["", "| comparison | " + " | ".join(METRICS) + " |", "|" + "---|" * (len(METRICS) + 1)]
        for name, cells in entry["comparisons"].items():
            text = [cell_text(c) for c in cells.values()]
            lines.append(f"| {name} | " + " | ".join(text) + " |")
        lines.append("")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="the harness's output folder")
    parser.add_argument("--json", type=Path, help="also write the comparison here")
    parser.add_argument(
        "--with",
        dest="others",
        action="append",
        default=[],
        metavar="NAME=FOLDER",
        help="another run's llm rows as the row NAME (repeatable)",
    )
    args = parser.parse_args(argv)
    records = load(args.out)
    labels: list[str] = []
    for spec in args.others:
        label, sep, folder = spec.partition("=")
        if not sep or not label or not folder:
            parser.error(f"--with {spec!r}: expected NAME=FOLDER")
        if not (Path(folder) / "results.jsonl").is_file():
            parser.error(f"--with {spec!r}: {folder}/results.jsonl does not exist")
        records += load(Path(folder), label=label)
        labels.append(label)
    result = compare(records, labels)
    publish(result, render(result), args.json)
    return 0
