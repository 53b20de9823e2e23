"""The three components in stock Haystack pipelines, as a new user wires them: paired rows on the dev sets.

    python benchmarks/stock_pipelines.py --set sweqa --out benchmarks/results/stock-sweqa.json
    python benchmarks/stock_pipelines.py --set jsts --out benchmarks/results/stock-jsts.json
    python benchmarks/stock_pipelines.py --set sweqa --hybrid --repos pallets/flask,psf/requests \\
        --out benchmarks/results/stock-sweqa-hybrid.json
    python benchmarks/stock_pipelines.py --compare benchmarks/results/stock-sweqa.json rewrite:rewrite_semantic

Each corpus (a repository at the item's commit, materialised from the git mirrors by the harness's `CorpusCache`)
is indexed by Haystack's own tutorial pipeline, nothing of ours: `TextFileToDocument` -> `DocumentSplitter` (word,
150 / 50) -> `DocumentWriter` into an `InMemoryDocumentStore`, over the source files the alias dictionary reads.
`AliasDictionaryBuilder` builds the dictionary beside it (with `embedder=` the stock
`SentenceTransformersDocumentEmbedder` on the packaged all-MiniLM-L6-v2 for the semantic rows). Rows, all through
the stock `InMemoryBM25Retriever` (top 30 chunks):

- `raw`: the question;
- `rewrite`: the dictionary rewrite's `lexical_query` (question + chosen identifiers + their word splits);
- `rewrite_retrieved`: the same, the rewriter also given the raw question's 10 best chunks (`retrieved_documents`);
- `rewrite_retrieved_semantic`: and the question's vector from the stock `SentenceTransformersTextEmbedder`;
- `rewrite_semantic`: semantic hints without the retrieved ones;
- `rewritten_text`: the `rewritten` output sent as is (the issue's first wiring);
- `joined`: `DocumentJoiner` (reciprocal rank) over the raw and the `rewrite_retrieved_semantic` lists.

With `--hybrid` (a stock `InMemoryEmbeddingRetriever` on the same chunks embedded by the stock document embedder,
joined with BM25 by `DocumentJoiner` in reciprocal-rank mode): `hybrid_raw` (question to both) against
`hybrid_rewrite` (`lexical_query` to BM25, `embedding_query` to the embedder, retrieved + semantic hints) and
`hybrid_rewrite_question` (the rewrite for BM25 only, the question to the embedder); and the embedding retriever
alone, `embedding_question` against `embedding_rewrite` (`embedding_query` embedded).

Ranked files are the chunks' files in order of first appearance; ranked symbols are the definitions each chunk shows
(`rewriting.chunk_definitions.DefinitionLocator`, the rewriter's mapping), deduplicated. Metrics as the harness's:
file hit@1/@5 (any gold file), file Acc@5 (all gold files), symbol hit@5; each row against `raw` (and the hybrid
rows against `hybrid_raw`) paired, wins / losses and a two-sided sign test. Vectors of chunks, cards and questions
are cached by text under `<cache-dir>/stock-vectors/` (computed with the stock embedders; the project's own
embedding cache holds other texts).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sqlite3
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

SETS = {
    "sweqa": ("/work/shared/bench/swe_qa_dev.jsonl", "golden"),
    "jsts": ("/work/shared/bench/swebench_multilingual_jsts.jsonl", "swebench"),
}
BM25_ROWS = (
    "raw",
    "rewrite",
    "rewrite_retrieved",
    "rewrite_retrieved_semantic",
    "rewrite_semantic",
    "rewritten_text",
    "joined",
)
HYBRID_ROWS = ("hybrid_raw", "hybrid_rewrite", "hybrid_rewrite_question", "embedding_question", "embedding_rewrite")
TOP_K = 30
FIRST_PASS_K = 10
SPLIT = {"split_by": "word", "split_length": 150, "split_overlap": 50}


def _load() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()


# ---- a vector cache in front of the stock embedders --------------------------------------------------------------
class VectorCache:
    """Text hash -> float32 vector, one SQLite file per model (the benchmark's, beside the harness's cache)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path)
        self._db.execute("CREATE TABLE IF NOT EXISTS v (k TEXT PRIMARY KEY, b BLOB)")

    @staticmethod
    def key(text: str) -> str:
        return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()

    def get_many(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        for start in range(0, len(keys), 500):
            part = list(keys[start : start + 500])
            marks = ",".join("?" * len(part))
            for key, blob in self._db.execute(f"SELECT k, b FROM v WHERE k IN ({marks})", part):
                found[key] = np.frombuffer(blob, dtype=np.float32)
        return found

    def put_many(self, items: dict[str, np.ndarray]) -> None:
        self._db.executemany(
            "INSERT OR REPLACE INTO v VALUES (?, ?)",
            [(k, np.asarray(v, dtype=np.float32).tobytes()) for k, v in items.items()],
        )
        self._db.commit()


def make_cached_embedders(model_path: str, cache: VectorCache) -> tuple[Any, Any]:
    """The stock sentence-transformers document and text embedders, behind a cache of their vectors by text."""
    from haystack import Document, component
    from haystack_integrations.components.embedders.sentence_transformers import (
        SentenceTransformersDocumentEmbedder,
        SentenceTransformersTextEmbedder,
    )

    documents = SentenceTransformersDocumentEmbedder(model=model_path, local_files_only=True, progress_bar=False)
    texts = SentenceTransformersTextEmbedder(model=model_path, local_files_only=True, progress_bar=False)

    @component
    class CachedDocumentEmbedder:
        """The stock document embedder, computing only vectors the cache lacks (same vectors, same model name)."""

        def __init__(self) -> None:
            self.model = documents.model

        def warm_up(self) -> None:
            documents.warm_up()

        @component.output_types(documents=list[Document])
        def run(self, documents: list[Document]) -> Any:
            batch = documents
            keys = [cache.key(d.content or "") for d in batch]
            known = cache.get_many(keys)
            missing = [d for d, k in zip(batch, keys, strict=True) if k not in known]
            if missing:
                self.warm_up()
                fresh: dict[str, np.ndarray] = {}
                step = 256
                for start in range(0, len(missing), step):
                    part = missing[start : start + step]
                    out = _documents_embedder().run(documents=[Document(content=d.content) for d in part])
                    for source, embedded in zip(part, out["documents"], strict=True):
                        fresh[cache.key(source.content or "")] = np.asarray(embedded.embedding, dtype=np.float32)
                    if len(missing) > step:
                        print(f"    embedded {min(start + step, len(missing))}/{len(missing)}", flush=True)
                cache.put_many(fresh)
                known.update(fresh)
            result = [
                Document(id=d.id, content=d.content, meta=d.meta, embedding=known[k].tolist())
                for d, k in zip(batch, keys, strict=True)
            ]
            return {"documents": result}

    def _documents_embedder() -> Any:
        return documents

    @component
    class CachedTextEmbedder:
        """The stock text embedder behind the same cache."""

        def __init__(self) -> None:
            self.model = texts.model

        def warm_up(self) -> None:
            texts.warm_up()

        @component.output_types(embedding=list[float])
        def run(self, text: str) -> Any:
            key = "q:" + cache.key(text)
            known = cache.get_many([key])
            if key not in known:
                self.warm_up()
                vector = np.asarray(texts.run(text=text)["embedding"], dtype=np.float32)
                cache.put_many({key: vector})
                known[key] = vector
            return {"embedding": known[key].tolist()}

    return CachedDocumentEmbedder(), CachedTextEmbedder()


# ---- one corpus -----------------------------------------------------------------------------------------------------
def stock_index(root: Path, files: Sequence[str]) -> Any:
    """Haystack's tutorial indexing pipeline over `files` of `root`: converter -> word splitter -> writer."""
    from haystack import Pipeline
    from haystack.components.converters import TextFileToDocument
    from haystack.components.preprocessors import DocumentSplitter
    from haystack.components.writers import DocumentWriter
    from haystack.document_stores.in_memory import InMemoryDocumentStore

    store = InMemoryDocumentStore()
    pipeline = Pipeline()
    pipeline.add_component("converter", TextFileToDocument(store_full_path=True))
    pipeline.add_component("splitter", DocumentSplitter(**SPLIT))  # type: ignore[arg-type]
    pipeline.add_component("writer", DocumentWriter(document_store=store))
    pipeline.connect("converter", "splitter")
    pipeline.connect("splitter", "writer")
    pipeline.run({"converter": {"sources": [str(root / f) for f in files]}})
    return store


def ranked(documents: Sequence[Any], root: Path, locator: Any) -> tuple[list[str], list[tuple[str, str]]]:
    """Files in order of first appearance, and the definitions the chunks show, as (file, qualified name)."""
    files: list[str] = []
    symbols: list[tuple[str, str]] = []
    prefix = str(root) + os.sep
    for document in documents:
        path = str(document.meta.get("file_path", ""))
        relative = path[len(prefix) :] if path.startswith(prefix) else path
        if relative not in files:
            files.append(relative)
        for entry in locator.locate(document.meta, document.content).definitions:
            key = (entry.file_path, entry.qualified_name)
            if key not in symbols:
                symbols.append(key)
    return files, symbols


def scores(files: list[str], symbols: list[tuple[str, str]], gold_files: list[str], gold_fns: list[Any]) -> dict:
    from haystack_integrations.components.code_alias.evaluation.metrics import acc_at_k, hit_at_k, symbol_hit_at_k

    out = {
        "file_hit@1": hit_at_k(files, gold_files, 1),
        "file_hit@5": hit_at_k(files, gold_files, 5),
        "file_acc@5": acc_at_k(files, gold_files, 5),
    }
    if gold_fns:
        out["sym_hit@5"] = symbol_hit_at_k(symbols, [(g.file, g.local_name) for g in gold_fns], 5)
    return out


def run_corpus(
    corpus: Any,
    items: list[Any],
    args: argparse.Namespace,
    doc_embedder: Any,
    text_embedder: Any,
) -> list[dict[str, Any]]:
    from haystack.components.joiners import DocumentJoiner
    from haystack.components.retrievers.in_memory import InMemoryBM25Retriever, InMemoryEmbeddingRetriever

    from haystack_integrations.components.code_alias import AliasDictionaryBuilder, ConstrainedQueryRewriter
    from haystack_integrations.components.code_alias.evaluation.golden import gold_functions_for
    from haystack_integrations.components.code_alias.evaluation.runner import default_extract
    from haystack_integrations.components.code_alias.rewriting.chunk_definitions import DefinitionLocator

    started = time.perf_counter()
    index_dir = Path(args.cache_dir) / "stock" / corpus.key
    builder = AliasDictionaryBuilder(index_dir=str(index_dir), embedder=doc_embedder)
    built = builder.run(root=str(corpus.root))
    dictionary = built["dictionary"]
    t_dict = time.perf_counter() - started
    files = sorted(dictionary.files)
    store = stock_index(corpus.root, files)
    t_index = time.perf_counter() - started - t_dict
    chunks = store.count_documents()
    print(
        f"  {corpus.key}: {len(files)} files, {chunks} chunks, {len(dictionary.symbols)} symbols, "
        f"cards {built['cards'].get('cards')} ({built['cards'].get('embedded')} embedded); "
        f"dictionary+cards {t_dict:.0f} s, stock index {t_index:.0f} s",
        flush=True,
    )
    bm25 = InMemoryBM25Retriever(document_store=store, top_k=TOP_K)
    joiner = DocumentJoiner(join_mode="reciprocal_rank_fusion", top_k=TOP_K)
    embedding_retriever = None
    if args.hybrid:
        stored = store.filter_documents()
        embedded = doc_embedder.run(documents=stored)["documents"]
        store.write_documents(embedded, policy="overwrite")
        embedding_retriever = InMemoryEmbeddingRetriever(document_store=store, top_k=TOP_K)
        print(f"    chunk vectors ready ({time.perf_counter() - started:.0f} s)", flush=True)
    rewriter = ConstrainedQueryRewriter(index_dir=str(index_dir))
    rewriter.warm_up()
    locator = DefinitionLocator(dictionary)
    memo: dict[str, list[Any]] = {}

    def search(query: str) -> list[Any]:
        if query not in memo:
            memo[query] = bm25.run(query=query)["documents"]
        return memo[query]

    records = []
    for item in items:
        question = item.question_for("title") if args.set == "jsts" else item.question
        gold_fns, _ = gold_functions_for(item, corpus.read, default_extract)
        gold_files = [p for p in (corpus.map_path(f) for f in item.gold_files) if p]
        vector = text_embedder.run(text=question)["embedding"]
        raw = search(question)
        first = raw[:FIRST_PASS_K]
        plain = rewriter.run(question=question)
        with_retrieved = rewriter.run(question=question, retrieved_documents=first)
        semantic = rewriter.run(question=question, question_vector=vector)
        both = rewriter.run(question=question, retrieved_documents=first, question_vector=vector)
        lists: dict[str, list[Any]] = {
            "raw": raw,
            "rewrite": search(plain["lexical_query"]),
            "rewrite_retrieved": search(with_retrieved["lexical_query"]),
            "rewrite_retrieved_semantic": search(both["lexical_query"]),
            "rewrite_semantic": search(semantic["lexical_query"]),
            "rewritten_text": search(both["rewritten"]),
        }
        lists["joined"] = joiner.run(documents=[raw, lists["rewrite_retrieved_semantic"]])["documents"]
        if embedding_retriever is not None:
            by_question = embedding_retriever.run(query_embedding=vector)["documents"]
            rewritten_vector = text_embedder.run(text=both["embedding_query"])["embedding"]
            by_rewrite = embedding_retriever.run(query_embedding=rewritten_vector)["documents"]
            lists["hybrid_raw"] = joiner.run(documents=[raw, by_question])["documents"]
            lists["hybrid_rewrite"] = joiner.run(documents=[lists["rewrite_retrieved_semantic"], by_rewrite])[
                "documents"
            ]
            lists["hybrid_rewrite_question"] = joiner.run(documents=[lists["rewrite_retrieved_semantic"], by_question])[
                "documents"
            ]
            lists["embedding_question"] = by_question
            lists["embedding_rewrite"] = by_rewrite
        record: dict[str, Any] = {
            "id": item.id,
            "repo": item.repo,
            "corpus": corpus.key,
            "question": question,
            "symbols": both["symbols"],
            "retrieved_meta": both["meta"].get("retrieved"),
            "semantic_meta": both["meta"].get("semantic"),
            "rows": {},
        }
        for row, documents in lists.items():
            files_ranked, symbols_ranked = ranked(documents, corpus.root, locator)
            record["rows"][row] = {
                **scores(files_ranked, symbols_ranked, gold_files, gold_fns),
                "files": files_ranked[:5],
                "symbols": [name for _, name in symbols_ranked[:5]],
            }
        records.append(record)
    print(f"    {len(items)} questions in {time.perf_counter() - started:.0f} s", flush=True)
    return records


# ---- the report ----------------------------------------------------------------------------------------------------
METRICS = ("file_hit@1", "file_hit@5", "file_acc@5", "sym_hit@5")


def summarise(records: list[dict[str, Any]]) -> dict[str, Any]:
    from haystack_integrations.components.code_alias.evaluation.metrics import paired_comparison

    rows = sorted({row for record in records for row in record["rows"]}, key=_row_order)
    summary: dict[str, Any] = {}
    for row in rows:
        baseline = {"hybrid": "hybrid_raw", "embedding": "embedding_question"}.get(row.split("_", 1)[0], "raw")
        entry: dict[str, Any] = {"baseline": baseline}
        for metric in METRICS:
            values = {r["id"]: r["rows"][row][metric] for r in records if metric in r["rows"].get(row, {})}
            base = {r["id"]: r["rows"][baseline][metric] for r in records if metric in r["rows"].get(baseline, {})}
            entry[metric] = {"n": len(values), "mean": 100 * sum(values.values()) / max(len(values), 1)}
            if row != baseline:
                entry[metric]["vs_baseline"] = paired_comparison(base, values, metric=metric).to_dict()
        summary[row] = entry
    return summary


def _row_order(row: str) -> int:
    order = (*BM25_ROWS, *HYBRID_ROWS)
    return order.index(row) if row in order else len(order)


def render(summary: dict[str, Any], header: str) -> str:
    lines = [header, "", "| row | n | file hit@1 | file hit@5 | file Acc@5 | symbol hit@5 (n) |", "|---" * 6 + "|"]
    for row, entry in summary.items():
        cells = []
        for metric in METRICS:
            value = entry[metric]
            text = f"{value['mean']:.1f}"
            paired = value.get("vs_baseline")
            if paired:
                delta, wins, losses = 100 * paired["delta"], paired["wins"], paired["losses"]
                text += f" ({delta:+.1f}; {wins}/{losses}, p {paired['p_value']:.2g})"
            if metric == "sym_hit@5":
                text += f" (n {value['n']})"
            cells.append(text)
        lines.append(f"| {row} | {entry['file_hit@1']['n']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def compare(report: Path, pairs: Sequence[str]) -> str:
    """Rows of one report paired with each other: `A:B` = B against A, on the same questions."""
    from haystack_integrations.components.code_alias.evaluation.metrics import paired_comparison

    records = json.loads(report.read_text(encoding="utf-8"))["records"]
    lines = []
    for pair in pairs:
        base, row = pair.split(":", 1)
        cells = []
        for metric in METRICS:
            a = {r["id"]: r["rows"][base][metric] for r in records if metric in r["rows"].get(base, {})}
            b = {r["id"]: r["rows"][row][metric] for r in records if metric in r["rows"].get(row, {})}
            c = paired_comparison(a, b, metric=metric)
            cells.append(f"{metric} {100 * c.delta:+.1f} ({c.wins}/{c.losses}, p {c.p_value:.2g})")
        lines.append(f"{row} vs {base}: " + "; ".join(cells))
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--compare", nargs="+", metavar=("REPORT", "A:B"), help="pair rows of a finished report")
    parser.add_argument("--set", choices=sorted(SETS))
    parser.add_argument("--git-root", default="/work/.mirror")
    parser.add_argument("--cache-dir", default="/work/bench-cache")
    parser.add_argument("--repos", default="", help="comma-separated owner/name: only these repositories")
    parser.add_argument("--limit", type=int, default=0, help="at most this many questions per corpus (0 = all)")
    parser.add_argument("--hybrid", action="store_true", help="embed the chunks and add the hybrid rows")
    parser.add_argument("--out", help="JSON report (records and summary); .md beside it")
    args = parser.parse_args(argv)
    if args.compare:
        print(compare(Path(args.compare[0]), args.compare[1:]))
        return 0
    if not args.set or not args.out:
        parser.error("--set and --out are required (or --compare REPORT A:B ...)")

    from haystack_integrations.components.code_alias.evaluation.corpus import CorpusCache, CorpusResolver
    from haystack_integrations.components.code_alias.evaluation.golden import load_golden, load_swebench
    from haystack_integrations.components.code_alias.retrieval.embedders import resolve_model

    path, kind = SETS[args.set]
    items = load_golden(path) if kind == "golden" else load_swebench(path, query="title")
    if args.repos:
        wanted = set(args.repos.split(","))
        items = [item for item in items if item.repo in wanted]
    resolver = CorpusResolver(CorpusCache(args.cache_dir), mode="git", git_root=args.git_root)
    groups: dict[str, list[Any]] = defaultdict(list)
    corpora: dict[str, Any] = {}
    for item in items:
        corpus = resolver.resolve(item.repo, item.version, item.base_commit)
        corpora[corpus.key] = corpus
        groups[corpus.key].append(item)
    model_path, _ = resolve_model("all-MiniLM-L6-v2")
    cache = VectorCache(Path(args.cache_dir) / "stock-vectors" / "all-MiniLM-L6-v2.sqlite")
    doc_embedder, text_embedder = make_cached_embedders(model_path, cache)
    load_before = _load()
    print(f"{len(items)} questions, {len(groups)} corpora; load: {load_before}", flush=True)
    started = time.perf_counter()
    records: list[dict[str, Any]] = []
    partial = Path(args.out).with_suffix(".partial.jsonl")
    done = {}
    if partial.is_file():
        for line in partial.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            done[record["id"]] = record
    with partial.open("a", encoding="utf-8") as sink:
        for key, group in groups.items():
            if all(item.id in done for item in group):
                records += [done[item.id] for item in group]
                continue
            chosen = group[: args.limit] if args.limit else group
            for record in run_corpus(corpora[key], chosen, args, doc_embedder, text_embedder):
                records.append(record)
                sink.write(json.dumps(record) + "\n")
                sink.flush()
    summary = summarise(records)
    load_after = _load()
    report = {
        "set": args.set,
        "questions": len(records),
        "corpora": sorted(groups),
        "hybrid": args.hybrid,
        "top_k": TOP_K,
        "first_pass_k": FIRST_PASS_K,
        "split": SPLIT,
        "seconds": round(time.perf_counter() - started, 1),
        "load_before": load_before,
        "load_after": load_after,
        "command": " ".join([Path(sys.argv[0]).name, *(argv or sys.argv[1:])]),
        "summary": summary,
        "records": records,
    }
    Path(args.out).write_text(json.dumps(report, indent=1), encoding="utf-8")
    header = (
        f"{args.set}: {len(records)} questions over {len(groups)} corpora, {report['seconds']:.0f} s; "
        f"load before {load_before.split('load average:')[-1].strip()}, after "
        f"{load_after.split('load average:')[-1].strip()}"
    )
    text = render(summary, header)
    Path(args.out).with_suffix(".md").write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
