"""Refresh on push: a real `code-alias serve` on loopback, signed webhooks, and asks that never see a half-built index.

The server runs the BM25-only pipeline over an index of a copy of the fixture repository (no model loads), with a
bearer token for its ordinary routes and `CODE_ALIAS_WEBHOOK_SECRET` for the webhook, which a Git host calls without
the token. The tests share one server and run in order: refusals first (nothing changes), then a signed push that
renames a function, then a GitLab-style request, then a sync that fails.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.repos import ACME_REPO, ROOT

pytest.importorskip("hayhooks")
import httpx  # a dependency of hayhooks

from haystack_integrations.components.code_alias.app.refresh import STATUS_FILE, read_status
from haystack_integrations.components.code_alias.serving.live import (
    PushRequest,
    WebhookRefused,
    parse_push,
    signature_of,
    verify_request,
)
from tests.support.servers import CLI, RETRY_QUESTION, Served, free_port, running_server

SECRET = "webhook-secret-9d2e"
TOKEN = "api-token-51ab"
AUTH = {"authorization": f"Bearer {TOKEN}"}
RETRY_FILE = "packages/payments-core/src/retry.ts"
SYNC = "/code_alias_sync/run"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    from haystack_integrations.components.code_alias.app.search import CodeSearch

    base = tmp_path_factory.mktemp("live")
    repo = base / "acme_repo"
    shutil.copytree(ACME_REPO, repo)
    index_dir = base / "index"
    CodeSearch(index_dir, lexical=True).index(repo)
    workdir = base / "cwd"
    workdir.mkdir()
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CODE_ALIAS_", "HAYHOOKS_"))}
    env.update(
        HAYSTACK_TELEMETRY_ENABLED="False",
        HF_HUB_OFFLINE="1",
        CODE_ALIAS_API_TOKEN=TOKEN,
        CODE_ALIAS_WEBHOOK_SECRET=SECRET,
        CODE_ALIAS_LEXICAL="1",
        CODE_ALIAS_SYNC_LOCK_TIMEOUT="2",
        PYTHONPATH=os.pathsep.join([str(ROOT / "components"), env.get("PYTHONPATH", "")]),
    )
    with running_server(
        ["--index-dir", str(index_dir), "serve", "--port", str(port)], port, workdir, env, AUTH
    ) as server:
        yield server


@pytest.fixture
def client(served: Served) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=served.url, headers=AUTH, timeout=60) as http:
        yield http


def repo_of(served: Served) -> Path:
    return served.workdir.parent / "acme_repo"


def index_of(served: Served) -> Path:
    return served.workdir.parent / "index"


def push_body(paths: list[str], full_name: str = "acme/acme_repo") -> bytes:
    """A GitHub push event as GitHub sends it (trimmed to what matters)."""
    event = {
        "ref": "refs/heads/main",
        "before": "0" * 40,
        "after": "1" * 40,
        "repository": {"full_name": full_name, "name": full_name.split("/")[-1]},
        "commits": [{"id": "1" * 40, "added": [], "modified": paths, "removed": []}],
    }
    return json.dumps(event).encode()


def signed(body: bytes, secret: str = SECRET) -> dict[str, str]:
    return {
        "content-type": "application/json",
        "x-github-event": "push",
        "x-hub-signature-256": signature_of(body, secret),
    }


def sync_status(client: httpx.Client) -> dict[str, Any]:
    response = client.post("/code_alias_status/run", json={})
    assert response.status_code == 200, response.text
    return dict(response.json()["result"]["sync"])


def wait_for_sync(client: httpx.Client, sync_id: int, timeout: float = 120.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        status = sync_status(client)
        if (status["last_sync_id"] or 0) >= sync_id and status["state"] in ("ok", "failed"):
            return status
        assert time.monotonic() < deadline, f"sync {sync_id} did not finish: {status}"
        time.sleep(0.05)


def index_state(served: Served) -> tuple[bytes, bytes | None]:
    folder = index_of(served)
    status = folder / STATUS_FILE
    return (folder / "manifest.json").read_bytes(), status.read_bytes() if status.exists() else None


# ---- refusals: nothing changes ---------------------------------------------------------------------------------
def test_unsigned_and_badly_signed_requests_get_401_and_change_nothing(served: Served) -> None:
    before = index_state(served)
    body = push_body([RETRY_FILE])
    attempts: list[dict[str, str]] = [
        {"content-type": "application/json"},  # unsigned
        signed(body, "not-the-secret"),  # wrong secret
        signed(body + b" "),  # signature of another body
        {**signed(body), "x-hub-signature-256": signature_of(body, SECRET).replace("sha256=", "sha1=")},
        {"content-type": "application/json", "x-gitlab-token": "not-the-secret"},
    ]
    with httpx.Client(base_url=served.url, timeout=30) as anonymous:
        for headers in attempts:
            response = anonymous.post(SYNC, content=body, headers=headers)
            assert response.status_code == 401, (headers, response.text)
            assert SECRET not in response.text
        # the bearer token is not a way in either: the webhook's only credential is the secret
        response = anonymous.post(SYNC, content=body, headers={**AUTH, "content-type": "application/json"})
        assert response.status_code == 401
    time.sleep(0.5)  # a sync wrongly started would have touched the index by now
    assert index_state(served) == before
    assert SECRET not in served.log_tail()


def test_a_deep_signed_body_is_a_422_and_the_connection_survives(served: Served) -> None:
    """50,000 brackets, signed: `json.loads` raised RecursionError in the route, a plain 500 and a reset connection."""
    import http.client

    before = index_state(served)
    body = b'{"paths": ' + b"[" * 50_000 + b"]" * 50_000 + b"}"
    connection = http.client.HTTPConnection(served.host, served.port, timeout=60)
    try:
        connection.request("POST", SYNC, body=body, headers=signed(body))
        response = connection.getresponse()
        text = response.read()
        assert response.status == 422, (response.status, text[:200])
        assert b"nests deeper" in text
        connection.request(
            "POST", "/code_alias_status/run", body=b"{}", headers={**AUTH, "content-type": "application/json"}
        )
        again = connection.getresponse()
        assert again.status == 200, again.read()[:200]
        again.read()
    finally:
        connection.close()
    assert index_state(served) == before


# ---- a signed push ----------------------------------------------------------------------------------------------
def test_signed_push_renames_a_function_and_asks_keep_answering(served: Served, client: httpx.Client) -> None:
    old_version = sync_status(client)["dictionary_version"]
    repo = repo_of(served)
    retry = repo / RETRY_FILE
    retry.write_text(retry.read_text(encoding="utf-8").replace("withStripeBackoff", "retryStripeCall"), "utf-8")
    client_ts = repo / "packages/payments-core/src/client.ts"
    client_ts.write_text(client_ts.read_text(encoding="utf-8") + "\n// retries: see retryStripeCall\n", "utf-8")

    answers: list[tuple[int, str | None]] = []
    stop = threading.Event()

    def ask_in_a_loop() -> None:
        with httpx.Client(base_url=served.url, headers=AUTH, timeout=60) as http:
            while not stop.is_set():
                response = http.post("/code_alias_ask/run", json={"question": RETRY_QUESTION, "top_k": 3})
                files = response.json().get("result", {}).get("files", []) if response.status_code == 200 else []
                answers.append((response.status_code, files[0]["file_path"] if files else None))

    asker = threading.Thread(target=ask_in_a_loop)
    asker.start()
    try:
        time.sleep(0.3)
        body = push_body([RETRY_FILE, "packages/payments-core/src/client.ts"])
        started = time.monotonic()
        response = httpx.post(served.url + SYNC, content=body, headers=signed(body), timeout=30)
        assert response.status_code == 202, response.text
        queued = response.json()["result"]
        assert queued["accepted"] is True and queued["paths"] == 2
        status = wait_for_sync(client, queued["sync_id"])
        seconds = time.monotonic() - started
        time.sleep(0.3)
    finally:
        stop.set()
        asker.join(timeout=60)
    assert status["state"] == "ok" and status["last_error"] is None, status
    assert status["last_trigger"] == "webhook" and status["files_changed"] == 2
    assert status["dictionary_version"] != old_version
    assert len(answers) >= 3, answers
    assert all(code == 200 and top == RETRY_FILE for code, top in answers), answers
    print(f"sync after a push of 2 changed files: {seconds:.2f} s from request to the new build serving")

    # the next ask finds the new name, and the old one still resolves to it
    for question in ("where is retryStripeCall?", "where is withStripeBackoff?"):
        result = client.post("/code_alias_ask/run", json={"question": question, "top_k": 3}).json()["result"]
        files = [item["file_path"] for item in result["files"]]
        # the new name's definition first; asked by the old name, the file still writing the old name (client.ts
        # imports it) may come first, the definition it was renamed to right after
        assert RETRY_FILE in (files[:1] if question.startswith("where is retry") else files[:2]), (question, files)
        assert "retryStripeCall" in {symbol["symbol"] for symbol in result["symbols"]}, (question, result["symbols"])
        assert "retryStripeCall" in result["rewrite"]["symbols"], (question, result["rewrite"])
    rewrite = client.post("/code_alias_rewrite/run", json={"question": "withStripeBackoff"}).json()["result"]
    assert rewrite["symbols"] == ["retryStripeCall"]
    assert rewrite["meta"]["dictionary_version"] == status["dictionary_version"]  # the rewrite follows the swap
    shown = run_cli(served, "dict", "show", "withStripeBackoff")
    assert shown.returncode == 0, shown.stderr
    assert "renamed to retryStripeCall" in shown.stdout


def test_gitlab_token_and_a_plain_list_of_paths(served: Served, client: httpx.Client) -> None:
    headers = {"x-gitlab-token": SECRET}
    wrong = httpx.post(
        served.url + SYNC, json={"repository": "acme/other", "paths": [RETRY_FILE]}, headers=headers, timeout=30
    )
    assert wrong.status_code == 404 and "acme_repo" in wrong.text
    bad = httpx.post(served.url + SYNC, json={"repository": "acme_repo", "paths": ["../etc"]}, headers=headers)
    assert bad.status_code == 422
    response = httpx.post(
        served.url + SYNC, json={"repository": "acme_repo", "paths": [RETRY_FILE]}, headers=headers, timeout=30
    )
    assert response.status_code == 202, response.text
    status = wait_for_sync(client, response.json()["result"]["sync_id"])
    assert status["state"] == "ok" and status["files_changed"] == 0  # nothing changed since the last sync


def test_a_failed_sync_leaves_the_previous_index_serving(served: Served, client: httpx.Client) -> None:
    from haystack_integrations.components.code_alias.indexing.index_files import index_lock

    before = sync_status(client)
    manifest = (index_of(served) / "manifest.json").read_bytes()
    retry = repo_of(served) / RETRY_FILE
    retry.write_text(retry.read_text(encoding="utf-8").replace("retryStripeCall", "callStripeWithRetry"), "utf-8")
    # Another writer (a long `code-alias index`) holds the index past the server's CODE_ALIAS_SYNC_LOCK_TIMEOUT.
    with index_lock(index_of(served)):
        response = httpx.post(
            served.url + SYNC, json={"paths": [RETRY_FILE]}, headers={"x-gitlab-token": SECRET}, timeout=30
        )
        assert response.status_code == 202, response.text
        status = wait_for_sync(client, response.json()["result"]["sync_id"])
        assert status["state"] == "failed" and "IndexLockedError" in (status["last_error"] or ""), status
        assert status["last_ok_at"] == before["last_ok_at"]
        assert status["dictionary_version"] == before["dictionary_version"]
        assert (index_of(served) / "manifest.json").read_bytes() == manifest
        answer = client.post("/code_alias_ask/run", json={"question": "where is retryStripeCall?", "top_k": 3})
        assert answer.status_code == 200  # the previous build answers, with the name it knows
        assert "retryStripeCall" in {s["symbol"] for s in answer.json()["result"]["symbols"]}

    # The working tree is gone (an unmounted volume, a botched deploy): the webhook says so, and `code-alias sync`
    # (cron's way in, the same code path) fails and is recorded; the index keeps serving.
    repo = repo_of(served)
    moved = repo.with_name("acme_repo.moved")
    repo.rename(moved)
    try:
        response = httpx.post(
            served.url + SYNC, json={"paths": [RETRY_FILE]}, headers={"x-gitlab-token": SECRET}, timeout=30
        )
        assert response.status_code == 404 and "not a folder" in response.text, response.text
        failed = run_cli(served, "sync")
        assert failed.returncode != 0 and "previous index keeps serving" in failed.stderr
        shown = run_cli(served, "--json", "status")
        assert json.loads(shown.stdout)["state"] == "failed"
    finally:
        moved.rename(repo)
    assert sync_status(client)["state"] == "failed"
    answer = client.post("/code_alias_ask/run", json={"question": "where is retryStripeCall?", "top_k": 3})
    assert answer.status_code == 200 and answer.json()["result"]["files"][0]["file_path"] == RETRY_FILE

    # Once the tree is back, the next push goes through and the status clears the error.
    body = push_body([RETRY_FILE])
    response = httpx.post(served.url + SYNC, content=body, headers=signed(body), timeout=30)
    status = wait_for_sync(client, response.json()["result"]["sync_id"])
    assert status["state"] == "ok" and status["last_error"] is None and status["files_changed"] == 1
    result = client.post("/code_alias_ask/run", json={"question": "withStripeBackoff", "top_k": 3}).json()["result"]
    assert "callStripeWithRetry" in result["rewrite"]["symbols"]  # two renames later, the first name still resolves


def run_cli(served: Served, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, "--index-dir", str(index_of(served)), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT / "components")},
    )


def test_a_replayed_delivery_is_acknowledged_without_a_sync(served: Served, client: httpx.Client) -> None:
    """The same signed delivery 20 times was 20 x 202, each queueing a sync."""
    body = push_body(["packages/payments-core/src/client.ts"], full_name="acme/acme_repo")
    first = httpx.post(served.url + SYNC, content=body, headers={**signed(body), "x-github-delivery": "d-1"})
    assert first.status_code == 202, first.text
    done = wait_for_sync(client, first.json()["result"]["sync_id"])
    replies = []
    for attempt in range(20):  # the same id, then fresh ids on the same signed body: no signature covers the id
        delivery = "d-1" if attempt < 10 else f"forged-{attempt}"
        replies.append(
            httpx.post(served.url + SYNC, content=body, headers={**signed(body), "x-github-delivery": delivery})
        )
    assert all(r.status_code == 200 for r in replies), [(r.status_code, r.text) for r in replies]
    results = [r.json()["result"] for r in replies]
    assert all(r["accepted"] is False and r["detail"].startswith("replay:") for r in results), results[:2]
    assert all("sync_id" not in r for r in results)
    # GitLab: a delivery id seen before is a replay, whatever the body
    gitlab = {"x-gitlab-token": SECRET, "x-gitlab-event-uuid": "e-7"}
    fresh = httpx.post(served.url + SYNC, json={"paths": [RETRY_FILE]}, headers=gitlab)
    assert fresh.status_code == 202, fresh.text
    done = wait_for_sync(client, fresh.json()["result"]["sync_id"])
    again = httpx.post(served.url + SYNC, json={"paths": ["README.md"]}, headers=gitlab)
    assert again.status_code == 200 and again.json()["result"]["accepted"] is False
    # a GitHub push older than the window (a restarted server's log no longer has it) is stale
    old = json.loads(push_body([RETRY_FILE]))
    old["repository"]["pushed_at"] = int(time.time()) - 2 * 3600
    stale_body = json.dumps(old).encode()
    stale = httpx.post(served.url + SYNC, content=stale_body, headers=signed(stale_body))
    assert stale.status_code == 200 and stale.json()["result"]["detail"].startswith("stale:")
    time.sleep(0.3)
    assert sync_status(client)["last_sync_id"] == done["last_sync_id"]  # nothing ran after the fresh ones


# ---- the pieces, without a server ----------------------------------------------------------------------------------
def test_verify_request() -> None:
    body = b'{"paths": ["a.py"]}'
    secret = SECRET.encode()
    assert verify_request({"x-hub-signature-256": signature_of(body, SECRET)}, body, secret) == "hmac-sha256"
    assert verify_request({"x-gitlab-token": SECRET}, None, secret) == "token"
    for headers, raw, status in [
        ({}, body, 401),
        ({"x-hub-signature-256": signature_of(body, "x")}, body, 401),
        ({"x-hub-signature-256": signature_of(body, SECRET)}, None, 401),  # no raw body to check it against
        ({"x-hub-signature-256": signature_of(body, SECRET)}, body, 403),  # no secret configured
    ]:
        with pytest.raises(WebhookRefused) as refused:
            verify_request(headers, raw, None if status == 403 else secret)
        assert refused.value.status_code == status
        assert SECRET not in refused.value.detail


def test_parse_push() -> None:
    github = json.loads(push_body(["a.py", "b.py"]))
    github["commits"].append({"added": ["c.py"], "modified": ["a.py"], "removed": ["d.py"]})
    assert parse_push(github) == PushRequest(
        "push", "acme/acme_repo", ("a.py", "b.py", "c.py", "d.py"), "refs/heads/main"
    )
    gitlab = {"project": {"path_with_namespace": "acme/acme_repo"}, "commits": [{"modified": ["a.py"]}]}
    assert parse_push(gitlab).repository == "acme/acme_repo"
    assert parse_push({}, {"x-github-event": "ping"}).event == "ping"
    for payload in ([], {"paths": "a.py"}, {"paths": ["/etc/passwd"]}, {"paths": ["a/../../b"]}, {"nothing": 1}):
        with pytest.raises(WebhookRefused) as refused:
            parse_push(payload)
        assert refused.value.status_code == 422


def test_status_reports_a_sync_interrupted_by_a_dead_process(tmp_path: Path) -> None:
    (tmp_path / STATUS_FILE).write_text(json.dumps({"state": "running", "pid": 2**22 + 12345}), encoding="utf-8")
    status = read_status(tmp_path)
    assert status["state"] == "failed" and "interrupted" in (status["last_error"] or "")


def test_the_hayhooks_wrapper_takes_the_gitlab_token_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Under `hayhooks run` the wrapper gets parsed JSON and the headers, never the raw body."""
    import docstring_parser
    from fastapi import HTTPException
    from hayhooks.server.pipelines.models import create_request_model_from_callable
    from starlette.datastructures import Headers

    from haystack_integrations.components.code_alias.app.search import CodeSearch
    from haystack_integrations.components.code_alias.serving.hayhooks_wrappers import SyncWrapper
    from haystack_integrations.components.code_alias.serving.live import syncer_for
    from haystack_integrations.components.code_alias.serving.service import ServiceSettings, get_service

    repo = tmp_path / "acme_repo"
    shutil.copytree(ACME_REPO, repo)
    index_dir = (tmp_path / "index").resolve()
    CodeSearch(index_dir, lexical=True).index(repo)
    monkeypatch.setenv("CODE_ALIAS_WEBHOOK_SECRET", SECRET)
    wrapper = SyncWrapper()
    wrapper.service = get_service(ServiceSettings(index_dir=index_dir, lexical=True))
    model = create_request_model_from_callable(wrapper.run_api, "SyncRun", docstring_parser.parse(""))
    assert "headers" not in model.model_fields and {"repository", "paths", "commits"} <= set(model.model_fields)

    body = {"repository": "acme_repo", "paths": [RETRY_FILE]}
    for headers in ({}, {"X-Gitlab-Token": "wrong"}, {"X-Hub-Signature-256": signature_of(b"{}", SECRET)}):
        with pytest.raises(HTTPException) as refused:
            wrapper.run_api(**body, headers=Headers(headers))
        assert refused.value.status_code == 401
    queued = wrapper.run_api(**body, headers=Headers({"X-Gitlab-Token": SECRET}))
    assert queued["accepted"] is True
    assert syncer_for(index_dir).wait(queued["sync_id"], timeout=120)
    assert read_status(index_dir)["state"] == "ok"


