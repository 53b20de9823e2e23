"""Whether two harness runs ranked every instance the same: top-20 files, top-20 symbols and the rewrite.

    python benchmarks/same_rankings.py /work/runs/before /work/runs/after

For a change that must not move anything (a refactor): `runs_paired.py` compares the metrics, this the lists
themselves. Exits 1 when a row differs, naming it.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

DEPTH = 20


def _rows(folder: Path) -> dict[tuple[str, str], dict[str, Any]]:
    with (folder / "results.jsonl").open(encoding="utf-8") as handle:
        return {(row["config"], row["id"]): row for row in map(json.loads, handle)}


def _same(a: dict[str, Any], b: dict[str, Any], depth: int) -> bool:
    return (
        a["files"][:depth] == b["files"][:depth]
        and a["functions"][:depth] == b["functions"][:depth]
        and a.get("rewritten") == b.get("rewritten")
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before", type=Path, help="a `code-alias bench run --out` folder")
    parser.add_argument("after", type=Path)
    parser.add_argument("--depth", type=int, default=DEPTH)
    args = parser.parse_args(argv)
    before, after = _rows(args.before), _rows(args.after)
    if before.keys() != after.keys():
        print(f"different rows: {len(before)} before, {len(after)} after")
        return 1
    differ = [key for key in before if not _same(before[key], after[key], args.depth)]
    print(f"{len(before) - len(differ)}/{len(before)} rows with identical top-{args.depth} files, symbols and rewrite")
    for config, instance in differ:
        print(f"differs: {config} {instance}")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
