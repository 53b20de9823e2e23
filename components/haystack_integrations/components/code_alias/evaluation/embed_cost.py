"""Less arithmetic per chunk (issue 15): MiniLM's cost and quality per embedding text and sequence length.

Variants (`<text>-<max_seq_length>`): `chunk-256` (today: path + qualified name + the whole chunk, 256 tokens),
`chunk-128`, `summary-256` and `summary-128` (`embedding_text.summary_text`: path, qualified name, signature,
docstring, identifier words).

Speed, on the same chunks of a real tree, variants interleaved round by round (each round = the same chunks for
every variant, no vector cache), median chunks/s over the rounds::

    python benchmarks/embed_cost.py speed --root .bench-cache/corpora/Django-3.0 --chunks 1000 --rounds 8

Quality, one `code-alias bench run` per variant through this module's searcher (the shipped pipelines, copied to
a temporary folder with the variant's embedder settings on both the indexing and the query side; each variant
has its own index folders, the vector cache is shared and keyed by text mode and sequence length)::

    EMBED_COST_VARIANT=chunk-128 PYTHONPATH=benchmarks code-alias bench run --searcher embed_cost:make_searcher \\
        --golden ../shared/bench/swe_qa_dev_primary.jsonl --corpus git --git-root /work/.mirror \\
        --cache-dir $PWD/.bench-cache --repos pallets/flask,psf/requests --rewrites none,dictionary \\
        --retrievals hybrid --out .bench-cache/results/embed-cost/chunk-128

Then the table, with paired wins/losses against the first run::

    python benchmarks/embed_cost.py summarize --runs chunk-256=<out> chunk-128=<out> ... \\
        [--speed benchmarks/results/embed-cost-speed.json] --out benchmarks/results/embed-cost.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml
from haystack import Document

from ..app.search import CodeSearch
from ..indexing.reader import CodeFileReader
from ..indexing.splitter import CodeSplitter
from ..paths import pipelines_dir
from ..retrieval.embedders import TEXT_MODES, CodeDocumentEmbedder
from .bench_searcher import PipelineSearcher

VARIANT_ENV = "EMBED_COST_VARIANT"
DOCUMENT_EMBEDDER = "haystack_integrations.components.code_alias.retrieval.embedders.CodeDocumentEmbedder"
TEXT_EMBEDDER = "haystack_integrations.components.code_alias.retrieval.embedders.CodeTextEmbedder"


def parse_variant(variant: str) -> tuple[str, int]:
    """`summary-128` -> ("summary", 128)."""
    text, _, length = variant.rpartition("-")
    if text not in TEXT_MODES or not length.isdigit():
        raise ValueError(f"variant {variant!r}: expected <{'|'.join(TEXT_MODES)}>-<max_seq_length>")
    return text, int(length)


def load() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()


# ---- speed ---------------------------------------------------------------------------------------------------


def real_chunks(root: Path, count: int) -> list[Document]:
    """`count` chunks spread evenly over the tree's chunks (sorted by path and line, every n-th)."""

    files = CodeFileReader().run(root=str(root))["documents"]
    chunks = CodeSplitter().run(documents=files)["documents"]
    chunks.sort(key=lambda d: (d.meta.get("file_path", ""), d.meta.get("start_line", 0)))
    step = max(1, len(chunks) // count)
    return chunks[::step][:count]


def token_counts(embedder: CodeDocumentEmbedder, chunks: list[Document]) -> list[int]:
    """Tokens the model reads per chunk (after truncation at the variant's max_seq_length)."""
    assert embedder._embedder is not None and embedder._embedder.embedding_backend is not None
    model = embedder._embedder.embedding_backend.model
    texts = [embedder.text_to_embed(d) for d in chunks]
    ids = model.tokenizer(texts, truncation=True, max_length=embedder.max_seq_length)["input_ids"]
    return [len(i) for i in ids]


def speed(args: argparse.Namespace) -> dict[str, Any]:
    started = load()
    chunks = real_chunks(args.root, args.chunks)
    print(f"{len(chunks)} chunks of {args.root}; load at start: {started}", flush=True)
    embedders = {}
    for variant in args.variants:
        text, length = parse_variant(variant)
        embedder = CodeDocumentEmbedder(max_seq_length=length, text=text, cache_dir="", progress_bar=False)
        embedder.warm_up()
        embedder.run(documents=chunks[:8])  # first forward passes are slower
        embedders[variant] = embedder
    tokens = {v: token_counts(e, chunks) for v, e in embedders.items()}
    size = -(-len(chunks) // args.rounds)
    rates: dict[str, list[float]] = {v: [] for v in args.variants}
    for index in range(args.rounds):
        part = chunks[index * size : (index + 1) * size]
        if not part:
            break
        order = args.variants[index % len(args.variants) :] + args.variants[: index % len(args.variants)]
        for variant in order:  # rotate who goes first, so load drifts fall on every variant alike
            start = time.perf_counter()
            embedders[variant].run(documents=part)
            rates[variant].append(len(part) / (time.perf_counter() - start))
        print(f"round {index + 1}: " + ", ".join(f"{v} {rates[v][-1]:.1f}/s" for v in args.variants), flush=True)
    base = statistics.median(rates[args.variants[0]])
    result: dict[str, Any] = {
        "root": str(args.root),
        "chunks": len(chunks),
        "rounds": len(rates[args.variants[0]]),
        "load_start": started,
        "load_end": load(),
        "variants": {},
    }
    for variant in args.variants:
        median = statistics.median(rates[variant])
        counts = tokens[variant]
        length = parse_variant(variant)[1]
        result["variants"][variant] = {
            "chunks_per_s_median": round(median, 2),
            "chunks_per_s_rounds": [round(r, 2) for r in rates[variant]],
            "speedup_vs_first": round(median / base, 2),
            "tokens_mean": round(statistics.fmean(counts), 1),
            "tokens_median": statistics.median(counts),
            "truncated_share": round(sum(c >= length for c in counts) / len(counts), 3),
        }
    print(f"load at end: {result['load_end']}")
    print(f"{'variant':<12} {'chunks/s':>9} {'x':>5} {'tokens mean':>12} {'truncated':>10}")
    for variant, row in result["variants"].items():
        print(
            f"{variant:<12} {row['chunks_per_s_median']:>9.1f} {row['speedup_vs_first']:>5.2f} "
            f"{row['tokens_mean']:>12.1f} {100 * row['truncated_share']:>9.1f}%"
        )
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2), encoding="utf-8")
    return result