def test_sync_ids_go_on_after_a_server_restart(tmp_path: Path) -> None:
    """A new server's first sync never shares an id with the previous server's last one (status polling)."""
    from haystack_integrations.components.code_alias.app.refresh import Syncer
    from haystack_integrations.components.code_alias.app.search import CodeSearch

    repo = tmp_path / "acme_repo"
    shutil.copytree(ACME_REPO, repo)
    index_dir = (tmp_path / "index").resolve()
    CodeSearch(index_dir, lexical=True).index(repo)
    first = Syncer(index_dir, lexical=True)
    ids = [first.submit((RETRY_FILE,))["sync_id"] for _ in range(2)]
    assert first.wait(ids[-1], timeout=120) and read_status(index_dir)["last_sync_id"] == ids[-1]

    restarted = Syncer(index_dir, lexical=True)  # what a new server process builds
    queued = restarted.submit((RETRY_FILE,))
    assert queued["sync_id"] > ids[-1]
    assert restarted.wait(queued["sync_id"], timeout=120)
    assert read_status(index_dir)["last_sync_id"] == queued["sync_id"]


def test_delivery_log_window_and_bound() -> None:
    from haystack_integrations.components.code_alias.serving.live import DeliveryLog, delivery_keys

    log = DeliveryLog(window=60, limit=3)
    assert log.replayed(["a"], now=1000) is None
    assert (log.replayed(["x", "a"], now=1030) or "").startswith("replay: this delivery was received 30 s ago")
    assert log.replayed(["a"], now=1061) is None  # past the window: forgotten
    for key in ("b", "c", "d"):
        assert log.replayed([key], now=1062) is None
    assert log.replayed(["a"], now=1063) is None  # bounded: the oldest went first
    assert (log.replayed([], pushed=900, now=1000) or "").startswith("stale: pushed 100 s ago")
    push = parse_push(json.loads(push_body(["a.py"])))
    plain = PushRequest("paths", None, ("a.py",))
    assert delivery_keys({}, b"{}", None, plain) == []  # a cron job's request may come again
    assert delivery_keys({"x-github-delivery": "g"}, b"{}", None, plain) == ["x-github-delivery:g"]
    keys = delivery_keys({}, push_body(["a.py"]), None, push)
    assert len(keys) == 1 and keys[0].startswith("body:")
    assert keys != delivery_keys({}, push_body(["b.py"]), None, push)


