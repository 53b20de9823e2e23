"""One picture of the LLM rewrite rows: each set a panel, each row's file Acc@1 / Acc@5 and symbol hit@5 as bars,
its rewrite p50 over them.

    python benchmarks/llm_plot.py --set "SWE-QA dev (299)=.bench-cache/results/sweqa-llm-paired.json" \
        --set "JS/TS titles (33)=.bench-cache/results/jsts-llm-paired.json" --out benchmarks/results/llm-rows.png

Input: the comparisons `benchmarks/llm_paired.py --json` writes (`benchmarks/llm_rows.sh` writes one per set).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

METRICS = (("acc@1", "file Acc@1"), ("acc@5", "file Acc@5"), ("sym_hit@5", "symbol hit@5"))
ROW_NAMES = {"llm": "llm 1.5B", "0.5b": "llm 0.5B", "llm-free": "unconstrained 1.5B"}
ORDER = ("none", "dictionary", "llm", "0.5b", "llm-free")


def panels(specs: Sequence[str]) -> list[tuple[str, dict[str, Any]]]:
    """(title, rows) per `TITLE=FILE`, the rows of the file's first query/retrieval group."""
    out = []
    for spec in specs:
        title, sep, file = spec.partition("=")
        if not sep or not title or not file:
            raise ValueError(f"--set {spec!r}: expected TITLE=FILE")
        try:
            comparison = json.loads(Path(file).read_text(encoding="utf-8"))
            group = next(iter(comparison.values()))
            out.append((f"{title}, n {group['paired_instances']}", group["rows"]))
        except (OSError, ValueError, StopIteration, KeyError) as error:
            raise ValueError(f"--set {spec!r}: {file} is not a llm_paired.py --json file ({error})") from None
    return out


def plot(figures: Sequence[tuple[str, dict[str, Any]]], path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(figures), figsize=(5.5 * len(figures), 4.2), squeeze=False)
    width = 0.8 / len(METRICS)
    for ax, (title, rows) in zip(axes[0], figures, strict=True):
        names = sorted(rows, key=lambda name: ORDER.index(name) if name in ORDER else len(ORDER))
        for m, (key, label) in enumerate(METRICS):
            values = [rows[name].get(key) or 0.0 for name in names]
            ax.bar([i + (m - 1) * width for i in range(len(names))], values, width, label=label)
        for i, name in enumerate(names):
            p50 = rows[name].get("rewrite_ms_p50")
            top = max(rows[name].get(key) or 0.0 for key, _ in METRICS)
            note = f"{p50 / 1000:.1f} s" if p50 else "ms" if name == "dictionary" else ""
            ax.annotate(note, (i, top + 1.5), ha="center", fontsize=8)
        ax.set_xticks(range(len(names)), [ROW_NAMES.get(n, n) for n in names], rotation=20, fontsize=8)
        ax.set_ylim(0, 100)
        ax.set_title(title, fontsize=10)
        ax.grid(axis="y", alpha=0.3)
    axes[0][0].set_ylabel("% of questions (rewrite p50 above the bars)")
    axes[0][0].legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", dest="sets", action="append", required=True, metavar="TITLE=FILE")
    parser.add_argument("--out", type=Path, required=True, help="the PNG to write")
    args = parser.parse_args(argv)
    try:
        figures = panels(args.sets)
    except ValueError as error:
        parser.error(str(error))
    print(plot(figures, args.out))
    return 0
