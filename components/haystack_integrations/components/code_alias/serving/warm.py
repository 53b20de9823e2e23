"""The warm server that `code-alias ask` leaves behind, so that the next ask answers in a fraction of a second.

A cold `ask` on a hybrid index pays Haystack's imports, the embedding model and the chunks (6-12 s); a process that
keeps them loaded answers the same question in milliseconds. The first `ask` of an index therefore starts one
(`python -m haystack_integrations.components.code_alias.serving.warm --index-dir DIR`, detached) and asks through it;
later asks find it through its announcement (`server_discovery`).

- Only this user can reach it: it listens on a Unix socket (mode 0600) in the private 0700 link folder, never on a
  TCP port, and it needs a random bearer token that is written only into its 0600 announcement; a client proves it
  (peer credentials and a challenge) before it sends the token or a question.
- One per index folder: starters take `<key>.start.lock` and look again before starting one, and the server holds
  `<key>.warm.lock` for its whole life (a second one started by hand exits at once).
- It exits after `CODE_ALIAS_WARM_IDLE_SECONDS` (300) without a request; a re-index or sync is picked up by the
  next request (the served store compares the index manifest's build, `store.py`), so no answer is stale.
- It is not started when `--no-daemon` is given, with `CODE_ALIAS_NO_DAEMON=1`, or under CI or pytest (`CI` or
  `PYTEST_CURRENT_TEST` set) unless `CODE_ALIAS_DAEMON=1` asks for it.

The starter half of this module imports only the standard library and the lock helper (`core.locks`, on
`filelock`): it runs on every `ask`. The server half imports the app when it runs.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from importlib.util import find_spec
from pathlib import Path
from typing import IO, Any

from ..core.locks import try_exclusive
from .server_discovery import Peer, UnsafeLinkError, discover, index_key, link_dir, socket_path

MODULE = "haystack_integrations.components.code_alias.serving.warm"
NO_DAEMON_ENV = "CODE_ALIAS_NO_DAEMON"
DAEMON_ENV = "CODE_ALIAS_DAEMON"
IDLE_ENV = "CODE_ALIAS_WARM_IDLE_SECONDS"
DEFAULT_IDLE_SECONDS = 300.0
#: How long a starter waits for the server to load (a hybrid index: the model and the chunks).
START_TIMEOUT_SECONDS = 120.0
_TRUE = ("1", "true", "yes", "on")


#: After a warm server failed to start, asks answer by themselves for this long before one is tried again.
RETRY_AFTER_FAILURE_SECONDS = 600.0
#: What the server needs beyond the base install (the `[hayhooks]` extra).
SERVER_MODULES = ("uvicorn", "fastapi", "hayhooks")


def daemon_allowed(environ: Mapping[str, str] | None = None) -> bool:
    """Whether `ask` may start a warm server here: not opted out, and not in CI or a test run unless asked for."""
    env = os.environ if environ is None else environ
    if env.get(NO_DAEMON_ENV, "").strip().lower() in _TRUE:
        return False
    if env.get(DAEMON_ENV, "").strip().lower() in _TRUE:
        return True
    return not (env.get("CI") or env.get("PYTEST_CURRENT_TEST"))


def server_installed() -> bool:
    """Whether the server's modules are installed (found, not imported: this runs on every ask)."""
    return all(find_spec(name) is not None for name in SERVER_MODULES)


def _failed_recently(marker: Path) -> bool:
    try:
        return time.time() - marker.stat().st_mtime < RETRY_AFTER_FAILURE_SECONDS
    except OSError:
        return False


def idle_seconds(environ: Mapping[str, str] | None = None) -> float:
    """`CODE_ALIAS_WARM_IDLE_SECONDS`, else 300 (a bad value means the default: a detached server cannot complain)."""
    text = (os.environ if environ is None else environ).get(IDLE_ENV, "").strip()
    try:
        value = float(text) if text else DEFAULT_IDLE_SECONDS
    except ValueError:
        return DEFAULT_IDLE_SECONDS
    return value if value > 0 else DEFAULT_IDLE_SECONDS


def log_path(index_dir: str | os.PathLike[str]) -> Path:
    """The warm server's output (start-up errors included), in the private link folder."""
    return link_dir() / f"{index_key(index_dir)}.log"


