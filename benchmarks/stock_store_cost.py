"""What an embedded store costs in the stock recipe: Qdrant's local mode against Haystack's in-memory store.

    python benchmarks/stock_store_cost.py --repo pallets/flask --out benchmarks/results/stock-store-cost.json

One SWE-QA corpus is chunked by the stock tutorial pipeline and embedded by the stock sentence-transformers embedder
(vectors from `stock_pipelines.py`'s cache, computed there); the same chunks are written to an
`InMemoryDocumentStore` and to a `QdrantDocumentStore(path=...)` (local mode: no server), and the corpus's questions
are asked of each store's embedding retriever. Printed: write seconds, query p50 / p95 ms, the folder's size, the
seconds to reopen it, the import time of each integration (a fresh interpreter), and whether both stores return the
same top 10 for every question.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def _stock() -> Any:
    spec = importlib.util.spec_from_file_location("stock_pipelines", Path(__file__).with_name("stock_pipelines.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _import_seconds(module: str) -> float:
    code = f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return round(float(out.stdout.strip()), 2)


def _folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", default="pallets/flask")
    parser.add_argument("--cache-dir", default="/work/bench-cache")
    parser.add_argument("--git-root", default="/work/.mirror")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)

    from haystack.components.retrievers.in_memory import InMemoryEmbeddingRetriever
    from haystack.document_stores.in_memory import InMemoryDocumentStore
    from haystack_integrations.components.retrievers.qdrant import QdrantEmbeddingRetriever
    from haystack_integrations.document_stores.qdrant import QdrantDocumentStore

    from haystack_integrations.components.code_alias.core.builder import DictionaryBuilder
    from haystack_integrations.components.code_alias.evaluation.corpus import CorpusCache, CorpusResolver
    from haystack_integrations.components.code_alias.evaluation.golden import load_golden
    from haystack_integrations.components.code_alias.retrieval.embedders import resolve_model

    stock = _stock()
    items = [i for i in load_golden(stock.SETS["sweqa"][0]) if i.repo == args.repo]
    resolver = CorpusResolver(CorpusCache(args.cache_dir), mode="git", git_root=args.git_root)
    corpus = resolver.resolve(items[0].repo, items[0].version, items[0].base_commit)
    dictionary, _ = DictionaryBuilder().refresh(corpus.root, None)
    store = stock.stock_index(corpus.root, sorted(dictionary.files))
    cache = stock.VectorCache(Path(args.cache_dir) / "stock-vectors" / "all-MiniLM-L6-v2.sqlite")
    doc_embedder, text_embedder = stock.make_cached_embedders(resolve_model("all-MiniLM-L6-v2")[0], cache)
    chunks = doc_embedder.run(documents=store.filter_documents())["documents"]
    vectors = [text_embedder.run(text=item.question)["embedding"] for item in items]
    load_before = stock._load()

    report: dict[str, Any] = {"repo": args.repo, "chunks": len(chunks), "questions": len(items)}
    folder = Path(tempfile.mkdtemp(prefix="stock-qdrant-"))
    try:
        stores: dict[str, Any] = {}
        started = time.perf_counter()
        memory = InMemoryDocumentStore(embedding_similarity_function="cosine")
        memory.write_documents(chunks)
        stores["in_memory"] = (memory, InMemoryEmbeddingRetriever(document_store=memory, top_k=10))
        report["in_memory"] = {"write_s": round(time.perf_counter() - started, 2)}
        started = time.perf_counter()
        qdrant = QdrantDocumentStore(path=str(folder), index="stock", embedding_dim=384, progress_bar=False)
        qdrant.write_documents(chunks)
        stores["qdrant_local"] = (qdrant, QdrantEmbeddingRetriever(document_store=qdrant, top_k=10))
        report["qdrant_local"] = {"write_s": round(time.perf_counter() - started, 2)}
        tops: dict[str, list[list[str]]] = {}
        for name, (_, retriever) in stores.items():
            times, tops[name] = [], []
            for vector in vectors:
                started = time.perf_counter()
                found = retriever.run(query_embedding=vector)["documents"]
                times.append(1000 * (time.perf_counter() - started))
                tops[name].append([d.id for d in found])
            report[name]["query_ms_p50"] = round(statistics.median(times), 2)
            report[name]["query_ms_p95"] = round(sorted(times)[int(0.95 * (len(times) - 1))], 2)
        same = sum(a == b for a, b in zip(tops["in_memory"], tops["qdrant_local"], strict=True))
        report["same_top10"] = f"{same}/{len(items)}"
        qdrant.close()
        report["qdrant_local"]["folder_bytes"] = _folder_bytes(folder)
        started = time.perf_counter()
        reopened = QdrantDocumentStore(path=str(folder), index="stock", embedding_dim=384, progress_bar=False)
        assert reopened.count_documents() == len(chunks)
        report["qdrant_local"]["reopen_s"] = round(time.perf_counter() - started, 2)
        reopened.close()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    report["import_s"] = {
        "qdrant_haystack": _import_seconds("haystack_integrations.document_stores.qdrant"),
        "haystack_in_memory": _import_seconds("haystack.document_stores.in_memory"),
    }
    report["load_before"], report["load_after"] = load_before, stock._load()
    Path(args.out).write_text(json.dumps(report, indent=1), encoding="utf-8")
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
