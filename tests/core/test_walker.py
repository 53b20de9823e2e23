"""Tests for the repository walker: exclusions, limits, symlinks, text reading and path safety."""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

import pytest

from haystack_integrations.components.code_alias.core import walker as walker_module
from haystack_integrations.components.code_alias.core.model import Skipped
from haystack_integrations.components.code_alias.core.walker import (
    DEFAULT_EXCLUDED_DIRS,
    UnsafePathError,
    WalkConfig,
    WalkEntry,
    read_text_file,
    resolve_inside,
    walk_repository,
)

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="symlinks and FIFOs need a POSIX filesystem")


def write(root: Path, rel_path: str, content: str | bytes = "x = 1\n") -> Path:
    path = root / rel_path
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def rel_paths(root: Path, config: WalkConfig | None = None) -> list[str]:
    result = walk_repository(root, config) if config else walk_repository(root)
    return [entry.rel_path for entry in result.files]


def reasons(root: Path, config: WalkConfig | None = None) -> dict[str, str]:
    result = walk_repository(root, config) if config else walk_repository(root)
    return {skipped.path: skipped.reason for skipped in result.skipped}


# ---- listing ---------------------------------------------------------------------------------------------------
def test_lists_files_sorted_with_posix_paths_and_stats(tmp_path: Path) -> None:
    write(tmp_path, "b.py", "b = 2\n")
    write(tmp_path, "a/z.py", "z = 26\n")
    write(tmp_path, "a/b/c.ts", "export const c = 3;\n")
    result = walk_repository(tmp_path)
    assert [e.rel_path for e in result.files] == ["a/b/c.ts", "a/z.py", "b.py"]
    assert result.skipped == []
    entry = result.files[1]
    assert entry.abs_path == (tmp_path / "a" / "z.py").resolve()
    assert entry.size == len("z = 26\n")
    assert entry.mtime_ns == os.stat(tmp_path / "a" / "z.py").st_mtime_ns


def test_walk_is_deterministic(tmp_path: Path) -> None:
    for index in range(40):
        write(tmp_path, f"pkg{index % 7}/mod_{index}.py")
        write(tmp_path, f"node_modules/dep{index}/index.js")
    first = walk_repository(tmp_path)
    second = walk_repository(tmp_path)
    assert first == second
    assert [e.rel_path for e in first.files] == sorted(e.rel_path for e in first.files)
    assert len(first.files) == 40


def test_accepts_str_root_and_relative_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "repo/a.py")
    monkeypatch.chdir(tmp_path)
    assert rel_paths(Path("repo")) == ["a.py"]
    assert [e.rel_path for e in walk_repository("repo").files] == ["a.py"]


def test_extensions_and_wanted_filter_silently(tmp_path: Path) -> None:
    for rel in ("a.py", "b.d.ts", "c.md", "package.json", "README", "sub/x.PY", "sub/skip_me.py"):
        write(tmp_path, rel)
    config = WalkConfig(extensions=frozenset({".py", ".d.ts", "package.json"}))
    result = walk_repository(tmp_path, config, wanted=lambda rel: "skip_me" not in rel)
    assert [e.rel_path for e in result.files] == ["a.py", "b.d.ts", "package.json", "sub/x.PY"]
    assert result.skipped == []


def test_missing_root_and_file_root_raise(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="does not exist"):
        walk_repository(tmp_path / "nope")
    file_root = write(tmp_path, "file.py")
    with pytest.raises(NotADirectoryError, match="not a folder"):
        walk_repository(file_root)


# ---- exclusions ------------------------------------------------------------------------------------------------
def test_excluded_folders_reported_once_and_caches_silently(tmp_path: Path) -> None:
    write(tmp_path, "src/app.py")
    for index in range(5):
        write(tmp_path, f"node_modules/dep/file{index}.js")
    write(tmp_path, "web/vendor/jquery.js")
    write(tmp_path, ".git/config", "[core]\n")
    write(tmp_path, "src/__pycache__/app.cpython-311.pyc", b"\x00\x01")
    write(tmp_path, "pkg.egg-info/PKG-INFO", "Name: pkg\n")
    result = walk_repository(tmp_path)
    assert [e.rel_path for e in result.files] == ["src/app.py"]
    found = {s.path: s.reason for s in result.skipped}
    assert set(found) == {"node_modules", "web/vendor", "pkg.egg-info"}
    assert "excluded folder" in found["node_modules"] and "'node_modules'" in found["node_modules"]
    assert "'*.egg-info'" in found["pkg.egg-info"]


