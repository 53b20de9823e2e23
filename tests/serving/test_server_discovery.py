"""`code-alias ask` answers through a local server of the same index only once that server has proved itself.

The impostors of issue 30, each tried: a listener on the announced port before the server binds it, a planted
announcement of another owner (or open to other users), one naming a live unrelated process, and a listener that
relays the challenge to the real server. None may receive the question or the token, and its answer is never printed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

from haystack_integrations.components.code_alias import cli
from haystack_integrations.components.code_alias.app import search
from haystack_integrations.components.code_alias.serving import server_discovery
from haystack_integrations.components.code_alias.serving.client import call_peer
from haystack_integrations.components.code_alias.serving.server_discovery import (
    HELLO_PATH,
    UnsafeLinkError,
    announce,
    announcement_path,
    discover,
    inspect_announcement,
    local_url,
    new_proof_key,
    proof,
)
from tests.support.repos import ACME_REPO

FORGED = "forgedAnswerFromAnImpostor"


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODE_ALIAS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("CODE_ALIAS_API_TOKEN", raising=False)
    monkeypatch.delenv("CODE_ALIAS_SERVER", raising=False)
    monkeypatch.delenv("CODE_ALIAS_DAEMON", raising=False)


def _dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def _record(url: str, key: str = "k" * 64, **extra: Any) -> dict[str, Any]:
    return {"transport": "tcp", "address": url, "proof_key": key, "kind": "serve", "token_required": False, **extra}


def test_an_announcement_is_private_and_lives_as_long_as_the_server(tmp_path: Path) -> None:
    index = tmp_path / "index"
    assert discover(index) is None
    with announce(index, _record("http://127.0.0.1:1416")) as path:
        assert path == announcement_path(index) and path is not None and path.is_file()
        assert path.stat().st_mode & 0o777 == 0o600 and path.parent.stat().st_mode & 0o777 == 0o700
        record = json.loads(path.read_text(encoding="utf-8"))
        assert record["pid"] == os.getpid() and record["index_dir"] == str(index.resolve())
        # this test process is not a code-alias server: refused even though everything else is right
        with pytest.raises(UnsafeLinkError, match="not a code-alias server"):
            inspect_announcement(index)
        with pytest.raises(LookupError):
            inspect_announcement(tmp_path / "another-index")  # keyed by the folder served
    assert not announcement_path(index).exists()


def _plant(index: Path, record: dict[str, Any], mode: int = 0o600) -> Path:
    path = announcement_path(index)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    path.write_text(json.dumps({"index_dir": str(index.resolve()), **record}), encoding="utf-8")
    os.chmod(path, mode)
    return path


def test_planted_announcements_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    index = tmp_path / "index"
    monkeypatch.setattr(server_discovery, "is_server_command", lambda arguments, kind: True)
    path = _plant(index, {**_record("http://127.0.0.1:1416"), "pid": _dead_pid()})
    with pytest.raises(LookupError):
        inspect_announcement(index)  # a stopped server's leftover: ignored, and cleared
    assert not path.exists()
    _plant(index, {**_record("http://127.0.0.1:1416"), "pid": os.getpid()}, mode=0o644)
    with pytest.raises(UnsafeLinkError, match="open to other users"):
        inspect_announcement(index)
    _plant(index, {**_record("http://10.0.0.7:1416"), "pid": os.getpid()})
    with pytest.raises(UnsafeLinkError, match="loopback"):
        inspect_announcement(index)
    _plant(index, {**_record("http://127.0.0.1:1416"), "pid": os.getpid(), "index_dir": "/elsewhere"})
    with pytest.raises(UnsafeLinkError, match="another index"):
        inspect_announcement(index)
    _plant(index, {**_record("http://127.0.0.1:1416", token_required=True), "pid": os.getpid()})
    with pytest.raises(LookupError, match="token"):
        inspect_announcement(index)  # needs a token this environment lacks
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(UnsafeLinkError):
        inspect_announcement(index)
    assert local_url("0.0.0.0", 8080) == "http://127.0.0.1:8080" and local_url("::1", 1) == "http://[::1]:1"


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="chown to another user needs root")
def test_an_announcement_of_another_owner_is_refused(tmp_path: Path) -> None:
    index = tmp_path / "index"
    path = _plant(index, {**_record("http://127.0.0.1:1416"), "pid": os.getpid()})
    os.chown(path, 65534, 65534)
    with pytest.raises(UnsafeLinkError, match="belongs to uid 65534"):
        inspect_announcement(index)


def test_a_link_folder_of_another_owner_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    index = tmp_path / "index"
    _plant(index, {**_record("http://127.0.0.1:1416"), "pid": os.getpid()})
    monkeypatch.setattr(server_discovery, "my_uid", lambda: os.geteuid() + 1)  # as another user sees our folder
    with pytest.raises(UnsafeLinkError, match="not to you"):
        inspect_announcement(index)


def test_an_announcement_naming_a_live_unrelated_process_is_refused(tmp_path: Path) -> None:
    index = tmp_path / "index"
    unrelated = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        _plant(index, {**_record("http://127.0.0.1:1416"), "pid": unrelated.pid})
        with pytest.raises(UnsafeLinkError, match=f"pid {unrelated.pid} is not a code-alias server"):
            inspect_announcement(index)
        assert discover(index) is None
    finally:
        unrelated.kill()
        unrelated.wait()


REWRITE = {"used": True, "meta": {"mode": "dictionary"}, "intent": "locate_symbol", "rewritten": "q"}
REWRITE |= {"symbols": [], "packages": []}


class _Listener(BaseHTTPRequestHandler):
    """A local HTTP server that records every request; it proves itself only when given the right key."""

    asked: ClassVar[list[dict[str, Any]]] = []
    key: ClassVar[str | None] = None
    address: ClassVar[str] = ""
    index_dir: ClassVar[str] = ""
    relay_to: ClassVar[str | None] = None

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        type(self).asked.append({"path": self.path, "authorization": self.headers.get("authorization"), **body})
        if self.path == HELLO_PATH and self.relay_to:  # pass the challenge on to the real server
            import urllib.request

            request = urllib.request.Request(
                self.relay_to + HELLO_PATH, json.dumps(body).encode(), {"content-type": "application/json"}
            )
            with urllib.request.urlopen(request, timeout=10) as relayed:
                answer: Any = json.loads(relayed.read())
        elif self.path == HELLO_PATH:
            key = type(self).key or "wrong"
            answer = {"proof": proof(key, body["nonce"], type(self).address, type(self).index_dir)}
        else:
            answer = {"result": {"question": FORGED, "symbols": [], "files": [], "rewrite": REWRITE}}
        payload = json.dumps(answer).encode("utf-8")
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def listener() -> Iterator[tuple[ThreadingHTTPServer, str]]:
    _Listener.asked, _Listener.key, _Listener.relay_to = [], None, None
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Listener)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server, local_url("127.0.0.1", server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()


class _LocalSearch:
    """Stands in for `CodeSearch`: answering in this process is what the fallback must do."""

    created = 0
    retrieval = answering_with = "lexical"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        type(self).created += 1

    def vectors(self) -> None:
        return None

    def ask(self, question: str, **kwargs: Any) -> Any:
        class Answer:
            def to_dict(self, *, mode: str = "dictionary") -> dict[str, Any]:
                return {"question": question, "symbols": [], "files": [], "rewrite": REWRITE}

        return Answer()


def test_a_proven_server_answers_and_a_wrong_proof_gets_nothing(
    tmp_path: Path,
    listener: tuple[ThreadingHTTPServer, str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, url = listener
    monkeypatch.setattr(search, "CodeSearch", _LocalSearch)
    monkeypatch.setattr(server_discovery, "is_server_command", lambda arguments, kind: True)  # pytest's own pid
    monkeypatch.setenv("CODE_ALIAS_API_TOKEN", "user-token")
    _LocalSearch.created = 0
    index = tmp_path / "index"
    key = new_proof_key()
    _Listener.key, _Listener.address, _Listener.index_dir = key, url, str(index.resolve())
    with announce(index, _record(url, key)):
        assert cli.main(["ask", "where is the retry helper?", "--index-dir", str(index), "--json"]) == 0
        payload = json.loads(capsys.readouterr().out)
        assert payload["server"] == url and payload["question"] == FORGED and _LocalSearch.created == 0
        assert [a["path"] for a in _Listener.asked] == [HELLO_PATH, "/code_alias_ask/run"]
        # the announcement said no token is needed: the user's token is not handed out
        assert all(a["authorization"] is None for a in _Listener.asked)
        # `--lexical` too goes to the proven server (its BM25-only search); what only this process can do is done here
        assert cli.main(["ask", "retry", "--index-dir", str(index), "--lexical", "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["server"] == url and _LocalSearch.created == 0
        assert _Listener.asked[-1]["path"] == "/code_alias_ask/run" and _Listener.asked[-1]["lexical"] is True
        # so does `--no-rewrite` (the request says so) and `--code` (the lines it asks for)
        assert cli.main(["ask", "retry", "--index-dir", str(index), "--no-rewrite", "--code", "3", "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["server"] == url and _LocalSearch.created == 0
        assert _Listener.asked[-1]["use_rewrite"] is False and _Listener.asked[-1]["code_lines"] == 3
        assert cli.main(["ask", "retry", "--index-dir", str(index), "--no-daemon", "--json"]) == 0
        assert "server" not in json.loads(capsys.readouterr().out) and _LocalSearch.created == 1
    _Listener.asked = []
    with announce(index, _record(url, new_proof_key(), token_required=True)):  # a key the listener does not have
        assert cli.main(["ask", "where is the retry helper?", "--index-dir", str(index), "--json"]) == 0
        captured = capsys.readouterr()
        assert FORGED not in captured.out and "did not prove" in captured.err and _LocalSearch.created == 2
        assert [a["path"] for a in _Listener.asked] == [HELLO_PATH]  # the nonce, and nothing else
        assert all(a["authorization"] is None for a in _Listener.asked)
    with announce(index, _record("http://127.0.0.1:9", key)):  # announced, but nothing listens
        assert cli.main(["ask", "where is the retry helper?", "--index-dir", str(index), "--json"]) == 0
        assert "server" not in json.loads(capsys.readouterr().out) and _LocalSearch.created == 3


def _cli_env(tmp_path: Path) -> dict[str, str]:
    from tests.support.repos import ROOT as REPO

    env = {k: v for k, v in os.environ.items() if not k.startswith(("CODE_ALIAS_", "HAYHOOKS_"))}
    env.update(
        HAYSTACK_TELEMETRY_ENABLED="False",
        HF_HUB_OFFLINE="1",
        CODE_ALIAS_CACHE_DIR=str(tmp_path / "cache"),
        PYTHONPATH=os.pathsep.join([str(REPO / "components"), env.get("PYTHONPATH", "")]),
    )
    return env


@pytest.fixture
def lexical_index(tmp_path: Path) -> Path:
    from haystack_integrations.components.code_alias.app.search import CodeSearch

    index_dir = tmp_path / "index"
    CodeSearch(index_dir, lexical=True).index(ACME_REPO)
    return index_dir


def test_a_listener_on_the_port_before_the_server_binds_gets_nothing(
    tmp_path: Path, lexical_index: Path, listener: tuple[ThreadingHTTPServer, str]
) -> None:
    from tests.support.servers import CLI

    server, _ = listener
    port = server.server_address[1]
    env = _cli_env(tmp_path)
    started = time.monotonic()
    refused = subprocess.run(
        [*CLI, "--index-dir", str(lexical_index), "serve", "--port", str(port)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert refused.returncode != 0 and f"cannot listen on 127.0.0.1:{port}" in refused.stderr
    assert time.monotonic() - started < 60  # fails at the bind, before the index is loaded
    assert not announcement_path(lexical_index).exists()  # never announced
    ask = [*CLI, "--index-dir", str(lexical_index), "ask", "where's the payments retry helper?"]
    answered = subprocess.run(ask, env=env, capture_output=True, text=True, timeout=120, check=True)
    assert "answered by" not in answered.stdout and FORGED not in answered.stdout
    assert "withStripeBackoff" in answered.stdout and _Listener.asked == []


def test_a_real_serve_is_used_and_a_relaying_impostor_gets_nothing(
    tmp_path: Path, lexical_index: Path, listener: tuple[ThreadingHTTPServer, str]
) -> None:
    from tests.support.servers import CLI, free_port, running_server

    env = _cli_env(tmp_path)
    port = free_port()
    ask = [*CLI, "--index-dir", str(lexical_index), "ask", "where's the payments retry helper?"]
    with running_server(["--index-dir", str(lexical_index), "serve", "--port", str(port)], port, tmp_path, env, {}):
        deadline = time.monotonic() + 30
        while not announcement_path(lexical_index).exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        answered = subprocess.run(ask, env=env, capture_output=True, text=True, timeout=120, check=True)
        assert f"answered by the code-alias server at http://127.0.0.1:{port}" in answered.stdout
        assert "withStripeBackoff" in answered.stdout
        # The announcement now points at a listener that passes the challenge on to the real server: the proof
        # names the real server's address, so it fails, and the listener never sees the question.
        _, impostor = listener
        _Listener.relay_to = f"http://127.0.0.1:{port}"
        path = announcement_path(lexical_index)
        record = json.loads(path.read_text(encoding="utf-8"))
        path.write_text(json.dumps({**record, "address": impostor}), encoding="utf-8")
        relayed = subprocess.run(ask, env=env, capture_output=True, text=True, timeout=120, check=True)
        assert "did not prove" in relayed.stderr and FORGED not in relayed.stdout
        assert "withStripeBackoff" in relayed.stdout and "answered by" not in relayed.stdout
        assert [a["path"] for a in _Listener.asked] == [HELLO_PATH]
    assert not announcement_path(lexical_index).exists()  # taken back on a plain SIGTERM


def test_ask_peer_refuses_a_peer_without_the_key(tmp_path: Path, listener: tuple[ThreadingHTTPServer, str]) -> None:
    _, url = listener
    peer = server_discovery.Peer(str(tmp_path), os.getpid(), "tcp", url, "secret-token", new_proof_key(), "serve")
    with pytest.raises(UnsafeLinkError):
        call_peer(peer, "/code_alias_ask/run", {"question": "q"}, timeout=5)
    assert [a["path"] for a in _Listener.asked] == [HELLO_PATH]
    assert _Listener.asked[0]["authorization"] is None


def test_a_killed_server_left_unreaped_reads_as_stopped(tmp_path: Path) -> None:
    """
    A server killed while its parent does not reap it (a container's init, a detached start) stays a zombie:
    signalable, with an empty command line. It is a stopped server's leftover, not an impostor to warn about.
    """
    from haystack_integrations.components.code_alias.core.processes import process_alive

    index = tmp_path / "index"
    zombie = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        deadline = time.monotonic() + 60
        while Path(f"/proc/{zombie.pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z":
            assert time.monotonic() < deadline, "the child did not end"
            time.sleep(0.01)
        assert not process_alive(zombie.pid)
        path = _plant(index, {**_record("http://127.0.0.1:1416", kind="warm"), "pid": zombie.pid})
        with pytest.raises(LookupError, match="stopped"):
            inspect_announcement(index)
        assert not path.exists()
    finally:
        zombie.wait()
    assert process_alive(os.getpid())


def test_a_refused_announcement_is_said_once_per_look_series(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`ensure_warm_server` looks again every 50 ms while a server starts: one warning per cause, not one a look."""
    index = tmp_path / "index"
    _plant(index, {**_record("http://10.0.0.7:1416"), "pid": os.getpid()})
    said: set[str] = set()
    for _ in range(10):
        assert server_discovery.discover(index, said=said) is None
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(lines) == 1 and "not a code-alias server" in lines[0]
    assert server_discovery.discover(index) is None  # a caller that keeps no record is told each time
    assert len(capsys.readouterr().err.splitlines()) == 1
