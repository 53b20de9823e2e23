"""Corpora: path mapping, local / git / release corpora, the on-disk cache, coverage, the pip ladder."""

from __future__ import annotations

import io
import shutil
import subprocess
import tarfile
import zipfile
from pathlib import Path

import pytest

from haystack_integrations.components.code_alias.evaluation.corpus import (
    Corpus,
    CorpusCache,
    CorpusError,
    CorpusResolver,
    DownloadResult,
    PipDownloader,
    _selected_sdist_url,
    coverage_of,
    map_repo_path,
    prefetch,
)
from haystack_integrations.components.code_alias.evaluation.golden import GoldenItem
from tests.support.repos import FIXTURES

FIXTURE_REPO = FIXTURES / "evaluation" / "minirepo"


def test_map_repo_path_strips_src_and_lib() -> None:
    corpus = {"flask/app.py", "matplotlib/axes/_axes.py", "src/_pytest/python.py", "lib/keep.py", "pkg/x.py"}
    assert map_repo_path("pkg/x.py", corpus.__contains__) == "pkg/x.py"
    assert map_repo_path("src/flask/app.py", corpus.__contains__) == "flask/app.py"
    assert map_repo_path("lib/matplotlib/axes/_axes.py", corpus.__contains__) == "matplotlib/axes/_axes.py"
    # an sdist keeps src/: the path itself wins
    assert map_repo_path("src/_pytest/python.py", corpus.__contains__) == "src/_pytest/python.py"
    assert map_repo_path("lib/keep.py", corpus.__contains__) == "lib/keep.py"
    assert map_repo_path("pkg/missing.py", corpus.__contains__) is None
    assert map_repo_path("other/flask/app.py", corpus.__contains__) is None  # only src/ and lib/ are stripped


def test_local_corpus_is_used_in_place(tmp_path: Path) -> None:
    cache = CorpusCache(tmp_path / "cache")
    corpus = cache.local(FIXTURE_REPO)
    assert corpus.kind == "local" and corpus.root == FIXTURE_REPO.resolve()
    assert corpus.map_path("src/payments/retry.py") == "src/payments/retry.py"
    found = corpus.read("src/payments/ledger.py")
    assert found is not None and found[0] == "src/payments/ledger.py" and "def balance" in found[1]
    assert corpus.read("src/payments/nothing.py") is None
    assert not (tmp_path / "cache").exists()  # nothing copied
    with pytest.raises(CorpusError):
        cache.local(tmp_path / "absent")


def _git(repo: Path, *args: str) -> str:
    result = subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout.strip()


