"""The one file lock (`core.locks`): across processes and threads, a timeout that names the file, freed by a death."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from haystack_integrations.components.code_alias.core.locks import LockTimeoutError, exclusive, try_exclusive
from haystack_integrations.components.code_alias.indexing import index_files

WAIT = 60.0  # seconds an event may take on a loaded machine before the test fails


def _holder(path: Path) -> subprocess.Popen[str]:
    """Another process that takes the lock on `path`, says so, and holds it until killed."""
    code = textwrap.dedent(
        f"""
        import time
        from haystack_integrations.components.code_alias.core.locks import exclusive
        with exclusive({str(path)!r}):
            print("held", flush=True)
            time.sleep(600)
        """
    )
    process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None and process.stdout.readline().strip() == "held"
    return process


def test_another_process_holds_it_a_timeout_names_the_file_and_a_death_frees_it(tmp_path: Path) -> None:
    path = tmp_path / "index.lock"
    holder = _holder(path)
    try:
        waited: list[bool] = []
        with pytest.raises(LockTimeoutError) as held, exclusive(path, timeout=0.2, on_wait=lambda: waited.append(True)):
            pass
        assert str(path) in str(held.value) and held.value.path == path and isinstance(held.value, TimeoutError)
        assert waited == [True]  # said once, before waiting
        with try_exclusive(path, timeout=0) as taken:
            assert taken is False
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(WAIT)
    with exclusive(path, timeout=WAIT), try_exclusive(path, timeout=0) as again:  # the OS let go of the dead one's
        assert again is False  # and it excludes this process's second taker too
    assert path.exists()  # the lock file stays (waiters share its inode)


def test_threads_of_one_process_take_it_in_turn(tmp_path: Path) -> None:
    path = tmp_path / "x.lock"
    inside, leave = threading.Event(), threading.Event()
    order: list[str] = []

    def first() -> None:
        with exclusive(path):
            order.append("first in")
            inside.set()
            leave.wait(WAIT)
            order.append("first out")

    thread = threading.Thread(target=first)
    thread.start()
    assert inside.wait(WAIT)
    threading.Timer(0.2, leave.set).start()
    with exclusive(path, timeout=WAIT):
        order.append("second in")
    thread.join(WAIT)
    assert order == ["first in", "first out", "second in"]


def test_an_unlockable_path_is_an_error_naming_it(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(OSError, match="cannot lock") as error, exclusive(blocker / "x.lock"):
        pass
    assert str(blocker / "x.lock") in str(error.value)


def test_the_index_lock_keeps_its_error_and_its_holder_note(tmp_path: Path) -> None:
    folder = tmp_path / "index"
    folder.mkdir()
    holder = _holder(folder / index_files.LOCK_FILE)
    try:
        said: list[str] = []
        started = time.monotonic()
        with pytest.raises(index_files.IndexLockedError) as locked, index_files.index_lock(
            folder, timeout=0.2, on_wait=said.append
        ):
            pass
        assert time.monotonic() - started < WAIT
        assert str(folder / index_files.LOCK_FILE) in str(locked.value) and said == ["unknown holder"]
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(WAIT)
    with index_files.index_lock(folder, timeout=WAIT):
        assert index_files.lock_holder(folder).startswith("pid ")
    assert not (folder / index_files.HOLDER_FILE).exists()


def test_rewrite_log_lines_from_two_processes_stay_whole(tmp_path: Path) -> None:
    from haystack_integrations.components.code_alias.rewriting.rewrite_log import read_rewrite_log

    log = tmp_path / "logs" / "rewrites.jsonl"
    code = textwrap.dedent(
        f"""
        import sys
        from haystack_integrations.components.code_alias.rewriting.rewrite_log import RewriteLog
        log = RewriteLog(path={str(log)!r})
        for n in range(200):
            log.write({{"question": sys.argv[1] + str(n), "hints": ["x" * 5000]}})  # past one pipe buffer's atomicity
        """
    )
    writers = [subprocess.Popen([sys.executable, "-c", code, name]) for name in ("a", "b")]
    assert [writer.wait(WAIT) for writer in writers] == [0, 0]
    errors: list[str] = []
    questions = sorted(record["question"] for record in read_rewrite_log(log, errors=errors))
    assert errors == [] and questions == sorted(f"{name}{n}" for name in "ab" for n in range(200))
    assert (tmp_path / "logs" / "rewrites.jsonl.lock").exists()  # the lock beside the log, never the log itself
