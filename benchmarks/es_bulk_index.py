"""Bulk indexing throughput (documents/s) of the Elasticsearch backend, against the server ELASTICSEARCH_URL names.

Writes synthetic code chunks (about 0.8 KB of code-like text and a 384-float embedding each, the shape the
indexing pipeline produces) into a fresh index with the code mapping, through the same paths the indexing
pipeline uses:

* `store.write_documents` in batches (one bulk request per batch), for several batch sizes;
* `IndexSyncWriter` (batches, progress bar off, stale-chunk deletes) for a first sync and a re-sync where a
  tenth of the files changed.

It prints which server answered (a real Elasticsearch, or noida-db, the protocol stand-in used in CI: its
figures say nothing about Elasticsearch's speed) and one line per measurement, and `--json` writes them.

    export ELASTICSEARCH_URL=http://localhost:9200     # or: export ELASTICSEARCH_URL=$(.ci/start-noida.sh)
    python benchmarks/es_bulk_index.py --documents 20000
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import random
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from haystack import Document
from haystack.document_stores.types import DuplicatePolicy

from haystack_integrations.components.code_alias.elasticsearch import CodeElasticsearchDocumentStore
from haystack_integrations.components.code_alias.indexing.sync import IndexSyncPlanner, IndexSyncWriter

WORDS = [
    "payment",
    "retry",
    "backoff",
    "stripe",
    "client",
    "request",
    "response",
    "parse",
    "http",
    "journal",
    "ledger",
    "entry",
    "post",
    "balance",
    "currency",
    "rate",
    "table",
    "convert",
    "token",
    "access",
    "gate",
    "user",
    "session",
    "cache",
    "refresh",
    "timeout",
    "error",
    "handler",
    "queue",
    "message",
    "notify",
    "email",
    "template",
    "render",
    "button",
    "checkout",
    "cart",
    "order",
    "invoice",
    "tax",
]


def identifier(rng: random.Random) -> str:
    parts = rng.sample(WORDS, rng.randint(2, 4))
    return parts[0] + "".join(p.capitalize() for p in parts[1:])


def chunk_text(rng: random.Random, name: str) -> str:
    lines = [f"def {name}({identifier(rng)}, {identifier(rng)}):", f'    """{" ".join(rng.sample(WORDS, 8))}."""']
    while sum(len(line) + 1 for line in lines) < 800:
        lines.append(f"    {identifier(rng)} = {identifier(rng)}({identifier(rng)}, {rng.randint(0, 999)})")
    return "\n".join(lines)


def make_repo(documents: int, chunks_per_file: int, seed: int, dim: int) -> dict[str, list[Document]]:
    """file_path -> its chunks (with file_sha256 and file_chunk_count as CodeSplitter sets them)."""
    rng = random.Random(seed)
    files: dict[str, list[Document]] = {}
    for start in range(0, documents, chunks_per_file):
        path = f"pkg{start // 1000}/mod_{start // chunks_per_file}.py"
        count = min(chunks_per_file, documents - start)
        bodies = [(name := identifier(rng), chunk_text(rng, name)) for _ in range(count)]
        sha = hashlib.sha256("\n\n".join(b for _, b in bodies).encode()).hexdigest()
        files[path] = [
            Document(
                content=body,
                embedding=[rng.uniform(-1, 1) for _ in range(dim)],
                meta={
                    "file_path": path,
                    "language": "python",
                    "symbol": name,
                    "qualified_name": f"{path[:-3].replace('/', '.')}.{name}",
                    "kind": "function",
                    "package": f"acme-pkg{start // 1000}",
                    "start_line": 1 + 20 * number,
                    "end_line": 20 * (number + 1),
                    "file_sha256": sha,
                    "file_chunk_count": count,
                },
            )
            for number, (name, body) in enumerate(bodies)
        ]
    return files


def file_documents(repo: dict[str, list[Document]]) -> list[Document]:
    return [
        Document(content="", meta={"file_path": path, "file_sha256": chunks[0].meta["file_sha256"]})
        for path, chunks in repo.items()
    ]


def server_identity(store: CodeElasticsearchDocumentStore) -> dict[str, Any]:
    info = dict(store.client.info())
    version = info.get("version", {})
    noida = "noida" in f"{version.get('build_hash', '')} {info.get('name', '')} {info.get('cluster_uuid', '')}"
    return {
        "url": store.hosts,
        "product": "noida-db (Elasticsearch-protocol stand-in, not Elasticsearch)" if noida else "Elasticsearch",
        "reported_version": version.get("number"),
        "build_hash": version.get("build_hash"),
    }


def fresh_store(base: str, dim: int) -> CodeElasticsearchDocumentStore:
    return CodeElasticsearchDocumentStore(index=f"{base}-{uuid.uuid4().hex[:8]}", embedding_dim=dim)


def drop(store: CodeElasticsearchDocumentStore) -> None:
    store.client.indices.delete(index=store.index, ignore_unavailable=True)
    store.close()


def bench_write_documents(chunks: list[Document], batch_size: int, base: str, dim: int) -> dict[str, Any]:
    store = fresh_store(base, dim)
    try:
        store.count_documents()  # connect and create the index outside the timing
        started = time.perf_counter()
        for i in range(0, len(chunks), batch_size):
            last = i + batch_size >= len(chunks)
            store.write_documents(
                chunks[i : i + batch_size], policy=DuplicatePolicy.OVERWRITE, refresh="wait_for" if last else False
            )
        seconds = time.perf_counter() - started
        assert store.count_documents() == len(chunks)
        return {"path": "write_documents", "batch_size": batch_size, "documents": len(chunks), "seconds": seconds}
    finally:
        drop(store)


def bench_sync(
    repo: dict[str, list[Document]], batch_size: int, base: str, dim: int, seed: int
) -> list[dict[str, Any]]:
    store = fresh_store(base, dim)
    results = []
    try:
        store.count_documents()
        planner = IndexSyncPlanner(document_store=store)
        writer = IndexSyncWriter(document_store=store, batch_size=batch_size, progress_bar=False)
        for label, current in (("first sync", repo), ("re-sync, 10% of files changed", _touch(repo, seed))):
            started = time.perf_counter()
            plan = planner.run(documents=file_documents(current))
            chunks = [c for d in plan["changed"] for c in current[d.meta["file_path"]]]
            stats = writer.run(
                documents=chunks, removed_files=plan["removed_files"], changed_files=plan["changed_files"]
            )
            seconds = time.perf_counter() - started
            results.append(
                {
                    "path": f"IndexSyncPlanner + IndexSyncWriter ({label})",
                    "batch_size": batch_size,
                    "documents": stats["written"],
                    "deleted": stats["deleted"],
                    "files_in_tree": len(current),
                    "seconds": seconds,
                }
            )
        return results
    finally:
        drop(store)


def _touch(repo: dict[str, list[Document]], seed: int) -> dict[str, list[Document]]:
    """A copy of `repo` where every tenth file has new content (new hash, new chunk ids)."""
    rng = random.Random(seed + 1)
    changed: dict[str, list[Document]] = {}
    for number, (path, chunks) in enumerate(repo.items()):
        if number % 10:
            changed[path] = chunks
            continue
        sha = hashlib.sha256(f"{chunks[0].meta['file_sha256']}:edited".encode()).hexdigest()
        changed[path] = [
            Document(
                content=f"{c.content}\n    # edited {rng.random()}",
                embedding=c.embedding,
                meta={**c.meta, "file_sha256": sha},
            )
            for c in chunks
        ]
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--documents", type=int, default=20_000, help="chunks to index (default 20000)")
    parser.add_argument("--chunks-per-file", type=int, default=8)
    parser.add_argument("--batch-sizes", default="250,500,1000", help="comma-separated (default 250,500,1000)")
    parser.add_argument("--sync-batch-size", type=int, default=500, help="IndexSyncWriter batch size (default 500)")
    parser.add_argument("--dim", type=int, default=384, help="embedding size (default 384, all-MiniLM-L6-v2)")
    parser.add_argument("--index-prefix", default="code-alias-bench")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)
    if not os.environ.get("ELASTICSEARCH_URL"):
        print("es_bulk_index: set ELASTICSEARCH_URL (e.g. http://localhost:9200)", file=sys.stderr)
        return 2

    repo = make_repo(args.documents, args.chunks_per_file, args.seed, args.dim)
    chunks = [c for file_chunks in repo.values() for c in file_chunks]
    probe = fresh_store(args.index_prefix, args.dim)
    try:
        server = server_identity(probe)
    finally:
        drop(probe)
    average = sum(len(c.content or "") for c in chunks) / len(chunks)
    print(f"server: {server['product']} at {server['url']} (reports version {server['reported_version']})")
    print(f"corpus: {len(chunks)} chunks in {len(repo)} files, {average:.0f} chars of code + {args.dim} floats each")
    print(f"client: Python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs")

    results: list[dict[str, Any]] = []
    for size in (int(s) for s in args.batch_sizes.split(",") if s.strip()):
        results.append(bench_write_documents(chunks, size, args.index_prefix, args.dim))
    results.extend(bench_sync(repo, args.sync_batch_size, args.index_prefix, args.dim, args.seed))
    for row in results:
        row["documents_per_second"] = round(row["documents"] / row["seconds"], 1) if row["seconds"] else None
        row["seconds"] = round(row["seconds"], 3)
        extra = f", {row['deleted']} deleted" if "deleted" in row else ""
        print(
            f"{row['path']:<58} batch {row['batch_size']:>5}: {row['documents']:>6} docs{extra} in "
            f"{row['seconds']:>7.2f} s = {row['documents_per_second']:>8} docs/s"
        )
    if args.json:
        args.json.write_text(json.dumps({"server": server, "results": results}, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
