"""End to end on the fixture repository: index with the YAML pipeline, ask, refresh incrementally."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from haystack_integrations.components.code_alias.app.pipelines import IndexMissingError, pipelines_dir
from haystack_integrations.components.code_alias.app.search import CodeSearch
from tests.support.repos import ACME_REPO


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> tuple[CodeSearch, Path]:
    import shutil

    repo = tmp_path_factory.mktemp("repo") / "acme"
    shutil.copytree(ACME_REPO, repo, symlinks=True)
    search = CodeSearch(tmp_path_factory.mktemp("index"))
    stats = search.index(repo)
    assert stats["files"] == 8 and stats["files_changed"] == 8
    return search, repo


def _top_file(search: CodeSearch, question: str) -> str:
    return search.ask(question, top_k=3).files[0]["file_path"]


def test_answer_found_through_docstring_and_package_words(indexed: tuple[CodeSearch, Path]) -> None:
    search, _ = indexed
    # "payments retry helper" shares no word with `withStripeBackoff`: the docstring says "Retry", the
    # package is @acme/payments-core.
    answer = search.ask("where's the payments retry helper?", top_k=5)
    assert answer.rewrite["symbols"][0] == "withStripeBackoff"
    assert answer.rewrite["packages"] == ["@acme/payments-core"]
    assert answer.files[0]["file_path"] == "packages/payments-core/src/retry.ts"
    assert answer.files[0]["hits"][0]["symbol"] == "withStripeBackoff"
    assert answer.files[0]["hits"][0]["start_line"] == 6


def test_answer_found_through_nickname(indexed: tuple[CodeSearch, Path]) -> None:
    search, _ = indexed
    answer = search.ask("who decides what the bouncer lets in", top_k=3)
    assert answer.rewrite["symbols"][0] == "AccessGate"
    assert answer.files[0]["file_path"] == "services/auth/acme_auth/tokens.py"


def test_answer_found_through_word_split(indexed: tuple[CodeSearch, Path]) -> None:
    search, _ = indexed
    assert _top_file(search, "post journal entries to the books") == "services/ledger/ledger.go"


def test_each_retriever_ranking_is_exposed(indexed: tuple[CodeSearch, Path]) -> None:
    search, _ = indexed
    answer = search.ask("convert currency with the rate table", top_k=3)
    assert answer.files[0]["file_path"] == "tools/rates/src/lib.rs"
    assert answer.bm25_documents and answer.embedding_documents
    assert answer.bm25_documents[0].meta["file_path"] == "tools/rates/src/lib.rs"
    raw = search.ask("convert currency with the rate table", top_k=3, use_rewrite=False)
    assert raw.rewrite["used"] is False


def test_rewrite_reaches_the_ranking_as_its_own_fused_list(indexed: tuple[CodeSearch, Path]) -> None:
    search, _ = indexed
    question = "who decides what the bouncer lets in"
    answer = search.ask(question, top_k=3)
    # BM25 reads the question as written; the nickname's symbol arrives through its definitions
    assert answer.definition_documents[0].meta["symbol"] == "AccessGate"
    assert answer.ranking("bm25")[0].meta["symbol"] == "AccessGate"
    # each list re-ranked with the definitions: the gate's file first (its class or its method), the class near
    by_meaning = answer.ranking("embedding")
    assert by_meaning[0].meta["file_path"].endswith("acme_auth/tokens.py")
    assert "AccessGate" in [document.meta.get("symbol") for document in by_meaning[:3]]
    raw = search.ask(question, top_k=3, use_rewrite=False)
    assert raw.definition_documents == [] and raw.context is not None and not raw.context.hints
    assert {d.id for d in raw.ranking("bm25")} == {d.id for d in raw.bm25_documents}  # re-ranked, nothing added


def test_close_frees_the_index_from_memory_and_the_next_question_reloads_it(
    indexed: tuple[CodeSearch, Path],
) -> None:
    from haystack_integrations.components.code_alias.retrieval import bm25, embedding_retriever

    search, _ = indexed
    before = search.ask("who decides what the bouncer lets in", top_k=3)
    store = search.query_pipeline.get_component("bm25_retriever").document_store
    assert store.storage
    derived = store.derived  # the folder's `CodeIndex` holds what the queries derived from its chunks
    assert store.index in derived.stores(bm25._INDEXES) & derived.stores(embedding_retriever._MATRICES)
    search.close()
    assert store.storage == {}
    assert store.index not in derived.stores(bm25._INDEXES) | derived.stores(embedding_retriever._MATRICES)
    after = search.ask("who decides what the bouncer lets in", top_k=3)
    assert [f["file_path"] for f in after.files] == [f["file_path"] for f in before.files]


def test_incremental_reindex_writes_only_changed_files(indexed: tuple[CodeSearch, Path]) -> None:
    search, repo = indexed
    again = search.index(repo)
    assert again["files_changed"] == 0 and again["sync"]["written"] == 0
    ledger = repo / "services/ledger/ledger.go"
    ledger.write_text(
        ledger.read_text()
        + "\n// ReverseJournal cancels a journal that was already booked.\nfunc ReverseJournal() {}\n"
    )
    (repo / "packages/web-ui/src/CheckoutButton.jsx").unlink()
    changed = search.index(repo)
    assert changed["files_changed"] == 1 and changed["files_removed"] == 1
    answer = search.ask("cancel a booked journal", top_k=3)
    assert answer.rewrite["symbols"][0] == "ReverseJournal"
    assert all(f["file_path"] != "packages/web-ui/src/CheckoutButton.jsx" for f in search.ask("checkout button").files)


def test_ask_without_index_says_how_to_build(tmp_path: Path) -> None:
    with pytest.raises(IndexMissingError, match="code-alias index"):
        CodeSearch(tmp_path / "none").ask("anything")


@pytest.mark.parametrize("name", ["indexing.yml", "query.yml"])
def test_yaml_pipelines_load_in_a_fresh_process_without_allowlist(name: str, tmp_path: Path) -> None:
    script = (
        "import sys\n"
        "from haystack import Pipeline\n"
        f"p = Pipeline.load(open({str(pipelines_dir() / name)!r}))\n"
        "print(sorted(p.graph.nodes))\n"
        "a, b = Pipeline.loads(p.dumps()).to_dict(), p.to_dict()\n"
        "key = lambda c: (c['sender'], c['receiver'])\n"
        "print(a['components'] == b['components'] and sorted(a['connections'], key=key) == "
        "sorted(b['connections'], key=key))\n"
    )
    env = {k: v for k, v in os.environ.items() if "ALLOWLIST" not in k and "UNSAFE" not in k}
    env["CODE_ALIAS_INDEX_DIR"] = str(tmp_path)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith("True")


def test_cli_index_ask_dict_json(tmp_path: Path) -> None:

    index_dir = tmp_path / "idx"
    cli = [sys.executable, "-m", "haystack_integrations.components.code_alias.cli", "--index-dir", str(index_dir)]
    done = subprocess.run([*cli, "--json", "index", str(ACME_REPO)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["dictionary"]["symbols"] > 20
    asked = subprocess.run(
        [*cli, "--json", "ask", "where's the payments retry helper?", "--top-k", "2"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert asked.returncode == 0, asked.stderr
    payload = json.loads(asked.stdout)
    assert list(payload)[:3] == ["question", "symbols", "files"]  # symbols lead the answer
    assert payload["symbols"][0]["qualified_name"].endswith("withStripeBackoff")
    assert payload["symbols"][0]["start_line"] == 6 and payload["symbols"][0]["why"]
    assert payload["files"][0]["file_path"] == "packages/payments-core/src/retry.ts"
    assert len(payload["files"]) == 2
    printed = subprocess.run(
        [*cli, "ask", "where's the payments retry helper?", "--top-k", "2"], capture_output=True, text=True, check=False
    )
    absolute = ACME_REPO.resolve() / "packages/payments-core/src/retry.ts"
    assert payload["symbols"][0]["location"] == f"{absolute}:6"  # absolute in --json, to open at the line
    # Printed: one line per symbol, the repository's own path:line (the first one first).
    assert re.match(r" 1  withStripeBackoff +packages/payments-core/src/retry\.ts:6 +function ", printed.stdout)
    assert "\033" not in printed.stdout  # no colour and no terminal hyperlinks when piped
    lookup = subprocess.run(
        [*cli, "--json", "dict", "lookup", "the bouncer"], capture_output=True, text=True, check=False
    )
    assert json.loads(lookup.stdout)[0]["name"] == "AccessGate"
    shown = subprocess.run([*cli, "dict", "show", "withStripeBackoff"], capture_output=True, text=True, check=False)
    assert "packages/payments-core/src/retry.ts:6" in shown.stdout
    missing = subprocess.run(
        [
            sys.executable,
            "-m",
            "haystack_integrations.components.code_alias.cli",
            "--index-dir",
            str(tmp_path / "no"),
            "ask",
            "x",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert missing.returncode == 2
    assert missing.stderr.strip().startswith("code-alias: error: no index at")
    assert len(missing.stderr.strip().splitlines()) == 1
