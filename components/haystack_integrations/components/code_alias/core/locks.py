"""The package's one file lock: an exclusive OS lock on a lock file (`filelock`), shared by every stage.

Each `exclusive` call opens its own lock on the file, so it excludes other processes *and* the other threads of this
process (a thread that already holds it would wait for itself: nothing here is re-entrant). The OS releases the lock
when the process dies, so a killed holder never leaves a folder locked. The lock file stays in place after release
(waiters share its inode); what it contains means nothing.

Who uses it: the index folder's writer lock (`indexing.index_files.index_lock`), the vector fill's
(`indexing.vector_fill.fill_lock`), the rewrite log's appends (`rewriting.rewrite_log`) and the warm server's start
and lifetime locks (`serving.warm`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

from ..errors import CodeAliasError


class LockTimeoutError(TimeoutError, CodeAliasError):
    """A lock file still held by someone else after the time allowed; `path` names it."""

    def __init__(self, path: Path, timeout: float) -> None:
        super().__init__(f"{path}: still held by another process or thread after {timeout:g} s")
        self.path = path
        self.timeout = timeout


@contextmanager
def exclusive(
    path: str | Path,
    *,
    timeout: float | None = None,
    on_wait: Callable[[], None] | None = None,
    mode: int = 0o644,
) -> Iterator[None]:
    """
    Hold an exclusive lock on the file `path` for the block (its folder must exist; the file is created).

    :param timeout: Seconds to wait when another holds it; None waits as long as it takes, 0 tries once.
    :param on_wait: Called once, before waiting, when the lock is held by another (to say who, or that we wait).
    :param mode: The lock file's permissions when it is created (0o600 in a private folder).
    :raises LockTimeoutError: Still held after `timeout` (it names the lock file).
    :raises OSError: The lock file cannot be opened or locked (the message names it).
    """
    lock_path = Path(path)
    lock = FileLock(str(lock_path), mode=mode, thread_local=False)
    try:
        try:
            lock.acquire(timeout=0)
        except Timeout:
            if on_wait is not None:
                on_wait()
            if timeout == 0:
                raise LockTimeoutError(lock_path, 0) from None
            try:
                lock.acquire(timeout=-1 if timeout is None else timeout)
            except Timeout:
                raise LockTimeoutError(lock_path, timeout or 0) from None
    except OSError as error:
        if isinstance(error, LockTimeoutError):
            raise
        raise OSError(error.errno, f"cannot lock {lock_path}: {error.strerror or error}") from error
    try:
        yield
    finally:
        lock.release()


@contextmanager
def try_exclusive(path: str | Path, *, timeout: float, mode: int = 0o644) -> Iterator[bool]:
    """
    `exclusive`, for a caller that goes on without the lock: yields whether it was taken within `timeout` seconds
    (held for the block when it was).
    """
    with ExitStack() as stack:
        try:
            stack.enter_context(exclusive(path, timeout=timeout, mode=mode))
        except LockTimeoutError:
            yield False
            return
        yield True
