"""What semantic hints cost on one tree: card embedding, time to "Answerable now", the card store, rewrite latency.

Builds a `--lexical --semantic-hints` index of the tree in a fresh folder (with its own empty embedding cache unless
CODE_ALIAS_EMBEDDING_CACHE names one, so every card is embedded), then times the dictionary rewrite over the
questions with the question vector (semantic hints) and without (today's hints), side by side in one process;
medians and p95 over three passes.

    python benchmarks/semantic_hints_cost.py --tree /path/to/Django-3.0 \\
        --questions ../shared/bench/swebench_lite.jsonl --repo django/django --out benchmarks/results/semantic_cost.json
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np

from haystack_integrations.components.code_alias.app.search import CodeSearch
from haystack_integrations.components.code_alias.retrieval.embedders import CodeQuestionEmbedder
from haystack_integrations.components.code_alias.rewriting.rewriter import ConstrainedQueryRewriter


def _questions(path: Path, repo: str | None, limit: int) -> list[str]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        if repo and item.get("repo") != repo:
            continue
        text = item.get("problem_statement") or item.get("question") or ""
        out.append(text.strip().splitlines()[0][:300] if text.strip() else "")
    return [q for q in out if q][:limit]


def _percentiles(values: list[float]) -> dict[str, float]:
    return {"p50": round(float(np.percentile(values, 50)), 3), "p95": round(float(np.percentile(values, 95)), 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", type=Path, required=True)
    parser.add_argument("--questions", type=Path, required=True)
    parser.add_argument("--repo", default=None, help="only the questions of this repository")
    parser.add_argument("--limit", type=int, default=200)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "index"
        search = CodeSearch(folder, lexical=True, semantic_hints=True)
        stats = search.index(args.tree)
        cards = stats["cards"]
        rewriter = ConstrainedQueryRewriter(index_dir=str(folder))
        rewriter.warm_up()
        loaded = rewriter.handle.cards()
        assert loaded is not None
        embedder = CodeQuestionEmbedder()
        embedder.warm_up()
        questions = _questions(args.questions, args.repo, args.limit)
        embed_ms, vectors = [], []
        for question in questions:
            started = time.perf_counter()
            vectors.append(embedder.run(question=question)["vector"])
            embed_ms.append((time.perf_counter() - started) * 1000)
        with_cards, without = [], []
        for _ in range(3):
            for question, vector in zip(questions, vectors, strict=True):
                started = time.perf_counter()
                rewriter.run(question=question, question_vector=vector)
                with_cards.append((time.perf_counter() - started) * 1000)
                started = time.perf_counter()
                rewriter.run(question=question)
                without.append((time.perf_counter() - started) * 1000)
        report = {
            "tree": str(args.tree),
            "symbols": stats["dictionary"].get("symbols"),
            "cards": cards["cards"],
            "cards_seconds": cards["seconds"],
            "cards_per_second": round(cards["embedded"] / max(cards["seconds"], 1e-9), 1),
            "answerable_seconds": stats["seconds"],
            "card_file_bytes": cards["bytes"],
            "card_matrix_bytes": int(loaded.matrix.nbytes),
            "questions": len(questions),
            "question_embedding_ms": _percentiles(embed_ms),
            "rewrite_ms_with_semantic_hints": _percentiles(with_cards),
            "rewrite_ms_without": _percentiles(without),
        }
    print(json.dumps(report, indent=2))
    if args.out:
        args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
