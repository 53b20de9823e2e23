"""The one client of our own server: `code-alias ask --server URL`, and the local server that `ask`, `callers`,
`callees` and `impact` answer through.

Every call is the same: POST a JSON body to a route (`/code_alias_ask/run`, ...) and take the answer's `result`.
What differs is how the server is reached:

- `call_url`: a server given by its URL (`--server http://host:port`), with the token from `CODE_ALIAS_API_TOKEN`
  when set; through `urllib`, so proxies and TLS are what the environment says;
- `call_peer`: a local server announced for this index (`server_discovery.Peer`), on its Unix socket or loopback
  port, on one connection: first it must answer the challenge (`server_discovery.proof`), and only then is the
  request (with the token, when the announcement says one is needed) sent. `http.client`, which speaks over a Unix
  socket where `urllib` cannot.

The errors say which server: `ServerUnreachableError` (an `OSError`) names the address that did not answer,
`ServerAnswerError` carries the status and the server's one-line detail, `UnsafeLinkError` a peer that failed its
checks. This module imports nothing beyond the standard library and the discovery module: it runs on the fast path
of every `ask`.
"""

from __future__ import annotations

import hmac
import http.client
import json
import secrets
import socket
import struct
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import urlsplit

from ..errors import CodeAliasError
from . import server_discovery
from .server_discovery import HELLO_PATH, Peer, UnsafeLinkError, proof


class ServerUnreachableError(ConnectionError, CodeAliasError):
    """No code-alias server answered at the address (the message names it); an `OSError`."""


class ServerAnswerError(RuntimeError, CodeAliasError):
    """A server refused the request (a 4xx/5xx): `status`, and `detail`, its one-line reason."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


def _detail(answer: Any) -> str:
    """The one-line reason of a refusal: the body's `detail` (as JSON text when it is not a string)."""
    detail = answer.get("detail", answer) if isinstance(answer, dict) else answer
    return detail if isinstance(detail, str) else json.dumps(detail)[:300]


# ---- a server by its URL -------------------------------------------------------------------------------------------
def call_url(url: str, route: str, body: dict[str, Any], *, token: str | None = None, timeout: float) -> Any:
    """
    POST `body` to `route` of the server at `url` (http:// or https://).

    :param token: The API token (`CODE_ALIAS_API_TOKEN`), sent as a bearer token when given.
    :returns: The answer's `result`.
    :raises ValueError: `url` is not an http(s) URL.
    :raises ServerAnswerError: The server answered with an error status.
    :raises ServerUnreachableError: Nothing answered at `url` (or not in time).
    """
    if not url.startswith(("http://", "https://")):
        raise ValueError(f"the server must be an http:// or https:// URL, got {url!r}")
    headers = {"content-type": "application/json"}
    if token:
        headers["authorization"] = f"Bearer {token}"
    data = json.dumps(body).encode("utf-8")
    request = urllib.request.Request(url.rstrip("/") + route, data=data, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return json.loads(response.read().decode("utf-8"))["result"]
    except urllib.error.HTTPError as error:
        text = error.read().decode("utf-8", errors="replace")
        try:
            answer = json.loads(text) if text.startswith("{") else text
        except ValueError:
            answer = text
        raise ServerAnswerError(error.code, _detail(answer)) from error
    except (urllib.error.URLError, OSError) as error:
        reason = getattr(error, "reason", error)
        raise ServerUnreachableError(f"no code-alias server answers at {url} ({reason})") from error


# ---- the announced local server ------------------------------------------------------------------------------------
class _UnixConnection(http.client.HTTPConnection):
    """HTTP over a Unix socket (the standard library speaks HTTP only over TCP)."""

    def __init__(self, path: str, timeout: float) -> None:
        super().__init__("localhost", timeout=timeout)
        self._path = path

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self._path)


def _check_peer_credentials(connection: http.client.HTTPConnection, peer: Peer) -> None:
    """On Linux, the kernel's word on who holds the other end of a Unix socket: this user, the announced pid."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None or connection.sock is None:
        return
    raw = connection.sock.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i"))
    pid, uid, _ = struct.unpack("3i", raw)
    if uid != server_discovery.my_uid() or pid != peer.pid:  # looked up here, so a test can vary it
        raise UnsafeLinkError(f"the socket's peer is pid {pid} of uid {uid}, not the announced server")


def _connection(peer: Peer, timeout: float) -> http.client.HTTPConnection:
    if peer.transport == "unix":
        return _UnixConnection(peer.address, timeout)
    parts = urlsplit(peer.address)
    return http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port or 80, timeout=timeout)


def _post(connection: http.client.HTTPConnection, path: str, body: dict[str, Any], headers: dict[str, str]) -> Any:
    connection.request("POST", path, body=json.dumps(body).encode("utf-8"), headers=headers)
    response = connection.getresponse()
    data = response.read().decode("utf-8", errors="replace")
    try:
        parsed = json.loads(data) if data else {}
    except ValueError:
        parsed = {"detail": data[:200]}
    return response.status, parsed


def call_peer(peer: Peer, route: str, body: dict[str, Any], *, timeout: float) -> Any:
    """
    POST `body` to `route` of an announced local server, on one connection: the challenge first, then the request.

    :returns: The answer's `result`.
    :raises UnsafeLinkError: The peer is not who the announcement says (nothing but the nonce was sent).
    :raises ServerAnswerError: The proven server refused the request.
    :raises ServerUnreachableError: It could not be reached (or timed out); an `OSError`.
    """
    connection = _connection(peer, timeout)
    try:
        connection.connect()
        if peer.transport == "unix":
            _check_peer_credentials(connection, peer)
        headers = {"content-type": "application/json"}
        nonce = secrets.token_hex(16)
        status, hello = _post(connection, HELLO_PATH, {"nonce": nonce}, headers)
        expected = proof(peer.proof_key, nonce, peer.address, peer.index_dir)
        answered = hello.get("proof") if isinstance(hello, dict) else None
        if status != 200 or not isinstance(answered, str) or not hmac.compare_digest(answered, expected):
            raise UnsafeLinkError(f"the server at {peer.address} did not prove it is the announced one")
        if peer.token:
            headers["authorization"] = f"Bearer {peer.token}"
        status, answer = _post(connection, route, body, headers)
    except (http.client.HTTPException, OSError) as error:
        raise ServerUnreachableError(f"the code-alias server at {peer.address} did not answer ({error})") from error
    finally:
        connection.close()
    if status != 200:
        raise ServerAnswerError(status, _detail(answer))
    return answer["result"]
