"""Does the answer say "nothing matches well" when nothing does? Nonsense and off-topic questions against real indexes.

Asks every question of `benchmarks/sets/nonsense.jsonl` (keyboard mash, "?", other domains, everyday questions
built on code words; never fitted on) of each index given, through `CodeSearch.ask` as the CLI does, and reports
the share that abstains (overall, per category, per index), the confidence, and any answer that came back empty
for a question with words (an index with documents should always show the closest places).

    python benchmarks/abstention.py --index flask=/path/to/index --index rich=/path/to/other \\
        --questions benchmarks/sets/nonsense.jsonl --out benchmarks/results/abstention
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from haystack_integrations.components.code_alias.app.search import CodeSearch

_WORD = re.compile(r"[A-Za-z0-9]")


def ask_all(search: CodeSearch, questions: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for item in questions:
        answer = search.ask(item["question"])
        rows.append(
            {
                "id": item.get("id"),
                "category": (item.get("meta") or {}).get("category"),
                "question": item["question"],
                "abstained": answer.abstained,
                "confidence": answer.confidence,
                "symbols": len(answer.symbols),
                "files": len(answer.files),
                "has_words": bool(_WORD.search(item["question"])),
            }
        )
    return rows


def summary(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    def share(selected: Sequence[dict[str, Any]]) -> float:
        return round(100.0 * sum(r["abstained"] for r in selected) / len(selected), 1) if selected else float("nan")

    categories = sorted({str(r["category"]) for r in rows})
    return {
        "n": len(rows),
        "abstained_percent": share(rows),
        "by_category": {c: share([r for r in rows if str(r["category"]) == c]) for c in categories},
        "empty_with_words": sum(1 for r in rows if r["has_words"] and not r["files"]),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--index", action="append", required=True, help="NAME=INDEX_DIR (an index `ask` can read)")
    parser.add_argument("--questions", type=Path, default=Path("benchmarks/sets/nonsense.jsonl"))
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    questions = [json.loads(line) for line in args.questions.read_text(encoding="utf-8").splitlines() if line.strip()]
    args.out.mkdir(parents=True, exist_ok=True)
    report: dict[str, Any] = {"command": " ".join(["python", "benchmarks/abstention.py", *(argv or sys.argv[1:])]),
                              "date": time.strftime("%Y-%m-%d"), "indexes": {}}
    every: list[dict[str, Any]] = []
    for name, folder in (item.split("=", 1) for item in args.index):
        started = time.perf_counter()
        search = CodeSearch(folder)
        rows = ask_all(search, questions)
        search.close()
        every.extend({**row, "index": name} for row in rows)
        report["indexes"][name] = {**summary(rows), "mode": search.answering_with, "seconds": round(
            time.perf_counter() - started, 1)}
        print(f"{name}: {report['indexes'][name]}", file=sys.stderr, flush=True)
    report["all"] = summary(every)
    (args.out / "abstention.json").write_text(json.dumps(report, indent=1), encoding="utf-8")
    with (args.out / "answers.jsonl").open("w", encoding="utf-8") as handle:
        for row in every:
            handle.write(json.dumps(row) + "\n")
    print(json.dumps(report["all"], indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
