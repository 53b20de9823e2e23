"""The warm server that `code-alias ask` leaves behind (`serving/warm.py`), tried with real processes.

Two racing asks start one server; it refuses a request without its token; it answers from a re-indexed tree
without a restart; it exits when idle and takes its announcement and socket with it. The index is lexical (no model
to load), which the warm server serves the same way as a hybrid one.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from haystack_integrations.components.code_alias.serving.client import ServerAnswerError, _UnixConnection, call_peer
from haystack_integrations.components.code_alias.serving.server_discovery import (
    announcement_path,
    inspect_announcement,
)
from haystack_integrations.components.code_alias.serving.warm import MODULE, daemon_allowed
from tests.support.repos import ACME_REPO, ROOT
from tests.support.servers import CLI

pytest.importorskip("hayhooks")

QUESTION = "where's the payments retry helper?"


def _warm_servers(index_dir: Path) -> list[int]:
    """The pids of warm servers of `index_dir` (from their command lines)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            arguments = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if MODULE.encode() in arguments and str(index_dir).encode() in arguments:
            found.append(int(entry.name))
    return found


@pytest.fixture
def warm_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    cache = tmp_path / "cache"
    monkeypatch.setenv("CODE_ALIAS_CACHE_DIR", str(cache))  # this process reads the same announcements
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CODE_ALIAS_", "HAYHOOKS_"))}
    env.update(
        HAYSTACK_TELEMETRY_ENABLED="False",
        HF_HUB_OFFLINE="1",
        CODE_ALIAS_CACHE_DIR=str(cache),
        CODE_ALIAS_DAEMON="1",  # asked for: tests never start one otherwise
        # Long enough that the re-index below (a new process: Haystack's imports, the index) ends before the server
        # idles out on a loaded machine (at 6 s a busy CI machine saw a second server answer the re-indexed ask).
        CODE_ALIAS_WARM_IDLE_SECONDS="30",
        PYTHONPATH=os.pathsep.join([str(ROOT / "components"), env.get("PYTHONPATH", "")]),
    )
    yield env
    for pid in _warm_servers(tmp_path / "index"):  # a failed assertion must not leave one behind
        os.kill(pid, 15)


def _ask(env: dict[str, str], index_dir: Path, *extra: str) -> subprocess.Popen[str]:
    command = [*CLI, "--index-dir", str(index_dir), "ask", QUESTION, "--json", *extra]
    return subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _answer(process: subprocess.Popen[str]) -> dict[str, object]:
    out, err = process.communicate(timeout=180)
    assert process.returncode == 0, err
    return dict(json.loads(out))


