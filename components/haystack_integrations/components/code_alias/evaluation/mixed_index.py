"""One index holding every repository of a golden set vs one index per repository (issue 11), lexical.

The same questions, the same pipeline (`query_lexical.yml`, dictionary rewrite), through the evaluation runner:

- ``per-repo``: `PipelineSearcher`, one index per corpus (what `code-alias bench run` does);
- ``mixed``: one index of all the corpora (`CodeSearch.index(..., repo=...)`), questions asked with no filter;
  a file of another repository never counts as a hit (its path is prefixed with that repository's name);
- ``mixed-filter``: the same index, each question asked with its own repository as the `repo` filter;
- ``mixed-infer``: the same index, no explicit filter, `infer_filters=True` (narrowed to the packages the
  rewrite names strongly, when that finds anything); counts how often a filter was inferred, used, and how
  often the narrowed answer lost a gold file the plain answer had in its top 5.
- ``mixed-select``: the same index, no explicit filter, the product's repository selection (`select_repository`
  =True, `retrieval.repository_selection`: boost the likely repository, narrow to it when its posterior reaches
  `FILTER_POSTERIOR`); counts how often a repository was inferred (filtered), how often it was wrong, how often
  it excluded the gold, and recomputes the figure at neighbouring thresholds from the logged answers.

The other modes ask with `select_repository=False`, so they measure what they name. `--reuse-index` answers
from the mixed index already under `--work` (built by an earlier run) instead of refreshing it.

A SWE-bench-style set (``--swebench``: each instance at its own ``base_commit``) gets one mixed index of all its
repositories, each at an anchor commit (the ``base_commit`` of its first instance in the file); before an
instance is asked, its own repository is re-indexed under the same name from the instance's corpus and every other
one is put back at its anchor (`SwitchingIndex`; the planner re-reads only the changed files). Instances are
ordered by repository and date, and each question is asked in every mixed mode while its commit is in place
(`AllModesSearcher`), so the index switches once per corpus, not once per mode. The switches are timed.

Usage (see BENCHMARKS.md section 6 for the corpora)::

    python benchmarks/mixed_index.py --golden ../shared/bench/swe_qa_dev_primary.jsonl --git-root /work/.mirror \
        --corpus-cache $PWD/.bench-cache --work /tmp/mixed-bench --out /tmp/mixed-bench/results
    python benchmarks/mixed_index.py --swebench ../shared/bench/swebench_multilingual_jsts.jsonl \
        --git-root /work/.mirror --corpus-cache $PWD/.bench-cache --work /tmp/mixed-jsts --out /tmp/mixed-jsts/results \
        --modes mixed,mixed-filter,mixed-select,mixed-infer,per-repo
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..app.answer import AskResult
from ..app.search import CodeSearch
from ..core.identifiers import code_tokenize
from ..indexing.repositories import read_repositories
from ..retrieval.repository_evidence import repository_terms
from ..retrieval.repository_selection import (
    FILTER_POSTERIOR,
    VOTE_DEPTH,
    RepositorySelection,
    select_repository,
)
from . import (
    BenchOptions,
    CorpusCache,
    CorpusError,
    CorpusResolver,
    GoldenItem,
    load_golden,
    load_swebench,
    run_bench,
)
from .bench_searcher import PipelineSearcher
from .runner import BenchConfig, SearchResult

CONFIG = BenchConfig.parse("title/dictionary/bm25")
#: Filter thresholds the figure is recomputed at (1.01: never filter, boost only).
SWEEP = (0.5, 0.7, 0.8, 0.85, 0.9, 0.95, 0.99, 1.01)


class MixedSearcher:
    """`Searcher` over one index of several repositories; `index` only says which repository is asked next."""

    def __init__(self, search: CodeSearch, repos: dict[str, str], mode: str, *, candidates: int = 100) -> None:
        self.code = search
        self.repos = repos  # corpus root -> repository name
        self.mode = mode
        self.candidates = candidates
        self.current = ""
        self.log: list[dict[str, Any]] = []

    def supports(self, rewrite: str, retrieval: str) -> bool:
        return retrieval == "bm25" and rewrite != "llm"

    def index(self, corpus_root: Path, *, name: str) -> None:
        self.current = self.repos[str(corpus_root)]

    def _files(self, answer: AskResult, top_k: int) -> list[str]:
        return [
            f["file_path"] if f.get("repo") == self.current else f"<{f.get('repo')}>/{f['file_path']}"
            for f in answer.ranked_files("bm25", top_k)
        ]

    def search(self, question: str, *, rewrite: str, retrieval: str, top_k: int) -> SearchResult:
        options: dict[str, Any] = {"top_k": top_k, "use_rewrite": rewrite != "none", "candidates": self.candidates}
        if self.mode == "filter":
            options["repo"] = self.current
        if self.mode == "select":
            return self._search_select(question, options, top_k)
        answer = self.code.ask(question, **options, infer_filters=self.mode == "infer", select_repository=False)
        files = self._files(answer, top_k)
        inferred = answer.rewrite.get("inferred_filter")
        if self.mode == "infer":
            entry: dict[str, Any] = {"question": question, "repo": self.current, "inferred": inferred}
            if inferred and inferred.get("used"):
                plain = self.code.ask(question, **options, select_repository=False)
                entry["plain_files"] = self._files(plain, top_k)[:5]
                entry["narrowed_files"] = files[:5]
            self.log.append(entry)
        return SearchResult(files=files, extra={"inferred_filter": inferred, "repos": self._repos_in(answer)})

    def _selection(self, question: str, plain: AskResult) -> RepositorySelection | None:
        terms = code_tokenize(question)
        statistics = repository_terms(self.code.query_pipeline, terms)
        if statistics is None:
            return None
        return select_repository(
            terms, statistics.term_documents, statistics.documents, [f.get("repo") for f in plain.files[:VOTE_DEPTH]]
        )

    def _search_select(self, question: str, options: dict[str, Any], top_k: int) -> SearchResult:
        """The product's answer, plus the plain, boosted and narrowed answers the threshold sweep needs."""
        answer = self.code.ask(question, **options, select_repository=True)
        files = self._files(answer, top_k)
        inferred = answer.rewrite.get("inferred_repository")
        entry: dict[str, Any] = {"question": question, "repo": self.current, "inferred": inferred, "files": files[:5]}
        plain = self.code.ask(question, **options, select_repository=False)
        entry["plain_files"] = self._files(plain, top_k)[:5]
        selection = self._selection(question, plain)
        if selection is not None:
            entry.update(top=selection.repo, confidence=selection.confidence)
            entry["boosted_files"] = entry["plain_files"]  # the ranking stage has no repository prior to boost with
            narrowed = self.code.ask(question, **options, repo=selection.repo, select_repository=False)
            entry["filtered_files"] = self._files(narrowed, top_k)[:5] if narrowed.documents else None
        self.log.append(entry)
        return SearchResult(files=files, extra={"inferred_repository": inferred, "repos": self._repos_in(answer)})

    def _repos_in(self, answer: AskResult) -> list[str]:
        return [str(f.get("repo")) for f in answer.ranked_files("bm25", 5)]


