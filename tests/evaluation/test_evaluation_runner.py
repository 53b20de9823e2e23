"""The ablation runner end to end on a fixture repository, with a fake searcher; and the bench CLI."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from haystack_integrations.components.code_alias.evaluation.corpus import CorpusCache, CorpusResolver
from haystack_integrations.components.code_alias.evaluation.golden import GoldenItem, save_golden
from haystack_integrations.components.code_alias.evaluation.runner import (
    BenchConfig,
    BenchOptions,
    Searcher,
    SearchResult,
    bench_main,
    config_grid,
    default_extract,
    filter_repos,
    run_bench,
    select_subset,
)
from tests.support.repos import FIXTURES

EVALUATION_FIXTURES = FIXTURES / "evaluation"
REPO = EVALUATION_FIXTURES / "minirepo"
RETRY, CLIENT, LEDGER, INIT = (f"src/payments/{name}.py" for name in ("retry", "client", "ledger", "__init__"))

# Raw rankings per question; "embedding" reverses them; the dictionary rewrite puts the right file first.
RAW = {
    "retry helper backoff": [RETRY, CLIENT, LEDGER, INIT],  # gold retry: rank 1
    "refund a charge": [RETRY, CLIENT, LEDGER, INIT],  # gold client: rank 2
    "ledger balance": [CLIENT, RETRY, INIT, LEDGER],  # gold ledger: rank 4
}
REWRITTEN = {"retry helper backoff": RETRY, "refund a charge": CLIENT, "ledger balance": LEDGER}


class FakeSearcher:
    """A searcher with scripted rankings; functions are each ranked file's definitions in file order."""

    def __init__(self) -> None:
        self.indexed: list[str] = []
        self.searches: list[tuple[str, str, str]] = []
        self.root: Path | None = None
        self.seen: set[tuple[str, str]] = set()

    def supports(self, rewrite: str, retrieval: str) -> bool:
        return rewrite != "llm"

    def index(self, corpus_root: Path, *, name: str) -> None:
        self.indexed.append(name)
        self.root = corpus_root

    def search(self, question: str, *, rewrite: str, retrieval: str, top_k: int) -> SearchResult:
        assert self.root is not None, "search before index"
        self.searches.append((question, rewrite, retrieval))
        files = list(RAW[question])
        if rewrite == "dictionary":
            files.remove(REWRITTEN[question])
            files.insert(0, REWRITTEN[question])
        if retrieval == "embedding":
            files.reverse()
        files = [path for path in files if (self.root / path).is_file()]
        functions = [
            (path, definition.qualified_name)
            for path in files
            for definition in default_extract((self.root / path).read_text(), path)
            if definition.kind in {"function", "method", "class"}
        ]
        hit = (question, rewrite) in self.seen
        self.seen.add((question, rewrite))
        return SearchResult(
            files=files[:top_k],
            functions=functions[:top_k],
            rewrite_ms=0.0 if rewrite == "none" else 4.0,
            dropped_symbols=1 if rewrite == "dictionary" else 0,
            cache_hit=hit,
            rewritten=None if rewrite == "none" else f"{question} {REWRITTEN[question]}",
        )


def _golden() -> list[GoldenItem]:
    return [
        GoldenItem(
            id="q1",
            question="retry helper backoff",
            gold_files=[RETRY],
            gold_symbols=[f"{RETRY}::with_stripe_backoff"],
            meta={"file_location_hint": "None"},
        ),
        GoldenItem(
            id="q2",
            question="refund a charge",
            gold_files=[CLIENT],
            gold_symbols=[f"{CLIENT}::StripeClient.refund"],
            meta={"file_location_hint": "Keywords"},
        ),
        GoldenItem(id="q3", question="ledger balance", gold_files=[LEDGER], meta={"file_location_hint": "None"}),
        GoldenItem(id="q4", question="ledger balance", gold_files=["src/payments/gone.py"]),  # not covered
    ]


def _resolver(tmp_path: Path) -> CorpusResolver:
    return CorpusResolver(CorpusCache(tmp_path / "cache"), mode="local", local_root=REPO)


def _records(out: Path) -> dict[tuple[str, str], dict]:
    lines = (out / "results.jsonl").read_text().splitlines()
    return {(r["config"], r["id"]): r for r in map(json.loads, lines)}


def test_fake_searcher_fits_the_protocol() -> None:
    assert isinstance(FakeSearcher(), Searcher)