# ---- quality: the harness's searcher for one variant -----------------------------------------------------------


def variant_pipelines(variant: str, folder: Path | None = None) -> Path:
    """A copy of the shipped pipelines with the variant's embedder settings on the indexing and query sides."""
    text, length = parse_variant(variant)
    folder = folder or Path(tempfile.gettempdir()) / "embed-cost-pipelines" / variant
    folder.mkdir(parents=True, exist_ok=True)
    for source in sorted(pipelines_dir().glob("*.yml")):
        data = yaml.safe_load(source.read_text(encoding="utf-8"))
        for spec in (data.get("components") or {}).values():
            params = spec.setdefault("init_parameters", {}) or {}
            spec["init_parameters"] = params
            if spec.get("type") == DOCUMENT_EMBEDDER:
                params["max_seq_length"] = length
                params["text"] = text
            elif spec.get("type") == TEXT_EMBEDDER:
                params["max_seq_length"] = length
        target = folder / source.name
        temporary = target.with_suffix(".yml.tmp")
        temporary.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
        os.replace(temporary, target)
    return folder


class VariantSearcher(PipelineSearcher):
    """`PipelineSearcher` over a variant's pipelines, with its own index folders (hybrid, no LLM)."""

    def __init__(self, cache_dir: Path, variant: str) -> None:
        super().__init__(cache_dir)
        self.variant = variant
        self.pipelines = variant_pipelines(variant)

    def index(self, corpus_root: Path, *, name: str) -> None:
        if self._search is not None:
            self._search.close()
        folder = self.cache_dir / "indexes" / "embed-cost" / self.variant / name
        search = CodeSearch(folder, lexical=False, pipelines=self.pipelines, embedding_cache=self._embedding_cache)
        start = time.perf_counter()
        stats = search.index(corpus_root)
        print(f"[{self.variant}] indexed {name} in {time.perf_counter() - start:.1f} s: {stats.get('vectors')}")
        search.warm_up()
        self._search = search
        self._folder = folder
        self._answers.clear()


def make_searcher(args: argparse.Namespace) -> VariantSearcher:
    """`--searcher embed_cost:make_searcher`; the variant comes from $EMBED_COST_VARIANT."""
    variant = os.environ.get(VARIANT_ENV)
    if not variant:
        raise SystemExit(f"set {VARIANT_ENV} (e.g. chunk-128)")
    parse_variant(variant)
    cache_dir = Path(getattr(args, "cache_dir", None) or ".bench-cache").absolute()
    return VariantSearcher(cache_dir, variant)


# ---- summary --------------------------------------------------------------------------------------------------