def order_by_repository(items: list[GoldenItem]) -> tuple[list[GoldenItem], dict[str, str]]:
    """
    `items` grouped by repository (first-seen order), each repository's anchor commit first, then the others by
    `created_at` (consecutive commits differ least); and repository -> anchor commit (the `base_commit` of its first
    instance in the file).
    """
    anchors: dict[str, str] = {}
    for item in items:
        if item.repo and item.base_commit:
            anchors.setdefault(item.repo, item.base_commit)
    order = {repo: position for position, repo in enumerate(dict.fromkeys(str(item.repo) for item in items))}

    def key(pair: tuple[int, GoldenItem]) -> tuple[int, bool, str, int]:
        position, item = pair
        at_anchor = item.base_commit == anchors.get(str(item.repo))
        return order[str(item.repo)], not at_anchor, str(item.meta.get("created_at") or ""), position

    return [item for _, item in sorted(enumerate(items), key=key)], anchors


class SwitchingIndex:
    """
    One index of several repositories, each at its anchor corpus, the one asked at the corpus of its instance.

    `place` re-indexes what differs from the wanted state under the same repository name (`CodeSearch.index(root,
    repo=NAME)` replaces that repository's documents; the planner re-chunks only the files whose hash changed),
    and records each switch: repository, corpus, seconds (index + warm-up), files changed and removed.
    """

    def __init__(self, search: CodeSearch, anchors: dict[str, Path]) -> None:
        self.search = search
        self.anchors = anchors  # repository -> anchor corpus root
        self.at: dict[str, Path] = {}
        self.switches: list[dict[str, Any]] = []

    def _switch(self, repo: str, root: Path) -> dict[str, Any]:
        started = time.perf_counter()
        stats = self.search.index(root, repo=repo)
        self.search.warm_up()
        self.at[repo] = root
        return {
            "repo": repo,
            "corpus": root.name,
            "seconds": round(time.perf_counter() - started, 2),
            "index_seconds": stats["seconds"],
            "files": stats["files"],
            "files_changed": stats["files_changed"],
            "files_removed": stats["files_removed"],
            "documents": self.documents(repo),
        }

    def documents(self, repo: str) -> int | None:
        """Chunks of `repo` in the index, as `status` records them."""
        return read_repositories(self.search.index_dir).get(repo, {}).get("documents")

    def build(self) -> list[dict[str, Any]]:
        """Index every repository at its anchor; the build records (the first index of each)."""
        return [self._switch(repo, root) for repo, root in self.anchors.items()]

    def place(self, repo: str, root: Path) -> None:
        """`repo` at `root`, every other repository at its anchor (switching only what differs)."""
        wanted = {**self.anchors, repo: root}
        for name, target in wanted.items():
            if self.at.get(name) != target:
                self.switches.append(self._switch(name, target))
                print("switched", self.switches[-1], flush=True)


