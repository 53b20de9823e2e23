"""The index is found like git finds its repository, and `code-alias index PATH` writes it at PATH by default."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from haystack_integrations.components.code_alias import cli
from haystack_integrations.components.code_alias.paths import find_index_dir, index_dir_for_root
from tests.support.repos import ACME_REPO


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CODE_ALIAS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("CODE_ALIAS_INDEX_DIR", raising=False)
    target = tmp_path / "work" / "somelib-1.2.3"
    shutil.copytree(ACME_REPO, target, symlinks=True)
    return target


def test_index_goes_to_the_repository_root_and_ask_finds_it_from_a_subfolder(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(repo.parent)  # as the issue did: index a repository from outside it
    assert cli.main(["index", repo.name, "--lexical", "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["index_dir"] == str(repo / ".code-alias")
    assert (repo / ".code-alias" / ".gitignore").read_text(encoding="utf-8").strip().endswith("*")
    subfolder = next(p for p in repo.rglob("*") if p.is_dir() and ".code-alias" not in p.parts and p != repo)
    monkeypatch.chdir(subfolder)
    assert cli.main(["ask", "where's the payments retry helper?", "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["symbols"][0]["qualified_name"].endswith("withStripeBackoff")
    # a bare `index` from inside refreshes that index
    assert cli.main(["index", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["files_changed"] == 0


def test_an_index_kept_elsewhere_is_found_from_inside_its_repository(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    elsewhere = tmp_path / "indexes" / "lib"
    assert cli.main(["index", str(repo), "--lexical", "--index-dir", str(elsewhere)]) == 0
    capsys.readouterr()
    monkeypatch.chdir(repo)
    assert find_index_dir(Path.cwd()) == elsewhere
    assert cli.main(["ask", "where's the payments retry helper?", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["symbols"]
    assert index_dir_for_root(repo) == (elsewhere, None)  # a later `index PATH` refreshes that one


def test_no_index_anywhere_says_so(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(repo)
    assert cli.main(["ask", "anything"]) == cli.EXIT_ERROR
    err = capsys.readouterr().err
    assert f"no index found in {repo} or its parent folders" in err and "code-alias index PATH" in err


def test_status_leads_with_readiness_and_dict_lookup_has_a_header_and_locations(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(repo)
    assert cli.main(["index", ".", "--lexical"]) == 0
    summary = capsys.readouterr().out
    assert "sync {" not in summary and "chunks in all" in summary  # in words, not a raw dict
    skipped = [line.split(":")[0].strip() for line in summary.splitlines() if line.startswith("    ")]
    assert len(skipped) == len(set(skipped)) and "node_modules" in skipped  # each skipped folder once
    assert cli.main(["status"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("ready: yes, lexical") and lines[1].startswith(f"index: {repo / '.code-alias'}")
    assert not any(line.startswith(("state:", "root:")) for line in lines)
    assert cli.main(["dict", "lookup", "payments retry helper", "--limit", "3"]) == 0
    header, first, *_ = capsys.readouterr().out.splitlines()
    assert header.split() == ["score", "kind", "name", "evidence", "definition"]
    assert "withStripeBackoff" in first and first.endswith(f"{repo / 'packages/payments-core/src/retry.ts'}:6")
    assert cli.main(["dict", "complete", "withStr", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["location"].endswith("retry.ts:6")
