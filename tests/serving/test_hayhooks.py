"""The Hayhooks deployments under `hayhooks/`, served for real: `hayhooks run` (REST) and `hayhooks mcp run` (MCP).

Each server is a separate process on 127.0.0.1 and a free port, started once per module. The REST server starts
before the index exists (it must answer, and say how to build one), then the test builds the index and the
server picks it up without a restart. It has no chat generator, so `mode="llm"` is refused there. The MCP server
has one: a fake OpenAI-compatible server in this process that always proposes one real and one invented symbol,
so the LLM path, the faithfulness filter and the shared rewrite cache are checked end to end.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.support.repos import ACME_REPO

pytest.importorskip("hayhooks")
import httpx  # a dependency of hayhooks

from tests.support.repos import ROOT

pytestmark = pytest.mark.slow

DEPLOYMENTS = ROOT / "hayhooks"
NAMES = ("code_alias_ask", "code_alias_rewrite", "code_alias_autocomplete", "code_alias_status")
STARTUP_SECONDS = 240.0
# `python -m hayhooks` does nothing in hayhooks 2.1 (its __main__ is empty): call the CLI object.
HAYHOOKS = [sys.executable, "-c", "import sys; from hayhooks.cli import hayhooks_cli; sys.exit(hayhooks_cli())"]
RETRY_QUESTION = "where's the payments retry helper?"
FAKE_ANSWER = {
    "rewritten": "withStripeBackoff retries Stripe calls in @acme/payments-core; see also retryPaymentsMagic",
    "symbols": ["withStripeBackoff", "retryPaymentsMagic"],  # the second one does not exist
    "packages": ["@acme/payments-core"],
    "intent": "locate_symbol",
}


# ---- helpers ---------------------------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def server_env(index_dir: Path, **extra: str) -> dict[str, str]:
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("CODE_ALIAS_", "HAYHOOKS_")) and k != "OPENAI_API_KEY"
    }
    env.update(
        HAYSTACK_TELEMETRY_ENABLED="False",
        HF_HUB_OFFLINE="1",
        CODE_ALIAS_INDEX_DIR=str(index_dir),
        HAYHOOKS_SHOW_TRACEBACKS="false",
        # A fixed pipeline set: no deploy/undeploy routes or MCP tools (the wrappers refuse to serve without it).
        HAYHOOKS_DURABLE_MODE="true",
        **extra,
    )
    return env


@dataclass
class Server:
    """A `hayhooks` process and its log."""

    url: str
    process: subprocess.Popen[bytes]
    log: Path
    before_index: dict[str, Any] = field(default_factory=dict)

    def log_tail(self, chars: int = 4000) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")[-chars:] if self.log.exists() else ""

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


def start_server(args: list[str], env: dict[str, str], log: Path, port: int, ready_path: str) -> Server:
    """Start `hayhooks ARGS` and wait until `ready_path` answers 200 (after start-up deployment)."""
    handle = log.open("wb")
    process = subprocess.Popen(
        [*HAYHOOKS, *args, "--host", "127.0.0.1", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=handle,
        stderr=subprocess.STDOUT,
    )
    handle.close()
    server = Server(url=f"http://127.0.0.1:{port}", process=process, log=log)
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"hayhooks exited with {process.returncode}:\n{server.log_tail()}")
        try:
            if httpx.get(server.url + ready_path, timeout=2).status_code == 200:
                return server
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    server.stop()
    raise AssertionError(f"hayhooks did not answer within {STARTUP_SECONDS:.0f} s:\n{server.log_tail()}")


def run(client: httpx.Client, name: str, body: Any) -> httpx.Response:
    return client.post(f"/{name}/run", json=body)


# ---- fixtures --------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def index_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("hayhooks-index")


@pytest.fixture(scope="module")
def rest_server(index_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """`hayhooks run` over an index folder that is empty at start; the index is built once it answers."""
    logs = tmp_path_factory.mktemp("hayhooks-logs")
    port = free_port()
    server = start_server(
        ["run", "--pipelines-dir", str(DEPLOYMENTS)], server_env(index_dir), logs / "rest.log", port, "/status"
    )
    try:
        with httpx.Client(base_url=server.url, timeout=120) as client:
            deadline = time.monotonic() + STARTUP_SECONDS  # /status answers once start-up deployment is over
            while set(NAMES) - set(client.get("/status").json().get("pipelines", [])):
                assert time.monotonic() < deadline, f"deployments missing:\n{server.log_tail()}"
                time.sleep(0.5)
            status = run(client, "code_alias_status", {})
            ask = run(client, "code_alias_ask", {"question": RETRY_QUESTION})
            complete = run(client, "code_alias_autocomplete", {"prefix": "with"})
            server.before_index = {
                "status": (status.status_code, status.json()),
                "ask": (ask.status_code, ask.text),
                "autocomplete": (complete.status_code, complete.text),
            }
        from haystack_integrations.components.code_alias.app.search import CodeSearch

        repo = tmp_path_factory.mktemp("hayhooks-repo") / "acme"
        shutil.copytree(ACME_REPO, repo, symlinks=True)
        CodeSearch(index_dir).index(repo)
        yield server
    finally:
        server.stop()


@dataclass
class FakeLLM:
    """An OpenAI-compatible chat server on loopback that always gives `FAKE_ANSWER`."""

    url: str
    calls: list[dict[str, Any]]


@pytest.fixture(scope="module")
def fake_llm() -> Iterator[FakeLLM]:
    calls: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("content-length", "0"))) or b"{}")
            calls.append(body)
            answer = {
                "id": "chatcmpl-fake",
                "object": "chat.completion",
                "created": 0,
                "model": body.get("model", "fake"),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": json.dumps(FAKE_ANSWER)},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
            }
            data = json.dumps(answer).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield FakeLLM(url=f"http://127.0.0.1:{server.server_address[1]}/v1", calls=calls)
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def mcp_server(
    rest_server: Server, index_dir: Path, fake_llm: FakeLLM, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    """`hayhooks mcp run` over the built index, with the fake LLM as its chat generator."""
    pytest.importorskip("mcp", reason="the MCP client/server package (hayhooks[mcp]) is not installed")
    port = free_port()
    env = server_env(
        index_dir, CODE_ALIAS_LLM_BASE_URL=fake_llm.url, CODE_ALIAS_LLM_MODEL="fake", CODE_ALIAS_OPENAI_API_KEY="test"
    )
    server = start_server(
        ["mcp", "run", "--pipelines-dir", str(DEPLOYMENTS)],
        env,
        tmp_path_factory.mktemp("hayhooks-logs") / "mcp.log",
        port,
        "/status",
    )
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def client(rest_server: Server) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=rest_server.url, timeout=120) as http:
        yield http


# ---- the shared service, in process (no server, no model) ---------------------------------------------------------
@pytest.fixture(scope="module")
def service_module() -> Any:
    from haystack_integrations.components.code_alias.serving import service as serving

    return serving


def test_settings_from_env(service_module: Any, tmp_path: Path) -> None:
    settings = service_module.ServiceSettings.from_env({"CODE_ALIAS_INDEX_DIR": str(tmp_path)})
    assert settings.index_dir == tmp_path.resolve() and not settings.generator_configured
    assert settings.torch_threads == 1 and settings.max_concurrent_asks == 4
    llm = service_module.ServiceSettings.from_env(
        {"CODE_ALIAS_INDEX_DIR": str(tmp_path), "CODE_ALIAS_LLM_BASE_URL": "http://127.0.0.1:9/v1"}
    )
    assert llm.generator_configured and llm.generator_status()["kind"] == "openai-compatible"
    assert llm.llm_timeout == 20.0
    gguf = {"CODE_ALIAS_INDEX_DIR": str(tmp_path), "CODE_ALIAS_LLM_GGUF": str(tmp_path / "m.gguf")}
    assert service_module.ServiceSettings.from_env(gguf).llm_timeout == 120.0  # in-process: cannot be cut short
    assert service_module.ServiceSettings.from_env({**gguf, "CODE_ALIAS_LLM_TIMEOUT": "7"}).llm_timeout == 7.0
    for bad in (
        {"CODE_ALIAS_BACKEND": "sqlite"},
        {"CODE_ALIAS_LLM_BASE_URL": "http://x/v1", "CODE_ALIAS_LLM_GGUF": "m.gguf"},
        {"CODE_ALIAS_TORCH_THREADS": "-1"},
        {"CODE_ALIAS_MAX_CONCURRENT_ASKS": "many"},
        {"CODE_ALIAS_LLM_TIMEOUT": "0"},
    ):
        with pytest.raises(ValueError, match="CODE_ALIAS_"):
            service_module.ServiceSettings.from_env(bad)


def test_service_bounds_blas_threads_like_torch_threads(service_module: Any, tmp_path: Path) -> None:
    """Concurrent requests each multiply a query by the vector matrix: one BLAS thread each, or OpenBLAS spins."""
    from threadpoolctl import threadpool_info, threadpool_limits

    before = {pool["filepath"]: pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"}
    try:
        service = service_module.CodeAliasService(service_module.ServiceSettings(index_dir=tmp_path, torch_threads=1))
        service._set_torch_threads()
        assert [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"] == [1] * len(before)
    finally:
        threadpool_limits(limits=max(before.values(), default=1), user_api="blas")


def test_service_checks_arguments_itself(service_module: Any, tmp_path: Path) -> None:
    """MCP calls reach `run_api` without FastAPI's validation, so the service checks every argument too."""
    from fastapi import HTTPException

    service = service_module.CodeAliasService(service_module.ServiceSettings(index_dir=tmp_path))
    bad_calls = [
        (lambda: service.ask(None), 422, "must be a string"),
        (lambda: service.ask("  "), 422, "question is empty"),
        (lambda: service.ask("x" * 2001), 422, "2,001 characters"),
        (lambda: service.ask("retry", top_k=True), 422, "integer from 1 to 100"),
        (lambda: service.ask("retry", top_k=0), 422, "from 1 to 100"),
        (lambda: service.ask("retry", mode="LLM"), 422, "'dictionary' or 'llm'"),
        (lambda: service.ask("retry", mode="llm"), 400, "needs a chat generator"),
        (lambda: service.ask("retry", lexical="yes"), 422, "lexical must be true or false"),
        (lambda: service.rewrite("retry", mode=None), 422, "'dictionary' or 'llm'"),
        (lambda: service.autocomplete(3), 422, "must be a string"),
        (lambda: service.autocomplete("with", limit=0), 422, "from 1 to 50"),
        (lambda: service.ask("retry"), 404, "code-alias index PATH"),
        (lambda: service.rewrite("retry"), 404, "code-alias index PATH"),
        (lambda: service.autocomplete("with"), 404, "code-alias index PATH"),
    ]
    for call, status_code, message in bad_calls:
        with pytest.raises(HTTPException) as raised:
            call()
        assert raised.value.status_code == status_code
        assert message in str(raised.value.detail)
    status = service.status()
    assert status["ready"] is False and "code-alias index PATH" in status["error"]
    assert status["documents"] is None and status["dictionary"] is None
    with_llm = service_module.CodeAliasService(
        service_module.ServiceSettings(index_dir=tmp_path, llm_base_url="http://127.0.0.1:9/v1")
    )
    with pytest.raises(HTTPException) as raised:
        with_llm.ask("retry", mode="llm", lexical=True)
    assert raised.value.status_code == 400 and "drop mode 'llm' or lexical" in str(raised.value.detail)