def test_one_warm_server_serves_racing_asks_a_reindex_and_exits_when_idle(
    tmp_path: Path, warm_env: dict[str, str]
) -> None:
    from haystack_integrations.components.code_alias.app.search import CodeSearch

    repo = tmp_path / "repo"
    shutil.copytree(ACME_REPO, repo)
    index_dir = tmp_path / "index"
    CodeSearch(index_dir, lexical=True).index(repo)

    first, second = _ask(warm_env, index_dir), _ask(warm_env, index_dir)
    answers = [_answer(first), _answer(second)]
    assert {a["server_kind"] for a in answers} == {"warm"}
    assert {a["retrieval"] for a in answers} == {"lexical"}  # said as an answer from the asking process says it
    pids = {a["server_pid"] for a in answers}
    assert len(pids) == 1 and _warm_servers(index_dir) == list(pids)  # started once
    assert any(s["qualified_name"].endswith("withStripeBackoff") for s in answers[0]["symbols"])  # type: ignore[attr-defined]
    lexical = _answer(_ask(warm_env, index_dir, "--lexical"))  # `--lexical` is answered by the same server
    assert lexical["server_pid"] in pids and lexical["retrieval"] == "lexical"

    peer = inspect_announcement(index_dir)
    assert Path(peer.address).stat().st_mode & 0o777 == 0o600
    # without its token: refused (the kernel-level check passes, we are its user)
    connection = _UnixConnection(peer.address, timeout=10)
    connection.request("POST", "/code_alias_ask/run", body=json.dumps({"question": QUESTION}).encode(), headers={})
    assert connection.getresponse().status == 401
    connection.close()
    with pytest.raises(ServerAnswerError) as refused:
        call_peer(
            peer.__class__(**{**peer.__dict__, "token": "wrong"}), "/code_alias_ask/run", {"question": "q"}, timeout=10
        )
    assert refused.value.status == 401

    # a re-index is answered from at once, by the same server
    (repo / "newmod.py").write_text(
        "def reconcile_ledger_entries(ledger):\n    '''Reconcile the ledger entries.'''\n    return ledger\n",
        encoding="utf-8",
    )
    subprocess.run(
        [*CLI, "--index-dir", str(index_dir), "index", str(repo)],
        env=warm_env,
        check=True,
        timeout=180,
        capture_output=True,
    )
    command = [*CLI, "--index-dir", str(index_dir), "ask", "where do we reconcile ledger entries?", "--json"]
    fresh = subprocess.run(command, env=warm_env, capture_output=True, text=True, timeout=180, check=True)
    payload = json.loads(fresh.stdout)
    assert payload["server_pid"] in pids
    assert payload["symbols"][0]["qualified_name"].endswith("reconcile_ledger_entries")

    # idle: it exits, and takes its announcement and socket with it
    deadline = time.monotonic() + 120
    while _warm_servers(index_dir) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not _warm_servers(index_dir)
    assert not announcement_path(index_dir).exists() and not Path(peer.address).exists()


def test_no_daemon_answers_here_and_starts_nothing(tmp_path: Path, warm_env: dict[str, str]) -> None:
    from haystack_integrations.components.code_alias.app.search import CodeSearch

    index_dir = tmp_path / "index"
    CodeSearch(index_dir, lexical=True).index(ACME_REPO)
    assert "server" not in _answer(_ask(warm_env, index_dir, "--no-daemon"))
    assert "server" not in _answer(_ask({**warm_env, "CODE_ALIAS_NO_DAEMON": "1"}, index_dir))
    assert not _warm_servers(index_dir) and not announcement_path(index_dir).exists()


def test_when_a_warm_server_may_be_started() -> None:
    assert daemon_allowed({})
    assert not daemon_allowed({"CODE_ALIAS_NO_DAEMON": "1"})
    assert not daemon_allowed({"CI": "true"}) and not daemon_allowed({"PYTEST_CURRENT_TEST": "t"})
    assert daemon_allowed({"CI": "true", "CODE_ALIAS_DAEMON": "1"})
    assert not daemon_allowed({"CODE_ALIAS_DAEMON": "1", "CODE_ALIAS_NO_DAEMON": "yes"})


def test_a_broken_start_is_said_once_and_not_retried_on_every_ask(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import sys

    from haystack_integrations.components.code_alias.serving import warm

    monkeypatch.setenv("CODE_ALIAS_CACHE_DIR", str(tmp_path / "cache"))
    started: list[Path] = []

    def broken(index_dir: Path) -> subprocess.Popen[bytes]:
        started.append(index_dir)
        return subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])

    monkeypatch.setattr(warm, "_start", broken)
    assert warm.ensure_warm_server(tmp_path / "index", timeout=30) is None
    assert "did not start" in capsys.readouterr().err and len(started) == 1
    assert warm.ensure_warm_server(tmp_path / "index", timeout=30) is None
    assert len(started) == 1 and capsys.readouterr().err == ""  # the next ask answers by itself, quietly
    monkeypatch.setattr(warm, "server_installed", lambda: False)  # no [hayhooks] extra: nothing is tried
    assert warm.ensure_warm_server(tmp_path / "other-index", timeout=30) is None and len(started) == 1