def test_generic_folder_name_kept_when_it_is_a_python_package(tmp_path: Path) -> None:
    write(tmp_path, "src/build/__init__.py")
    write(tmp_path, "src/build/env.py")
    write(tmp_path, "build/lib/copy.py")
    write(tmp_path, "coverage/__init__.py")
    assert rel_paths(tmp_path) == ["coverage/__init__.py", "src/build/__init__.py", "src/build/env.py"]
    assert set(reasons(tmp_path)) == {"build"}


def test_virtualenv_detected_by_marker_under_any_name(tmp_path: Path) -> None:
    write(tmp_path, "app.py")
    write(tmp_path, "py311/pyvenv.cfg", "home = /usr/bin\n")
    write(tmp_path, "py311/lib/python3.11/site.py")
    write(tmp_path, "conda_env/conda-meta/history", "")
    write(tmp_path, "conda_env/lib/x.py")
    assert rel_paths(tmp_path) == ["app.py"]
    found = reasons(tmp_path)
    assert found["py311"] == "excluded folder: a Python virtual environment"
    assert found["conda_env"] == "excluded folder: a Python virtual environment"


def test_excluded_globs_report_generated_lock_and_secret_files(tmp_path: Path) -> None:
    write(tmp_path, "app.js")
    write(tmp_path, "app.min.js")
    write(tmp_path, "proto/api_pb2.py")
    write(tmp_path, "client.generated.ts")
    write(tmp_path, "package-lock.json", "{}")
    write(tmp_path, ".env", "SECRET=1\n")
    assert rel_paths(tmp_path) == ["app.js"]
    found = reasons(tmp_path)
    assert "'*.min.js'" in found["app.min.js"]
    assert "'*_pb2.py'" in found["proto/api_pb2.py"]
    assert "'*.generated.*'" in found["client.generated.ts"]
    assert "'package-lock.json'" in found["package-lock.json"]
    assert "'.env'" in found[".env"]


def test_custom_config_and_path_globs(tmp_path: Path) -> None:
    write(tmp_path, "docs/conf.py")
    write(tmp_path, "gen/out.py")
    write(tmp_path, "src/main.py")
    write(tmp_path, "node_modules/x.js")
    config = WalkConfig(exclude_dirs=frozenset({"docs"}), exclude_globs=("gen/*",))
    result = walk_repository(tmp_path, config)
    assert [e.rel_path for e in result.files] == ["node_modules/x.js", "src/main.py"]
    assert {s.path for s in result.skipped} == {"docs", "gen/out.py"}
    # Replacing exclude_dirs replaces the defaults: node_modules is listed.
    assert "node_modules" in DEFAULT_EXCLUDED_DIRS


def test_too_large_file_reported_with_sizes(tmp_path: Path) -> None:
    write(tmp_path, "small.py", "a" * 100)
    write(tmp_path, "big.py", "a" * 101)
    result = walk_repository(tmp_path, WalkConfig(max_file_bytes=100))
    assert [e.rel_path for e in result.files] == ["small.py"]
    assert result.skipped == [Skipped(path="big.py", reason="too large: 101 bytes > limit 100")]


@posix_only
def test_non_utf8_file_name_is_reported_not_crashing(tmp_path: Path) -> None:
    write(tmp_path, "ok.py")
    bad = os.path.join(os.fsencode(tmp_path), b"bad\xff.py")
    try:
        with open(bad, "wb") as handle:
            handle.write(b"x = 1\n")
    except OSError:
        pytest.skip("this filesystem refuses non-UTF-8 names")
    result = walk_repository(tmp_path)
    assert [e.rel_path for e in result.files] == ["ok.py"]
    assert len(result.skipped) == 1
    assert result.skipped[0].reason == "file name is not valid UTF-8"
    result.skipped[0].path.encode("utf-8")  # storable as JSON