def test_a_pipeline_that_cannot_load_is_a_503_with_the_reason(service_module: Any, tmp_path: Path) -> None:
    from fastapi import HTTPException

    settings = service_module.ServiceSettings(index_dir=tmp_path, llm_gguf=str(tmp_path / "missing.gguf"))
    service = service_module.CodeAliasService(settings)
    with pytest.raises(HTTPException) as raised:
        service.rewrite("retry", mode="llm")
    assert raised.value.status_code == 503
    assert "missing.gguf: no such file" in str(raised.value.detail)


# ---- REST ------------------------------------------------------------------------------------------------------
def test_missing_index_is_reported_with_how_to_build_it(rest_server: Server) -> None:
    code, status = rest_server.before_index["status"]
    assert code == 200
    assert status["result"]["ready"] is False
    assert "code-alias index" in status["result"]["error"]
    for name in ("ask", "autocomplete"):
        code, text = rest_server.before_index[name]
        assert code == 404, text
        assert "no index at" in text and "code-alias index PATH" in text
        assert "Traceback" not in text


def test_ask_returns_ranked_files_symbols_lines_and_the_rewrite(client: httpx.Client) -> None:
    response = run(client, "code_alias_ask", {"question": RETRY_QUESTION, "top_k": 3})
    assert response.status_code == 200, response.text
    result = response.json()["result"]
    assert result["mode"] == "dictionary"
    assert result["rewrite"]["symbols"][0] == "withStripeBackoff"
    assert result["rewrite"]["packages"] == ["@acme/payments-core"]
    assert result["rewrite"]["meta"]["mode"] == "dictionary"
    assert 1 <= len(result["files"]) <= 3
    top = result["files"][0]
    assert top["rank"] == 1 and top["file_path"] == "packages/payments-core/src/retry.ts"
    assert top["hits"][0]["symbol"] == "withStripeBackoff"
    assert top["hits"][0]["start_line"] == 6 and top["hits"][0]["end_line"] >= 6
    first = result["symbols"][0]
    assert first["symbol"] == "withStripeBackoff" and first["rank"] == 1
    assert first["file_path"] == top["file_path"] and first["start_line"] == 6
    assert any(reason.startswith("rewrite: withStripeBackoff") for reason in first["why"])  # why it is first
    assert len(result["symbols"]) <= 3
    assert list(result)[:3] == ["question", "mode", "symbols"]  # the answer leads with symbols

    nickname = run(client, "code_alias_ask", {"question": "who decides what the bouncer lets in", "top_k": 1})
    assert nickname.status_code == 200, nickname.text
    assert nickname.json()["result"]["files"][0]["file_path"] == "services/auth/acme_auth/tokens.py"
    assert nickname.json()["result"]["rewrite"]["symbols"][0] == "AccessGate"


