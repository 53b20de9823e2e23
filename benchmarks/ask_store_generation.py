"""Per-question cost of checking the derived caches: the store's change counter vs hashing every document id.

Alternates the two in one process on one index (so both see the same load) and prints the median `ask` time:

    python benchmarks/ask_store_generation.py .bench-cache/indexes/hybrid/sympy-1.9
"""

from __future__ import annotations

import argparse
import statistics
import time

from haystack_integrations.components.code_alias.app.search import CodeSearch
from haystack_integrations.components.code_alias.indexing.store import CodeIndexDocumentStore

QUESTIONS = [
    "Matrix determinant is wrong for symbolic entries",
    "simplify fails on trigonometric expression",
    "lambdify does not handle Piecewise",
    "latex printer wrong output for Integral",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("index_dir")
    parser.add_argument("--rounds", type=int, default=8)
    args = parser.parse_args()
    search = CodeSearch(args.index_dir)
    search.warm_up()
    counter = CodeIndexDocumentStore.generation
    hidden = property(lambda _store: None)  # without a counter every cache fingerprints the store's contents
    times: dict[str, list[float]] = {"counter": [], "hash": []}
    try:
        for _ in range(args.rounds):
            for mode in times:
                CodeIndexDocumentStore.generation = counter if mode == "counter" else hidden  # type: ignore[method-assign]
                for question in QUESTIONS:
                    started = time.perf_counter()
                    search.ask(question, top_k=10)
                    times[mode].append(1000 * (time.perf_counter() - started))
    finally:
        CodeIndexDocumentStore.generation = counter  # type: ignore[method-assign]
    chunks = search.query_pipeline.get_component("bm25_retriever").document_store.count_documents()
    medians = {mode: f"{statistics.median(values):.1f} ms" for mode, values in times.items()}
    print(f"{args.index_dir}: {chunks} chunks, ask p50 {medians}")


if __name__ == "__main__":
    main()
