"""Draw `ranking_variants.py` reports side by side: per target figure, each fit's seeds and its other variants.

    V=benchmarks/results/ranking-variants
    python benchmarks/ranking_variants_plot.py shipped=$V/report.json "31 leaves=$V/big-files/report.json" \\
        --out $V/seeds.png

One panel per figure (the columns of `ranking_variants.FIGURES`); one row per report (`LABEL=PATH`, or its folder):
its seeds as dots joined by their spread, every other variant (graph centrality) as a cross. A lift is drawn as its
mean difference in points (wins and losses are in the reports' tables).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ranking_variants import FIGURES


def draw(reports: Sequence[tuple[str, dict[str, Any]]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    columns = [column for column, *_ in FIGURES]
    figure, axes = plt.subplots(len(columns), 1, figsize=(8, 1.0 + 0.35 * len(reports) * len(columns)), squeeze=False)
    for axis, column in zip(axes[:, 0], columns, strict=True):
        for row, (_, report) in enumerate(reports):
            seeds = [v for v in report["variants"] if v["variant"].startswith("seed ") and column in v["figures"]]
            values = [v["figures"][column]["value"] for v in seeds]
            if values:
                axis.plot([min(values), max(values)], [row, row], color="tab:blue", linewidth=3, alpha=0.35)
                axis.plot(values, [row] * len(values), "o", color="tab:blue", markersize=4)
            for other in report["variants"]:
                if not other["variant"].startswith("seed ") and column in other["figures"]:
                    axis.plot(other["figures"][column]["value"], row, "x", color="tab:red", markersize=7)
        axis.set_yticks(range(len(reports)), [label for label, _ in reports], fontsize=7)
        axis.set_ylim(-0.6, len(reports) - 0.4)
        axis.set_title(column, fontsize=8, loc="left")
        axis.tick_params(axis="x", labelsize=7)
    figure.suptitle("Out of fold by repository: dots = one fit per seed, x = graph centrality", fontsize=9)
    figure.tight_layout(rect=(0.0, 0.0, 1.0, 1.0 - 0.4 / figure.get_figheight()))
    figure.savefig(path, dpi=110)
    plt.close(figure)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("reports", nargs="+", help="[LABEL=]report.json of ranking_variants.py")
    parser.add_argument("--out", type=Path, required=True, help="the PNG to write")
    args = parser.parse_args(argv)
    reports = []
    for item in args.reports:
        label, _, named = item.rpartition("=")
        path = Path(named)
        try:
            report = json.loads(path.read_text(encoding="utf-8"))
            report["variants"]
        except (OSError, ValueError, KeyError, TypeError) as error:
            parser.error(f"{path}: not a ranking_variants.py report ({error})")
        reports.append((label or path.parent.name, report))
    draw(reports, args.out)
    print(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