def test_ask_lexically_on_the_hybrid_index_as_the_asking_process_would(client: httpx.Client, index_dir: Path) -> None:
    # `code-alias ask --lexical` goes through the warm server too: the server's BM25-only search beside its hybrid
    # one must answer what `CodeSearch(lexical=True, semantic_hints=False)` answers in the asking process.
    from haystack_integrations.components.code_alias.app.search import CodeSearch

    body = {"question": RETRY_QUESTION, "top_k": 5}
    hybrid = run(client, "code_alias_ask", body).json()["result"]
    lexical_response = run(client, "code_alias_ask", {**body, "lexical": True})
    assert lexical_response.status_code == 200, lexical_response.text
    lexical = lexical_response.json()["result"]
    assert (hybrid["retrieval"], lexical["retrieval"]) == ("hybrid", "lexical")
    assert any(reason.startswith("embedding") for item in hybrid["symbols"] for reason in item["why"])
    assert not any(reason.startswith("embedding") for item in lexical["symbols"] for reason in item["why"])
    here = CodeSearch(index_dir, lexical=True, semantic_hints=False).ask(RETRY_QUESTION, top_k=5)
    assert [item["file_path"] for item in lexical["files"]] == [item["file_path"] for item in here.files]
    assert [item["qualified_name"] for item in lexical["symbols"]] == [item["qualified_name"] for item in here.symbols]
    assert lexical["rewrite"]["symbols"] == list(here.rewrite.get("symbols") or [])