METRICS = {"acc@1": "file Acc@1", "acc@5": "file Acc@5", "sym_hit@5": "symbol hit@5"}


def _records(out: Path) -> tuple[dict[tuple[str, str], dict[str, float]], dict[str, str]]:
    """The hybrid rows' metrics by (config, id), and each id's repository."""
    rows: dict[tuple[str, str], dict[str, float]] = {}
    repos: dict[str, str] = {}
    for line in (out / "results.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            if record["retrieval"] == "hybrid":
                rows[(record["config"], record["id"])] = record["metrics"]
                repos[record["id"]] = record.get("repo") or ""
    return rows, repos


def _means(rows: dict[tuple[str, str], dict[str, float]], config: str, ids: list[str]) -> dict[str, Any]:
    entry: dict[str, Any] = {"n": len(ids)}
    for metric in METRICS:
        values = [rows[(config, i)][metric] for i in ids if metric in rows[(config, i)]]
        entry[metric] = round(100 * statistics.fmean(values), 1) if values else None
        entry[f"n_{metric}"] = len(values)
    return entry


def summarize(args: argparse.Namespace) -> dict[str, Any]:
    runs = dict(item.split("=", 1) for item in args.runs)
    loaded = {variant: _records(Path(out)) for variant, out in runs.items()}
    records = {variant: rows for variant, (rows, _) in loaded.items()}
    base_variant = next(iter(runs))
    base = records[base_variant]
    table: dict[str, Any] = {}
    for variant, rows in records.items():
        run_info = json.loads((Path(runs[variant]) / "run.json").read_text(encoding="utf-8"))
        per_config: dict[str, Any] = {}
        for config in sorted({c for c, _ in rows}):
            ids = sorted(i for c, i in rows if c == config)
            entry = _means(rows, config, ids)
            repos = loaded[variant][1]
            entry["per_repo"] = {
                repo: _means(rows, config, [i for i in ids if repos[i] == repo])
                for repo in sorted({repos[i] for i in ids})
            }
            for metric in METRICS:
                paired = [
                    (rows[(config, i)][metric], base[(config, i)][metric])
                    for i in ids
                    if metric in rows[(config, i)] and metric in base.get((config, i), {})
                ]
                if variant != base_variant and paired:
                    entry[f"{metric}_wins_losses"] = [sum(a > b for a, b in paired), sum(a < b for a, b in paired)]
            per_config[config] = entry
        # run.json describes the folder's last (possibly resumed) run only.
        table[variant] = {"out": runs[variant], "last_run": run_info, "configs": per_config}
    result: dict[str, Any] = {"load": load(), "baseline": base_variant, "quality": table}
    if args.speed and args.speed.is_file():
        result["speed"] = json.loads(args.speed.read_text(encoding="utf-8"))
    configs = sorted({c for v in table.values() for c in v["configs"]})
    for config in configs:
        print(f"\n{config}")
        print(f"{'variant':<12} {'n':>4} " + " ".join(f"{name:>16}" for name in METRICS.values()))
        for variant, entry in table.items():
            row = entry["configs"].get(config)
            if not row:
                continue
            cells = []
            for metric in METRICS:
                wl = row.get(f"{metric}_wins_losses")
                versus = f"+{wl[0]}/-{wl[1]}" if wl else "base"
                cells.append(f"{row[metric]:>7} ({versus})".rjust(16))
            print(f"{variant:<12} {row['n']:>4} " + " ".join(cells))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2), encoding="utf-8")
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    run_speed = commands.add_parser("speed", help="chunks/s per variant on the same chunks")
    run_speed.add_argument("--root", type=Path, default=Path(".bench-cache/corpora/Django-3.0"))
    run_speed.add_argument("--chunks", type=int, default=1000)
    run_speed.add_argument("--rounds", type=int, default=8)
    run_speed.add_argument(
        "--variants", type=lambda s: s.split(","), default=["chunk-256", "chunk-128", "summary-256", "summary-128"]
    )
    run_speed.add_argument("--out", type=Path, default=Path("benchmarks/results/embed-cost-speed.json"))
    run_summary = commands.add_parser("summarize", help="hybrid rows per variant, paired against the first")
    run_summary.add_argument("--runs", nargs="+", required=True, help="variant=bench out folder (baseline first)")
    run_summary.add_argument("--speed", type=Path, default=Path("benchmarks/results/embed-cost-speed.json"))
    run_summary.add_argument("--out", type=Path, default=Path("benchmarks/results/embed-cost.json"))
    args = parser.parse_args(argv)
    speed(args) if args.command == "speed" else summarize(args)