# ---- refused and failed refreshes are said: in the record, in the log ----------------------------------------------
def test_a_push_for_a_tree_that_is_gone_is_in_the_record_and_the_log(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    from haystack_integrations.components.code_alias.app.search import CodeSearch
    from haystack_integrations.components.code_alias.cli import main
    from haystack_integrations.components.code_alias.serving.live import handle_webhook, webhook_for

    repo = tmp_path / "acme_repo"
    shutil.copytree(ACME_REPO, repo)
    index_dir = (tmp_path / "index").resolve()
    CodeSearch(index_dir, lexical=True).index(repo)
    shutil.rmtree(repo)  # the working tree is gone
    body = json.dumps({"repository": "acme_repo", "paths": [RETRY_FILE]}).encode()
    caplog.set_level("INFO")
    with pytest.raises(WebhookRefused) as refused:
        handle_webhook(index_dir, signed(body), body, secret=SECRET.encode(), client="10.0.0.9")
    assert refused.value.status_code == 404
    record = read_status(index_dir)
    assert record["refusals"] == 1 and record["last_refused"] is not None
    assert record["last_refused"]["status"] == 404 and "not a folder here" in record["last_refused"]["reason"]
    assert str(tmp_path) not in json.dumps(record["last_refused"])  # no server paths in what status shows
    assert any("refused (404)" in r.getMessage() and "not a folder here" in r.getMessage() for r in caplog.records)
    # Unauthenticated: logged and counted in memory, never written (anyone who reaches the port could send it).
    before = (index_dir / STATUS_FILE).read_bytes()
    with pytest.raises(WebhookRefused):
        handle_webhook(index_dir, signed(body, "wrong"), body, secret=SECRET.encode(), client="10.0.0.10")
    assert (index_dir / STATUS_FILE).read_bytes() == before
    unauthenticated = webhook_for(index_dir).unauthenticated
    assert unauthenticated["count"] == 1 and unauthenticated["last_status"] == 401
    assert main(["status", "--index-dir", str(index_dir)]) == 0
    shown = capsys.readouterr().out
    assert "last refused refresh: 404" in shown and "not a folder here" in shown


def test_a_sync_does_not_overwrite_a_refusal_recorded_while_it_ran(tmp_path: Path) -> None:
    from haystack_integrations.components.code_alias.app import refresh
    from haystack_integrations.components.code_alias.app.search import CodeSearch

    repo = tmp_path / "acme_repo"
    shutil.copytree(ACME_REPO, repo)
    index_dir = (tmp_path / "index").resolve()
    CodeSearch(index_dir, lexical=True).index(repo)
    started, go_on = threading.Event(), threading.Event()
    original = CodeSearch.index

    def paused_index(self: Any, *args: Any, **kwargs: Any) -> Any:
        started.set()
        assert go_on.wait(60)
        return original(self, *args, **kwargs)

    CodeSearch.index = paused_index  # type: ignore[method-assign]
    try:
        outcome: dict[str, Any] = {}
        thread = threading.Thread(target=lambda: outcome.update(refresh.run_sync(index_dir, repo, lexical=True)))
        thread.start()
        assert started.wait(60)
        refresh.record_refusal(index_dir, 422, "a body that is no push")
        go_on.set()
        thread.join(120)
    finally:
        CodeSearch.index = original  # type: ignore[method-assign]
    record = read_status(index_dir)
    assert outcome["state"] == "ok" and record["state"] == "ok"
    assert record["last_refused"] is not None and record["last_refused"]["reason"] == "a body that is no push"


def test_a_failed_vector_fill_after_a_sync_is_in_the_record(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from haystack_integrations.components.code_alias.app.refresh import Syncer
    from haystack_integrations.components.code_alias.app.search import CodeSearch

    repo = tmp_path / "acme_repo"
    shutil.copytree(ACME_REPO, repo)
    index_dir = (tmp_path / "index").resolve()
    CodeSearch(index_dir, lexical=True).index(repo)
    syncer = Syncer(index_dir, lexical=True)
    indexer = syncer.indexer()
    assert indexer is not None

    def broken(**_: Any) -> None:
        raise OSError(28, "No space left on device")

    indexer.fill_vectors = broken  # type: ignore[method-assign]
    caplog.set_level("WARNING")
    queued = syncer.submit((RETRY_FILE,))
    assert syncer.wait(queued["sync_id"], timeout=120)
    record = read_status(index_dir)
    assert record["state"] == "ok" and record["last_warning"] is not None
    assert record["last_warning"]["what"] == "vectors" and "No space left" in record["last_warning"]["reason"]
    assert any("vectors of the synced chunks not computed" in r.getMessage() for r in caplog.records)