def test_rewrite_alone(client: httpx.Client) -> None:
    response = run(client, "code_alias_rewrite", {"question": "who decides what the bouncer lets in"})
    assert response.status_code == 200, response.text
    result = response.json()["result"]
    assert set(result) == {"rewritten", "symbols", "packages", "intent", "hints", "meta", "generation"}
    assert result["generation"]["build"] and result["generation"]["dictionary_version"] == result["meta"][
        "dictionary_version"
    ]
    assert result["symbols"][0] == "AccessGate"
    assert "AccessGate" in result["rewritten"]
    assert result["intent"] in {"locate_symbol", "explain_behavior", "how_to", "debug", "usage"}
    assert result["hints"][0]["name"] == "AccessGate"
    assert "services/auth/acme_auth/tokens.py" in result["hints"][0]["files"]
    assert result["meta"]["mode"] == "dictionary" and result["meta"]["dictionary_version"]


def test_autocomplete_prefix_and_fuzzy(client: httpx.Client) -> None:
    response = run(client, "code_alias_autocomplete", {"prefix": "withStr", "limit": 5})
    assert response.status_code == 200, response.text
    result = response.json()["result"]
    assert result["completions"][0]["name"] == "withStripeBackoff"
    assert result["completions"][0]["reasons"] == ["prefix"]
    assert result["dictionary_version"]

    typo = run(client, "code_alias_autocomplete", {"prefix": "acessgate", "limit": 3}).json()["result"]
    assert "AccessGate" in [c["name"] for c in typo["completions"]]
    assert len(typo["completions"]) <= 3


