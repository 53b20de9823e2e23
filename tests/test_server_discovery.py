"""`code-alias ask` answers through a running `code-alias serve` of the same index, and falls back to itself."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

from haystack_integrations.components.code_alias import cli
from haystack_integrations.components.code_alias.retrieval import search
from haystack_integrations.components.code_alias.serving.server_discovery import (
    announce,
    announcement_path,
    discover,
    local_url,
)


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODE_ALIAS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("CODE_ALIAS_API_TOKEN", raising=False)
    monkeypatch.delenv("CODE_ALIAS_SERVER", raising=False)


def _dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_an_announcement_lives_as_long_as_the_server(tmp_path: Path) -> None:
    index = tmp_path / "index"
    assert discover(index) is None
    with announce(index, "http://127.0.0.1:1416", token_required=False) as path:
        assert path == announcement_path(index) and path is not None and path.is_file()
        assert discover(index) == "http://127.0.0.1:1416"
        assert discover(tmp_path / "another-index") is None  # keyed by the folder served
    assert discover(index) is None and not announcement_path(index).exists()


def test_only_a_live_loopback_server_this_process_may_ask_is_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = tmp_path / "index"
    path = announcement_path(index)
    path.parent.mkdir(parents=True)

    def write(url: str, pid: int, token_required: bool = False) -> None:
        path.write_text(json.dumps({"url": url, "pid": pid, "token_required": token_required}), encoding="utf-8")

    write("http://127.0.0.1:1416", _dead_pid())
    assert discover(index) is None  # a killed server's leftover
    write("http://10.0.0.7:1416", 1)
    assert discover(index) is None  # not this machine's loopback
    write("http://127.0.0.1:1416", 1, token_required=True)
    assert discover(index) is None  # needs a token the environment lacks
    monkeypatch.setenv("CODE_ALIAS_API_TOKEN", "secret")
    assert discover(index) == "http://127.0.0.1:1416"
    path.write_text("{not json", encoding="utf-8")
    assert discover(index) is None
    assert local_url("0.0.0.0", 8080) == "http://127.0.0.1:8080" and local_url("::1", 1) == "http://[::1]:1"


REWRITE = {"used": True, "meta": {"mode": "dictionary"}, "intent": "locate_symbol", "rewritten": "q"}
REWRITE |= {"symbols": [], "packages": []}


class _Answering(BaseHTTPRequestHandler):
    asked: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        type(self).asked.append({"path": self.path, **body})
        answer = {"question": body["question"], "symbols": [], "files": [], "rewrite": REWRITE}
        payload = json.dumps({"result": answer}).encode("utf-8")
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def answering_server() -> Iterator[str]:
    _Answering.asked = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Answering)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield local_url("127.0.0.1", server.server_address[1])
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
            def to_dict(self) -> dict[str, Any]:
                return {"question": question, "symbols": [], "files": [], "rewrite": REWRITE}

        return Answer()


def test_ask_goes_through_a_running_server_and_falls_back_when_it_is_gone(
    tmp_path: Path,
    answering_server: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(search, "CodeSearch", _LocalSearch)
    _LocalSearch.created = 0
    index = tmp_path / "index"
    with announce(index, answering_server, token_required=False):
        assert cli.main(["ask", "where is the retry helper?", "--index-dir", str(index), "--json"]) == 0
        payload = json.loads(capsys.readouterr().out)
        assert payload["server"] == answering_server and _LocalSearch.created == 0
        assert _Answering.asked[-1]["path"] == "/code_alias_ask/run"
        assert _Answering.asked[-1]["question"] == "where is the retry helper?"
        # what only this process can do is done here
        assert cli.main(["ask", "retry", "--index-dir", str(index), "--lexical", "--json"]) == 0
        assert "server" not in json.loads(capsys.readouterr().out) and _LocalSearch.created == 1
    with announce(index, "http://127.0.0.1:9", token_required=False):  # announced, but nothing listens
        assert cli.main(["ask", "where is the retry helper?", "--index-dir", str(index), "--json"]) == 0
        assert "server" not in json.loads(capsys.readouterr().out) and _LocalSearch.created == 2


def test_a_real_code_alias_serve_is_found_by_code_alias_ask(tmp_path: Path) -> None:
    import os

    from haystack_integrations.components.code_alias.retrieval.search import CodeSearch
    from tests.conftest import ACME_REPO
    from tests.test_server import CLI, REPO, free_port, running_server

    index_dir = tmp_path / "index"
    CodeSearch(index_dir, lexical=True).index(ACME_REPO)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CODE_ALIAS_", "HAYHOOKS_"))}
    env.update(
        HAYSTACK_TELEMETRY_ENABLED="False",
        HF_HUB_OFFLINE="1",
        CODE_ALIAS_CACHE_DIR=str(tmp_path / "cache"),
        PYTHONPATH=os.pathsep.join([str(REPO / "components"), env.get("PYTHONPATH", "")]),
    )
    port = free_port()
    ask = [*CLI, "--index-dir", str(index_dir), "ask", "where's the payments retry helper?"]
    with running_server(["--index-dir", str(index_dir), "serve", "--port", str(port)], port, tmp_path, env, {}):
        answered = subprocess.run(ask, env=env, capture_output=True, text=True, timeout=120, check=True)
        assert f"answered by the code-alias server at http://127.0.0.1:{port}" in answered.stdout
        assert "withStripeBackoff" in answered.stdout
    assert not list((tmp_path / "cache" / "servers").glob("*.json"))  # taken back on a plain SIGTERM
    alone = subprocess.run(ask, env=env, capture_output=True, text=True, timeout=120, check=True)
    assert "answered by the code-alias server" not in alone.stdout and "withStripeBackoff" in alone.stdout
