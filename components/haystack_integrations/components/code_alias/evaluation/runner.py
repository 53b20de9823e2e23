# long: the ablation-grid runner and the `bench` command that drives it
"""The ablation-grid runner: golden items x configs -> per-instance results, a report, and the ``bench`` CLI.

Backend-agnostic: retrieval comes from a :class:`Searcher` (the project's Haystack pipelines implement it;
tests use a fake). The runner owns everything else: choosing and caching corpora, gold files and functions
in corpus paths, coverage, timing, metrics, resumable output and the report.

Output folder layout::

    run.json          options of the (last) run, and timings
    coverage.jsonl    one line per selected instance: covered or not, and why
    results.jsonl     one line per (config, covered instance): ranked files/functions, gold, metrics, latency
    corpora.jsonl     one line per corpus indexed: key, kind, files, index seconds
    report.json / report.md / report.png

Resuming: ``results.jsonl`` is appended to after every search; a rerun into the same folder skips every
(config, instance) already there, and skips indexing a corpus whose instances are all done.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import shlex
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from haystack_integrations.components.code_alias.core.symbols import extract_symbols, language_for_path
from haystack_integrations.components.code_alias.evaluation.corpus import (
    DEFAULT_CACHE_DIR,
    Corpus,
    CorpusCache,
    CorpusError,
    CorpusResolver,
    InstanceCoverage,
    coverage_of,
    prefetch,
)
from haystack_integrations.components.code_alias.evaluation.golden import (
    GoldenItem,
    gold_functions_for,
    load_golden,
    load_swebench,
)
from haystack_integrations.components.code_alias.evaluation.metrics import (
    file_metrics,
    function_metrics,
    hint_recall,
    ranked_for_metrics,
    symbol_metrics,
)
from haystack_integrations.components.code_alias.evaluation.report import build_report, write_report
from haystack_integrations.components.code_alias.progress import progress_bar, progress_disabled

__all__ = [
    "QUERIES",
    "RETRIEVALS",
    "REWRITES",
    "BenchConfig",
    "BenchOptions",
    "BenchRun",
    "SearchResult",
    "Searcher",
    "bench_main",
    "config_grid",
    "filter_repos",
    "run_bench",
    "select_subset",
]

Query = Literal["title", "full"]
Rewrite = Literal["none", "dictionary", "llm", "llm-free"]
Retrieval = Literal["bm25", "embedding", "hybrid"]
QUERIES: tuple[Query, ...] = ("title", "full")
REWRITES: tuple[Rewrite, ...] = ("none", "dictionary", "llm", "llm-free")
RETRIEVALS: tuple[Retrieval, ...] = ("bm25", "embedding", "hybrid")
#: How many ranked files / functions a result line keeps (metrics need 10; the rest helps debugging).
KEEP_RANKED = 20


@dataclass
class SearchResult:
    """
    What a searcher answers for one question.

    :param files: Ranked files, best first: POSIX paths relative to the corpus root (duplicates allowed;
        the metrics keep each file's best rank).
    :param functions: Ranked functions, best first: ``(file, qualified_name)``; the qualified name may carry
        a module prefix or not (:func:`~.metrics.local_name` removes it).
    :param rewrite_ms: Time the rewrite stage took (0 for no rewrite).
    :param dropped_symbols: Symbols/packages the faithfulness filter dropped from the rewrite.
    :param cache_hit: Whether the rewrite came from the rewrite cache.
    :param rewritten: The rewritten query, for the log (optional).
    :param extra: Anything else worth logging (stage timings, intent...).
    :param hints: The candidate hints the rewrite chose from (none for no rewrite): dicts with ``name``, ``kind``,
        ``confidence``, ``evidence``, ``similarity`` and ``definitions`` (``[file, qualified name]`` pairs); the
        record keeps them (definitions cut to `KEEP_HINT_DEFINITIONS`) and scores ``sym_hint_recall`` on all.
    """

    files: list[str]
    functions: list[tuple[str, str]] = field(default_factory=list)
    rewrite_ms: float = 0.0
    dropped_symbols: int = 0
    cache_hit: bool = False
    rewritten: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    hints: list[dict[str, Any]] | None = None


#: Definitions per hint a record keeps (the recall is scored on all of them).
KEEP_HINT_DEFINITIONS = 5


def _hint_record(hint: dict[str, Any]) -> dict[str, Any]:
    definitions = [list(pair) for pair in hint.get("definitions", [])]
    return {
        **{k: v for k, v in hint.items() if k != "definitions"},
        "definitions": definitions[:KEEP_HINT_DEFINITIONS],
        "n_definitions": len(definitions),
    }


@runtime_checkable
class Searcher(Protocol):
    """
    A retrieval backend the runner drives.

    ``index`` is called once per corpus before its questions (with every config's questions for that corpus
    following); it should build or reuse an index keyed by ``name`` (the corpus key, e.g. ``Django-3.0``) and
    make it the one ``search`` uses. ``search`` answers one question under one config. A searcher may also
    define ``supports(rewrite, retrieval) -> bool``; configs it does not support are skipped (for example
    ``llm`` when no generator is configured).
    """

    def index(self, corpus_root: Path, *, name: str) -> None:
        """Build or reuse the index of the corpus at ``corpus_root``, and search it from now on."""
        ...

    def search(self, question: str, *, rewrite: str, retrieval: str, top_k: int) -> SearchResult:
        """Answer ``question`` with the given rewrite mode and retrieval mode, ``top_k`` results."""
        ...


@dataclass(frozen=True)
class BenchConfig:
    """One cell of the ablation grid."""

    query: Query
    rewrite: Rewrite
    retrieval: Retrieval

    @property
    def name(self) -> str:
        """``query/rewrite/retrieval``, e.g. ``title/dictionary/hybrid``."""
        return f"{self.query}/{self.rewrite}/{self.retrieval}"

    @classmethod
    def parse(cls, name: str) -> BenchConfig:
        """The config named ``query/rewrite/retrieval``."""
        parts = name.split("/")
        if len(parts) != 3 or parts[0] not in QUERIES or parts[1] not in REWRITES or parts[2] not in RETRIEVALS:
            raise ValueError(
                f"bad config {name!r}: expected query/rewrite/retrieval with query in {QUERIES}, "
                f"rewrite in {REWRITES}, retrieval in {RETRIEVALS}"
            )
        return cls(parts[0], parts[1], parts[2])


def config_grid(
    queries: Iterable[str] = QUERIES, rewrites: Iterable[str] = REWRITES, retrievals: Iterable[str] = RETRIEVALS
) -> list[BenchConfig]:
    """Every combination, baseline first within each query (``none/bm25``)."""
    configs = [
        BenchConfig.parse(f"{query}/{rewrite}/{retrieval}")
        for query in queries
        for rewrite in rewrites
        for retrieval in retrievals
    ]
    return configs


@dataclass
class BenchOptions:
    """
    How to run a benchmark.

    :param output_dir: Where results, coverage and the report go (created).
    :param configs: The grid cells to run.
    :param subset: Run on this many instances only (:func:`select_subset`); None for all.
    :param ids: Run on these instance ids only (applied before ``subset``).
    :param top_k: How many results to ask the searcher for (at least 10).
    :param progress: Show progress bars.
    :param title: Title of the Markdown report.
    :param command: The command line, recorded in the report.
    """

    output_dir: Path
    configs: list[BenchConfig] = field(default_factory=lambda: config_grid())
    subset: int | None = None
    ids: Sequence[str] | None = None
    top_k: int = 50
    progress: bool = True
    title: str = "Benchmark"
    command: str = ""


@dataclass
class BenchRun:
    """What a run produced: per-instance records and coverage, the report and the files written."""

    records: list[dict[str, Any]]
    coverage: list[InstanceCoverage]
    report: dict[str, Any]
    paths: dict[str, Path]
    timings: dict[str, float]


def select_subset(items: Sequence[GoldenItem], n: int | None) -> list[GoldenItem]:
    """
    A deterministic subset of ``n`` items spread over the whole set: the ``n`` items with the smallest
    SHA-1 of their id (the same ``n`` always gives the same items, and a larger ``n`` contains a smaller
    one), returned in the original order. None or ``n >= len(items)`` keeps everything.
    """
    if n is None or n >= len(items):
        return list(items)
    ranked = sorted(items, key=lambda item: hashlib.sha1(item.id.encode()).hexdigest())[: max(n, 0)]
    chosen = {item.id for item in ranked}
    return [item for item in items if item.id in chosen]


def default_extract(text: str, corpus_path: str) -> list[Any]:
    """The definitions of a file (``core.symbols.extract_symbols``); [] for a language it does not parse."""

    language = language_for_path(corpus_path)
    if language is None:
        return []
    return list(extract_symbols(text, language, corpus_path))


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    records: list[dict[str, Any]] = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            line = line.strip()
            if not line:
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line cut short by a crash: that search is simply redone
            if isinstance(value, dict):
                records.append(value)
    return records


class _JsonlAppender:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        cut_short = False
        if path.is_file() and path.stat().st_size:
            with path.open("rb") as existing:
                existing.seek(-1, 2)
                cut_short = existing.read(1) != b"\n"
        self.handle = path.open("a", encoding="utf-8")
        if cut_short:
            self.handle.write("\n")  # a crash cut the last line short: start on a line of our own

    def write(self, record: Mapping[str, Any]) -> None:
        self.handle.write(json.dumps(record, sort_keys=False) + "\n")
        self.handle.flush()

    def close(self) -> None:
        self.handle.close()


def _supports(searcher: Searcher, config: BenchConfig) -> bool:
    check = getattr(searcher, "supports", None)
    if check is None:
        return True
    return bool(check(config.rewrite, config.retrieval))


# long: the loop over items x configs with its progress, resumption and records
def run_bench(
    items: Sequence[GoldenItem],
    searcher: Searcher,
    resolver: CorpusResolver,
    options: BenchOptions,
    *,
    extract: Callable[[str, str], list[Any]] = default_extract,
) -> BenchRun:
    """
    Run the grid: for each corpus (grouped, so each is indexed once), each covered instance, each config.

    :param items: Golden items (``load_swebench`` / ``load_golden``).
    :param searcher: The retrieval backend.
    :param resolver: Chooses and obtains each item's corpus.
    :param options: Output folder, configs, subset, top_k...
    :param extract: ``(text, corpus path)`` -> definitions, for gold functions derived from patches.
    :returns: Records of this and earlier runs into the folder, coverage, the report and its paths.
    """
    started = time.perf_counter()
    out = Path(options.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    selected = [item for item in items if options.ids is None or item.id in set(options.ids)]
    selected = select_subset(selected, options.subset)
    configs = [config for config in options.configs if _supports(searcher, config)]
    skipped_configs = [config.name for config in options.configs if config not in configs]
    top_k = max(options.top_k, 10)

    results_path = out / "results.jsonl"
    done = {(str(r.get("config")), str(r.get("id"))) for r in _read_jsonl(results_path)}
    results = _JsonlAppender(results_path)
    corpora_log = _JsonlAppender(out / "corpora.jsonl")

    groups: dict[str, list[GoldenItem]] = {}
    for item in selected:
        groups.setdefault(resolver.plan_key(item.repo, item.version, item.base_commit), []).append(item)

    coverage: dict[str, InstanceCoverage] = {}
    timings = {"corpus_s": 0.0, "index_s": 0.0, "gold_s": 0.0, "search_s": 0.0}
    total_searches = sum(len(group) for group in groups.values()) * len(configs)
    search_bar = progress_bar(total=total_searches, desc="searches", unit="q", enabled=options.progress, position=1)
    corpus_bar = progress_bar(groups.items(), desc="corpora", unit="corpus", enabled=options.progress, position=0)
    try:
        for plan_key, members in corpus_bar:
            corpus_bar.set_postfix_str(plan_key[-40:])
            tick = time.perf_counter()
            corpus: Corpus | None = None
            error: str | None = None
            try:
                corpus = resolver.resolve(members[0].repo, members[0].version, members[0].base_commit)
            except CorpusError as failure:
                error = str(failure)
            timings["corpus_s"] += time.perf_counter() - tick
            pending: list[tuple[GoldenItem, list[BenchConfig]]] = []
            for item in members:
                coverage[item.id] = coverage_of(item, corpus, error)
                if not coverage[item.id].covered:
                    search_bar.update(len(configs))
                    continue
                todo = [config for config in configs if (config.name, item.id) not in done]
                search_bar.update(len(configs) - len(todo))
                if todo:
                    pending.append((item, todo))
            if corpus is None or not pending:
                continue
            tick = time.perf_counter()
            searcher.index(corpus.root, name=corpus.key)
            index_seconds = time.perf_counter() - tick
            timings["index_s"] += index_seconds
            corpora_log.write(
                {
                    "corpus": corpus.key,
                    "kind": corpus.kind,
                    "files": corpus.details.get("files"),
                    "index_s": round(index_seconds, 3),
                    "instances": len(pending),
                }
            )
            for item, todo in pending:
                tick = time.perf_counter()
                gold_files = [
                    mapped for mapped in (coverage[item.id].gold_files.get(path) for path in item.gold_files) if mapped
                ]
                functions, complete = gold_functions_for(item, corpus.read, extract)
                timings["gold_s"] += time.perf_counter() - tick
                for config in todo:
                    question = item.question_for(config.query)
                    tick = time.perf_counter()
                    answer = searcher.search(question, rewrite=config.rewrite, retrieval=config.retrieval, top_k=top_k)
                    search_ms = 1000.0 * (time.perf_counter() - tick)
                    timings["search_s"] += search_ms / 1000.0
                    results.write(_record(item, config, corpus, gold_files, functions, complete, answer, search_ms))
                    search_bar.update(1)
    finally:
        corpus_bar.close()
        search_bar.close()
        results.close()
        corpora_log.close()

    coverage_list = [coverage[item.id] for item in selected if item.id in coverage]
    with (out / "coverage.jsonl").open("w", encoding="utf-8") as handle:
        for entry in coverage_list:
            handle.write(json.dumps(entry.to_dict()) + "\n")
    wanted = {config.name for config in configs}
    selected_ids = {item.id for item in selected}
    records = [
        record
        for record in _read_jsonl(results_path)
        if record.get("config") in wanted and record.get("id") in selected_ids
    ]
    records = list({(r["config"], r["id"]): r for r in records}.values())  # a redone search replaces its twin
    timings["total_s"] = time.perf_counter() - started
    run_info = {
        "command": options.command,
        "instances": len(selected),
        "configs": [config.name for config in configs],
        "skipped_configs": skipped_configs,
        "top_k": top_k,
        "timings_s": {key: round(value, 2) for key, value in timings.items()},
    }
    (out / "run.json").write_text(json.dumps(run_info, indent=2), encoding="utf-8")
    report = build_report(
        records,
        coverage=[entry.to_dict() for entry in coverage_list],
        config_order=[config.name for config in configs],
        run_info=run_info,
    )
    paths = write_report(report, out, title=options.title)
    return BenchRun(records=records, coverage=coverage_list, report=report, paths=paths, timings=timings)


def _optional_bool(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def _record(
    item: GoldenItem,
    config: BenchConfig,
    corpus: Corpus,
    gold_files: list[str],
    functions: Sequence[Any],
    complete: bool,
    answer: SearchResult,
    search_ms: float,
) -> dict[str, Any]:
    ranked_files, ranked_functions = ranked_for_metrics(answer.files, answer.functions)
    gold_pairs = [(function.file, function.local_name) for function in functions]
    metrics = file_metrics(ranked_files, gold_files)
    if complete:
        metrics.update(function_metrics(ranked_functions, gold_pairs))
    metrics.update(symbol_metrics(ranked_functions, gold_pairs))  # any gold symbol: complete or not
    if answer.hints is not None:
        offered = [(str(f), str(q)) for hint in answer.hints for f, q in hint.get("definitions", [])]
        metrics.update(hint_recall(offered, gold_pairs))
    record: dict[str, Any] = {
        "config": config.name,
        "query": config.query,
        "rewrite": config.rewrite,
        "retrieval": config.retrieval,
        "id": item.id,
        "question": item.question_for(config.query),
        "repo": item.repo,
        "names_file": item.names_file,
        "names_gold_symbol": _optional_bool(item.meta.get("names_gold_symbol")),
        "corpus": corpus.key,
        "gold_files": gold_files,
        "gold_functions": [list(pair) for pair in gold_pairs],
        "functions_complete": complete,
        "files": ranked_files[:KEEP_RANKED],
        "functions": [list(pair) for pair in ranked_functions[:KEEP_RANKED]],
        "metrics": metrics,
        "rewrite_ms": round(float(answer.rewrite_ms), 3),
        "search_ms": round(search_ms, 3),
        "dropped_symbols": int(answer.dropped_symbols),
        "cache_hit": bool(answer.cache_hit),
        "rewritten": answer.rewritten,
        "extra": answer.extra,
    }
    if answer.hints is not None:
        record["hints"] = [_hint_record(hint) for hint in answer.hints]
    return record


# ---- CLI -------------------------------------------------------------------------------------------------

SearcherFactory = Callable[[argparse.Namespace], Searcher]
#: Where ``bench run`` finds the real searcher when none is injected and ``--searcher`` is not given.
DEFAULT_SEARCHER_FACTORY = "haystack_integrations.components.code_alias.evaluation.bench_searcher:make_searcher"


def _split(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


def build_parser() -> argparse.ArgumentParser:
    """The ``bench`` argument parser (subcommands ``run``, ``prefetch``, ``report``)."""
    parser = argparse.ArgumentParser(
        prog="code-alias bench", description="Golden-set retrieval benchmark: ablation grid, coverage, report."
    )
    commands = parser.add_subparsers(dest="command", required=True)

    def add_items(sub: argparse.ArgumentParser) -> None:
        source = sub.add_mutually_exclusive_group(required=True)
        source.add_argument("--swebench", type=Path, help="SWE-bench-format JSONL (gold derived from `patch`)")
        source.add_argument("--golden", type=Path, help="golden JSONL: {id, question, gold_files, ...}")
        sub.add_argument("--corpus", choices=["auto", "pypi", "git", "local"], default="auto")
        sub.add_argument("--local-root", type=Path, help="the code every item is asked against (corpus local)")
        sub.add_argument(
            "--git-root",
            type=Path,
            help="folder of clones named owner__name, name, or owner+name/repo (a mirror's layout) (corpus git)",
        )
        sub.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE_DIR, help="corpus cache (.bench-cache)")
        sub.add_argument("--subset", type=int, help="only N instances (deterministic spread sample)")
        sub.add_argument("--ids", type=_split, help="only these instance ids (comma-separated)")
        sub.add_argument(
            "--repos", type=_split, help="only items of these repositories (owner/name or name, comma-separated)"
        )
        sub.add_argument("--no-progress", action="store_true")

    run = commands.add_parser("run", help="run the ablation grid and write the report")
    add_items(run)
    run.add_argument("--out", type=Path, required=True, help="output folder (resumable)")
    run.add_argument(
        "--queries",
        type=_split,
        default=None,
        help="title,full (default: both for --swebench; title for --golden, whose items have one question)",
    )
    run.add_argument(
        "--rewrites",
        type=_split,
        default=["none", "dictionary"],
        help="none,dictionary,llm,llm-free (llm-free: the same model without the schema limit or the filter)",
    )
    run.add_argument("--retrievals", type=_split, default=list(RETRIEVALS), help="bm25,embedding,hybrid")
    run.add_argument("--configs", type=_split, help="explicit query/rewrite/retrieval names (overrides the grid)")
    run.add_argument("--top-k", type=int, default=50)
    run.add_argument("--title", default="Benchmark")
    run.add_argument(
        "--lexical", action="store_true", help="BM25-only pipelines (no embedding model): embedding/hybrid skipped"
    )
    run.add_argument(
        "--semantic-hints",
        action="store_true",
        help="with --lexical: symbol-card vectors for the rewrite's hints (one small model call per question)",
    )
    run.add_argument("--searcher", default=None, help=f"module:factory (default {DEFAULT_SEARCHER_FACTORY})")
    llm = run.add_argument_group("LLM rewrite (the `llm` rewrite rows)")
    llm.add_argument("--llm-gguf", metavar="PATH", help="a local GGUF model (llama.cpp)")
    llm.add_argument("--llm-openai-base-url", metavar="URL", help="an OpenAI-compatible server")
    llm.add_argument("--llm-model", help="the model name on that server")
    llm.add_argument("--llm-timeout", type=float, default=60.0, help="seconds per rewrite before falling back")
    llm.add_argument(
        "--llm-max-hints", type=int, help="dictionary hints offered to the model (default: the pipeline's)"
    )
    llm.add_argument(
        "--llm-rewritten",
        choices=["model", "composed"],
        help="who writes the rewritten text: the model, or composed from the names it chose (default: the pipeline's)",
    )
    llm.add_argument(
        "--llm-threads", type=int, help="CPU threads of a GGUF model (default: llama.cpp's, half the cores)"
    )

    pre = commands.add_parser("prefetch", help="obtain every corpus and report coverage")
    add_items(pre)
    pre.add_argument("--out", type=Path, help="write coverage JSON here")

    rep = commands.add_parser("report", help="rebuild the report from an output folder")
    rep.add_argument("--out", type=Path, required=True)
    rep.add_argument("--title", default="Benchmark")
    return parser


def filter_repos(items: Sequence[GoldenItem], repos: Iterable[str]) -> list[GoldenItem]:
    """
    The items whose ``repo`` is one of ``repos``: ``owner/name`` exactly, or ``name`` alone.

    :raises ValueError: A wanted repository matches no item (a typo would otherwise run nothing).
    """
    wanted = [repo.strip() for repo in repos if repo.strip()]

    def matches(item_repo: str | None, repo: str) -> bool:
        if not item_repo:
            return False
        return item_repo == repo or ("/" not in repo and item_repo.partition("/")[2] == repo)

    unknown = [repo for repo in wanted if not any(matches(item.repo, repo) for item in items)]
    if unknown:
        known = sorted({item.repo for item in items if item.repo})
        raise ValueError(f"--repos: no item of {', '.join(unknown)} (the set has: {', '.join(known) or 'none'})")
    return [item for item in items if any(matches(item.repo, repo) for repo in wanted)]


def _default_queries(args: argparse.Namespace, items: Sequence[GoldenItem]) -> list[str]:
    """Both query texts for SWE-bench; for a golden set only ``title`` unless its items carry both texts."""
    if args.swebench is not None or any(item.title and item.full_text for item in items):
        return list(QUERIES)
    return ["title"]


def _load_items(args: argparse.Namespace) -> list[GoldenItem]:
    if args.swebench is not None:
        return load_swebench(args.swebench)
    return load_golden(args.golden)


def _resolver(args: argparse.Namespace) -> CorpusResolver:
    return CorpusResolver(
        CorpusCache(args.cache_dir), mode=args.corpus, local_root=args.local_root, git_root=args.git_root
    )


def _load_factory(spec: str) -> SearcherFactory:
    module_name, _, attribute = spec.partition(":")
    module = importlib.import_module(module_name)
    factory = getattr(module, attribute or "make_searcher")
    if not callable(factory):
        raise TypeError(f"{spec}: not callable")
    return factory


def bench_main(argv: Sequence[str] | None = None, *, searcher_factory: SearcherFactory | None = None) -> int:
    """
    The ``code-alias bench`` command.

    - ``run``: ``--swebench FILE | --golden FILE``, ``--out DIR``, grid options; the searcher comes from
      ``searcher_factory(args)`` when given, else from ``--searcher module:factory`` (default
      :data:`DEFAULT_SEARCHER_FACTORY`), called with the parsed arguments.
    - ``prefetch``: obtain every corpus the items need and print (and optionally write) coverage.
    - ``report``: rebuild ``report.*`` from ``results.jsonl`` / ``coverage.jsonl`` in ``--out``.

    :param argv: Arguments after ``bench`` (default ``sys.argv[1:]``).
    :param searcher_factory: Builds the searcher from the parsed arguments (the CLI injects the real one).
    :returns: The exit status.
    """
    parser = build_parser()
    args = parser.parse_args(list(argv) if argv is not None else sys.argv[1:])
    with progress_disabled(bool(getattr(args, "no_progress", False))):  # every bar: reading, indexing, embedding
        return _bench_command(args, argv, searcher_factory)


def _bench_command(
    args: argparse.Namespace, argv: Sequence[str] | None, searcher_factory: SearcherFactory | None
) -> int:
    command_line = "code-alias bench " + " ".join(shlex.quote(str(part)) for part in (argv or sys.argv[1:]))
    try:
        if args.command == "report":
            return _report_command(args)
        items = _load_items(args)
        if args.ids:
            items = [item for item in items if item.id in set(args.ids)]
        if args.repos:
            items = filter_repos(items, args.repos)
        items = select_subset(items, args.subset)
        resolver = _resolver(args)
        if args.command == "prefetch":
            return _prefetch_command(args, items, resolver)
        configs = (
            [BenchConfig.parse(name) for name in args.configs]
            if args.configs
            else config_grid(args.queries or _default_queries(args, items), args.rewrites, args.retrievals)
        )
        factory = searcher_factory or _load_factory(args.searcher or DEFAULT_SEARCHER_FACTORY)
        searcher = factory(args)
        options = BenchOptions(
            output_dir=args.out,
            configs=configs,
            top_k=args.top_k,
            progress=not args.no_progress,
            title=args.title,
            command=command_line,
        )
        run = run_bench(items, searcher, resolver, options)
    except (ValueError, OSError, CorpusError, ImportError, TypeError) as error:
        print(f"code-alias bench: error: {error}", file=sys.stderr)
        return 2
    covered = sum(entry.covered for entry in run.coverage)
    print(f"{covered} of {len(run.coverage)} instances covered; {len(run.records)} results")
    for name, path in run.paths.items():
        print(f"{name}: {path}")
    return 0


def _prefetch_command(args: argparse.Namespace, items: Sequence[GoldenItem], resolver: CorpusResolver) -> int:
    corpora: list[dict[str, Any]] = []

    def record(plan: str, corpus: Corpus | None, error: str | None, seconds: float) -> None:
        corpora.append(
            {
                "plan": plan,
                "corpus": corpus.key if corpus else None,
                "kind": corpus.kind if corpus else None,
                "how": corpus.details.get("how") if corpus else None,
                "files": corpus.details.get("files") if corpus else None,
                "error": error,
                "seconds": round(seconds, 2),
            }
        )

    started = time.perf_counter()
    coverage = prefetch(items, resolver, progress=not args.no_progress, on_corpus=record)
    covered = [entry for entry in coverage if entry.covered]
    not_covered = [entry.to_dict() for entry in coverage if not entry.covered]
    summary: dict[str, Any] = {
        "instances": len(coverage),
        "covered": len(covered),
        "corpora": corpora,
        "not_covered": not_covered,
        "seconds": round(time.perf_counter() - started, 1),
    }
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(summary, indent=2), encoding="utf-8")
    print(f"{len(covered)} of {len(coverage)} instances covered by {len(corpora)} corpora")
    for entry in not_covered:
        print(f"  not covered: {entry['id']}: {entry['error']}")
    return 0


def _report_command(args: argparse.Namespace) -> int:
    out = Path(args.out)
    records = list({(r["config"], r["id"]): r for r in _read_jsonl(out / "results.jsonl")}.values())
    coverage = _read_jsonl(out / "coverage.jsonl")
    run_info: dict[str, Any] = {}
    if (out / "run.json").is_file():
        run_info = json.loads((out / "run.json").read_text(encoding="utf-8"))
    report = build_report(records, coverage=coverage, config_order=run_info.get("configs", []), run_info=run_info)
    paths = write_report(report, out, title=args.title)
    for name, path in paths.items():
        print(f"{name}: {path}")
    return 0