@posix_only
def test_fifo_is_reported_and_never_opened(tmp_path: Path) -> None:
    write(tmp_path, "a.py")
    os.mkfifo(tmp_path / "pipe.py")
    found = reasons(tmp_path)
    assert found == {"pipe.py": "not a regular file (named pipe)"}
    skipped = read_text_file(tmp_path / "pipe.py", max_bytes=1000)  # would block forever on a plain open()
    assert isinstance(skipped, Skipped)
    assert skipped.reason == "not a regular file (named pipe)"


def test_unreadable_folder_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "ok/a.py")
    write(tmp_path, "locked/b.py")
    real_scandir = os.scandir
    locked = str(tmp_path.resolve() / "locked")

    def fake_scandir(path: str) -> object:
        if os.fspath(path) == locked:
            raise PermissionError(13, "Permission denied")
        return real_scandir(path)

    monkeypatch.setattr(walker_module.os, "scandir", fake_scandir)
    result = walk_repository(tmp_path)
    assert [e.rel_path for e in result.files] == ["ok/a.py"]
    assert result.skipped == [Skipped(path="locked", reason="unreadable folder: permission denied")]


# ---- symlinks --------------------------------------------------------------------------------------------------
@posix_only
def test_symlink_loop_to_enclosing_folder(tmp_path: Path) -> None:
    write(tmp_path, "a/b/c.py")
    os.symlink("..", tmp_path / "a" / "b" / "up")
    os.symlink(".", tmp_path / "self")
    result = walk_repository(tmp_path)
    assert [e.rel_path for e in result.files] == ["a/b/c.py"]
    found = {s.path: s.reason for s in result.skipped}
    assert found["a/b/up"] == "symlink loop (points back to its enclosing folder 'a')"
    assert found["self"] == "symlink loop (points back to its enclosing folder '.')"


@posix_only
def test_symlink_chain_that_never_resolves(tmp_path: Path) -> None:
    os.symlink("loop_b", tmp_path / "loop_a")
    os.symlink("loop_a", tmp_path / "loop_b")
    found = reasons(tmp_path)
    assert found["loop_a"].startswith("symlink loop")
    assert found["loop_b"].startswith("symlink loop")