def ensure_warm_server(index_dir: str | os.PathLike[str], *, timeout: float = START_TIMEOUT_SECONDS) -> Peer | None:
    """
    The warm server of `index_dir`: the announced one, else one started now and waited for (one per index even when
    several asks race: the second waits on the start lock, then finds the first one's server).

    :returns: The server's peer record (still to prove itself: `client.call_peer`), or None when it could not be started
        in time (its log says why); the caller then answers by itself.
    """
    said: set[str] = set()  # this ask looks many times while a server starts: each reason is said once
    peer = discover(index_dir, said=said)
    if peer is not None or not server_installed():  # without the [hayhooks] extra, asks answer by themselves
        return peer
    try:
        folder = link_dir()
    except (UnsafeLinkError, OSError) as refused:
        print(f"code-alias: warning: no warm server: {refused}", file=sys.stderr)
        return None
    failed = folder / f"{index_key(index_dir)}.failed"
    if _failed_recently(failed):  # a broken start is not retried on every ask (each would pay for it)
        return None
    with try_exclusive(folder / f"{index_key(index_dir)}.start.lock", timeout=timeout, mode=0o600) as taken:
        peer = discover(index_dir, said=said)
        if peer is not None or not taken:
            return peer
        process = _start(index_dir)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            peer = discover(index_dir, said=said)
            if peer is not None:
                return peer
            code = process.poll()
            if code not in (None, 0):  # 0: another server of this index holds the lifetime lock and is loading
                log = log_path(index_dir)
                failed.touch()
                print(
                    f"code-alias: warning: the warm server did not start (log: {log}); asks answer by themselves "
                    f"for the next {RETRY_AFTER_FAILURE_SECONDS / 60:.0f} minutes",
                    file=sys.stderr,
                )
                return None
            time.sleep(0.05)
    return None


def _start(index_dir: str | os.PathLike[str]) -> subprocess.Popen[bytes]:
    """A detached warm server of `index_dir` (its own session: the ask that started it may end at once)."""
    command = [sys.executable, "-m", MODULE, "--index-dir", str(Path(index_dir).expanduser().resolve())]
    log: IO[bytes]
    with log_path(index_dir).open("ab") as log:
        os.chmod(log.name, 0o600)
        return subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True, close_fds=True
        )


# ---- the server ----------------------------------------------------------------------------------------------------
def bind_unix(path: Path) -> socket.socket:
    """A listening Unix socket at `path`, mode 0600 from its creation (a leftover of a dead server is replaced)."""
    with contextlib.suppress(FileNotFoundError):
        path.unlink()  # only the holder of the lifetime lock gets here: a file there is a dead server's
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    previous = os.umask(0o177)
    try:
        listener.bind(str(path))
    finally:
        os.umask(previous)
    listener.listen(256)
    return listener


def serve_warm(index_dir: Path, *, idle: float) -> int:
    """Hold the lifetime lock, bind the socket, load the index, announce, serve until idle; 0 when another one runs."""
    from .server import LinkIdentity, ServerSettings, build_app, run_uvicorn
    from .server_discovery import announce, new_proof_key
    from .service import ServiceSettings

    folder = link_dir()
    with try_exclusive(folder / f"{index_key(index_dir)}.warm.lock", timeout=0, mode=0o600) as taken:
        if not taken:
            print("code-alias: a warm server of this index is already running", file=sys.stderr)
            return 0
        path = socket_path(index_dir)
        listener = bind_unix(path)
        try:
            token = secrets.token_urlsafe(32)
            link = LinkIdentity(proof_key=new_proof_key(), address=str(path), index_dir=str(index_dir))
            service = replace(ServiceSettings.from_env(), index_dir=index_dir, backend="embedded")
            app = build_app(ServerSettings(token=token), service, link=link)
            record: dict[str, Any] = {"transport": "unix", "address": str(path), "kind": "warm"}
            record["proof_key"] = link.proof_key
            record.update(token_required=True, token=token, idle_seconds=idle)
            print(f"code-alias: warm server of {index_dir} on {path} (pid {os.getpid()})", flush=True)
            with announce(index_dir, record):
                with contextlib.suppress(FileNotFoundError):
                    (folder / f"{index_key(index_dir)}.failed").unlink()  # it works now
                run_uvicorn(app, listener, idle_seconds=idle)
        finally:
            listener.close()
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
    print(f"code-alias: warm server of {index_dir} stopped (idle {idle:g} s)", flush=True)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m ...serving.warm --index-dir DIR`: what `ensure_warm_server` starts."""
    os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")
    parser = argparse.ArgumentParser(prog="code-alias-warm", description="The warm server of one index folder.")
    parser.add_argument("--index-dir", required=True)
    parser.add_argument("--idle-seconds", type=float, default=None, help=f"default: ${IDLE_ENV} or 300")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # so the announcement is taken back
    chosen = args.idle_seconds if args.idle_seconds and args.idle_seconds > 0 else idle_seconds()
    return serve_warm(Path(args.index_dir).expanduser().resolve(), idle=chosen)


if __name__ == "__main__":
    sys.exit(main())