def test_status(client: httpx.Client, index_dir: Path) -> None:
    response = run(client, "code_alias_status", {})
    assert response.status_code == 200, response.text
    result = response.json()["result"]
    assert result["ready"] is True and result["error"] is None
    assert Path(result["index_dir"]) == index_dir.resolve()
    assert result["dictionary"]["symbols"] > 0 and result["dictionary"]["packages"] == 6
    assert result["dictionary"]["version"]
    assert result["documents"] and result["documents"] > 0
    assert result["modes"] == ["dictionary"]
    assert result["generator"]["configured"] is False
    assert result["torch_threads"] == 1

    listing = client.get("/status").json()
    assert set(NAMES) <= set(listing["pipelines"])


@pytest.mark.parametrize(
    ("name", "body", "expected"),
    [
        ("code_alias_ask", {"question": ""}, "question is empty"),
        ("code_alias_ask", {"question": "   \n\t "}, "question is empty"),
        ("code_alias_ask", {"question": "x" * 2001}, "question is 2,001 characters; the limit is 2,000"),
        ("code_alias_ask", {}, "Field required"),
        ("code_alias_ask", {"question": 42}, "question must be a string, got int"),
        ("code_alias_ask", {"question": "retry", "top_k": 0}, "top_k must be from 1 to 100, got 0"),
        ("code_alias_ask", {"question": "retry", "top_k": 101}, "top_k must be from 1 to 100, got 101"),
        ("code_alias_ask", {"question": "retry", "top_k": "ten"}, "top_k must be an integer from 1 to 100, got str"),
        ("code_alias_ask", {"question": "retry", "top_k": True}, "top_k must be an integer from 1 to 100, got bool"),
        ("code_alias_ask", {"question": "retry", "mode": "psychic"}, "'dictionary' or 'llm'"),
        ("code_alias_ask", {"question": "retry", "mode": "llm"}, "needs a chat generator"),
        ("code_alias_ask", {"question": "retry", "lexical": "yes"}, "lexical must be true or false, got str"),
        ("code_alias_ask", {"question": "retry", "repo": []}, "repo: a name or a non-empty list of names"),
        ("code_alias_rewrite", {"question": "retry", "mode": "llm"}, "CODE_ALIAS_LLM_BASE_URL"),
        ("code_alias_rewrite", {"question": ["retry"]}, "question must be a string, got list"),
        ("code_alias_autocomplete", {"prefix": ""}, "prefix is empty"),
        ("code_alias_autocomplete", {"prefix": "  "}, "prefix is empty"),
        ("code_alias_autocomplete", {"prefix": "with", "limit": 51}, "limit must be from 1 to 50, got 51"),
    ],
)
def test_bad_requests_get_a_4xx_with_a_message(client: httpx.Client, name: str, body: Any, expected: str) -> None:
    response = run(client, name, body)
    assert 400 <= response.status_code < 500, response.text
    assert expected in response.text
    assert "Traceback" not in response.text


