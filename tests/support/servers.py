"""Servers the tests talk to: an app of the test process served by uvicorn in a thread (`ThreadServer`), a real
`code-alias serve` process (`running_server`), and the Elasticsearch server that `ELASTICSEARCH_URL` names."""

from __future__ import annotations

import functools
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any


def free_port() -> int:
    """A loopback port nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class ThreadServer:
    """uvicorn serving `app` on a free loopback port, in a daemon thread, until `stop`."""

    def __init__(self, app: Any) -> None:
        import uvicorn

        self.port = free_port()
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.repo: Path | None = None  # the repository indexed, where a test records it

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> ThreadServer:
        self.thread.start()
        deadline = time.monotonic() + 60
        while not self.server.started:
            assert time.monotonic() < deadline and self.thread.is_alive(), "the server did not start"
            time.sleep(0.05)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=20)


STARTUP_SECONDS = 180.0
ELASTICSEARCH_URL = os.environ.get("ELASTICSEARCH_URL", "").strip()
CLI = [sys.executable, "-m", "haystack_integrations.components.code_alias.cli"]
RETRY_QUESTION = "where's the payments retry helper?"


@dataclass
class Served:
    """The server process, where it listens, and the folders an attack would write to."""

    host: str
    port: int
    process: subprocess.Popen[bytes]
    log: Path
    workdir: Path
    marker: Path

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def log_tail(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")[-4000:]


@contextmanager
def running_server(
    argv: list[str], port: int, workdir: Path, env: dict[str, str], auth: dict[str, str], marker: Path | None = None
) -> Iterator[Served]:
    """`code-alias ARGV` in `workdir`, once its `/status` answers; stopped (terminate, then kill) afterwards."""
    import httpx  # a dependency of hayhooks: imported where a test has checked for it

    log = workdir / "server.log"
    with log.open("wb") as handle:
        process = subprocess.Popen([*CLI, *argv], cwd=workdir, env=env, stdout=handle, stderr=subprocess.STDOUT)
    server = Served("127.0.0.1", port, process, log, workdir, marker or workdir / "unused")
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        while True:
            assert process.poll() is None, f"code-alias serve exited with {process.returncode}:\n{server.log_tail()}"
            assert time.monotonic() < deadline, f"code-alias serve did not answer:\n{server.log_tail()}"
            try:
                if httpx.get(server.url + "/status", headers=auth, timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.3)
        yield server
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


@functools.cache
def server_info() -> dict[str, Any] | None:
    """The Elasticsearch server's `GET /` answer (`ELASTICSEARCH_URL`), or None when nothing answers."""
    if not ELASTICSEARCH_URL:
        return None
    from elasticsearch import Elasticsearch

    try:
        client = Elasticsearch(ELASTICSEARCH_URL, request_timeout=5, max_retries=0)
        try:
            return dict(client.info())
        finally:
            client.close()
    except Exception:
        return None


def rest_message(response: Any) -> str:
    """What a refused REST request says: our message (`detail` text), or FastAPI's 422 problems' own messages."""
    detail = response.json()["detail"]
    return detail if isinstance(detail, str) else "; ".join(problem["msg"] for problem in detail)