class AllModesSearcher:
    """
    Asks each question in every mixed mode while its corpus is in place, so a SWE-bench-style index switches once
    per corpus; the first mode's answer goes to `run_bench`, the others wait for their `ReplaySearcher`.
    """

    def __init__(self, switching: SwitchingIndex, searchers: dict[str, MixedSearcher], repos: dict[str, str]) -> None:
        self.switching = switching
        self.searchers = searchers
        self.repos = repos  # corpus root -> repository name
        self.root = ""
        self.answers: dict[str, dict[tuple[str, str], SearchResult]] = {mode: {} for mode in searchers}
        self.search_seconds: dict[str, float] = dict.fromkeys(searchers, 0.0)

    def supports(self, rewrite: str, retrieval: str) -> bool:
        return retrieval == "bm25" and rewrite != "llm"

    def index(self, corpus_root: Path, *, name: str) -> None:
        self.root = str(corpus_root)
        self.switching.place(self.repos[self.root], Path(corpus_root))
        for searcher in self.searchers.values():
            searcher.index(corpus_root, name=name)

    def search(self, question: str, *, rewrite: str, retrieval: str, top_k: int) -> SearchResult:
        for mode, searcher in self.searchers.items():
            started = time.perf_counter()
            answer = searcher.search(question, rewrite=rewrite, retrieval=retrieval, top_k=top_k)
            self.search_seconds[mode] += time.perf_counter() - started
            self.answers[mode][(self.root, question)] = answer
        return self.answers[next(iter(self.searchers))][(self.root, question)]


