"""The one client of our own server (`serving.client`): the result, the server's refusal, a server that is down."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from haystack_integrations.components.code_alias.serving.client import (
    ServerAnswerError,
    ServerUnreachableError,
    call_peer,
    call_url,
)
from haystack_integrations.components.code_alias.serving.server_discovery import Peer, new_proof_key


class _Handler(BaseHTTPRequestHandler):
    """`/ok` answers its body and the bearer token back; `/refused` a 422 with a detail; `/listed` a list detail."""

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        if self.path == "/ok":
            status, answer = 200, {"result": {"body": body, "auth": self.headers.get("authorization")}}
        elif self.path == "/refused":
            status, answer = 422, {"detail": "question: too long"}
        else:
            status, answer = 422, {"detail": [{"loc": ["body", "question"], "msg": "missing"}]}
        data = json.dumps(answer).encode()
        self.send_response(status)
        for name, value in {"content-type": "application/json", "content-length": str(len(data))}.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_a_url_answers_its_result_with_the_token(server: str) -> None:
    assert call_url(server + "/", "/ok", {"q": 1}, token="t0k", timeout=30) == {"body": {"q": 1}, "auth": "Bearer t0k"}
    assert call_url(server, "/ok", {}, timeout=30)["auth"] is None  # no token, no header


def test_a_refusal_carries_the_status_and_the_one_line_detail(server: str) -> None:
    with pytest.raises(ServerAnswerError) as refused:
        call_url(server, "/refused", {}, timeout=30)
    assert (refused.value.status, refused.value.detail) == (422, "question: too long")
    with pytest.raises(ServerAnswerError) as listed:
        call_url(server, "/listed", {}, timeout=30)
    assert json.loads(listed.value.detail) == [{"loc": ["body", "question"], "msg": "missing"}]


def test_a_server_that_is_down_is_named(server: str) -> None:
    free = f"http://127.0.0.1:{_free_port()}"
    with pytest.raises(ServerUnreachableError) as down:
        call_url(free, "/ok", {}, timeout=30)
    assert str(down.value).startswith(f"no code-alias server answers at {free} (") and isinstance(down.value, OSError)
    with pytest.raises(ValueError, match="http:// or https://"):
        call_url("ftp://127.0.0.1", "/ok", {}, timeout=30)


def test_a_local_server_that_is_gone_is_named(tmp_path: Path) -> None:
    socket_path = str(tmp_path / "gone.sock")
    peer = Peer(str(tmp_path), 1, "unix", socket_path, None, new_proof_key(), "warm")
    with pytest.raises(ServerUnreachableError) as gone:  # an OSError: `ask` then answers by itself
        call_peer(peer, "/code_alias_ask/run", {"question": "q"}, timeout=5)
    assert socket_path in str(gone.value)


def _free_port() -> int:
    with socket.socket() as probe:  # bound and closed: nothing listens there now
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
