"""Whether a process recorded in a status or announcement file is still running. Framework-free."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any


def process_alive(pid: Any) -> bool:
    """
    Whether `pid` (as read from a JSON record: anything) names a running process on this machine.

    A process owned by another user counts as alive (the check cannot signal it, but it exists).
    """
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # it exists, owned by someone else
        return True
    return not _zombie(pid)


def _zombie(pid: int) -> bool:
    """
    Whether `pid` has ended and only waits to be reaped (Linux `/proc`; False where that cannot be read). A killed
    server whose parent does not reap it (a container's init, a detached start) stays signalable as a zombie: it
    must read as stopped, not as a live process with an empty command line.
    """
    try:
        raw = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return False
    # "pid (command) state ...": the command may hold spaces and parentheses, the state follows the last ")".
    after = raw.rpartition(")")[2].split()
    return bool(after) and after[0] in ("Z", "X")