class ReplaySearcher:
    """A mode's answers, asked earlier by `AllModesSearcher`, handed to that mode's own `run_bench`."""

    def __init__(self, answers: dict[tuple[str, str], SearchResult], mode: str) -> None:
        self.answers = answers
        self.mode = mode
        self.root = ""

    def supports(self, rewrite: str, retrieval: str) -> bool:
        return retrieval == "bm25" and rewrite != "llm"

    def index(self, corpus_root: Path, *, name: str) -> None:
        self.root = str(corpus_root)

    def search(self, question: str, *, rewrite: str, retrieval: str, top_k: int) -> SearchResult:
        try:
            return self.answers[(self.root, question)]
        except KeyError:
            raise RuntimeError(
                f"{self.mode}: no recorded answer for {question!r} in {self.root} (was the first mode's output "
                "folder already holding results? use a fresh --out)"
            ) from None


def _by_repo(records: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Acc@5 and n per repository of the chosen config's records."""
    groups: dict[str, list[float]] = {}
    for record in records:
        if record["config"] == CONFIG.name:
            groups.setdefault(str(record.get("repo")), []).append(record["metrics"]["acc@5"])
    return {repo: {"acc@5": round(100.0 * sum(v) / len(v), 1), "n": len(v)} for repo, v in sorted(groups.items())}


def _acc5(records: list[dict[str, Any]]) -> float:
    chosen = [r for r in records if r["config"] == CONFIG.name]
    return 100.0 * sum(r["metrics"]["acc@5"] for r in chosen) / max(1, len(chosen))


def _hit(files: list[str] | None, gold: list[str]) -> bool:
    """File Acc@5 as the runner counts it: every gold file in the top 5 (a SWE-bench patch may change several)."""
    return bool(files) and bool(gold) and all(g in files[:5] for g in gold)  # type: ignore[index]


def _selection_summary(log: list[dict[str, Any]], records: list[dict[str, Any]], items: list[Any]) -> dict[str, Any]:
    """How often a repository was inferred, wrong, or excluded the gold; the figure at neighbouring thresholds."""
    gold = {r["id"]: r["gold_files"] for r in records}
    by_question = {item.question: item.id for item in items}
    rows = [(entry, gold.get(by_question.get(entry["question"], ""), [])) for entry in log]
    filtered = [(e, g) for e, g in rows if (e["inferred"] or {}).get("used") == "filter"]
    boosted = [(e, g) for e, g in rows if (e["inferred"] or {}).get("used") == "boost"]
    sweep: dict[str, dict[str, float]] = {}
    for threshold in SWEEP:
        hits = filter_only_hits = narrowed = wrong = 0
        for entry, gold_files in rows:
            narrow = bool(entry.get("filtered_files")) and entry.get("confidence", 0.0) >= threshold
            chosen = entry["filtered_files"] if narrow else entry.get("boosted_files", entry["plain_files"])
            hits += _hit(chosen, gold_files)
            filter_only_hits += _hit(entry["filtered_files"] if narrow else entry["plain_files"], gold_files)
            narrowed += narrow
            wrong += narrow and entry.get("top") != entry["repo"]
        sweep[str(threshold)] = {
            "acc@5": round(100.0 * hits / max(1, len(rows)), 1),
            "acc@5_filter_only": round(100.0 * filter_only_hits / max(1, len(rows)), 1),
            "filtered": narrowed,
            "filtered_wrong": wrong,
        }
    return {
        "threshold": FILTER_POSTERIOR,
        "questions": len(rows),
        "inferred": sum(1 for e, _ in rows if e["inferred"]),
        "filtered": len(filtered),
        "filtered_wrong": sum(1 for e, _ in filtered if e["inferred"]["repo"] != e["repo"]),
        "filtered_excluded_gold": sum(1 for e, g in filtered if _hit(e["plain_files"], g) and not _hit(e["files"], g)),
        "boosted": len(boosted),
        "boosted_top_wrong": sum(1 for e, _ in boosted if e["inferred"]["repo"] != e["repo"]),
        "boost_lost_gold": sum(1 for e, g in boosted if _hit(e["plain_files"], g) and not _hit(e["files"], g)),
        "boost_gained_gold": sum(1 for e, g in boosted if not _hit(e["plain_files"], g) and _hit(e["files"], g)),
        "sweep": sweep,
    }


def _inference_summary(log: list[dict[str, Any]], records: list[dict[str, Any]], items: list[Any]) -> dict[str, Any]:
    """mixed-infer: how often a package filter was inferred, used, narrowed to another repository, lost the gold."""
    inferred = [e for e in log if e["inferred"]]
    used = [e for e in inferred if e["inferred"].get("used")]
    gold = {r["id"]: r["gold_files"] for r in records}
    by_question = {item.question: item.id for item in items}
    lost = [
        e
        for e in used
        if any(
            g in e["plain_files"] and g not in e["narrowed_files"]
            for g in gold.get(by_question.get(e["question"], ""), [])
        )
    ]
    other = [e for e in used if e["narrowed_files"] and all(f.startswith("<") for f in e["narrowed_files"])]
    return {"inferred": len(inferred), "used": len(used), "other_repository_only": len(other), "lost_gold": len(lost)}


def _load_items(args: argparse.Namespace) -> list[GoldenItem]:
    items = load_swebench(args.swebench, query="title") if args.swebench else load_golden(args.golden)
    if args.repos:
        wanted = {r.strip() for r in args.repos.split(",")}
        items = [item for item in items if item.repo in wanted]
    return items


# long: the benchmark's modes in turn (index, answer, summarise) and their one report
def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--golden", help="a golden set (one commit per repository)")
    source.add_argument("--swebench", help="SWE-bench-format JSONL (each instance at its own base_commit; titles)")
    parser.add_argument("--git-root", required=True)
    parser.add_argument("--corpus-cache", required=True, help="the bench cache whose corpora/ to read (and fill)")
    parser.add_argument("--work", required=True, help="where this script's own indexes go")
    parser.add_argument("--out", required=True)
    parser.add_argument("--modes", default="per-repo,mixed,mixed-filter,mixed-infer")
    parser.add_argument("--repos", help="only these repositories (comma-separated owner/name)")
    parser.add_argument("--reuse-index", action="store_true", help="answer from the mixed index under --work as is")
    args = parser.parse_args(argv)
    work, out = Path(args.work).absolute(), Path(args.out).absolute()
    out.mkdir(parents=True, exist_ok=True)
    items = _load_items(args)
    anchors: dict[str, str] = {}
    if args.swebench:
        items, anchors = order_by_repository(items)
    resolver = CorpusResolver(CorpusCache(args.corpus_cache), mode="git", git_root=args.git_root)
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    summary: dict[str, Any] = {
        "golden": args.golden or args.swebench,
        "n": len(items),
        "config": CONFIG.name,
        "modes": {},
        "load_before": os.getloadavg(),
    }

    def save() -> None:
        per_repo = summary["modes"].get("per-repo", {}).get("acc@5")
        for figures in summary["modes"].values():
            if per_repo is not None:
                figures["vs_per_repo"] = round(figures["acc@5"] - per_repo, 1)
        summary["load_after"] = os.getloadavg()
        (out / "summary.json").write_text(json.dumps(summary, indent=1))

    def bench(mode: str, searcher: Any) -> list[dict[str, Any]]:
        started = time.perf_counter()
        options = BenchOptions(output_dir=out / mode, configs=[CONFIG], progress=False, title=f"mixed index: {mode}")
        run = run_bench(items, searcher, resolver, options)
        seconds = round(time.perf_counter() - started)
        n = sum(1 for r in run.records if r["config"] == CONFIG.name)
        summary["modes"][mode] = {"acc@5": round(_acc5(run.records), 1), "n": n, "seconds": seconds}
        summary["modes"][mode]["by_repo"] = _by_repo(run.records)
        print(mode, summary["modes"][mode], flush=True)
        save()
        return run.records

    mixed_modes = [m for m in modes if m.startswith("mixed")]
    if mixed_modes:
        search = CodeSearch(work / "mixed" / "index", lexical=True)
        repos: dict[str, str] = {}
        started = time.perf_counter()
        for item in items:
            try:
                corpus = resolver.resolve(item.repo, item.version, item.base_commit)
            except CorpusError as error:  # the runner reports it as not covered
                print("no corpus:", item.id, error, flush=True)
                continue
            repos.setdefault(str(corpus.root), str(item.repo))
        kinds = {mode: mode.removeprefix("mixed").lstrip("-") or "plain" for mode in mixed_modes}
        searchers = {mode: MixedSearcher(search, repos, kind) for mode, kind in kinds.items()}
        if args.swebench:
            anchor_roots = {repo: resolver.resolve(repo, None, commit).root for repo, commit in anchors.items()}
            switching = SwitchingIndex(search, anchor_roots)
            summary["mixed_build"] = switching.build()
            summary["mixed_index_seconds"] = round(time.perf_counter() - started)
            print("built", summary["mixed_build"], flush=True)
            recorder = AllModesSearcher(switching, searchers, repos)
            records_of = {mixed_modes[0]: bench(mixed_modes[0], recorder)}
            summary["all_modes_pass_seconds"] = summary["modes"][mixed_modes[0]]["seconds"]
            for mode in mixed_modes[1:]:
                records_of[mode] = bench(mode, ReplaySearcher(recorder.answers[mode], mode))
            for mode, seconds in recorder.search_seconds.items():
                summary["modes"][mode]["search_seconds"] = round(seconds, 1)
            switches = switching.switches
            summary["switches"] = {
                "count": len(switches),
                "seconds": round(sum(s["seconds"] for s in switches), 1),
                "by_repo": {
                    repo: {
                        "count": len(mine),
                        "median_s": sorted(s["seconds"] for s in mine)[len(mine) // 2],
                        "max_s": max(s["seconds"] for s in mine),
                    }
                    for repo in anchors
                    if (mine := [s for s in switches if s["repo"] == repo])
                },
                "log": switches,
            }
            switching.place(next(iter(anchors)), anchor_roots[next(iter(anchors))])  # every repository at its anchor
            summary["anchor_documents"] = {
                repo: {"built": b["documents"], "after_switches": switching.documents(repo)}
                for repo, b in zip(anchors, summary["mixed_build"], strict=True)
            }
        else:
            for root, repo in repos.items():
                if not args.reuse_index:
                    stats = search.index(Path(root), repo=repo)
                    print("indexed", repo, stats["files"], "files", stats["seconds"], "s", flush=True)
            search.warm_up()
            summary["mixed_index_seconds"] = round(time.perf_counter() - started)
            records_of = {mode: bench(mode, searcher) for mode, searcher in searchers.items()}
        for mode, records in records_of.items():
            searcher = searchers[mode]
            if mode == "mixed-infer":
                summary["inference"] = _inference_summary(searcher.log, records, items)
                (out / "mixed-infer-log.json").write_text(json.dumps(searcher.log, indent=1))
            if mode == "mixed-select":
                summary["selection"] = _selection_summary(searcher.log, records, items)
                (out / "mixed-select-log.json").write_text(json.dumps(searcher.log, indent=1))
            if mode == "mixed":
                other = sum(1 for r in records for path in r["files"][:5] if path.startswith("<"))
                summary["mixed_other_repo_files_in_top5"] = other
        save()
    if "per-repo" in modes:
        bench("per-repo", PipelineSearcher(work / "per-repo", lexical=True))
    save()
    print(json.dumps({k: v for k, v in summary.items() if k != "switches"}, indent=1))
