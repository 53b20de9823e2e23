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
  =True, `core.repository_selection`: boost the likely repository, narrow to it when its posterior reaches
  `FILTER_POSTERIOR`); counts how often a repository was inferred (filtered), how often it was wrong, how often
  it excluded the gold, and recomputes the figure at neighbouring thresholds from the logged answers.

The other modes ask with `select_repository=False`, so they measure what they name. `--reuse-index` answers
from the mixed index already under `--work` (built by an earlier run) instead of refreshing it.

Usage (see BENCHMARKS.md section 6 for the corpora)::

    python benchmarks/mixed_index.py --golden ../shared/bench/swe_qa_dev_primary.jsonl --git-root /work/.mirror \
        --corpus-cache $PWD/.bench-cache --work /tmp/mixed-bench --out /tmp/mixed-bench/results
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

from haystack_integrations.components.code_alias.bench_searcher import PipelineSearcher
from haystack_integrations.components.code_alias.core.identifiers import code_tokenize
from haystack_integrations.components.code_alias.core.repository_selection import (
    FILTER_POSTERIOR,
    VOTE_DEPTH,
    RepositorySelection,
    select_repository,
)
from haystack_integrations.components.code_alias.evaluation import (
    BenchOptions,
    CorpusCache,
    CorpusResolver,
    load_golden,
    run_bench,
)
from haystack_integrations.components.code_alias.evaluation.runner import BenchConfig, SearchResult
from haystack_integrations.components.code_alias.repository_evidence import repository_terms
from haystack_integrations.components.code_alias.results import rank_files
from haystack_integrations.components.code_alias.search import AskResult, CodeSearch

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
        ranked = rank_files(plain.documents, VOTE_DEPTH, test_files=plain.test_files, question=question)
        return select_repository(
            terms, statistics.term_documents, statistics.documents, [f.get("repo") for f in ranked]
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
            plain.repository_prior = dict(selection.posterior)
            entry["boosted_files"] = self._files(plain, top_k)[:5]
            narrowed = self.code.ask(question, **options, repo=selection.repo, select_repository=False)
            entry["filtered_files"] = self._files(narrowed, top_k)[:5] if narrowed.documents else None
        self.log.append(entry)
        return SearchResult(files=files, extra={"inferred_repository": inferred, "repos": self._repos_in(answer)})

    def _repos_in(self, answer: AskResult) -> list[str]:
        return [str(f.get("repo")) for f in answer.ranked_files("bm25", 5)]


def _acc5(records: list[dict[str, Any]]) -> float:
    chosen = [r for r in records if r["config"] == CONFIG.name]
    return 100.0 * sum(r["metrics"]["acc@5"] for r in chosen) / max(1, len(chosen))


def _hit(files: list[str] | None, gold: list[str]) -> bool:
    return bool(files) and any(g in files[:5] for g in gold)  # type: ignore[index]


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--golden", required=True)
    parser.add_argument("--git-root", required=True)
    parser.add_argument("--corpus-cache", required=True, help="the bench cache whose corpora/ to read (and fill)")
    parser.add_argument("--work", required=True, help="where this script's own indexes go")
    parser.add_argument("--out", required=True)
    parser.add_argument("--modes", default="per-repo,mixed,mixed-filter,mixed-infer")
    parser.add_argument("--repos", help="only these repositories (comma-separated owner/name)")
    parser.add_argument("--reuse-index", action="store_true", help="answer from the mixed index under --work as is")
    args = parser.parse_args()
    os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")
    work, out = Path(args.work).absolute(), Path(args.out).absolute()
    out.mkdir(parents=True, exist_ok=True)
    items = load_golden(args.golden)
    if args.repos:
        wanted = {r.strip() for r in args.repos.split(",")}
        items = [item for item in items if item.repo in wanted]
    resolver = CorpusResolver(CorpusCache(args.corpus_cache), mode="git", git_root=args.git_root)
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    summary: dict[str, Any] = {"golden": args.golden, "n": len(items), "config": CONFIG.name, "modes": {}}

    def bench(mode: str, searcher: Any) -> list[dict[str, Any]]:
        started = time.perf_counter()
        options = BenchOptions(output_dir=out / mode, configs=[CONFIG], progress=False, title=f"mixed index: {mode}")
        run = run_bench(items, searcher, resolver, options)
        seconds = round(time.perf_counter() - started)
        summary["modes"][mode] = {"acc@5": round(_acc5(run.records), 1), "seconds": seconds}
        print(mode, summary["modes"][mode], flush=True)
        return run.records

    if "per-repo" in modes:
        bench("per-repo", PipelineSearcher(work / "per-repo", lexical=True))
    mixed_modes = [m for m in modes if m.startswith("mixed")]
    if mixed_modes:
        search = CodeSearch(work / "mixed" / "index", lexical=True)
        repos: dict[str, str] = {}
        started = time.perf_counter()
        for item in items:
            corpus = resolver.resolve(item.repo, item.version, item.base_commit)
            if str(corpus.root) not in repos:
                repos[str(corpus.root)] = str(item.repo)
                if not args.reuse_index:
                    stats = search.index(corpus.root, repo=str(item.repo))
                    print("indexed", item.repo, stats["files"], "files", stats["seconds"], "s", flush=True)
        search.warm_up()
        summary["mixed_index_seconds"] = round(time.perf_counter() - started)
        for mode in mixed_modes:
            searcher = MixedSearcher(search, repos, mode.removeprefix("mixed").lstrip("-") or "plain")
            records = bench(mode, searcher)
            if mode == "mixed-infer":
                inferred = [e for e in searcher.log if e["inferred"]]
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
                summary["inference"] = {"inferred": len(inferred), "used": len(used), "lost_gold": len(lost)}
                (out / "mixed-infer-log.json").write_text(json.dumps(searcher.log, indent=1))
            if mode == "mixed-select":
                summary["selection"] = _selection_summary(searcher.log, records, items)
                (out / "mixed-select-log.json").write_text(json.dumps(searcher.log, indent=1))
            if mode == "mixed":
                other = sum(1 for r in records for path in r["files"][:5] if path.startswith("<"))
                summary["mixed_other_repo_files_in_top5"] = other
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
