"""Index integrity: one writer, one consistent build visible at a time, recovery from damage and kills.

The lexical pipelines (no embedding model) keep these fast; the vector cache is tested on its own with a stand-in
embedder. Subprocess tests use the Python API through `python -c`, as `code-alias index` does.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from haystack import Document

from haystack_integrations.components.code_alias.app.pipelines import EmptyIndexError
from haystack_integrations.components.code_alias.app.search import CodeSearch
from haystack_integrations.components.code_alias.indexing import index_delta, index_files
from haystack_integrations.components.code_alias.indexing.index_files import IndexDamagedError, IndexLockedError
from haystack_integrations.components.code_alias.retrieval import bm25 as bm25_module
from haystack_integrations.components.code_alias.retrieval.embedders import (
    CHECKPOINT_BATCHES,
    CodeDocumentEmbedder,
    EmbeddingCache,
)
from tests.support.repos import ROOT

QUESTIONS = ["stripe retry backoff", "where are auth tokens issued", "send email notification", "ledger balance"]


def _answers(index_dir: Path) -> list[tuple[list[str], list[str]]]:
    search = CodeSearch(index_dir, lexical=True)
    try:
        out = []
        for question in QUESTIONS:
            answer = search.ask(question)
            out.append(([f["file_path"] for f in answer.files], list(answer.rewrite["symbols"])))
        return out
    finally:
        search.close()


def _index(index_dir: Path, tree: Path) -> dict[str, Any]:
    return CodeSearch(index_dir, lexical=True).index(tree)


@pytest.fixture
def tree(acme_repo: Path) -> Path:
    (acme_repo / "services" / "auth" / "acme_auth" / "empty_pkg").mkdir()
    (acme_repo / "services" / "auth" / "acme_auth" / "empty_pkg" / "__init__.py").write_text("")
    return acme_repo


@pytest.fixture
def clean(tree: Path, tmp_path: Path) -> list[tuple[list[str], list[str]]]:
    """The answers of a clean build of `tree` (in its own folder)."""
    folder = tmp_path / "clean-index"
    _index(folder, tree)
    return _answers(folder)


def _manifest(folder: Path) -> dict[str, Any]:
    return json.loads((folder / index_files.MANIFEST_FILE).read_text())


def _truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


# ---- one build visible at a time ---------------------------------------------------------------------------
def test_build_is_one_manifest_and_a_noop_reindex_changes_nothing(tree: Path, tmp_path: Path) -> None:
    folder = tmp_path / "index"
    first = _index(folder, tree)
    manifest = _manifest(folder)
    assert {manifest["dictionary"]["file"], manifest["documents"]["file"]} <= set(os.listdir(folder))
    assert manifest["documents"]["count"] == first["sync"]["documents"] > 0
    before = sorted(os.listdir(folder))
    again = _index(folder, tree)
    assert again["files_changed"] == 0, "an empty __init__.py must not count as changed"
    assert again["sync"]["written"] == again["sync"]["deleted"] == 0
    assert sorted(os.listdir(folder)) == before and _manifest(folder)["build"] == manifest["build"]


def test_reader_during_reindex_sees_old_or_new_pair_never_a_mix(tree: Path, tmp_path: Path) -> None:
    folder = tmp_path / "index"
    _index(folder, tree)
    (tree / "services" / "ledger" / "fx_hedge.go").write_text("package ledger\n\nfunc HedgeCurrencyExposure() {}\n")
    seen: list[tuple[bool, bool]] = []
    errors: list[BaseException] = []
    stop = threading.Event()

    def read_once() -> tuple[bool, bool]:
        manifest = index_files.read_manifest(folder)
        assert manifest is not None and manifest.dictionary and manifest.documents
        # Through the chain of deltas a sync may have appended to each file (`index_delta`), read from disk.
        dictionary = index_delta.load_dictionary(folder, manifest.dictionary, cached=False)
        text = "\n".join(d.content or "" for d in index_delta.load_documents(folder, manifest.documents))
        return any(s.name == "HedgeCurrencyExposure" for s in dictionary.symbols), "HedgeCurrencyExposure" in text

    def read() -> None:
        try:
            while not stop.is_set():
                seen.append(read_once())
        except BaseException as error:  # reported below
            errors.append(error)

    reader = threading.Thread(target=read)
    reader.start()
    try:
        _index(folder, tree)
    finally:
        stop.set()
        reader.join()
    assert not errors
    assert seen and all(in_dictionary == in_documents for in_dictionary, in_documents in seen)
    assert read_once() == (True, True)


def test_a_serving_process_answers_from_one_build_while_it_is_replaced(tree: Path, tmp_path: Path) -> None:
    """Asks in one thread while the same process re-indexes: each answer's rewrite and files come from one build."""
    folder = tmp_path / "index"
    _index(folder, tree)
    (tree / "services" / "ledger" / "fx_hedge.go").write_text("package ledger\n\nfunc HedgeCurrencyExposure() {}\n")
    search = CodeSearch(folder, lexical=True)
    seen: list[tuple[bool, bool]] = []
    errors: list[BaseException] = []
    stop = threading.Event()

    def ask() -> None:
        try:
            while not stop.is_set():
                answer = search.ask("HedgeCurrencyExposure hedge currency exposure")
                seen.append(
                    (
                        "HedgeCurrencyExposure" in answer.rewrite["symbols"],
                        any(f["file_path"].endswith("fx_hedge.go") for f in answer.files),
                    )
                )
        except BaseException as error:  # reported below
            errors.append(error)

    asker = threading.Thread(target=ask)
    asker.start()
    try:
        for _ in range(3):
            time.sleep(0.2)
            _index(folder, tree)
    finally:
        stop.set()
        asker.join()
    assert not errors, errors
    assert {(False, False), (True, True)} <= set(seen), "the asks must span the swap"
    assert all(new_dictionary == new_documents for new_dictionary, new_documents in seen)
    assert search.ask("HedgeCurrencyExposure").rewrite["symbols"][:1] == ["HedgeCurrencyExposure"]