def test_no_runtime_deployment_under_hayhooks(client: httpx.Client, rest_server: Server) -> None:
    """In durable mode Hayhooks 2.1 has no deploy or undeploy routes (the wrappers refuse to serve otherwise)."""
    wrapper = "import pathlib\npathlib.Path('pwned.txt').write_text('x')\n"
    for path, body in [
        ("/deploy_files", {"name": "evil", "files": {"pipeline_wrapper.py": wrapper}, "save_files": True}),
        ("/deploy-yaml", {"name": "evil", "source_code": "components: {}\n"}),
        ("/undeploy/code_alias_status", None),
    ]:
        response = client.post(path, json=body)
        assert response.status_code in (404, 405), (path, response.text)
    assert not (ROOT / "pwned.txt").exists()
    assert (DEPLOYMENTS / "code_alias_status" / "pipeline_wrapper.py").is_file()
    assert set(NAMES) <= set(client.get("/status").json()["pipelines"])


def test_malformed_json_is_a_4xx(client: httpx.Client) -> None:
    response = client.post("/code_alias_ask/run", content=b"{not json", headers={"content-type": "application/json"})
    assert response.status_code == 422
    assert "JSON" in response.text


def test_concurrent_requests_are_safe(client: httpx.Client) -> None:
    questions = [RETRY_QUESTION, "who decides what the bouncer lets in", "post journal entries to the books"]
    expected = {
        q: run(client, "code_alias_ask", {"question": q, "top_k": 3}).json()["result"]["files"] for q in questions
    }

    def call(i: int) -> tuple[str, int, Any]:
        kind = i % 4
        if kind == 3:
            response = run(client, "code_alias_autocomplete", {"prefix": "with"})
            return "complete", response.status_code, response.json()
        if kind == 2:
            response = run(client, "code_alias_rewrite", {"question": questions[i % 3]})
            return "rewrite", response.status_code, response.json()
        question = questions[i % 3]
        response = run(client, "code_alias_ask", {"question": question, "top_k": 3})
        return question, response.status_code, response.json()

    with ThreadPoolExecutor(max_workers=16) as pool:
        outcomes = list(pool.map(call, range(64)))
    assert all(code == 200 for _, code, _ in outcomes), [o for o in outcomes if o[1] != 200][:3]
    for kind, _, payload in outcomes:
        if kind in expected:
            assert payload["result"]["files"] == expected[kind]


# ---- MCP -------------------------------------------------------------------------------------------------------
def mcp_session(server: Server, calls: Any) -> Any:
    """Run `calls(session)` in an MCP client session over streamable HTTP (the transport `hayhooks mcp run` serves)."""
    import anyio
    from mcp import ClientSession
    from mcp.client import streamable_http

    connect = getattr(streamable_http, "streamable_http_client", None) or streamable_http.streamablehttp_client

    async def main() -> Any:
        async with connect(server.url + "/mcp") as streams, ClientSession(streams[0], streams[1]) as session:
            await session.initialize()
            return await calls(session)

    return anyio.run(main)


def tool_json(result: Any) -> dict[str, Any]:
    assert not result.isError, result.content
    payload: dict[str, Any] = json.loads(result.content[0].text)
    return payload


def test_mcp_lists_ask_and_rewrite_as_tools(mcp_server: Server) -> None:
    async def calls(session: Any) -> Any:
        return (await session.list_tools()).tools

    tools = {tool.name: tool for tool in mcp_session(mcp_server, calls)}
    assert {"code_alias_ask", "code_alias_rewrite"} <= set(tools)
    assert not {"code_alias_autocomplete", "code_alias_status"} & set(tools)  # UI and ops endpoints stay REST-only
    assert not {"deploy_pipeline", "undeploy_pipeline"} & set(tools)  # durable mode: a fixed set of pipelines
    ask, rewrite = tools["code_alias_ask"], tools["code_alias_rewrite"]
    assert len(ask.description) > 200 and "start and end line" in ask.description
    assert len(rewrite.description) > 200 and "nothing is invented" in rewrite.description
    schema = ask.inputSchema["properties"]
    assert ask.inputSchema["required"] == ["question"]
    assert schema["question"]["maxLength"] == 2000 and schema["question"]["description"]
    assert schema["top_k"]["minimum"] == 1 and schema["top_k"]["maximum"] == 100
    assert schema["mode"]["enum"] == ["dictionary", "llm"]
    assert rewrite.inputSchema["properties"]["mode"]["default"] == "dictionary"