@posix_only
def test_symlink_escaping_root_is_not_followed(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    outside = tmp_path / "outside"
    write(outside, "secret.py", "TOKEN = 'x'\n")
    write(repo, "main.py")
    os.symlink(outside, repo / "linked_dir")
    os.symlink(outside / "secret.py", repo / "linked_file.py")
    os.symlink("../outside/secret.py", repo / "relative.py")
    result = walk_repository(repo)
    assert [e.rel_path for e in result.files] == ["main.py"]
    found = {s.path: s.reason for s in result.skipped}
    assert set(found) == {"linked_dir", "linked_file.py", "relative.py"}
    assert all(reason.startswith("symlink escapes the repository root") for reason in found.values())


@posix_only
def test_broken_symlink_reported(tmp_path: Path) -> None:
    write(tmp_path, "a.py")
    os.symlink("missing.py", tmp_path / "dangling.py")
    os.symlink("no/such/dir", tmp_path / "dangling_dir")
    os.symlink("missing.png", tmp_path / "image.png")
    config = WalkConfig(extensions=frozenset({".py"}))
    result = walk_repository(tmp_path, config)
    assert [e.rel_path for e in result.files] == ["a.py"]
    found = {s.path: s.reason for s in result.skipped}
    # The unwanted .png link is ignored like any unwanted file; a suffix-less name may be a folder.
    assert found == {
        "dangling.py": "broken symlink (-> 'missing.py' does not exist)",
        "dangling_dir": "broken symlink (-> 'no/such/dir' does not exist)",
    }


@posix_only
def test_symlinks_inside_root_list_each_file_once_under_its_real_path(tmp_path: Path) -> None:
    write(tmp_path, "real/mod.py")
    os.symlink("real", tmp_path / "alias")  # sorts before "real", yet "real" wins
    os.symlink("real/mod.py", tmp_path / "a_link.py")
    result = walk_repository(tmp_path)
    assert [e.rel_path for e in result.files] == ["real/mod.py"]
    found = {s.path: s.reason for s in result.skipped}
    assert found == {
        "a_link.py": "symlink to 'real/mod.py', already listed there",
        "alias": "symlink to folder 'real', already walked there",
    }


@posix_only
def test_symlink_to_folder_not_walked_otherwise_is_followed(tmp_path: Path) -> None:
    write(tmp_path, "node_modules/@acme/core/index.js")
    write(tmp_path, "assets/data.py")
    os.symlink("node_modules/@acme/core", tmp_path / "core")
    os.symlink("assets/data.py", tmp_path / "data_link.py")
    result = walk_repository(tmp_path)
    paths = [e.rel_path for e in result.files]
    assert paths == ["assets/data.py", "core/index.js"]
    core = result.files[1]
    assert core.abs_path == (tmp_path / "node_modules/@acme/core/index.js").resolve()


@posix_only
def test_root_itself_may_be_a_symlink(tmp_path: Path) -> None:
    write(tmp_path, "repo/pkg/a.py")
    os.symlink(tmp_path / "repo", tmp_path / "link_to_repo")
    direct = walk_repository(tmp_path / "repo")
    via_link = walk_repository(tmp_path / "link_to_repo")
    assert [e.rel_path for e in via_link.files] == ["pkg/a.py"]
    assert via_link == direct


@posix_only
def test_follow_symlinks_off_reports_links(tmp_path: Path) -> None:
    write(tmp_path, "real/mod.py")
    os.symlink("real", tmp_path / "alias")
    os.symlink("real/mod.py", tmp_path / "link.py")
    result = walk_repository(tmp_path, WalkConfig(follow_symlinks=False))
    assert [e.rel_path for e in result.files] == ["real/mod.py"]
    assert {s.path: s.reason for s in result.skipped} == {
        "alias": "symlink not followed (follow_symlinks is off)",
        "link.py": "symlink not followed (follow_symlinks is off)",
    }


@posix_only
def test_excluded_name_symlink_is_not_followed(tmp_path: Path) -> None:
    outside_venv = tmp_path / "opt_venv"
    write(outside_venv, "lib/site.py")
    write(tmp_path / "repo", "a.py")
    os.symlink(outside_venv, tmp_path / "repo" / ".venv")
    os.symlink(outside_venv, tmp_path / "repo" / "node_modules")
    result = walk_repository(tmp_path / "repo")
    assert [e.rel_path for e in result.files] == ["a.py"]
    assert {s.path for s in result.skipped} == {".venv", "node_modules"}


# ---- reading ---------------------------------------------------------------------------------------------------
def test_read_text_file_returns_text_and_hash(tmp_path: Path) -> None:
    data = "def f():\r\n    return 'é'\n".encode()
    path = write(tmp_path, "m.py", data)
    entry = walk_repository(tmp_path).files[0]
    result = read_text_file(entry, max_bytes=1000)
    assert result == ("def f():\r\n    return 'é'\n", hashlib.sha256(data).hexdigest())
    assert read_text_file(path, max_bytes=1000) == result
    assert read_text_file(str(path), max_bytes=1000) == result


def test_read_text_file_strips_utf8_bom_but_hashes_raw_bytes(tmp_path: Path) -> None:
    data = b"\xef\xbb\xbfx = 1\n"
    path = write(tmp_path, "bom.py", data)
    assert read_text_file(path, max_bytes=100) == ("x = 1\n", hashlib.sha256(data).hexdigest())


def test_read_text_file_binary(tmp_path: Path) -> None:
    write(tmp_path, "blob.py", b"abc\x00def")
    entry = walk_repository(tmp_path).files[0]
    assert read_text_file(entry, max_bytes=100) == Skipped(
        path="blob.py", reason="binary (NUL byte in the first 8 KiB)"
    )


def test_read_text_file_nul_after_8k_is_not_binary_but_text(tmp_path: Path) -> None:
    path = write(tmp_path, "late.py", b"a" * 9000 + b"\x00")
    result = read_text_file(path, max_bytes=20_000)
    assert isinstance(result, tuple)
    assert len(result[0]) == 9001


def test_read_text_file_not_utf8(tmp_path: Path) -> None:
    path = write(tmp_path, "latin.py", "x = 'café'\n".encode("latin-1"))
    result = read_text_file(path, max_bytes=100)
    assert isinstance(result, Skipped)
    assert result.reason == "not UTF-8 text (byte 0xe9 at offset 8)"
    assert result.path == str(path)


def test_read_text_file_utf16(tmp_path: Path) -> None:
    path = write(tmp_path, "wide.py", "x = 1\n".encode("utf-16"))
    result = read_text_file(path, max_bytes=100)
    assert isinstance(result, Skipped)
    assert result.reason == "not UTF-8 text (UTF-16 byte-order mark)"


def test_read_text_file_too_large(tmp_path: Path) -> None:
    path = write(tmp_path, "big.py", "a" * 50)
    result = read_text_file(path, max_bytes=10)
    assert result == Skipped(path=str(path), reason="too large: 50 bytes > limit 10")


def test_read_text_file_missing_file(tmp_path: Path) -> None:
    entry = WalkEntry(rel_path="gone.py", abs_path=tmp_path / "gone.py", size=1, mtime_ns=0)
    result = read_text_file(entry, max_bytes=10)
    assert isinstance(result, Skipped)
    assert result.path == "gone.py"
    assert result.reason.startswith("file does not exist")


def test_read_text_file_permission_denied(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path, "secret.py")
    real_open = os.open

    def deny(target: str, flags: int, *args: int) -> int:
        if os.fspath(target) == str(path):
            raise PermissionError(13, "Permission denied", str(target))
        return real_open(target, flags, *args)

    monkeypatch.setattr(walker_module.os, "open", deny)
    assert read_text_file(path, max_bytes=100) == Skipped(path=str(path), reason="unreadable: permission denied")


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root reads any file")
def test_read_text_file_permission_denied_for_real(tmp_path: Path) -> None:
    path = write(tmp_path, "secret.py")
    path.chmod(0)
    try:
        assert read_text_file(path, max_bytes=100) == Skipped(path=str(path), reason="unreadable: permission denied")
    finally:
        path.chmod(0o644)


# ---- resolve_inside --------------------------------------------------------------------------------------------
def test_resolve_inside_accepts_paths_in_the_root(tmp_path: Path) -> None:
    write(tmp_path, "a/b.py")
    root = tmp_path.resolve()
    assert resolve_inside(tmp_path, "a/b.py") == root / "a" / "b.py"
    assert resolve_inside(tmp_path, "a/../a/b.py") == root / "a" / "b.py"
    assert resolve_inside(tmp_path, "not/yet/there.py") == root / "not" / "yet" / "there.py"
    assert resolve_inside(tmp_path, "") == root
    assert resolve_inside(tmp_path, ".") == root


@pytest.mark.parametrize("bad", ["../x.py", "a/../../x.py", "/etc/passwd", "..", "a\x00b"])
def test_resolve_inside_rejects_escapes(tmp_path: Path, bad: str) -> None:
    (tmp_path / "a").mkdir()
    with pytest.raises(UnsafePathError):
        resolve_inside(tmp_path, bad)


@posix_only
def test_resolve_inside_rejects_symlink_leading_out(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    write(tmp_path, "outside/secret.py")
    os.symlink(tmp_path / "outside", repo / "door")
    with pytest.raises(UnsafePathError, match="outside the repository root"):
        resolve_inside(repo, "door/secret.py")


@posix_only
def test_resolve_inside_with_symlinked_root(tmp_path: Path) -> None:
    write(tmp_path, "repo/a.py")
    os.symlink(tmp_path / "repo", tmp_path / "link")
    assert resolve_inside(tmp_path / "link", "a.py") == (tmp_path / "repo" / "a.py").resolve()
    with pytest.raises(UnsafePathError):
        resolve_inside(tmp_path / "link", "../x.py")


PY_ONLY = WalkConfig(extensions=frozenset({".py"}))


def test_gitignore_rules_root_and_nested_with_negation(tmp_path: Path) -> None:
    write(tmp_path, ".gitignore", "# build output\ngenerated/\n*.gen.py\n!keep.gen.py\n/top_only.py\n")
    for rel in [
        "src/app.py",
        "src/schema.gen.py",
        "src/keep.gen.py",
        "generated/client.py",
        "src/generated/inner.py",
        "top_only.py",
        "src/top_only.py",
        "pkg/local_settings.py",
        "pkg/core.py",
    ]:
        write(tmp_path, rel)
    write(tmp_path, "pkg/.gitignore", "local_settings.py\n")
    result = walk_repository(tmp_path, PY_ONLY)
    listed = [entry.rel_path for entry in result.files]
    assert listed == ["pkg/core.py", "src/app.py", "src/keep.gen.py", "src/top_only.py"]
    reasons = {skipped.path: skipped.reason for skipped in result.skipped}
    assert reasons["generated"] == "ignored folder (by .gitignore)"
    assert reasons["src/generated"] == "ignored folder (by .gitignore)"  # a folder reported once, not per file
    assert "src/generated/inner.py" not in reasons
    assert reasons["src/schema.gen.py"] == "ignored file (by .gitignore)"
    assert reasons["top_only.py"] == "ignored file (by .gitignore)"
    assert reasons["pkg/local_settings.py"] == "ignored file (by pkg/.gitignore)"
    # switched off, everything is listed
    everything = rel_paths(tmp_path, WalkConfig(extensions=frozenset({".py"}), respect_gitignore=False))
    assert "generated/client.py" in everything and "pkg/local_settings.py" in everything


def test_nested_gitignore_can_reinclude_and_symlinks_obey_the_rules(tmp_path: Path) -> None:
    write(tmp_path, ".gitignore", "*.tmp.py\n")
    write(tmp_path, "lib/.gitignore", "!wanted.tmp.py\n")
    write(tmp_path, "lib/wanted.tmp.py")
    write(tmp_path, "lib/other.tmp.py")
    write(tmp_path, "real/mod.py")
    if sys.platform != "win32":
        (tmp_path / "alias.tmp.py").symlink_to(tmp_path / "real" / "mod.py")
    result = walk_repository(tmp_path, PY_ONLY)
    assert [entry.rel_path for entry in result.files] == ["lib/wanted.tmp.py", "real/mod.py"]
    reasons = {skipped.path: skipped.reason for skipped in result.skipped}
    assert reasons["lib/other.tmp.py"] == "ignored file (by .gitignore)"
    if sys.platform != "win32":
        assert reasons["alias.tmp.py"] == "ignored file (by .gitignore)"


def test_unreadable_gitignore_is_reported_and_the_walk_goes_on(tmp_path: Path) -> None:
    write(tmp_path, ".gitignore", "*.py\n")
    write(tmp_path, "app.py")
    tiny = WalkConfig(max_file_bytes=3, extensions=frozenset({".py"}))
    result = walk_repository(tmp_path, tiny)
    reasons = {skipped.path: skipped.reason for skipped in result.skipped}
    assert reasons[".gitignore"] == "too large to read as ignore rules; its rules are not applied"


def test_reader_and_dictionary_builder_follow_gitignore_and_can_switch_it_off(tmp_path: Path) -> None:
    from haystack_integrations.components.code_alias.indexing.dictionary_builder import AliasDictionaryBuilder
    from haystack_integrations.components.code_alias.indexing.reader import CodeFileReader

    write(tmp_path, ".gitignore", "generated_client.py\n")
    write(tmp_path, "app.py", "def serve():\n    pass\n")
    write(tmp_path, "generated_client.py", "def generated_call():\n    pass\n")
    reader = CodeFileReader(progress_bar=False)
    assert [d.meta["file_path"] for d in reader.run(root=str(tmp_path))["documents"]] == ["app.py"]
    everything = CodeFileReader.from_dict(CodeFileReader(respect_gitignore=False, progress_bar=False).to_dict())
    assert everything.respect_gitignore is False
    assert len(everything.run(root=str(tmp_path))["documents"]) == 2
    built = AliasDictionaryBuilder(index_dir=str(tmp_path / ".idx"), save=False).run(root=str(tmp_path))
    names = {symbol.name for symbol in built["dictionary"].symbols}
    assert "serve" in names and "generated_call" not in names
    assert {"path": "generated_client.py", "reason": "ignored file (by .gitignore)"} in built["skipped"]