def test_second_writer_waits_and_is_told_who_holds_the_lock(tree: Path, tmp_path: Path) -> None:
    folder = tmp_path / "index"
    with index_files.index_lock(folder):
        holder = json.loads((folder / index_files.HOLDER_FILE).read_text())
        assert holder["pid"] == os.getpid()
        with pytest.raises(IndexLockedError, match=f"pid {os.getpid()} on "):
            CodeSearch(folder, lexical=True).index(tree, lock_timeout=0.2)
    assert _index(folder, tree)["files"] > 0


def _tree_with(tmp_path: Path, name: str, files: dict[str, str]) -> Path:
    root = tmp_path / name
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


_DRIVER = """
import sys
from haystack_integrations.components.code_alias.app.search import CodeSearch
CodeSearch(sys.argv[1], lexical=True).index(sys.argv[2])
"""


def _python(*args: str, **kwargs: Any) -> subprocess.Popen[bytes]:
    env = {**os.environ, "HAYSTACK_TELEMETRY_ENABLED": "False", "HF_HUB_OFFLINE": "1"}
    return subprocess.Popen(
        [sys.executable, "-c", *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kwargs
    )


def test_two_concurrent_index_runs_of_different_trees_end_consistent(tmp_path: Path) -> None:
    alpha = _tree_with(
        tmp_path, "alpha", {f"alpha/mod{i}.py": f"def alpha_func_{i}():\n    return {i}\n" for i in range(40)}
    )
    beta = _tree_with(
        tmp_path, "beta", {f"beta/mod{i}.py": f"def beta_func_{i}():\n    return {i}\n" for i in range(40)}
    )
    folder = tmp_path / "index"
    runs = [_python(_DRIVER, str(folder), str(tree)) for tree in (alpha, beta)]
    for run in runs:
        _, err = run.communicate(timeout=300)
        assert run.returncode == 0, err.decode()[-2000:]
    manifest = index_files.read_manifest(folder)
    assert manifest is not None and manifest.dictionary and manifest.documents
    dictionary = index_delta.load_dictionary(folder, manifest.dictionary, cached=False)
    paths = {str(d.meta["file_path"]) for d in index_delta.load_documents(folder, manifest.documents)}
    # Two trees indexed into one folder are two repositories side by side (issue 11), each complete.
    files = {path for repository in dictionary.repositories.values() for path in repository.files}
    assert paths == files, "the dictionary and the documents must come from the same builds"
    assert {p.split("/")[0] for p in paths} == {"alpha", "beta"} and len(paths) == 80


# ---- serving from a copy or a read-only folder --------------------------------------------------------------
def _snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns) for p in folder.rglob("*")}


