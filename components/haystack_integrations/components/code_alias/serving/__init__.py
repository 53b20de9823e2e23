"""Serving, the transports only: `code-alias serve`, the Hayhooks wrappers, the shared service, the webhook.

Nothing is imported here: import the modules themselves (`serving.server`, `serving.service`, ...). This folder took
the name of the old module `code_alias.serving`, now `serving.service`: a name read from the folder that is not one of
its modules is looked up in `service` (lazily), so `from ...code_alias.serving import get_service` keeps working.
"""

from __future__ import annotations

import importlib
from typing import Any

_MODULES = frozenset({"hayhooks_wrappers", "live", "server", "server_discovery", "service"})


def __getattr__(name: str) -> Any:
    if name.startswith("_") or name in _MODULES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.service"), name)
