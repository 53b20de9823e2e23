"""Let `code-alias ask` find a `code-alias serve` running on the same index, and answer through it.

A new process pays Haystack's imports and the index load (seconds) before it can answer; a running server has
both done and answers in milliseconds. `code-alias serve` announces itself in the user cache (never in the
index folder: serving writes nothing there), keyed by the index folder it serves; `ask` uses an announcement
only when its process is alive, its address is this machine's loopback and no token is needed that the
environment lacks, and falls back to answering itself when the server does not answer.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

from ..core.processes import process_alive
from ..paths import user_cache_dir

#: The names of this machine's loopback, as a `Host` header or a URL may write them.
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1", "[::1]")
TOKEN_ENV = "CODE_ALIAS_API_TOKEN"


def announcement_path(index_dir: str | os.PathLike[str]) -> Path:
    """Where a server of `index_dir` announces itself: `<user cache>/servers/<hash of the resolved folder>.json`."""
    key = hashlib.sha256(str(Path(index_dir).expanduser().resolve()).encode("utf-8")).hexdigest()[:32]
    return user_cache_dir() / "servers" / f"{key}.json"


def local_url(host: str, port: int) -> str:
    """The URL a client on this machine uses for a server bound to `host` (a wildcard address means loopback)."""
    if host in ("0.0.0.0", "", "::", "[::]"):
        host = "127.0.0.1"
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"http://{host}:{port}"


@contextlib.contextmanager
def announce(index_dir: str | os.PathLike[str], url: str, *, token_required: bool) -> Iterator[Path | None]:
    """
    Announce a server of `index_dir` at `url` for as long as the block runs (written atomically, removed after).

    A cache folder that cannot be written only means no announcement: the server serves all the same.
    """
    path = announcement_path(index_dir)
    record = {"index_dir": str(Path(index_dir).expanduser().resolve()), "url": url, "pid": os.getpid()}
    record["token_required"] = token_required
    written: Path | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".server-", suffix=".json")
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            json.dump(record, stream)
        os.replace(temporary, path)
        written = path
    except OSError:
        written = None
    try:
        yield written
    finally:
        if written is not None:
            with contextlib.suppress(OSError):
                current = json.loads(written.read_text(encoding="utf-8"))
                if current.get("pid") == os.getpid():  # a newer server of the same index keeps its own
                    written.unlink()


def discover(index_dir: str | os.PathLike[str]) -> str | None:
    """The URL of a live local server of `index_dir` that this process may ask, or None."""
    path = announcement_path(index_dir)
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        url, pid = str(record["url"]), int(record["pid"])
        token_required = bool(record.get("token_required"))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    parts = urlsplit(url)
    if parts.scheme != "http" or (parts.hostname or "") not in LOOPBACK_NAMES:
        return None
    if token_required and not os.environ.get(TOKEN_ENV):
        return None
    return url if process_alive(pid) else None
