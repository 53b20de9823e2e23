"""`code-alias serve`, attacked as a client would: one real server process on loopback, with a token and MCP.

The server runs the BM25-only pipeline (`CODE_ALIAS_LEXICAL=1`) over a small index of the fixture repository, so
no embedding model loads. It must serve our four deployments and nothing else: Hayhooks' deploy and undeploy
routes and MCP tools are absent (nothing written, nothing imported), a foreign origin is refused, requests without
the token get 401, bad and oversized requests get a short 4xx and the connection stays usable.
"""

from __future__ import annotations

import http.client
import json
import os
import random
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.repos import ACME_REPO, ROOT
from tests.support.servers import RETRY_QUESTION, Served, free_port, running_server

pytest.importorskip("hayhooks")
import httpx  # a dependency of hayhooks

TOKEN = "test-token-4f1c"
AUTH = {"authorization": f"Bearer {TOKEN}"}
NAMES = (
    "code_alias_ask",
    "code_alias_rewrite",
    "code_alias_autocomplete",
    "code_alias_status",
    "code_alias_sync",
    "code_alias_callers",
    "code_alias_callees",
    "code_alias_impact",
)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    from haystack_integrations.components.code_alias.app.search import CodeSearch

    index_dir = tmp_path_factory.mktemp("serve-index")
    CodeSearch(index_dir, lexical=True).index(ACME_REPO)
    workdir = tmp_path_factory.mktemp("serve-cwd")
    marker = workdir / "pwned.txt"
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CODE_ALIAS_", "HAYHOOKS_"))}
    env.update(
        HAYSTACK_TELEMETRY_ENABLED="False",
        HF_HUB_OFFLINE="1",
        CODE_ALIAS_API_TOKEN=TOKEN,
        CODE_ALIAS_LEXICAL="1",
        PYTHONPATH=os.pathsep.join([str(ROOT / "components"), env.get("PYTHONPATH", "")]),
    )
    with running_server(
        ["--index-dir", str(index_dir), "serve", "--port", str(port), "--mcp"], port, workdir, env, AUTH, marker
    ) as server:
        yield server


@pytest.fixture
def client(served: Served) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=served.url, headers=AUTH, timeout=60) as http:
        yield http


def evil_wrapper(marker: Path) -> str:
    """A pipeline wrapper whose import writes `marker`: if it ever runs, the test sees the file."""
    return (
        "import pathlib\n"
        f"pathlib.Path({str(marker)!r}).write_text('imported')\n"
        "from hayhooks import BasePipelineWrapper\n"
        "class PipelineWrapper(BasePipelineWrapper):\n"
        "    def setup(self) -> None:\n"
        "        self.pipeline = None\n"
        "    def run_api(self) -> str:\n"
        "        return 'pwned'\n"
    )


def snapshot(folder: Path) -> set[str]:
    return {str(path.relative_to(folder)) for path in folder.rglob("*")} if folder.exists() else set()