def _refuse_writes_under(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every write, create, rename or delete under `root` fails with [Errno 30], as on a read-only mount."""
    import builtins
    import io

    def inside(path: Any) -> bool:
        try:
            return Path(os.fsdecode(path)).resolve().is_relative_to(root.resolve())
        except (TypeError, ValueError):
            return False

    def refuse(path: Any) -> None:
        raise OSError(30, "Read-only file system", os.fsdecode(path))

    real_open, real_os_open = builtins.open, os.open

    def guarded_open(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if inside(file) and any(flag in mode for flag in "wax+"):
            refuse(file)
        return real_open(file, mode, *args, **kwargs)

    def guarded_os_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if inside(path) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT):
            refuse(path)
        return real_os_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", guarded_open)
    monkeypatch.setattr(io, "open", guarded_open)
    monkeypatch.setattr(os, "open", guarded_os_open)
    for name in ("replace", "rename", "unlink", "remove", "mkdir", "rmdir"):
        real = getattr(os, name)

        def guarded(path: Any, *args: Any, _real: Any = real, **kwargs: Any) -> Any:
            if inside(path) or (args and inside(args[0])):
                refuse(path)
            return _real(path, *args, **kwargs)

        monkeypatch.setattr(os, name, guarded)


def test_copied_read_only_index_serves_without_writing_or_rebuilding_bm25(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "index"
    _index(folder, tree)
    expected = _answers(folder)
    world = Path(tempfile.mkdtemp(prefix="code-alias-ro-"))
    try:
        copy = world / "copied-index"
        shutil.copytree(folder, copy)
        for path in [copy, *copy.rglob("*")]:
            path.chmod(0o555 if path.is_dir() else 0o444)
        before = _snapshot(copy)
        _refuse_writes_under(copy, monkeypatch)  # a read-only mount, even for root (which ignores file modes)
        builds: list[int] = []
        original = bm25_module._Bm25Index.build
        monkeypatch.setattr(
            bm25_module._Bm25Index, "build", classmethod(lambda cls, *a: builds.append(1) or original(*a))
        )
        assert _answers(copy) == expected
        assert builds == [], "a copy of the same documents must hit the BM25 cache (keyed by content, not path)"
        assert _snapshot(copy) == before, "a query wrote into the index folder"
    finally:
        for path in [world, *world.rglob("*")]:
            path.chmod(0o755)
        shutil.rmtree(world, ignore_errors=True)


# ---- damage and interruption --------------------------------------------------------------------------------
@pytest.mark.parametrize("victim", ["manifest", "dictionary", "documents", "bm25"])
def test_truncated_file_is_named_and_a_plain_index_recovers(
    victim: str, tree: Path, tmp_path: Path, clean: list[tuple[list[str], list[str]]]
) -> None:
    folder = tmp_path / "index"
    _index(folder, tree)
    assert _answers(folder) == clean
    manifest = _manifest(folder)
    if victim == "bm25":
        saved = list(bm25_module.bm25_cache_dir().glob("bm25-*/full/*.npy"))
        assert saved
        for path in saved:
            _truncate(path)
        assert _answers(folder) == clean  # a damaged query cache is rebuilt, never an error
        return
    path = folder / (index_files.MANIFEST_FILE if victim == "manifest" else manifest[victim]["file"])
    _truncate(path)
    with pytest.raises(Exception) as failure:
        _answers(folder)
    message = str(failure.value)
    assert str(path) in message and "code-alias index" in message and "\n" not in message
    stats = _index(folder, tree)
    assert stats["repaired"], "the repair must be reported"
    assert _answers(folder) == clean


def _fail_at(monkeypatch: pytest.MonkeyPatch, stage: str) -> None:
    """Make one indexing stage raise, as a kill there would stop the run."""
    from haystack_integrations.components.code_alias.indexing import dictionary_builder, reader, splitter, store, sync

    targets: dict[str, list[tuple[Any, str]]] = {
        "dictionary": [(dictionary_builder.AliasDictionaryBuilder, "run")],
        "reader": [(reader.CodeFileReader, "run")],
        "splitter": [(splitter.CodeSplitter, "run")],
        "writer": [(sync.IndexSyncWriter, "run")],
        "documents-staged": [(store, "commit")],  # both files (or both deltas) written, the manifest not yet swapped
        # Serialising the documents, whole or as a delta (`index_delta`), whichever this save does.
        "persist": [(store, "documents_file_bytes"), (index_delta, "documents_delta")],
        "dictionary-delta": [(index_delta, "stage_delta")],  # nothing written yet (a rerun in the same process)
        "documents-delta": [(store, "stage_delta")],  # the dictionary's delta written, the documents' not
    }
    for owner, name in targets[stage]:

        @functools.wraps(getattr(owner, name))  # the same signature: Haystack checks `run` against `run_async`
        def boom(*args: Any, **kwargs: Any) -> Any:
            raise RuntimeError(f"injected failure at {stage}")

        monkeypatch.setattr(owner, name, boom)


@pytest.mark.parametrize(
    "stage",
    [
        *("dictionary", "reader", "splitter", "writer", "persist", "documents-staged"),
        *("dictionary-delta", "documents-delta"),
    ],
)
def test_failure_at_each_stage_keeps_the_old_build_and_a_rerun_completes(
    stage: str, tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "index"
    _index(folder, tree)
    old = _answers(folder)
    (tree / "services" / "ledger" / "fx_hedge.go").write_text("package ledger\n\nfunc HedgeCurrencyExposure() {}\n")
    (tree / "tools" / "rates" / "src" / "lib.rs").unlink()
    expected_folder = tmp_path / "expected"
    _index(expected_folder, tree)
    expected = _answers(expected_folder)
    with monkeypatch.context() as patch:
        _fail_at(patch, stage)
        with pytest.raises(Exception, match="injected failure"):
            _index(folder, tree)
    assert _answers(folder) == old, "a failed run must leave the previous build in place, whole"
    _index(folder, tree)
    assert _answers(folder) == expected


def test_killed_index_runs_resume_and_end_like_a_clean_build(tmp_path: Path) -> None:
    source = tmp_path / "tree"
    shutil.copytree(ROOT / "components", source, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"), symlinks=True)
    expected_folder = tmp_path / "expected"
    _index(expected_folder, source)
    expected = _answers(expected_folder)
    folder = tmp_path / "index"
    # Killed once the run holds the lock (its note appears), then later and later: in the dictionary build, the
    # reading and splitting, the writing and saving. Each run starts from what the one before left.
    for delay in (0.0, 0.7, 1.5, 3.0):
        (folder / index_files.HOLDER_FILE).unlink(missing_ok=True)  # a killed holder leaves its note behind
        run = _python(_DRIVER, str(folder), str(source))
        deadline = time.monotonic() + 120
        while not (folder / index_files.HOLDER_FILE).exists() and run.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(delay)
        run.send_signal(signal.SIGKILL)
        run.communicate(timeout=60)
    _index(folder, source)
    assert _answers(folder) == expected
    assert not list(folder.glob(".*.tmp"))


def test_empty_repository_answers_nothing_indexed(tmp_path: Path) -> None:
    empty = tmp_path / "empty-repo"
    empty.mkdir()
    folder = tmp_path / "index"
    _index(folder, empty)
    with pytest.raises(EmptyIndexError, match=f"nothing indexed under {folder}"):
        CodeSearch(folder, lexical=True).ask("anything")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "haystack_integrations.components.code_alias.cli",
            "ask",
            "x",
            "--index-dir",
            str(folder),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 2
    assert f"nothing indexed under {folder}" in done.stderr and "Traceback" not in done.stderr


def test_full_disk_names_the_file_and_keeps_the_old_build(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "index"
    _index(folder, tree)
    old = _answers(folder)
    (tree / "services" / "ledger" / "fx_hedge.go").write_text("package ledger\n\nfunc HedgeCurrencyExposure() {}\n")

    def full(path: Path, data: bytes) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(index_files, "atomic_write_bytes", full)
    with pytest.raises(  # the pipeline wraps the persister's OSError; the CLI prints the cause
        Exception, match=r"\[Errno 28\] cannot write .*/(dictionary|documents)-[^/]*: No space left on device"
    ):
        _index(folder, tree)
    monkeypatch.undo()
    assert _answers(folder) == old


def test_legacy_index_is_read_and_migrated(tree: Path, tmp_path: Path) -> None:
    folder = tmp_path / "index"
    _index(folder, tree)
    expected = _answers(folder)
    manifest = _manifest(folder)
    legacy = tmp_path / "legacy"
    legacy.mkdir()
    shutil.copy(folder / manifest["dictionary"]["file"], legacy / "dictionary.json")
    shutil.copy(folder / manifest["documents"]["file"], legacy / "documents.npz")
    assert _answers(legacy) == expected
    _index(legacy, tree)
    assert (legacy / index_files.MANIFEST_FILE).is_file()
    assert _answers(legacy) == expected


def test_damaged_manifest_error_is_one_line(tmp_path: Path) -> None:
    (tmp_path / index_files.MANIFEST_FILE).write_text('{"format": 99}')
    with pytest.raises(IndexDamagedError, match=r"damaged index manifest .*code-alias index"):
        index_files.read_manifest(tmp_path)


# ---- the vector cache ---------------------------------------------------------------------------------------
def test_truncated_vector_cache_keeps_what_reads_and_carries_on(tmp_path: Path) -> None:
    path = tmp_path / "vectors.sqlite"
    cache = EmbeddingCache(path)
    cache.put_many({f"k{i}": [float(i)] * 384 for i in range(2000)})
    cache._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    cache._db.close()
    _truncate(path)
    again = EmbeddingCache(path)
    # SQLite reads nothing of a truncated file (the rows that still read are kept when it can): what matters is
    # that indexing carries on, with the damaged file kept aside for inspection.
    kept = len(again)
    assert kept < 2000
    found = again.get_many([f"k{i}" for i in range(2000)])
    assert len(found) == kept and all(vector[0] == float(key[1:]) for key, vector in found.items())
    again.put_many({"new": [1.0] * 384})
    assert again.get_many(["new"])
    assert list(tmp_path.glob("vectors.sqlite.damaged-*"))


class _FakeEmbedder:
    def __init__(self, fail_after: int | None) -> None:
        self.calls = 0
        self.embedded = 0
        self.fail_after = fail_after

    def run(self, documents: list[Document]) -> dict[str, list[Document]]:
        self.calls += 1
        if self.fail_after is not None and self.calls > self.fail_after:
            raise RuntimeError("killed")
        self.embedded += len(documents)
        return {"documents": [Document(content=d.content, embedding=[float(len(d.content or ""))]) for d in documents]}


def test_embedding_is_checkpointed_per_batch_so_a_killed_run_resumes(tmp_path: Path) -> None:
    chunks = [Document(content=f"def f{i}(): return {'x' * i}", meta={"file_path": f"m{i}.py"}) for i in range(100)]
    embedder = CodeDocumentEmbedder(batch_size=4, cache_dir=str(tmp_path), progress_bar=False)
    embedder._embedder = _FakeEmbedder(fail_after=2)  # type: ignore[assignment]
    embedder._cache = EmbeddingCache(tmp_path / "vectors.sqlite")
    with pytest.raises(RuntimeError, match="killed"):
        embedder.run(chunks)
    step = 4 * CHECKPOINT_BATCHES  # batch_size x batches per checkpoint
    assert len(embedder._cache) == 2 * step
    resumed = _FakeEmbedder(fail_after=None)
    embedder._embedder = resumed  # type: ignore[assignment]
    out = embedder.run(chunks)
    assert resumed.embedded == 100 - 2 * step
    assert out["meta"] == {"cache_hits": 2 * step, "embedded": 100 - 2 * step}
    assert [d.embedding for d in out["documents"]] == [[float(len(c.content or ""))] for c in chunks]


def test_lock_file_of_a_read_only_index_is_named(tmp_path: Path) -> None:
    target = tmp_path / "not-a-folder"
    target.write_text("")
    with pytest.raises(OSError, match="not-a-folder"), index_files.index_lock(target / "index"):
        pass


if __name__ == "__main__":  # pragma: no cover
    print(textwrap.dedent(__doc__ or ""))


def test_real_model_reindex_after_a_truncated_vector_cache_matches_a_clean_build(tree: Path, tmp_path: Path) -> None:
    """The embedding pipeline (all-MiniLM-L6-v2): a damaged vector cache never blocks `index`."""
    import gc

    folder = tmp_path / "index"
    CodeSearch(folder).index(tree)
    gc.collect()  # close the cache's connection: SQLite folds its write-ahead log into the file
    vectors = folder / "embedding-cache" / "vectors.sqlite"
    _truncate(vectors)
    (tree / "services" / "ledger" / "fx_hedge.go").write_text("package ledger\n\nfunc HedgeCurrencyExposure() {}\n")
    stats = CodeSearch(folder).index(tree)
    assert stats["files_changed"] == 1
    assert list(vectors.parent.glob("vectors.sqlite.damaged-*"))
    clean = tmp_path / "clean"
    CodeSearch(clean).index(tree)

    def answers(index_dir: Path) -> list[list[str]]:
        search = CodeSearch(index_dir)
        return [[f["file_path"] for f in search.ask(q).files] for q in QUESTIONS]

    assert answers(folder) == answers(clean)