def test_mcp_ask_and_llm_rewrite_share_the_cache(mcp_server: Server, fake_llm: FakeLLM) -> None:
    question = "which function retries payment calls?"

    async def calls(session: Any) -> Any:
        ask = await session.call_tool("code_alias_ask", {"question": RETRY_QUESTION, "top_k": 2})
        before = len(fake_llm.calls)
        rewrite = await session.call_tool("code_alias_rewrite", {"question": question, "mode": "llm"})
        after_rewrite = len(fake_llm.calls)
        llm_ask = await session.call_tool("code_alias_ask", {"question": question, "mode": "llm", "top_k": 2})
        return ask, rewrite, llm_ask, before, after_rewrite, len(fake_llm.calls)

    ask, rewrite, llm_ask, before, after_rewrite, after_ask = mcp_session(mcp_server, calls)
    answer = tool_json(ask)
    assert answer["files"][0]["file_path"] == "packages/payments-core/src/retry.ts"
    assert answer["rewrite"]["meta"]["mode"] == "dictionary"

    rewritten = tool_json(rewrite)
    assert rewritten["meta"]["mode"] == "llm" and rewritten["meta"]["fallback"] is None
    assert rewritten["symbols"] == ["withStripeBackoff"]  # the invented name never leaves the server
    assert "retryPaymentsMagic" not in rewritten["rewritten"]
    assert [d["name"] for d in rewritten["meta"]["dropped"]] == ["retryPaymentsMagic"]
    assert after_rewrite == before + 1

    llm_answer = tool_json(llm_ask)
    assert llm_answer["mode"] == "llm"
    assert llm_answer["rewrite"]["meta"]["cache_hit"] is True  # same rewriter, same cache: no second LLM call
    assert after_ask == after_rewrite
    assert llm_answer["rewrite"]["symbols"] == ["withStripeBackoff"]
    assert llm_answer["files"][0]["file_path"] == "packages/payments-core/src/retry.ts"


def test_mcp_bad_calls_are_tool_errors_with_a_message(mcp_server: Server) -> None:
    async def calls(session: Any) -> Any:
        return [
            await session.call_tool("code_alias_ask", {"question": ""}),
            await session.call_tool("code_alias_ask", {"question": "retry", "top_k": 500}),
            await session.call_tool("code_alias_rewrite", {"question": "retry", "mode": "psychic"}),
            await session.call_tool("code_alias_ask", {"question": "   "}),
        ]

    results = mcp_session(mcp_server, calls)
    for result in results:
        assert result.isError
        assert result.content and result.content[0].text
        assert "Traceback" not in result.content[0].text
    assert "question is empty" in results[-1].content[0].text


def test_openai_chat_under_hayhooks(rest_server: Server) -> None:
    """Hayhooks' own `/v1/chat/completions` reaches the ask deployment's `run_chat_completion(_async)`."""
    openai = pytest.importorskip("openai", reason="the chat test needs the `openai` client (the dev extra)")
    client = openai.OpenAI(base_url=rest_server.url + "/v1", api_key="unused", max_retries=0, timeout=120)
    assert "code_alias_ask" in [model.id for model in client.models.list()]
    messages = [{"role": "user", "content": RETRY_QUESTION}]
    reply = client.chat.completions.create(model="code_alias_ask", messages=messages)
    text = reply.choices[0].message.content
    assert "`packages/payments-core/src/retry.ts:6`" in text and "withStripeBackoff" in text
    streamed = client.chat.completions.create(model="code_alias_ask", messages=messages, stream=True)
    assert "".join(chunk.choices[0].delta.content or "" for chunk in streamed) == text