# ---- `code-alias ask --server`: the CLI as a client of a running server ----------------------------------------------
def test_cli_asks_the_running_server(
    served: Served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The answer comes from the server (no index here at all), printed and ranked as a local one."""
    from haystack_integrations.components.code_alias import cli

    monkeypatch.setenv("CODE_ALIAS_API_TOKEN", TOKEN)
    argv = ["ask", RETRY_QUESTION, "--server", served.url, "--index-dir", str(tmp_path / "none"), "--top-k", "3"]
    assert cli.main([*argv, "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["server"] == served.url
    assert payload["files"][0]["file_path"] == "packages/payments-core/src/retry.ts"
    assert [item["rank"] for item in payload["files"]] == list(range(1, len(payload["files"]) + 1))
    assert cli.main([*argv, "--lexical", "--json"]) == 0  # the server's BM25-only search answers it
    lexical = json.loads(capsys.readouterr().out)
    assert lexical["retrieval"] == "lexical" and lexical["files"][0]["file_path"] == payload["files"][0]["file_path"]
    assert cli.main(argv) == 0
    text = capsys.readouterr().out
    assert f"answered by the code-alias server at {served.url}" in text.splitlines()[-1] and "retry.ts" in text
    assert cli.main([*argv, "--repo", "nosuch"]) == cli.EXIT_ERROR  # the server's 422, its known names said
    # the fixture's repository name comes from the enclosing clone's remote where there is one: not pinned here
    assert "answered 422: repo: no repository 'nosuch' in this index; its repositories: " in (capsys.readouterr().err)
    monkeypatch.setenv("CODE_ALIAS_API_TOKEN", "wrong")
    assert cli.main(argv) == cli.EXIT_ERROR
    assert "answered 401" in capsys.readouterr().err
    assert cli.main(["ask", "q", "--server", f"http://127.0.0.1:{free_port()}"]) == cli.EXIT_ERROR
    assert "no code-alias server answers at" in capsys.readouterr().err
    # `--no-rewrite` is an option of the request: the server retrieves with the question as written
    monkeypatch.setenv("CODE_ALIAS_API_TOKEN", TOKEN)
    assert cli.main([*argv, "--no-rewrite", "--json"]) == 0
    raw = json.loads(capsys.readouterr().out)
    assert raw["rewrite"]["meta"]["used"] is False and raw["symbols"] and raw["server"] == served.url
    assert cli.main(["ask", "q", "--server", served.url, "--gguf", "model.gguf"]) == cli.EXIT_ERROR
    assert "drop --gguf/--openai-base-url" in capsys.readouterr().err


# ---- only our routes -----------------------------------------------------------------------------------------------
def test_serves_our_deployments(client: httpx.Client) -> None:
    assert set(client.get("/status").json()["pipelines"]) == set(NAMES)
    answer = client.post("/code_alias_ask/run", json={"question": RETRY_QUESTION, "top_k": 2})
    assert answer.status_code == 200, answer.text
    assert answer.json()["result"]["files"][0]["file_path"] == "packages/payments-core/src/retry.ts"
    status = client.post("/code_alias_status/run", json={}).json()["result"]
    assert status["ready"] is True and status["documents"] > 0
    paths = set(client.get("/openapi.json").json()["paths"])
    chat_and_page = {"/v1/models", "/v1/chat/completions", "/page/info", "/page/ask", "/page/graph"}  # files unlisted
    assert paths == {f"/{name}/run" for name in NAMES} | {"/status"} | chat_and_page


def test_deploy_and_undeploy_routes_are_absent(served: Served, client: httpx.Client) -> None:
    before = snapshot(ROOT / "hayhooks"), snapshot(served.workdir)
    files = {"pipeline_wrapper.py": evil_wrapper(served.marker)}
    attempts = [
        ("POST", "/deploy_files", {"name": "evil", "files": files, "save_files": True, "overwrite": True}),
        ("POST", "/deploy-yaml", {"name": "evil", "source_code": "components: {}\nconnections: []\n"}),
        ("POST", "/deploy", {"name": "evil", "source_code": "x"}),
        ("POST", "/undeploy/code_alias_status", None),
        ("DELETE", "/undeploy/code_alias_status", None),
        ("GET", "/evil/run", None),
        ("POST", "/evil/run", {}),
        ("POST", "/v1/files", None),  # Hayhooks' OpenAI file upload and Responses API: not served here
        ("POST", "/v1/responses", {"model": "code_alias_ask", "input": "x"}),
        ("GET", "/draw/code_alias_ask", None),
        ("GET", "/traces", None),
    ]
    for method, path, body in attempts:
        response = client.request(method, path, json=body)
        assert response.status_code in (404, 405), (path, response.status_code, response.text)
    assert not served.marker.exists()
    assert (snapshot(ROOT / "hayhooks"), snapshot(served.workdir)) == before
    assert set(client.get("/status").json()["pipelines"]) == set(NAMES)
    assert client.post("/code_alias_status/run", json={}).status_code == 200


def mcp_call(served: Served, calls: Any, headers: dict[str, str] | None = None) -> Any:
    import anyio
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async def main() -> Any:
        async with (
            httpx.AsyncClient(headers=AUTH if headers is None else headers, timeout=60) as http,
            streamable_http_client(served.url + "/mcp", http_client=http) as streams,
            ClientSession(streams[0], streams[1]) as session,
        ):
            await session.initialize()
            return await calls(session)

    return anyio.run(main)


def test_mcp_lists_only_our_tools_and_refuses_deploy(served: Served) -> None:
    pytest.importorskip("mcp")
    files = {"pipeline_wrapper.py": evil_wrapper(served.marker)}

    async def calls(session: Any) -> Any:
        tools = [tool.name for tool in (await session.list_tools()).tools]
        deploy = await session.call_tool(
            "deploy_pipeline", {"name": "evil", "files": files, "save_files": True, "overwrite": True}
        )
        undeploy = await session.call_tool("undeploy_pipeline", {"pipeline_name": "code_alias_ask"})
        ask = await session.call_tool("code_alias_ask", {"question": RETRY_QUESTION, "top_k": 1})
        bad = await session.call_tool("code_alias_ask", {"question": "retry", "top_k": float("inf")})
        return tools, deploy, undeploy, ask, bad

    tools, deploy, undeploy, ask, bad = mcp_call(served, calls)
    assert sorted(tools) == [
        "code_alias_ask",
        "code_alias_callees",
        "code_alias_callers",
        "code_alias_impact",
        "code_alias_rewrite",
    ]
    for refused in (deploy, undeploy):
        assert refused.isError and "unknown tool" in refused.content[0].text
    assert not served.marker.exists()
    assert not ask.isError
    assert json.loads(ask.content[0].text)["files"][0]["file_path"] == "packages/payments-core/src/retry.ts"
    assert bad.isError and "Traceback" not in bad.content[0].text


#: Questions whose rewrite leans on the first keyword search's hits ("who decides..." names no symbol: its rewrite
#: comes from the definitions BM25 finds): the rewrite tool must name what `ask` used.
AGREEMENT_QUESTIONS = (RETRY_QUESTION, "who decides if a request may pass?", "how are session tokens issued?")


def test_mcp_answers_carry_code_lines_as_structured_content_and_the_rewrite_agrees(served: Served) -> None:
    pytest.importorskip("mcp")

    async def calls(session: Any) -> Any:
        asked = await session.call_tool("code_alias_ask", {"question": RETRY_QUESTION, "top_k": 3})
        pairs = []
        for question in AGREEMENT_QUESTIONS:
            ask = await session.call_tool("code_alias_ask", {"question": question, "top_k": 1, "code_lines": 0})
            rewrite = await session.call_tool("code_alias_rewrite", {"question": question})
            pairs.append((ask, rewrite))
        return asked, pairs

    asked, pairs = mcp_call(served, calls)
    structured = asked.structuredContent
    assert structured is not None and json.loads(asked.content[0].text) == structured  # the same, as text too
    first = structured["symbols"][0]
    assert first["qualified_name"].endswith("withStripeBackoff") and structured["abstained"] is False
    lines = first["code"]["lines"]
    assert 0 < len(lines) <= 6 and first["code"]["language"] == "typescript"
    assert [
        6,
        "export async function withStripeBackoff<T>(call: () => Promise<T>, attempts = 5): Promise<T> {",
    ] in lines
    file = (ACME_REPO / first["file_path"]).read_text(encoding="utf-8").splitlines()
    assert all(file[number - 1] == text for number, text in lines)  # each line at its number in the file
    for ask, rewrite in pairs:
        assert ask.structuredContent["symbols"][0].get("code") is None  # `code_lines: 0` asks for none
        used, alone = ask.structuredContent["rewrite"], rewrite.structuredContent
        assert (alone["symbols"], alone["packages"]) == (used["symbols"], used["packages"]), ask.structuredContent


def test_an_unknown_filter_is_a_422_naming_the_known_values_on_rest_and_mcp(
    served: Served, client: httpx.Client
) -> None:
    """Both answered nothing (200, no symbols) while the rewrite still named symbols of the index."""
    pytest.importorskip("mcp")
    rest = client.post("/code_alias_ask/run", json={"question": RETRY_QUESTION, "repo": "nosuch"})
    assert rest.status_code == 422 and rest.json()["detail"].startswith(
        "repo: no repository 'nosuch' in this index; its repositories: "
    )
    package = client.post("/code_alias_ask/run", json={"question": RETRY_QUESTION, "package": "@acme/payments-cor"})
    assert package.status_code == 422
    assert "(did you mean @acme/payments-core?)" in package.json()["detail"]
    assert "fx-rates" in package.json()["detail"]
    alias = client.post("/code_alias_ask/run", json={"question": RETRY_QUESTION, "package": "payments-core"})
    assert alias.status_code == 200
    assert alias.json()["result"]["files"][0]["file_path"] == "packages/payments-core/src/retry.ts"

    async def calls(session: Any) -> Any:
        return await session.call_tool("code_alias_ask", {"question": RETRY_QUESTION, "repo": "nosuch"})

    answer = mcp_call(served, calls)
    assert answer.isError and "its repositories: " in answer.content[0].text


# ---- who may call --------------------------------------------------------------------------------------------------
def test_without_the_token_every_route_is_401(served: Served) -> None:
    with httpx.Client(base_url=served.url, timeout=30) as anonymous:
        for headers in ({}, {"authorization": "Bearer wrong"}, {"authorization": TOKEN}):
            for method, path in [
                ("GET", "/status"),
                ("GET", "/docs"),
                ("GET", "/openapi.json"),
                ("POST", "/code_alias_ask/run"),
                ("POST", "/code_alias_status/run"),
                ("POST", "/mcp"),
                ("POST", "/deploy_files"),
            ]:
                response = anonymous.request(method, path, json={"question": "retry"}, headers=headers)
                assert response.status_code == 401, (path, headers, response.text)
                assert response.headers["www-authenticate"].startswith("Bearer")
    with pytest.raises(Exception):  # noqa: B017 - the MCP client raises its transport's error
        mcp_call(served, lambda session: session.list_tools(), headers={})


def test_no_cross_origin_requests(client: httpx.Client, served: Served) -> None:
    body = {"question": RETRY_QUESTION}
    foreign = client.post("/code_alias_ask/run", json=body, headers={"origin": "https://evil.example"})
    assert foreign.status_code == 403
    assert "access-control-allow-origin" not in foreign.headers
    preflight = client.options(
        "/code_alias_ask/run",
        headers={"origin": "https://evil.example", "access-control-request-method": "POST"},
    )
    assert preflight.status_code == 403 and "access-control-allow-origin" not in preflight.headers
    assert client.post("/mcp", json={}, headers={"origin": "null"}).status_code == 403
    same_origin = client.post("/code_alias_ask/run", json=body, headers={"origin": served.url})
    assert same_origin.status_code == 200
    assert "access-control-allow-origin" not in same_origin.headers
    # a DNS-rebinding page reaches the port under its own host name
    rebound = client.post("/code_alias_ask/run", json=body, headers={"host": f"evil.example:{served.port}"})
    assert rebound.status_code == 400


# ---- bad requests: a short 4xx, and the connection stays usable ----------------------------------------------------
GOOD = json.dumps({"question": RETRY_QUESTION, "top_k": 1}).encode()
BAD_BODIES = [
    ("/code_alias_ask/run", b'{"question": "\\ud800"}'),
    ("/code_alias_ask/run", b'{"question": "retry \\udfff helper", "top_k": 3}'),
    ("/code_alias_rewrite/run", b'{"question": "\\ud83d"}'),
    ("/code_alias_autocomplete/run", b'{"prefix": "\\ud800"}'),
    ("/code_alias_ask/run", b'{"question": "retry", "top_k": NaN}'),
    ("/code_alias_ask/run", b'{"question": "retry", "top_k": Infinity}'),
    ("/code_alias_ask/run", b'{"question": "retry", "top_k": -Infinity}'),
    ("/code_alias_ask/run", b'{"question": "retry", "top_k": 1e400}'),
    ("/code_alias_ask/run", b'{"question": "retry", "top_k": 1e18}'),
    ("/code_alias_ask/run", b'{"question": "retry", "top_k": 123456789012345678901234567890}'),
    ("/code_alias_autocomplete/run", b'{"prefix": "with", "limit": NaN}'),
    ("/code_alias_ask/run", b'{"question": NaN}'),
    ("/code_alias_ask/run", b'{"prefix": "\\ud800"}'),
    ("/code_alias_ask/run", json.dumps({"question": "q" * 60_000}).encode()),
    ("/code_alias_ask/run", json.dumps({"question": "retry", "top_k": "x" * 60_000}).encode()),
]


@pytest.mark.parametrize(("path", "body"), BAD_BODIES, ids=[f"{p}-{b[:40]!r}" for p, b in BAD_BODIES])
def test_bad_request_is_a_short_4xx_and_the_connection_survives(served: Served, path: str, body: bytes) -> None:
    connection = http.client.HTTPConnection(served.host, served.port, timeout=60)
    headers = {**AUTH, "content-type": "application/json"}
    try:
        connection.request("POST", path, body=body, headers=headers)
        response = connection.getresponse()
        text = response.read()
        assert 400 <= response.status < 500, (response.status, text[:300])
        assert len(text) < 2000, text[:300]  # never an echo of the input
        assert b"Traceback" not in text and b"/tmp" not in text
        connection.request("POST", "/code_alias_ask/run", body=GOOD, headers=headers)  # same connection
        again = connection.getresponse()
        assert again.status == 200, again.read()[:300]
        assert json.loads(again.read())["result"]["files"]
    finally:
        connection.close()


DEEP_ASK = b'{"question": ' + b"[" * 30_000 + b"]" * 30_000 + b"}"
DEEP_MCP = (
    b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "code_alias_ask", "arguments": '
    b'{"question": ' + b"[" * 30_000 + b"]" * 30_000 + b"}}}"
)
MCP_HEADERS = {"accept": "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18"}


@pytest.mark.parametrize(
    ("path", "body", "extra"),
    [
        ("/code_alias_ask/run", DEEP_ASK, {}),
        ("/code_alias_rewrite/run", b"{" * 20_000 + b"}" * 20_000, {}),
        ("/mcp", DEEP_MCP, MCP_HEADERS),
        ("/mcp", b"[" * 1_000 + b"]" * 1_000, MCP_HEADERS),  # under the recursion limit: still refused
    ],
    ids=["ask", "rewrite", "mcp-tools-call", "mcp-1000"],
)
def test_deep_json_is_a_4xx_and_the_connection_survives(
    served: Served, path: str, body: bytes, extra: dict[str, str]
) -> None:
    """Thousands of nested brackets (under the body limit) made `json.loads` raise RecursionError: MCP answered 500."""
    assert len(body) < 64 * 1024
    connection = http.client.HTTPConnection(served.host, served.port, timeout=60)
    headers = {**AUTH, "content-type": "application/json"}
    try:
        connection.request("POST", path, body=body, headers={**headers, **extra})
        response = connection.getresponse()
        text = response.read()
        assert 400 <= response.status < 500, (response.status, text[:300])
        assert b"nests deeper than 64 levels" in text and len(text) < 500
        if path == "/mcp":  # what an MCP client understands: a JSON-RPC parse error
            assert json.loads(text)["error"]["code"] == -32700
        connection.request("POST", "/code_alias_ask/run", body=GOOD, headers=headers)  # same connection
        again = connection.getresponse()
        assert again.status == 200 and json.loads(again.read())["result"]["files"]
    finally:
        connection.close()
    assert "RecursionError" not in served.log_tail()


def test_too_deep_counts_brackets_outside_strings() -> None:
    from haystack_integrations.components.code_alias.serving.json_depth import too_deep

    assert not too_deep(json.dumps({"q": "[" * 10_000 + "{" * 10_000}).encode())  # inside a string: no depth
    assert not too_deep(json.dumps({"q": '\\"[[[' * 100}).encode())  # escaped quotes keep the string open
    assert not too_deep(json.dumps([[1, 2]] * 5_000).encode())  # many brackets, 2 deep
    assert not too_deep(b"[" * 64 + b"]" * 64) and too_deep(b"[" * 65 + b"]" * 65)
    assert too_deep(b'{"a": ' * 65 + b"1" + b"}" * 65)
    assert too_deep(b'"unterminated [' + b"[" * 100)  # not JSON: measured conservatively


def test_oversized_bodies_are_413(served: Served, client: httpx.Client) -> None:
    big = json.dumps({"question": "x" * 100_000}).encode()
    assert (
        client.post("/code_alias_ask/run", content=big, headers={"content-type": "application/json"}).status_code == 413
    )

    def chunks() -> Iterator[bytes]:  # no content-length: the limit counts what arrives
        yield b'{"question": "'
        for _ in range(100):
            yield b"y" * 1000
        yield b'"}'

    chunked = client.post("/code_alias_ask/run", content=chunks(), headers={"content-type": "application/json"})
    assert chunked.status_code == 413
    assert client.post("/mcp", content=big, headers={"content-type": "application/json"}).status_code == 413
    assert client.post("/code_alias_status/run", json={}).status_code == 200


def valid_status_call(route: str, content_type: str, body: bytes) -> bool:
    """
    `code_alias_status` takes no arguments: any JSON object is a valid call to it (extra keys are ignored); the
    page's `/page/ask` answers any string question of at most 2,000 characters.
    """
    if route not in ("/code_alias_status/run", "/page/ask") or content_type != "application/json":
        return False
    try:
        value = json.loads(body)
    except ValueError:
        return False
    if route == "/page/ask":
        return isinstance(value, dict) and set(value) == {"question"} and isinstance(value["question"], str)
    return isinstance(value, dict)


def test_fuzz_malformed_bodies_get_only_4xx(served: Served) -> None:
    rng = random.Random(12)
    routes = [f"/{name}/run" for name in NAMES] + ["/status", "/mcp", "/deploy_files", "/undeploy/x", "/docs"]
    routes += ["/v1/chat/completions", "/v1/models", "/page/ask", "/page/info", "/"]  # chat and the search page
    fixed: list[bytes] = [
        b"",
        b"{",
        b"null",
        b"[]",
        b"42",
        b'"question"',
        b"{not json",
        b"\xff\xfe\x00garbage",
        b'{"question": {"$gt": ""}}',
        b'{"question": ["a", "b"], "top_k": [1]}',
        b'{"question": "retry", "mode": "llm"}',
        b'{"question": "retry", "mode": "\\u0000"}',
        b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "deploy_pipeline"}}',
        b"[" * 5000 + b"]" * 5000,
        b'{"model": "code_alias_ask", "messages": ' + b"[" * 5000 + b"]" * 5000 + b"}",
        b'{"model": "code_alias_ask", "messages": [{"role": "user", "content": "\\ud800"}]}',
        b'{"model": "code_alias_ask", "messages": [{"role": "user", "content": [{"type": "text", "text": null}]}]}',
        b'{"model": "code_alias_ask", "messages": [{"role": "user", "content": "x"}], "stream": 1}',
        b'{"a":' * 3000 + b"1" + b"}" * 3000,
        json.dumps({"question": "\u202e" * 2000}).encode(),
        b"x" * 70_000,
    ]
    randoms = [bytes(rng.randrange(256) for _ in range(rng.randrange(1, 300))) for _ in range(15)]
    content_types = [
        "application/json",
        "text/plain",
        "multipart/form-data; boundary=x",
        "application/x-www-form-urlencoded",
    ]
    failures: list[tuple[str, str, int, bytes]] = []
    with httpx.Client(base_url=served.url, headers=AUTH, timeout=60) as client:
        for route in routes:
            for body in fixed + randoms:
                content_type = rng.choice(content_types)
                response = client.post(route, content=body, headers={"content-type": content_type})
                ok = 400 <= response.status_code < 500 or (
                    response.status_code == 200 and (route == "/mcp" or valid_status_call(route, content_type, body))
                )
                if (
                    not ok
                    or b"Traceback" in response.content
                    or (response.status_code != 200 and len(response.content) > 5000)
                ):
                    failures.append((route, content_type, response.status_code, response.content[:200]))
    assert not failures, failures[:5]
    with httpx.Client(base_url=served.url, headers=AUTH, timeout=60) as client:
        assert (
            client.post("/code_alias_ask/run", content=GOOD, headers={"content-type": "application/json"}).status_code
            == 200
        )


# ---- in process: settings, the 503, the Hayhooks guard --------------------------------------------------------------
def test_server_settings_from_env() -> None:
    from haystack_integrations.components.code_alias.serving.server import ServerSettings

    default = ServerSettings.from_env({})
    assert default.host == "127.0.0.1" and default.loopback and default.token is None
    assert default.cors_origins == () and default.max_body_bytes == 64 * 1024
    assert "localhost" in default.host_patterns() and "*" not in default.host_patterns()
    default.check_exposure()
    remote = ServerSettings.from_env({"CODE_ALIAS_HOST": "0.0.0.0"})
    assert remote.host_patterns() == ["*"]
    with pytest.raises(ValueError, match="CODE_ALIAS_API_TOKEN"):
        remote.check_exposure()
    ServerSettings.from_env({"CODE_ALIAS_HOST": "0.0.0.0", "CODE_ALIAS_API_TOKEN": "t"}).check_exposure()
    ServerSettings.from_env({"CODE_ALIAS_HOST": "0.0.0.0"}, allow_remote=True).check_exposure()
    configured = ServerSettings.from_env(
        {"CODE_ALIAS_CORS_ORIGINS": "https://a.example/, https://b.example", "CODE_ALIAS_MAX_BODY_BYTES": "2048"}
    )
    assert configured.cors_origins == ("https://a.example", "https://b.example")
    assert configured.max_body_bytes == 2048
    assert ServerSettings.from_env({"CODE_ALIAS_KEEP_ALIVE_SECONDS": "30"}).keep_alive == 30
    for bad in (
        {"CODE_ALIAS_CORS_ORIGINS": "*"},
        {"CODE_ALIAS_PORT": "http"},
        {"CODE_ALIAS_MAX_BODY_BYTES": "10"},
        {"CODE_ALIAS_KEEP_ALIVE_SECONDS": "0"},
    ):
        with pytest.raises(ValueError, match="CODE_ALIAS_"):
            ServerSettings.from_env(bad)


def test_keep_alive_outlasts_the_common_clients_idle_expiry() -> None:
    """
    A client must give an idle connection up before the server closes it: when both time out together (uvicorn's
    default 5 s, httpx's and the openai client's 5 s) a request sent as the server closes fails with a read error.
    """
    import asyncio

    import aiohttp
    from openai._constants import DEFAULT_CONNECTION_LIMITS

    from haystack_integrations.components.code_alias.serving.server import ServerSettings

    async def aiohttp_expiry() -> float:
        connector = aiohttp.TCPConnector()
        try:
            return float(connector._keepalive_timeout)  # type: ignore[attr-defined]  # its default, not public
        finally:
            await connector.close()

    expiries = {
        "httpx": httpx.Limits().keepalive_expiry,
        "openai": DEFAULT_CONNECTION_LIMITS.keepalive_expiry,
        "aiohttp": asyncio.run(aiohttp_expiry()),
        "go net/http": 90.0,  # http.DefaultTransport's IdleConnTimeout
        "firefox": 115.0,  # network.http.keep-alive.timeout
    }
    keep_alive = ServerSettings.from_env({}).keep_alive
    for client, expiry in expiries.items():
        assert expiry is not None and keep_alive > expiry, (client, expiry, keep_alive)


def test_an_idle_connection_is_still_open_after_the_old_five_seconds(served: Served) -> None:
    """The same connection answers after 6 s idle (uvicorn's 5 s default closed it: a client racing that failed)."""
    connection = http.client.HTTPConnection(served.host, served.port, timeout=60)
    headers = {**AUTH, "content-type": "application/json"}
    try:
        connection.request("POST", "/code_alias_autocomplete/run", body=b'{"prefix": "with"}', headers=headers)
        first = connection.getresponse()
        assert first.status == 200 and first.read()
        opened = connection.sock
        time.sleep(6.0)  # the idle gap under test (not a wait for something to happen)
        connection.request("POST", "/code_alias_autocomplete/run", body=b'{"prefix": "with"}', headers=headers)
        again = connection.getresponse()
        assert again.status == 200 and again.read()
        assert connection.sock is opened  # reused, not reconnected
    finally:
        connection.close()


def test_cors_only_for_configured_origins(tmp_path: Path) -> None:
    from starlette.testclient import TestClient

    from haystack_integrations.components.code_alias.serving.server import ServerSettings, build_app
    from haystack_integrations.components.code_alias.serving.service import ServiceSettings

    app = build_app(
        ServerSettings(cors_origins=("https://app.example",)), ServiceSettings(index_dir=tmp_path, lexical=True)
    )
    with TestClient(app, base_url="http://127.0.0.1:1416") as browser:
        allowed = browser.post("/code_alias_status/run", json={}, headers={"origin": "https://app.example"})
        assert allowed.status_code == 200 and allowed.headers["access-control-allow-origin"] == "https://app.example"
        preflight = browser.options(
            "/code_alias_ask/run",
            headers={"origin": "https://app.example", "access-control-request-method": "POST"},
        )
        assert preflight.status_code == 200
        other = browser.post("/code_alias_status/run", json={}, headers={"origin": "https://evil.example"})
        assert other.status_code == 403 and "access-control-allow-origin" not in other.headers
        missing = browser.post("/code_alias_ask/run", json={"question": "retry"})
        assert missing.status_code == 404 and "/tmp" not in missing.text and str(tmp_path) not in missing.text


def test_backend_down_while_serving_is_a_503(tmp_path: Path) -> None:
    from fastapi import HTTPException
    from haystack.core.errors import PipelineRuntimeError

    from haystack_integrations.components.code_alias.elasticsearch.errors import CodeAliasBackendError
    from haystack_integrations.components.code_alias.serving.service import CodeAliasService, ServiceSettings

    class DownSearch:
        llm = False

        def ask(self, *args: Any, **kwargs: Any) -> Any:
            try:
                raise CodeAliasBackendError("Elasticsearch at http://localhost:9200 is unreachable (refused)")
            except CodeAliasBackendError as error:
                raise PipelineRuntimeError("bm25_retriever", type(None), "failed") from error

    service = CodeAliasService(ServiceSettings(index_dir=tmp_path, backend="elasticsearch"))
    service._searches["dictionary"] = DownSearch()  # type: ignore[assignment]
    with pytest.raises(HTTPException) as raised:
        service.ask("where is the retry helper?")
    assert raised.value.status_code == 503
    assert "unreachable" in str(raised.value.detail) and "backend is unavailable" in str(raised.value.detail)


def test_elasticsearch_going_down_while_serving_is_a_503(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A loaded Elasticsearch index whose server stops: the next ask is a 503 that says so (noida-db stand-in)."""
    pytest.importorskip("elasticsearch")
    if not (shutil.which("noida-db") or (ROOT / ".venv" / "bin" / "noida-db").exists()):
        pytest.skip("noida-db (the Elasticsearch-protocol stand-in) is not installed")
    from fastapi import HTTPException

    from haystack_integrations.components.code_alias.app.search import CodeSearch
    from haystack_integrations.components.code_alias.serving.service import CodeAliasService, ServiceSettings

    noida = {**os.environ, "NOIDA_STATE_DIR": str(tmp_path / "noida")}
    started = subprocess.run([str(ROOT / ".ci" / "start-noida.sh")], env=noida, capture_output=True, text=True)
    if started.returncode != 0:
        pytest.skip(f"noida-db did not start: {started.stderr[-300:]}")
    try:
        monkeypatch.setenv("ELASTICSEARCH_URL", started.stdout.strip())
        monkeypatch.setenv("ELASTICSEARCH_INDEX", "code-alias-serving-down")
        CodeSearch(tmp_path / "index", backend="elasticsearch", lexical=True).index(ACME_REPO)
        service = CodeAliasService(ServiceSettings(index_dir=tmp_path / "index", backend="elasticsearch", lexical=True))
        assert service.ask(RETRY_QUESTION, top_k=1)["files"][0]["file_path"] == "packages/payments-core/src/retry.ts"
    finally:
        subprocess.run([str(ROOT / ".ci" / "start-noida.sh"), "stop"], env=noida, capture_output=True)
    with pytest.raises(HTTPException) as raised:
        service.ask(RETRY_QUESTION, top_k=1)
    assert raised.value.status_code == 503
    assert "unreachable" in str(raised.value.detail)
    assert service.status()["ready"] is False


def test_hayhooks_wrappers_refuse_runtime_deployment(monkeypatch: pytest.MonkeyPatch) -> None:
    from hayhooks.settings import settings

    from haystack_integrations.components.code_alias.serving.hayhooks_wrappers import require_fixed_deployments

    monkeypatch.delenv("CODE_ALIAS_ALLOW_RUNTIME_DEPLOY", raising=False)
    monkeypatch.setattr(settings, "durable_mode", False)
    with pytest.raises(RuntimeError, match="code-alias serve"):
        require_fixed_deployments()
    monkeypatch.setattr(settings, "durable_mode", True)
    require_fixed_deployments()
    monkeypatch.setattr(settings, "durable_mode", False)
    monkeypatch.setenv("CODE_ALIAS_ALLOW_RUNTIME_DEPLOY", "1")
    require_fixed_deployments()


def test_the_push_webhook_is_off_without_a_secret(served: Served) -> None:
    """No CODE_ALIAS_WEBHOOK_SECRET: the webhook (which needs no bearer token) refuses every call, and says why."""
    with httpx.Client(base_url=served.url, timeout=30) as anonymous:
        response = anonymous.post("/code_alias_sync/run", json={"paths": ["a.py"]}, headers={"x-gitlab-token": "x"})
    assert response.status_code == 403 and "CODE_ALIAS_WEBHOOK_SECRET" in response.text