def test_run_grid_metrics_coverage_and_report(tmp_path: Path) -> None:
    out = tmp_path / "run"
    searcher = FakeSearcher()
    configs = config_grid(["title"], ["none", "dictionary", "llm"], ["bm25", "embedding"])
    run = run_bench(_golden(), searcher, _resolver(tmp_path), BenchOptions(out, configs=configs, progress=False))

    # one corpus, indexed once; llm skipped (unsupported); 3 covered items x 4 configs
    assert searcher.indexed == ["local-minirepo"]
    assert len(searcher.searches) == 12
    assert [c.covered for c in run.coverage] == [True, True, True, False]
    assert "src/payments/gone.py" in (run.coverage[3].error or "")
    summary = run.report["overall"]
    raw = summary["title/none/bm25"]
    assert raw["n"] == 3
    assert raw["acc@1"] == pytest.approx(1 / 3)
    assert raw["acc@3"] == pytest.approx(2 / 3)
    assert raw["acc@5"] == pytest.approx(1.0)
    assert raw["mrr"] == pytest.approx((1 + 1 / 2 + 1 / 4) / 3)
    # function level: q1 with_stripe_backoff is function 1; q2 refund is function 9 (5 in retry.py first)
    assert raw["n_functions"] == 2
    assert raw["fn_acc@5"] == pytest.approx(0.5) and raw["fn_acc@10"] == pytest.approx(1.0)
    embedding = summary["title/none/embedding"]  # reversed: gold ranks 4, 3, 1
    assert embedding["acc@1"] == pytest.approx(1 / 3)
    assert embedding["mrr"] == pytest.approx((1 / 4 + 1 / 3 + 1) / 3)
    rewritten = summary["title/dictionary/bm25"]
    assert rewritten["acc@1"] == pytest.approx(1.0)
    assert rewritten["rewrite_ms_p50"] == pytest.approx(4.0)
    assert rewritten["dropped_symbols_total"] == 3
    assert rewritten["fn_acc@5"] == pytest.approx(1.0)  # client.py first: refund is function 4
    # the same question twice (bm25 then embedding) hits the fake's cache on the second config
    assert summary["title/dictionary/embedding"]["cache_hit_rate"] == pytest.approx(1.0)
    assert rewritten["cache_hit_rate"] == pytest.approx(0.0)

    # subsets: q1 and q3 do not name the file
    assert run.report["no_file_hint"]["title/none/bm25"]["n"] == 2
    assert run.report["no_file_hint"]["title/none/bm25"]["acc@1"] == pytest.approx(0.5)
    # paired against raw BM25: the dictionary rewrite wins q2 and q3 at Acc@1, loses none
    paired = run.report["paired"]["title/dictionary/bm25"]["acc@1"]
    assert (paired["wins"], paired["losses"], paired["ties"]) == (2, 0, 1)
    assert run.report["coverage"] == {
        "instances": 4,
        "covered": 3,
        "not_covered": [{"id": "q4", "repo": None, "error": run.coverage[3].error}],
    }

    records = _records(out)
    first = records[("title/none/bm25", "q1")]
    assert first["gold_files"] == [RETRY] and first["files"][0] == RETRY
    assert first["functions"][0] == [RETRY, "with_stripe_backoff"]  # module prefix removed
    assert first["gold_functions"] == [[RETRY, "with_stripe_backoff"]] and first["functions_complete"] is True
    assert "fn_acc@5" not in records[("title/none/bm25", "q3")]["metrics"]  # no gold functions known
    # symbol level: any gold symbol among the distinct functions; q3 has none, so it is left out (n_symbols 2)
    assert first["metrics"]["sym_hit@1"] == 1.0 and first["metrics"]["sym_mrr"] == 1.0
    assert "sym_mrr" not in records[("title/none/bm25", "q3")]["metrics"]
    assert raw["n_symbols"] == 2 and raw["sym_hit@5"] == pytest.approx(0.5) and raw["sym_hit@10"] == 1.0
    assert raw["hit@1"] == pytest.approx(1 / 3) and raw["hit@5"] == 1.0
    assert rewritten["sym_hit@5"] == pytest.approx(1.0)
    lift = run.report["rewrite_lift"]["title/dictionary/bm25"]["sym_hit@5"]
    assert (lift["n"], lift["wins"], lift["losses"]) == (2, 1, 0)  # q2's refund moves from 9th to 4th
    run_info = json.loads((out / "run.json").read_text())
    assert run_info["skipped_configs"] == ["title/llm/bm25", "title/llm/embedding"]
    assert set(run.paths) == {"json", "markdown", "plot"}
    assert (out / "report.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "| `title/dictionary/bm25` | 3 | 100.0 |" in (out / "report.md").read_text()
    corpora = [json.loads(line) for line in (out / "corpora.jsonl").read_text().splitlines()]
    assert [c["corpus"] for c in corpora] == ["local-minirepo"]


def test_resume_skips_finished_work(tmp_path: Path) -> None:
    out = tmp_path / "run"
    configs = [BenchConfig("title", "none", "bm25")]
    run_bench(_golden(), FakeSearcher(), _resolver(tmp_path), BenchOptions(out, configs=configs, progress=False))
    first_lines = (out / "results.jsonl").read_text().splitlines()
    assert len(first_lines) == 3

    again = FakeSearcher()
    run = run_bench(_golden(), again, _resolver(tmp_path), BenchOptions(out, configs=configs, progress=False))
    assert again.indexed == [] and again.searches == []  # nothing left to do: not even an index
    assert len(run.records) == 3

    # a crash cut the last line short: only that search is redone
    (out / "results.jsonl").write_text("\n".join(first_lines[:2]) + "\n" + first_lines[2][:40])
    redo = FakeSearcher()
    run = run_bench(_golden(), redo, _resolver(tmp_path), BenchOptions(out, configs=configs, progress=False))
    assert redo.searches == [("ledger balance", "none", "bm25")]
    assert len(run.records) == 3

    # a new config: only its searches run, the corpus is indexed once
    more = [*configs, BenchConfig("full", "none", "bm25")]
    grow = FakeSearcher()
    run = run_bench(_golden(), grow, _resolver(tmp_path), BenchOptions(out, configs=more, progress=False))
    assert grow.indexed == ["local-minirepo"] and len(grow.searches) == 3
    assert sorted({r["config"] for r in run.records}) == ["full/none/bm25", "title/none/bm25"]


def test_select_subset_is_deterministic_and_nested() -> None:
    items = [GoldenItem(id=f"i{n}", question="q", gold_files=["a.py"]) for n in range(40)]
    five = select_subset(items, 5)
    ten = select_subset(items, 10)
    assert len(five) == 5 and len(ten) == 10
    assert {item.id for item in five} <= {item.id for item in ten}
    assert [item.id for item in five] == [item.id for item in items if item in five]  # original order
    assert select_subset(items, 5) == five
    assert select_subset(items, None) == items and select_subset(items, 100) == items


def _git(repo: Path, *args: str) -> str:
    result = subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout.strip()


def test_bench_cli_on_a_swebench_file_with_a_git_corpus(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    clones = tmp_path / "clones"
    repo = clones / "acme__payments"
    shutil.copytree(REPO, repo)
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "base")
    base = _git(repo, "rev-parse", "HEAD")
    rows = [json.loads(line) for line in (EVALUATION_FIXTURES / "swebench_mini.jsonl").read_text().splitlines()]
    for row in rows:
        row["base_commit"] = base
    swebench = tmp_path / "swe.jsonl"
    swebench.write_text("".join(json.dumps(row) + "\n" for row in rows))
    # the fake knows the fixture's questions by title
    RAW_TITLES = {
        "Backoff grows without bound": "retry helper backoff",
        "refund() and balance() choke on messy input": "refund a charge",
        "Retry more often": "ledger balance",
    }

    class TitleSearcher(FakeSearcher):
        def search(self, question: str, *, rewrite: str, retrieval: str, top_k: int) -> SearchResult:
            return super().search(RAW_TITLES[question], rewrite=rewrite, retrieval=retrieval, top_k=top_k)

    made: list[TitleSearcher] = []

    def factory(args: object) -> TitleSearcher:
        made.append(TitleSearcher())
        return made[-1]

    out = tmp_path / "bench"
    argv = [
        "run",
        "--swebench",
        str(swebench),
        "--corpus",
        "git",
        "--git-root",
        str(clones),
        "--cache-dir",
        str(tmp_path / "cache"),
        "--out",
        str(out),
        "--queries",
        "title",
        "--rewrites",
        "none",
        "--retrievals",
        "bm25",
        "--no-progress",
    ]
    assert bench_main(argv, searcher_factory=factory) == 0
    assert "3 of 3 instances covered" in capsys.readouterr().out
    assert made[0].indexed == [f"git-acme__payments-{base[:12]}"]
    records = _records(out)
    first = records[("title/none/bm25", "acme__payments-1")]
    assert first["gold_functions"] == [[RETRY, "with_stripe_backoff"]]
    second = records[("title/none/bm25", "acme__payments-2")]
    assert second["gold_files"] == [CLIENT, LEDGER]
    assert second["gold_functions"] == [[CLIENT, "StripeClient.refund"], [LEDGER, "balance"]]
    # both gold files must be in the top k: client rank 2, ledger rank 3
    assert (second["metrics"]["acc@2"], second["metrics"]["acc@3"]) == (0.0, 1.0)
    assert second["metrics"]["recall@1"] == 0.0 and second["metrics"]["mrr"] == pytest.approx(0.5)
    assert records[("title/none/bm25", "acme__payments-4")]["functions_complete"] is False
    report = json.loads((out / "report.json").read_text())
    assert report["coverage"]["covered"] == 3
    assert report["overall"]["title/none/bm25"]["n_functions"] == 2
    assert report["run"]["command"].startswith("code-alias bench run --swebench")

    # rebuild the report from the folder alone
    (out / "report.md").unlink()
    assert bench_main(["report", "--out", str(out), "--title", "Again"]) == 0
    assert (out / "report.md").read_text().startswith("# Again")

    # prefetch reports coverage without searching
    coverage = tmp_path / "coverage.json"
    prefetch_argv = ["prefetch", "--swebench", str(swebench), "--corpus", "git", "--git-root", str(clones)]
    prefetch_argv += ["--cache-dir", str(tmp_path / "cache"), "--out", str(coverage), "--no-progress"]
    assert bench_main(prefetch_argv) == 0
    summary = json.loads(coverage.read_text())
    assert (summary["instances"], summary["covered"]) == (3, 3)
    assert summary["corpora"][0]["kind"] == "git"


def test_bench_cli_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    golden = save_golden(_golden(), tmp_path / "golden.jsonl")
    argv = [
        "run",
        "--golden",
        str(golden),
        "--corpus",
        "local",
        "--local-root",
        str(REPO),
        "--out",
        str(tmp_path / "o"),
    ]
    assert bench_main([*argv, "--configs", "title/none/bogus"], searcher_factory=lambda args: FakeSearcher()) == 2
    assert "bad config" in capsys.readouterr().err
    assert bench_main([*argv, "--searcher", "no_such_module_here:make"]) == 2
    assert "no_such_module_here" in capsys.readouterr().err
    assert bench_main([*argv, "--subset", "2", "--no-progress"], searcher_factory=lambda args: FakeSearcher()) == 0
    assert len((tmp_path / "o" / "coverage.jsonl").read_text().splitlines()) == 2


def test_golden_run_over_a_bare_mirror_layout_with_a_repo_filter(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--git-root` over a mirror folder of `owner+name/repo` bare repositories; --repos; one query for golden."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    work = tmp_path / "work"
    shutil.copytree(REPO, work)
    _git(work, "init", "-q")
    _git(work, "add", "-A")
    _git(work, "commit", "-q", "-m", "base")
    base = _git(work, "rev-parse", "HEAD")
    mirror = tmp_path / "mirror"
    (mirror / "acme+payments").mkdir(parents=True)
    _git(tmp_path, "clone", "-q", "--bare", str(work), str(mirror / "acme+payments" / "repo"))
    rows = [
        {
            "id": "p-1",
            "question": "retry helper backoff",
            "gold_files": [RETRY],
            "gold_symbols": [f"{RETRY}::with_stripe_backoff"],
            "repo": "acme/payments",
            "base_commit": base,
            "meta": {"names_gold_symbol": False},
        },
        {
            "id": "p-2",
            "question": "refund a charge",
            "gold_files": [CLIENT],
            "gold_symbols": [f"{CLIENT}::StripeClient.refund"],
            "repo": "acme/payments",
            "base_commit": base,
            "meta": {"names_gold_symbol": True},
        },
        {"id": "o-1", "question": "ledger balance", "gold_files": [LEDGER], "repo": "other/thing", "base_commit": base},
    ]
    golden = tmp_path / "golden.jsonl"
    golden.write_text("".join(json.dumps(row) + "\n" for row in rows))
    out = tmp_path / "bench"
    made: list[FakeSearcher] = []

    def factory(args: object) -> FakeSearcher:
        made.append(FakeSearcher())
        return made[-1]

    argv = ["run", "--golden", str(golden), "--corpus", "git", "--git-root", str(mirror), "--repos", "payments"]
    argv += ["--cache-dir", str(tmp_path / "cache"), "--out", str(out), "--rewrites", "none,dictionary"]
    argv += ["--retrievals", "bm25", "--no-progress"]
    assert bench_main(argv, searcher_factory=factory) == 0
    assert "2 of 2 instances covered" in capsys.readouterr().out  # other/thing filtered out
    assert made[0].indexed == [f"git-acme__payments-{base[:12]}"]
    records = _records(out)
    assert set(records) == {(f"title/{r}/bm25", i) for r in ("none", "dictionary") for i in ("p-1", "p-2")}
    assert records[("title/none/bm25", "p-1")]["names_gold_symbol"] is False
    assert records[("title/none/bm25", "p-2")]["gold_functions"] == [[CLIENT, "StripeClient.refund"]]
    report = json.loads((out / "report.json").read_text())
    subset = report["subsets"]["no_gold_symbol_named"]["overall"]["title/none/bm25"]
    assert subset["n"] == 1 and subset["sym_hit@1"] == 1.0
    assert "Questions that name no gold symbol" in (out / "report.md").read_text()

    # an unknown repository is an error that names what the set has
    assert bench_main([*argv[:8], "nope/nothing", *argv[9:]], searcher_factory=factory) == 2
    assert "no item of nope/nothing" in capsys.readouterr().err


def test_filter_repos_by_full_or_short_name() -> None:
    items = [
        GoldenItem(id="a", question="q", gold_files=["x.py"], repo="pallets/flask"),
        GoldenItem(id="b", question="q", gold_files=["x.py"], repo="psf/requests"),
        GoldenItem(id="c", question="q", gold_files=["x.py"]),
    ]
    assert [item.id for item in filter_repos(items, ["flask"])] == ["a"]
    assert [item.id for item in filter_repos(items, ["psf/requests", "flask"])] == ["a", "b"]
    with pytest.raises(ValueError, match="requests/psf"):
        filter_repos(items, ["requests/psf"])


class HintingSearcher(FakeSearcher):
    """The fake searcher whose dictionary rewrite also reports the hints it chose from."""

    def search(self, question: str, *, rewrite: str, retrieval: str, top_k: int) -> SearchResult:
        result = super().search(question, rewrite=rewrite, retrieval=retrieval, top_k=top_k)
        if rewrite == "dictionary":
            # q1's hints hold its gold symbol (among 7 definitions of the name); q2's do not
            definitions = [[f"src/other{i}.py", "with_stripe_backoff"] for i in range(6)]
            if question == "retry helper backoff":
                definitions.append([RETRY, "with_stripe_backoff"])
            result.hints = [
                {
                    "name": "with_stripe_backoff",
                    "kind": "symbol",
                    "confidence": 0.7,
                    "evidence": {"semantic": 0.7},
                    "similarity": 0.61,
                    "definitions": definitions,
                },
            ]
        return result


def test_records_the_hints_offered_and_scores_hint_recall(tmp_path: Path) -> None:
    out = tmp_path / "run"
    configs = config_grid(["title"], ["none", "dictionary"], ["bm25"])
    run = run_bench(
        _golden(), HintingSearcher(), _resolver(tmp_path), BenchOptions(out, configs=configs, progress=False)
    )
    records = _records(out)
    first = records[("title/dictionary/bm25", "q1")]
    assert first["metrics"]["sym_hint_recall"] == 1.0
    assert records[("title/dictionary/bm25", "q2")]["metrics"]["sym_hint_recall"] == 0.0
    assert "sym_hint_recall" not in records[("title/dictionary/bm25", "q3")]["metrics"]  # no gold symbol
    hint = first["hints"][0]
    assert hint["name"] == "with_stripe_backoff" and hint["evidence"] == {"semantic": 0.7}
    assert len(hint["definitions"]) == 5 and hint["n_definitions"] == 7  # recall scored on all seven
    assert "hints" not in records[("title/none/bm25", "q1")]
    assert run.report["overall"]["title/dictionary/bm25"]["sym_hint_recall"] == pytest.approx(0.5)
    assert "hint recall" in (out / "report.md").read_text()
