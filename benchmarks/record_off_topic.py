"""Record off-topic pools for the answer-confidence model: each corpus of a recorded run asked other repositories'
questions (`evaluation.ranking_data.record_off_topic`). Their first file is never right; `fit_ranking.py --off-topic`
adds them to the confidence model's negatives only (the ranking models never see them).

    python benchmarks/record_off_topic.py --run .bench-cache/runs/rec-sweqa-lexsem --cache-dir .bench-cache \
        --out .bench-cache/runs/offtopic-sweqa-lexsem --lexical --semantic-hints --per-corpus 30
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from haystack_integrations.components.code_alias.evaluation.ranking_data import (
    PoolRecordingSearcher,
    record_off_topic,
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run", type=Path, required=True, help="a recorded run (its results.jsonl names the corpora)")
    parser.add_argument("--cache-dir", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--per-corpus", type=int, default=30)
    parser.add_argument("--lexical", action="store_true")
    parser.add_argument("--semantic-hints", action="store_true")
    args = parser.parse_args()
    questions: dict[str, dict[str, str]] = {}
    for line in (args.run / "results.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        questions.setdefault(record["corpus"], {})[record["id"]] = record["question"]
    args.out.mkdir(parents=True, exist_ok=True)
    searcher = PoolRecordingSearcher(
        args.cache_dir.absolute(),
        out=args.out,
        lexical=args.lexical,
        semantic_hints=True if args.semantic_hints else None,
    )
    written = record_off_topic(
        searcher,
        args.cache_dir.absolute() / "corpora",
        {key: sorted(items.items()) for key, items in questions.items()},
        per_corpus=args.per_corpus,
        retrieval="bm25" if args.lexical else "hybrid",
    )
    print(f"{written} off-topic records in {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
