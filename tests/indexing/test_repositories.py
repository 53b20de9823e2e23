"""Several repositories in one index (issue 11): per-repository entries, removal, and `repo`/`package` filters."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from haystack import Document
from haystack.document_stores.in_memory import InMemoryDocumentStore

from haystack_integrations.components.code_alias.app.search import CodeSearch
from haystack_integrations.components.code_alias.core.builder import DictionaryBuilder
from haystack_integrations.components.code_alias.core.chunking import CHUNKER_VERSION
from haystack_integrations.components.code_alias.core.model import AliasDictionary
from haystack_integrations.components.code_alias.core.repositories import (
    RepositoryNameError,
    check_repo_name,
    default_repo_name,
    merge_part,
    part_of,
    remote_repo_name,
    without_repository,
)
from haystack_integrations.components.code_alias.indexing import index_delta, index_files
from haystack_integrations.components.code_alias.indexing.repositories import (
    UnknownFilterError,
    read_repositories,
    repository_filters,
    resolve_filter_names,
)
from haystack_integrations.components.code_alias.indexing.sync import IndexSyncPlanner, IndexSyncWriter
from haystack_integrations.components.code_alias.paths import DICTIONARY_FILE
from tests.support.repos import write_tree

ALPHA = {
    "pkg/retry.py": 'def retry_payment(charge):\n    """Retry a failed card charge with backoff."""\n'
    "    return charge()\n",
    "pkg/util.py": 'def shared_helper(amount):\n    """Normalise currency amounts to cents."""\n'
    "    return amount * 100\n",
}
BETA = {
    "lib/mail.py": 'def send_newsletter(recipients):\n    """Send the weekly newsletter email."""\n'
    "    return recipients\n",
    "pkg/util.py": 'def shared_helper(address):\n    """Trim an email address."""\n    return address.strip()\n',
}


def current_dictionary(index_dir: Path) -> AliasDictionary:
    return index_delta.load_index_dictionary(index_dir / DICTIONARY_FILE)  # with its deltas applied


@pytest.fixture
def two_repos(tmp_path: Path) -> tuple[CodeSearch, Path, Path]:
    alpha = write_tree(tmp_path / "alpha", ALPHA)
    beta = write_tree(tmp_path / "beta", BETA)
    search = CodeSearch(tmp_path / "index", lexical=True)
    assert search.index(alpha)["repo"] == "alpha"
    assert search.index(beta, repo="team/beta")["repo"] == "team/beta"
    return search, alpha, beta


# ---- the dictionary ---------------------------------------------------------------------------------------------
def test_same_symbol_in_two_repositories_stays_two_entries(two_repos: tuple[CodeSearch, Path, Path]) -> None:
    search, _, _ = two_repos
    dictionary = current_dictionary(search.index_dir)
    entries = dictionary.symbols_named("shared_helper")
    assert sorted((e.repo, e.file_path) for e in entries) == [("alpha", "pkg/util.py"), ("team/beta", "pkg/util.py")]
    assert sorted(dictionary.repositories) == ["alpha", "team/beta"]
    assert {e.repo for e in dictionary.symbols} == {"alpha", "team/beta"}
    # Each repository keeps its own file records, even for the same path.
    alpha_record = dictionary.file_record("pkg/util.py", "alpha")
    beta_record = dictionary.file_record("pkg/util.py", "team/beta")
    assert alpha_record is not None and beta_record is not None and alpha_record.sha256 != beta_record.sha256


def test_same_path_in_two_repositories_keeps_both_files(two_repos: tuple[CodeSearch, Path, Path]) -> None:
    search, _, _ = two_repos
    found = search.ask("shared_helper")
    util_files = {(f.get("repo"), f["file_path"]) for f in found.files if f["file_path"] == "pkg/util.py"}
    assert util_files == {("alpha", "pkg/util.py"), ("team/beta", "pkg/util.py")}


def test_reindexing_one_repository_leaves_the_other_alone(two_repos: tuple[CodeSearch, Path, Path]) -> None:
    search, alpha, _ = two_repos
    unchanged = search.index(alpha)
    assert unchanged["repo"] == "alpha" and unchanged["files_changed"] == 0 and unchanged["files_removed"] == 0
    (alpha / "pkg" / "util.py").write_text("def cents_helper(amount):\n    return amount * 100\n", encoding="utf-8")
    changed = search.index(alpha)
    assert changed["files_changed"] == 1 and changed["sync"]["deleted"] >= 1
    dictionary = current_dictionary(search.index_dir)
    assert [e.repo for e in dictionary.symbols_named("shared_helper")] == ["team/beta"]
    assert [e.repo for e in dictionary.symbols_named("cents_helper")] == ["alpha"]
    beta_files = {f["file_path"] for f in search.ask("shared_helper trim email", repo="team/beta").files}
    assert "pkg/util.py" in beta_files


def test_removing_a_repository_leaves_the_other_answering(two_repos: tuple[CodeSearch, Path, Path]) -> None:
    search, alpha, _ = two_repos
    removed = search.remove_repository("alpha")
    assert removed["repositories"] == ["team/beta"] and removed["deleted"] > 0
    dictionary = current_dictionary(search.index_dir)
    assert dictionary.symbols_named("retry_payment") == []
    assert [e.repo for e in dictionary.symbols_named("shared_helper")] == ["team/beta"]
    answer = search.ask("where is the newsletter sent?")
    assert answer.files and {f.get("repo") for f in answer.files} == {"team/beta"}
    assert "alpha" not in read_repositories(search.index_dir)
    with pytest.raises(KeyError, match="team/beta"):
        search.remove_repository("alpha")
    # Indexing it again brings it back next to the other one.
    assert search.index(alpha)["files_changed"] == len(ALPHA)
    assert sorted(current_dictionary(search.index_dir).repositories) == ["alpha", "team/beta"]


def test_one_tree_has_one_name(two_repos: tuple[CodeSearch, Path, Path], tmp_path: Path) -> None:
    """`ALPHA`, `alpha/../x` and another name for an indexed tree were new repositories: every chunk held again."""
    search, alpha, beta = two_repos
    assert search.index(alpha, repo="ALPHA")["repo"] == "alpha"  # any case: the name it has
    assert search.index(beta, repo="team//beta/")["repo"] == "team/beta"  # slashes normalised
    assert search.index(beta, repo="TEAM\\Beta")["repo"] == "team/beta"
    for given, message in (
        ("team/beta/../alpha", "no '.' or '..' parts"),
        ("./team/beta", "no '.' or '..' parts"),
        ("other-name", "is already indexed as 'team/beta'"),
        ("alpha", "is already indexed as 'team/beta'"),  # another tree's name
    ):
        with pytest.raises(RepositoryNameError, match=re.escape(message)):
            search.index(beta, repo=given)
    assert sorted(current_dictionary(search.index_dir).repositories) == ["alpha", "team/beta"]
    assert sorted(read_repositories(search.index_dir)) == ["alpha", "team/beta"]
    files = [f["file_path"] for f in search.ask("retry_payment", top_k=20).files]
    assert files.count("pkg/retry.py") == 1
    # A new tree whose default name is taken in another case is that repository (a clone moved elsewhere).
    moved = write_tree(tmp_path / "ALPHA", ALPHA)
    assert search.index(moved)["repo"] == "alpha"
    assert read_repositories(search.index_dir)["alpha"]["root"] == str(moved.resolve())
    assert search.remove_repository("TEAM/BETA")["repo"] == "team/beta"  # removing takes any case too
    assert sorted(read_repositories(search.index_dir)) == ["alpha"]


def test_repo_filter_returns_only_that_repositorys_files(two_repos: tuple[CodeSearch, Path, Path]) -> None:
    search, _, _ = two_repos
    unfiltered = search.ask("shared_helper retry payment newsletter", top_k=20)
    assert {f.get("repo") for f in unfiltered.files} == {"alpha", "team/beta"}
    for name in ("alpha", "team/beta"):
        filtered = search.ask("shared_helper retry payment newsletter", top_k=20, repo=name)
        assert filtered.files and {f.get("repo") for f in filtered.files} == {name}
        assert all(d.meta.get("repo") == name for d in filtered.documents)
    both = search.ask("shared_helper", repo=["alpha", "team/beta"])
    assert {f.get("repo") for f in both.files} == {"alpha", "team/beta"}
    assert search.ask("shared_helper", repo="TEAM/Beta").files[0]["repo"] == "team/beta"  # any case: the same name


@pytest.mark.parametrize(
    ("filters", "message"),
    [
        ({"repo": "nobody"}, "repo: no repository 'nobody' in this index; its repositories: alpha, team/beta"),
        ({"repo": ["alpha", "team/bet"]}, "no repository 'team/bet' in this index (did you mean team/beta?)"),
        ({"package": "no-such-package"}, "package: no package 'no-such-package' in this index; it holds no packages"),
    ],
)
def test_an_unknown_filter_is_an_error_naming_the_known_values(
    two_repos: tuple[CodeSearch, Path, Path], filters: dict[str, Any], message: str
) -> None:
    """It answered nothing (while the rewrite still named the other repositories' symbols)."""
    search, _, _ = two_repos
    with pytest.raises(UnknownFilterError) as caught:
        search.ask("shared_helper", **filters)
    assert message in str(caught.value)
    assert caught.value.field == next(iter(filters))


def test_resolve_filter_names() -> None:
    known = ["@acme/payments-core", "acme-auth", "Django"]
    aliases = {"@acme/payments-core": ("payments-core",), "acme-auth": ("acme_auth", "auth"), "Django": ("django",)}
    assert resolve_filter_names(None, "package", known) is None
    assert resolve_filter_names("acme-auth", "package", known) == "acme-auth"
    assert resolve_filter_names("DJANGO", "package", known) == "Django"
    assert resolve_filter_names(["payments-core", "auth"], "package", known, aliases) == [
        "@acme/payments-core",
        "acme-auth",
    ]
    with pytest.raises(UnknownFilterError, match=r"its packages: @acme/payments-core, Django, acme-auth$"):
        resolve_filter_names("nope", "package", known, aliases)
    with pytest.raises(UnknownFilterError, match="and 5 more"):
        resolve_filter_names("nope", "package", [f"p{i:02}" for i in range(25)])
    with pytest.raises(UnknownFilterError, match="'x'"):  # "x" is an alias of two packages: which one is unsaid
        resolve_filter_names("x", "package", ["a", "b"], {"a": ("x",), "b": ("x",)})
    with pytest.raises(ValueError, match="repo"):
        resolve_filter_names("", "repo", known)


def test_status_lists_each_repository(two_repos: tuple[CodeSearch, Path, Path]) -> None:
    from haystack_integrations.components.code_alias.app.refresh import read_status

    search, alpha, beta = two_repos
    repositories = read_status(search.index_dir)["repositories"]
    assert set(repositories) == {"alpha", "team/beta"}
    assert repositories["alpha"]["root"] == str(alpha.resolve())
    assert repositories["team/beta"]["root"] == str(beta.resolve())
    manifest = index_files.current_manifest(search.index_dir)
    assert manifest is not None and manifest.documents is not None
    counts = [repositories[name]["documents"] for name in ("alpha", "team/beta")]
    assert all(count >= len(ALPHA) for count in counts) and sum(counts) == manifest.documents.count
    assert all(r["last_sync"] and r["last_error"] is None for r in repositories.values())


def test_cli_index_remove_and_filtered_ask(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from haystack_integrations.components.code_alias.cli import main

    alpha = write_tree(tmp_path / "alpha", ALPHA)
    beta = write_tree(tmp_path / "beta", BETA)
    index = str(tmp_path / "index")
    assert main(["index", str(alpha), "--index-dir", index, "--lexical", "--repo", "a"]) == 0
    assert main(["index", str(beta), "--index-dir", index, "--repo", "b"]) == 0
    capsys.readouterr()
    assert main(["ask", "shared_helper", "--index-dir", index, "--repo", "b", "--json"]) == 0
    files = json.loads(capsys.readouterr().out)["files"]
    assert files and {f["repo"] for f in files} == {"b"}
    assert main(["status", "--index-dir", index]) == 0
    status = capsys.readouterr().out
    assert "repository a:" in status and "repository b:" in status
    assert main(["index", "--index-dir", index, "--remove-repo", "a"]) == 0
    assert "repositories left: b" in capsys.readouterr().out
    for flag, value, named in (("--repo", "nosuch", "its repositories: b"), ("--package", "nosuch", "no package")):
        assert main(["ask", "shared_helper", "--index-dir", index, flag, value]) != 0
        captured = capsys.readouterr()
        assert f"'{value}'" in captured.err and named in captured.err and not captured.out
    assert sorted(current_dictionary(Path(index)).repositories) == ["b"]


# ---- REST ------------------------------------------------------------------------------------------------------
def test_rest_ask_filters_and_bad_filter_values(two_repos: tuple[CodeSearch, Path, Path]) -> None:
    from starlette.testclient import TestClient

    from haystack_integrations.components.code_alias.serving.server import ServerSettings, build_app
    from haystack_integrations.components.code_alias.serving.service import ServiceSettings

    search, _, _ = two_repos
    app = build_app(ServerSettings(), ServiceSettings(index_dir=search.index_dir, lexical=True))
    with TestClient(app, base_url="http://127.0.0.1:1416") as client:
        good = client.post("/code_alias_ask/run", json={"question": "shared_helper", "repo": "alpha"})
        assert good.status_code == 200, good.text
        assert {f["repo"] for f in good.json()["result"]["files"]} == {"alpha"}
        several = client.post("/code_alias_ask/run", json={"question": "shared_helper", "repo": ["alpha", "team/beta"]})
        assert several.status_code == 200 and {f["repo"] for f in several.json()["result"]["files"]} == {
            "alpha",
            "team/beta",
        }
        for unknown, named in (
            ({"package": "no-such-package"}, "no package"),
            ({"repo": "nobody"}, "alpha, team/beta"),
        ):
            answer = client.post("/code_alias_ask/run", json={"question": "shared_helper", **unknown})
            assert answer.status_code == 422 and named in answer.json()["detail"], answer.text
        for bad in (
            {"repo": ""},
            {"repo": 7},
            {"repo": []},
            {"repo": [""]},
            {"package": "x" * 201},
            {"package": {"a": 1}},
        ):
            answer = client.post("/code_alias_ask/run", json={"question": "shared_helper", **bad})
            assert 400 <= answer.status_code < 500, (bad, answer.status_code, answer.text)
        status = client.post("/code_alias_status/run", json={})
        assert set(status.json()["result"]["repositories"]) == {"alpha", "team/beta"}


def test_service_rejects_bad_filter_values_with_422(two_repos: tuple[CodeSearch, Path, Path]) -> None:
    from fastapi import HTTPException

    from haystack_integrations.components.code_alias.serving.service import CodeAliasService, ServiceSettings

    search, _, _ = two_repos
    service = CodeAliasService(ServiceSettings(index_dir=search.index_dir, lexical=True))
    for repo in ("   ", 3, ["x"] * 51, "nobody", ["alpha", 3]):
        with pytest.raises(HTTPException) as caught:
            service.ask("shared_helper", repo=repo)
        assert caught.value.status_code == 422
    with pytest.raises(HTTPException) as caught:
        service.ask("shared_helper", repo="nobody")
    assert caught.value.detail == "repo: no repository 'nobody' in this index; its repositories: alpha, team/beta"


# ---- units --------------------------------------------------------------------------------------------------------
def test_merge_part_and_without_repository(tmp_path: Path) -> None:
    builder = DictionaryBuilder()
    alpha, _ = builder.build(write_tree(tmp_path / "alpha", ALPHA))
    beta, _ = builder.build(write_tree(tmp_path / "beta", BETA))
    merged = merge_part(merge_part(None, "a", alpha), "b", beta)
    assert merged.version and merged.version != merge_part(None, "a", alpha).version
    assert sorted(e.repo for e in merged.symbols_named("shared_helper")) == ["a", "b"]
    assert merged.package_for_file("pkg/util.py", "a") is None
    back = part_of(merged, "a")
    assert back is not None and back.root == alpha.root and set(back.files) == set(alpha.files)
    assert {s.name for s in back.symbols} == {s.name for s in alpha.symbols}
    # A refresh from the part reuses every file.
    _, stats = builder.refresh(tmp_path / "alpha", back)
    assert stats.files_parsed == 0 and stats.files_reused == len(ALPHA)
    alone = without_repository(merged, "a")
    assert sorted(alone.repositories) == ["b"] and {s.repo for s in alone.symbols} == {"b"}
    assert without_repository(alone, "b").symbols == []
    with pytest.raises(KeyError, match="no repository 'zzz'"):
        without_repository(merged, "zzz")
    assert part_of(merged, "zzz") is None


def test_repository_names() -> None:
    assert remote_repo_name("git@github.com:django/django.git") == "django/django"
    assert remote_repo_name("https://gitlab.example.com/team/sub/project.git") == "sub/project"
    assert remote_repo_name("https://github.com/psf/requests/") == "psf/requests"
    assert remote_repo_name("not a url") is None
    assert remote_repo_name("/work/acme/.") == "work/acme"  # what `git clone . DEST` records as origin
    assert remote_repo_name("/work/acme/./") == "work/acme"
    assert remote_repo_name("/work/../..") is None  # no name of `.` or `..` parts
    assert check_repo_name("owner/name-1.2") == "owner/name-1.2"
    assert check_repo_name("/acme//payments/") == "acme/payments"
    for bad in ("", "-x", "a b", "x" * 201, "a\nb", "a/../b", "..", "a/.", "/", 7):
        with pytest.raises(RepositoryNameError):
            check_repo_name(bad)


def test_default_repo_name_from_git_remote_or_folder(tmp_path: Path) -> None:
    plain = tmp_path / "My Repo"
    plain.mkdir()
    assert default_repo_name(plain) == "My-Repo"
    cloned = tmp_path / "clone"
    cloned.mkdir()
    subprocess.run(["git", "init", "-q", str(cloned)], check=True)
    subprocess.run(
        ["git", "-C", str(cloned), "remote", "add", "origin", "git@github.com:acme/payments.git"], check=True
    )
    assert default_repo_name(cloned) == "acme/payments"


def test_repository_filters_shapes_and_errors() -> None:
    assert repository_filters() is None
    assert repository_filters(repo="a") == {"field": "meta.repo", "operator": "==", "value": "a"}
    assert repository_filters(repo=["a", "b"], package="p") == {
        "operator": "AND",
        "conditions": [
            {"field": "meta.repo", "operator": "in", "value": ["a", "b"]},
            {"field": "meta.package", "operator": "==", "value": "p"},
        ],
    }
    for bad in ("", [""], [1], ["x"] * 51, 5):
        with pytest.raises(ValueError, match="repo"):
            repository_filters(repo=bad)  # type: ignore[arg-type]


def test_planner_and_writer_touch_only_their_repository() -> None:
    store = InMemoryDocumentStore()

    def chunk(repo: str | None, path: str, sha: str) -> Document:
        meta = {"file_path": path, "file_sha256": sha, "file_chunk_count": 1, "chunker": CHUNKER_VERSION}
        return Document(content=f"{repo} {path}", meta={**meta, **({"repo": repo} if repo else {})})

    store.write_documents([chunk("a", "x.py", "1"), chunk("b", "x.py", "2"), chunk("b", "y.py", "3")])
    planner = IndexSyncPlanner(document_store=store)
    file_a = Document(content="a x.py", meta={"file_path": "x.py", "file_sha256": "1", "repo": "a"})
    plan = planner.run(documents=[file_a], repo="a")
    assert plan["unchanged_files"] == ["x.py"] and plan["removed_files"] == []
    plan_b = planner.run(documents=[], repo="b")
    assert plan_b["removed_files"] == ["x.py", "y.py"]
    IndexSyncWriter(document_store=store, progress_bar=False).run(
        documents=[], removed_files=plan_b["removed_files"], repo="b"
    )
    assert [(d.meta.get("repo"), d.meta["file_path"]) for d in store.filter_documents()] == [("a", "x.py")]
    # Untagged chunks (an index built before repositories had names) are claimed and re-tagged by the next sync.
    store.write_documents([chunk(None, "z.py", "9")])
    legacy = Document(content="z", meta={"file_path": "z.py", "file_sha256": "9", "repo": "a"})
    assert planner.run(documents=[file_a, legacy], repo="a")["changed_files"] == ["z.py"]


# ---- filters inferred from the rewrite ------------------------------------------------------------------------------
def test_inferred_packages_needs_strong_evidence() -> None:
    from haystack_integrations.components.code_alias.indexing.repositories import inferred_packages

    def hint(name: str, confidence: float, package_evidence: float = 0.0, kind: str = "package") -> dict[str, object]:
        return {"kind": kind, "name": name, "confidence": confidence, "evidence": {"package": package_evidence}}

    hints = [
        hint("all-words", 0.5, 0.5),  # every word of its name in the question
        hint("some-words", 0.59, 0.25),  # half its words (plus other evidence): boosts only
        hint("nicknamed", 0.9),
        hint("not_a_package", 0.95, kind="symbol"),
    ]
    chosen = ["all-words", "some-words", "nicknamed", "not_a_package", "unhinted"]
    assert inferred_packages(chosen, hints) == ["all-words", "nicknamed"]
    assert inferred_packages([], hints) == []
    assert inferred_packages(chosen, []) == []


def test_ask_narrows_to_a_named_package_and_falls_back_when_that_finds_nothing(tmp_path: Path) -> None:
    alpha = write_tree(tmp_path / "alpha", {**ALPHA, "pyproject.toml": '[project]\nname = "alpha-payments"\n'})
    beta = write_tree(tmp_path / "beta", {**BETA, "docs/package.json": '{"name": "beta-docs", "version": "1.0.0"}\n'})
    search = CodeSearch(tmp_path / "index", lexical=True)
    search.index(alpha)
    search.index(beta)
    plain = search.ask("where is shared_helper in alpha-payments?", select_repository=False)
    assert {f.get("repo") for f in plain.files} == {"alpha", "beta"}
    narrowed = search.ask("where is shared_helper in alpha-payments?", infer_filters=True)
    assert narrowed.rewrite["inferred_filter"] == {"package": ["alpha-payments"], "used": True}
    assert narrowed.files and {f.get("repo") for f in narrowed.files} == {"alpha"}
    # beta-docs declares a package with no code: narrowing would exclude everything, so the first answer stays.
    fallback = search.ask("shared_helper in beta-docs", infer_filters=True)
    assert fallback.rewrite["inferred_filter"] == {"package": ["beta-docs"], "used": False}
    assert fallback.files
    nothing_named = search.ask("shared_helper", infer_filters=True)
    assert nothing_named.rewrite["inferred_filter"] is None
    assert [f["file_path"] for f in nothing_named.files] == [f["file_path"] for f in search.ask("shared_helper").files]


# ---- refresh on push, per repository -------------------------------------------------------------------------------
def test_signed_webhook_refreshes_only_the_named_repository(two_repos: tuple[CodeSearch, Path, Path]) -> None:
    from haystack_integrations.components.code_alias.app.refresh import read_status
    from haystack_integrations.components.code_alias.serving.live import (
        WebhookRefused,
        handle_webhook,
        signature_of,
        syncer_for,
    )

    search, alpha, beta = two_repos
    before = read_repositories(search.index_dir)
    (beta / "lib" / "mail.py").write_text(
        'def send_digest(recipients):\n    """Send the weekly newsletter email."""\n    return recipients\n',
        encoding="utf-8",
    )
    (alpha / "pkg" / "retry.py").write_text("def untouched_by_this_push():\n    return 1\n", encoding="utf-8")

    def post(payload: dict[str, object]) -> dict[str, object]:
        body = json.dumps(payload).encode()
        headers = {"x-hub-signature-256": signature_of(body, b"s3cret")}
        return handle_webhook(search.index_dir, headers, body, secret=b"s3cret", backend="embedded", lexical=True)

    with pytest.raises(WebhookRefused) as unnamed:
        post({"paths": ["lib/mail.py"]})
    assert unnamed.value.status_code == 422
    with pytest.raises(WebhookRefused) as unknown:
        post({"repository": "someone/else", "paths": ["lib/mail.py"]})
    assert unknown.value.status_code == 404
    queued = post({"repository": {"full_name": "team/beta"}, "commits": [{"modified": ["lib/mail.py"]}]})
    assert queued["repository"] == "team/beta"
    assert syncer_for(search.index_dir).wait(int(queued["sync_id"]), timeout=120)  # type: ignore[call-overload]
    assert read_status(search.index_dir)["state"] == "ok"
    dictionary = current_dictionary(search.index_dir)
    digest = dictionary.symbols_named("send_digest")
    assert [e.repo for e in digest] == ["team/beta"]
    assert dictionary.resolve_symbol("send_newsletter") == "send_digest"  # the old name stays as an alias
    # alpha was not synced: its edit is not in the index yet, its record is as it was.
    assert dictionary.symbols_named("untouched_by_this_push") == []
    assert [e.repo for e in dictionary.symbols_named("retry_payment")] == ["alpha"]
    after = read_repositories(search.index_dir)
    assert after["alpha"] == before["alpha"]
    assert after["team/beta"]["last_sync"] >= before["team/beta"]["last_sync"]


def test_sync_of_an_index_of_several_refreshes_each(two_repos: tuple[CodeSearch, Path, Path]) -> None:
    from haystack_integrations.components.code_alias.app.refresh import run_sync

    search, alpha, beta = two_repos
    (alpha / "pkg" / "new.py").write_text("def fresh_alpha():\n    return 1\n", encoding="utf-8")
    (beta / "lib" / "new.py").write_text("def fresh_beta():\n    return 2\n", encoding="utf-8")
    only_beta = run_sync(search.index_dir, repo="team/beta", lexical=True)
    assert only_beta["state"] == "ok"
    assert current_dictionary(search.index_dir).symbols_named("fresh_alpha") == []
    every = run_sync(search.index_dir, lexical=True)
    assert every["state"] == "ok", every["last_error"]
    dictionary = current_dictionary(search.index_dir)
    assert [e.repo for e in dictionary.symbols_named("fresh_alpha")] == ["alpha"]
    assert [e.repo for e in dictionary.symbols_named("fresh_beta")] == ["team/beta"]
    missing = run_sync(search.index_dir, repo="nobody", lexical=True)
    assert missing["state"] == "failed" and "nobody" in str(missing["last_error"])