@pytest.fixture
def tiny_git_repo(tmp_path: Path) -> tuple[Path, str, str]:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = tmp_path / "payments"
    shutil.copytree(FIXTURE_REPO, repo)
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "first")
    first = _git(repo, "rev-parse", "HEAD")
    (repo / "src" / "payments" / "refunds.py").write_text("def refund_all():\n    return []\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "second")
    second = _git(repo, "rev-parse", "HEAD")
    return repo, first, second


def test_git_corpus_at_a_commit_is_cached(tiny_git_repo: tuple[Path, str, str], tmp_path: Path) -> None:
    repo, first, second = tiny_git_repo
    cache = CorpusCache(tmp_path / "cache")
    old = cache.git(repo, first)
    new = cache.git(repo, second)
    assert old.kind == "git" and old.key == f"git-payments-{first[:12]}"
    assert old.root.parent == tmp_path / "cache" / "corpora"
    assert old.exists("src/payments/retry.py") and not old.exists("src/payments/refunds.py")
    assert new.exists("src/payments/refunds.py")
    assert not (old.root / ".git").exists()
    assert old.details["commit"] == first and old.details["files"] == 5
    # reuse: a new cache object over the same folder does not archive again
    marker = old.root / "src" / "payments" / "retry.py"
    stamp = marker.stat().st_mtime_ns
    again = CorpusCache(tmp_path / "cache").git(repo, first[:10])  # a short sha resolves to the same key
    assert again.root == old.root and marker.stat().st_mtime_ns == stamp
    # no temporary folders left behind
    assert sorted(p.name for p in (tmp_path / "cache" / "corpora").iterdir()) == sorted([old.key, new.key])
    with pytest.raises(CorpusError, match="not found"):
        cache.git(repo, "0" * 40)


def _wheel_bytes() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as wheel:
        wheel.writestr("payments/__init__.py", "")
        wheel.writestr("payments/retry.py", "def with_stripe_backoff():\n    pass\n")
        wheel.writestr("payments/_speedups.cpython-311-x86_64-linux-gnu.so", b"\x7fELF")
        wheel.writestr("payments-1.0.dist-info/METADATA", "Name: payments\n")
        wheel.writestr("payments-1.0.data/purelib/extra_mod.py", "X = 1\n")
        wheel.writestr("../escape.py", "evil = True\n")
    return buffer.getvalue()


def _sdist_bytes() -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as sdist:
        for name, text in {
            "payments-0.9/setup.py": "from setuptools import setup\nsetup()\n",
            "payments-0.9/src/payments/__init__.py": "",
            "payments-0.9/src/payments/retry.py": "def old_backoff():\n    pass\n",
            "payments-0.9/tests/test_retry.py": "def test_x():\n    pass\n",
        }.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            sdist.addfile(info, io.BytesIO(data))
        link = tarfile.TarInfo("payments-0.9/link.py")
        link.type = tarfile.SYMTYPE
        link.linkname = "/etc/passwd"
        sdist.addfile(link)
    return buffer.getvalue()


class FakeDownloader:
    """Stands in for pip: writes a wheel for 1.0, an sdist for 0.9, fails otherwise."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    def __call__(self, distribution: str, version: str, dest: Path) -> DownloadResult:
        self.calls.append((distribution, version))
        dest.mkdir(parents=True, exist_ok=True)
        if version == "1.0":
            archive = dest / f"{distribution}-1.0-py3-none-any.whl"
            archive.write_bytes(_wheel_bytes())
            return DownloadResult(archive, "wheel", "fake wheel")
        if version == "0.9":
            archive = dest / f"{distribution}-0.9.tar.gz"
            archive.write_bytes(_sdist_bytes())
            return DownloadResult(archive, "sdist", "fake sdist")
        raise CorpusError(f"{distribution}=={version}: no such release")


def test_wheel_corpus_is_pruned_and_cached(tmp_path: Path) -> None:
    fake = FakeDownloader()
    cache = CorpusCache(tmp_path / "cache", downloader=fake)
    corpus = cache.pypi("payments", "1.0")
    assert corpus.kind == "wheel" and corpus.key == "payments-1.0"
    files = sorted(str(p.relative_to(corpus.root)) for p in corpus.root.rglob("*") if p.is_file())
    # dist-info and the compiled module are gone, purelib data is lifted to the root, ../escape.py never lands
    assert files == ["extra_mod.py", "payments/__init__.py", "payments/retry.py"]
    assert not (tmp_path / "cache" / "escape.py").exists()
    assert corpus.map_path("src/payments/retry.py") == "payments/retry.py"
    assert corpus.details["how"] == "fake wheel" and corpus.details["files"] == 3
    assert corpus.details["archive"] == "payments-1.0-py3-none-any.whl"
    # second call, and a second cache object: no download
    assert cache.pypi("payments", "1.0").root == corpus.root
    assert CorpusCache(tmp_path / "cache", downloader=fake).pypi("payments", "1.0").kind == "wheel"
    assert fake.calls == [("payments", "1.0")]
    # the extracted folder deleted: rebuilt from the kept archive, still without a download
    shutil.rmtree(corpus.root)
    rebuilt = CorpusCache(tmp_path / "cache", downloader=fake).pypi("payments", "1.0")
    assert rebuilt.exists("payments/retry.py") and fake.calls == [("payments", "1.0")]


def test_sdist_corpus_loses_its_top_folder(tmp_path: Path) -> None:
    corpus = CorpusCache(tmp_path / "cache", downloader=FakeDownloader()).pypi("payments", "0.9")
    assert corpus.kind == "sdist"
    assert corpus.exists("setup.py") and corpus.exists("src/payments/retry.py")
    assert not corpus.exists("link.py")  # links are not extracted
    assert corpus.map_path("src/payments/retry.py") == "src/payments/retry.py"


def test_failed_download_leaves_nothing_and_resolver_remembers(tmp_path: Path) -> None:
    fake = FakeDownloader()
    resolver = CorpusResolver(
        CorpusCache(tmp_path / "cache", downloader=fake), mode="pypi", distributions={"acme/payments": "payments"}
    )
    for _ in range(2):
        with pytest.raises(CorpusError, match="no such release"):
            resolver.resolve("acme/payments", "6.3", None)
    assert fake.calls == [("payments", "6.3")]
    leftovers = [p.name for p in (tmp_path / "cache" / "corpora").iterdir()]
    assert leftovers == []


def test_resolver_plans(tiny_git_repo: tuple[Path, str, str], tmp_path: Path) -> None:
    repo, first, _ = tiny_git_repo
    cache = CorpusCache(tmp_path / "cache", downloader=FakeDownloader())
    resolver = CorpusResolver(
        cache, git_root=repo.parent, local_root=FIXTURE_REPO, distributions={"acme/payments": "payments"}
    )
    # auto: a clone named after the repository + a commit -> git
    assert resolver.plan("acme/payments", "1.0", first)[0] == "git"
    # no commit -> the release
    assert resolver.plan("acme/payments", "1.0", None) == ("pypi", ("payments", "1.0"))
    # unknown repository -> the local root
    assert resolver.plan("other/thing", None, None) == ("local", (str(FIXTURE_REPO),))
    assert resolver.resolve("acme/payments", "1.0", first).kind == "git"
    assert CorpusResolver(cache, mode="pypi").plan("other/thing", "1", None)[0] == "none"
    with pytest.raises(CorpusError, match="no corpus source"):
        CorpusResolver(cache, mode="pypi").resolve("other/thing", "1", None)
    assert CorpusResolver(cache, mode="pypi").plan("django/django", "3.0", "abc") == ("pypi", ("Django", "3.0"))


def test_git_corpus_from_a_mirror_layout_and_a_relative_cache(
    tiny_git_repo: tuple[Path, str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bare mirror at `owner+name/repo`, and a relative cache folder (git archive runs inside the repository)."""
    repo, first, _ = tiny_git_repo
    mirror = tmp_path / "mirror"
    (mirror / "acme+payments").mkdir(parents=True)
    bare = mirror / "acme+payments" / "repo"
    subprocess.run(["git", "clone", "-q", "--bare", str(repo), str(bare)], check=True, capture_output=True)
    monkeypatch.chdir(tmp_path)
    cache = CorpusCache("relative-cache")
    assert cache.cache_dir == tmp_path / "relative-cache"
    resolver = CorpusResolver(cache, mode="git", git_root=mirror)
    assert resolver.plan("acme/payments", None, first) == ("git", (str(bare), first, "acme__payments"))
    corpus = resolver.resolve("acme/payments", None, first)
    assert corpus.key == f"git-acme__payments-{first[:12]}"
    assert corpus.root == tmp_path / "relative-cache" / "corpora" / corpus.key
    assert corpus.exists("src/payments/retry.py") and not corpus.exists("src/payments/refunds.py")
    assert not list(bare.glob("relative-cache*"))  # nothing written inside the repository
    # the flat layout: the bare repository is `owner+name` itself
    flat = tmp_path / "flat"
    flat.mkdir()
    shutil.copytree(bare, flat / "acme+payments")
    assert CorpusResolver(cache, mode="git", git_root=flat).plan("acme/payments", None, first)[0] == "git"


def _item(item_id: str, gold: list[str], version: str = "1.0") -> GoldenItem:
    return GoldenItem(id=item_id, question="q", gold_files=gold, repo="acme/payments", version=version)


def test_coverage_and_prefetch(tmp_path: Path) -> None:
    fake = FakeDownloader()
    resolver = CorpusResolver(
        CorpusCache(tmp_path / "cache", downloader=fake), mode="pypi", distributions={"acme/payments": "payments"}
    )
    items = [
        _item("ok", ["src/payments/retry.py"]),
        _item("partly", ["src/payments/retry.py", "src/payments/gone.py"]),
        _item("old", ["src/payments/retry.py"], version="0.9"),
        _item("missing", ["src/payments/retry.py"], version="6.3"),
    ]
    seen: list[str] = []
    report = prefetch(items, resolver, progress=False, on_corpus=lambda key, corpus, error, s: seen.append(key))
    assert seen == ["pypi:payments/1.0", "pypi:payments/0.9", "pypi:payments/6.3"]
    assert [entry.covered for entry in report] == [True, False, True, False]
    assert report[0].gold_files == {"src/payments/retry.py": "payments/retry.py"}
    assert report[1].gold_files["src/payments/gone.py"] is None
    assert report[1].error is not None and "src/payments/gone.py" in report[1].error
    assert report[3].corpus is None and "no such release" in (report[3].error or "")
    assert fake.calls == [("payments", "1.0"), ("payments", "0.9"), ("payments", "6.3")]
    assert coverage_of(_item("none", []), resolver.resolve("acme/payments", "1.0", None)).covered is False


def test_a_gold_file_the_index_does_not_read_is_not_covered(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    (root / "src").mkdir(parents=True)
    for name in ("src/index.ts", "package.json", "CHANGELOG.md"):
        (root / name).write_text("x\n", encoding="utf-8")
    corpus = Corpus(key="git:acme@1", root=root, kind="git")
    assert coverage_of(_item("code", ["src/index.ts"]), corpus).covered is True
    manifest = coverage_of(_item("manifest", ["src/index.ts", "package.json"]), corpus)
    assert manifest.covered is False and manifest.gold_files["package.json"] == "package.json"
    assert "does not read" in (manifest.error or "") and "package.json" in (manifest.error or "")
    assert coverage_of(_item("notes", ["CHANGELOG.md"]), corpus).covered is False


class ScriptedPip(PipDownloader):
    """A PipDownloader whose pip is scripted: only the cp37 attempt finds a wheel."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[list[str]] = []

    def _pip(self, args: list[str], dest: Path) -> subprocess.CompletedProcess[str]:
        self.seen.append(args)
        if "--abi" in args and args[args.index("--abi") + 1] == "cp37m":
            (dest / "pkg-0.20-cp37-cp37m-manylinux1_x86_64.whl").write_bytes(b"PK")
            return subprocess.CompletedProcess(args, 0, "Saved", "")
        return subprocess.CompletedProcess(args, 1, "", "ERROR: No matching distribution found for pkg==0.20")


def test_pip_ladder_tries_older_interpreters(tmp_path: Path) -> None:
    pip = ScriptedPip()
    result = pip("pkg", "0.20", tmp_path / "dl")
    assert result.kind == "wheel" and result.how == "wheel (cp37)"
    assert result.archive == tmp_path / "dl" / "pkg-0.20-cp37-cp37m-manylinux1_x86_64.whl"
    assert result.archive.is_file()
    assert pip.seen[0] == ["--only-binary=:all:", "pkg==0.20"]
    cp37 = pip.seen[-1]
    assert cp37[cp37.index("--python-version") + 1] == "3.7" and "--platform" in cp37
    assert [p.name for p in (tmp_path / "dl").iterdir()] == [result.archive.name]  # scratch folders removed


def test_pip_attempt_tags() -> None:
    attempts = dict(PipDownloader().attempts())
    cp36 = attempts["wheel (cp36)"]
    assert cp36[cp36.index("--abi") + 1] == "cp36m"
    cp310 = attempts["wheel (cp310)"]
    assert cp310[cp310.index("--abi") + 1] == "cp310"
    assert cp310[cp310.index("--implementation") + 1] == "cp"


def test_sdist_url_read_from_pip_log() -> None:
    log = (
        "  Found link https://files.pythonhosted.org/packages/4e/31/x/requests-0.14.0.tar.gz "
        "(from https://pypi.org/simple/requests/), version: 0.14.0\n"
        "Added requests==0.14 from https://files.pythonhosted.org/packages/4e/31/x/requests-0.14.0.tar.gz"
        "#sha256=abc to build tracker '/tmp/pip-build-tracker-1'\n"
        "ERROR: Failed to build 'requests' when getting requirements to build wheel\n"
    )
    assert _selected_sdist_url(log) == "https://files.pythonhosted.org/packages/4e/31/x/requests-0.14.0.tar.gz"
    assert _selected_sdist_url("ERROR: No matching distribution found") is None
