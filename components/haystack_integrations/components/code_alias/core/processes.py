"""Whether a process recorded in a status or announcement file is still running. Framework-free."""

from __future__ import annotations

import os
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
    return True
