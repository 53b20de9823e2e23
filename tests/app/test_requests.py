"""The application's requests (`app.requests`): every rule written once, and the same words from every way in.

The rules are checked on the models themselves; then one bad request of each kind goes through the CLI, REST and MCP
of `code-alias serve` (a real server in this process) and the Hayhooks wrappers' own request model (what `hayhooks
run` validates a body with; `test_hayhooks.py` sends bad bodies to a real `hayhooks run`), and each must say exactly
what the model says.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from haystack_integrations.components.code_alias import cli
from haystack_integrations.components.code_alias.app.requests import (
    LEXICAL_WITH_LLM,
    AskRequest,
    CompleteRequest,
    GraphRequest,
    RequestError,
    RewriteRequest,
    lexical_with_llm,
    question_text,
)
from tests.support.servers import ThreadServer, rest_message


def refusal(model: type[Any], values: dict[str, Any], *, trusted: bool = False) -> RequestError:
    with pytest.raises(RequestError) as raised:
        model.parse(values, trusted=trusted)
    return raised.value


# ---- the rules ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("values", "status", "message"),
    [
        ({"question": ""}, 422, "question is empty: ask something"),
        ({"question": " \n\t"}, 422, "question is empty: ask something"),
        ({"question": "x" * 2001}, 422, "question is 2,001 characters; the limit is 2,000"),
        ({"question": 7}, 422, "question must be a string, got int"),
        ({"question": "\ud800"}, 422, "question is not valid Unicode text: a lone surrogate at character 0"),
        ({}, 422, "question is required"),
        ({"question": "q", "top_k": 0}, 422, "top_k must be from 1 to 100, got 0"),
        ({"question": "q", "top_k": 101}, 422, "top_k must be from 1 to 100, got 101"),
        ({"question": "q", "top_k": True}, 422, "top_k must be an integer from 1 to 100, got bool"),
        ({"question": "q", "mode": "LLM"}, 422, "mode must be 'dictionary' or 'llm', got 'LLM'"),
        ({"question": "q", "lexical": "yes"}, 422, "lexical must be true or false, got str"),
        ({"question": "q", "use_rewrite": 0}, 422, "use_rewrite must be true or false, got int"),
        ({"question": "q", "code_lines": 41}, 422, "code_lines must be from 0 to 40, got 41"),
        ({"question": "q", "repo": []}, 422, "repo: a name or a non-empty list of names, got an empty list"),
        ({"question": "q", "package": ["ok", " "]}, 422, "package: each name must be a non-empty string"),
        ({"question": "q", "repo": ["a"] * 51}, 422, "repo: at most 50 names, got 51"),
        ({"question": "q", "repo": 3}, 422, "repo must be a string or a list of strings, got int"),
        ({"question": "q", "shoe_size": 44}, 422, "unknown field 'shoe_size'"),
        ({"question": "q", "lexical": True, "mode": "llm"}, 400, LEXICAL_WITH_LLM),
    ],
)
def test_an_ask_request_that_breaks_a_rule_says_which(values: dict[str, Any], status: int, message: str) -> None:
    refused = refusal(AskRequest, values)
    assert refused.status == status
    assert refused.message.startswith(message), refused.message
    assert isinstance(refused, ValueError)  # callers that caught the old ValueErrors still do


def test_a_good_request_keeps_what_was_asked() -> None:
    request = AskRequest.parse({"question": "  where is {retry}?  ", "repo": ["acme/pay"], "code_lines": 0})
    assert request.question == "  where is {retry}?  " and request.text == "where is {retry}?"
    assert (request.top_k, request.mode, request.lexical, request.use_rewrite) == (10, "dictionary", False, True)
    assert request.body() == {"question": "  where is {retry}?  ", "repo": ["acme/pay"], "code_lines": 0}
    assert AskRequest.parse({"question": "q", "lexical": True}).lexical is True  # lexical with the dictionary: fine


def test_trusted_callers_pass_the_servers_ceilings_but_never_the_rules() -> None:
    """The benchmark asks with whole issue texts: no length or top-k ceiling, every other rule the same."""
    request = AskRequest.parse({"question": "a long issue\n" * 400, "top_k": 500}, trusted=True)
    assert len(request.question) > 2000 and request.top_k == 500
    assert refusal(AskRequest, {"question": " "}, trusted=True).message.startswith("question is empty")
    assert refusal(AskRequest, {"question": "q", "top_k": 0}, trusted=True).message.startswith("top_k must be from")
    assert refusal(CompleteRequest, {"prefix": "w", "limit": 51}, trusted=True).message.startswith("limit must be")


def test_rewrite_and_complete_requests_share_the_rules() -> None:
    assert refusal(RewriteRequest, {"question": "", "mode": "llm"}).message.startswith("question is empty")
    assert refusal(RewriteRequest, {"question": "q", "mode": None}).message.startswith("mode must be")
    assert refusal(CompleteRequest, {"prefix": "  "}).message == (
        "prefix is empty: type the start of a symbol or package name"
    )
    assert refusal(CompleteRequest, {"prefix": "x" * 201}).message == "prefix is 201 characters; the limit is 200"
    assert CompleteRequest.parse({"prefix": " with "}).text == "with"
    assert question_text("  a chat turn ") == "a chat turn"


def test_the_schema_states_the_limits_the_validation_keeps() -> None:
    """The OpenAPI page and the MCP tool descriptions show these (`WithJsonSchema`)."""
    properties = AskRequest.model_json_schema()["properties"]
    assert (properties["question"]["minLength"], properties["question"]["maxLength"]) == (1, 2000)
    assert (properties["top_k"]["minimum"], properties["top_k"]["maximum"], properties["top_k"]["default"]) == (
        1,
        100,
        10,
    )
    assert properties["mode"]["enum"] == ["dictionary", "llm"]
    assert (properties["code_lines"]["minimum"], properties["code_lines"]["maximum"]) == (0, 40)
    assert properties["repo"]["anyOf"][1]["maxItems"] == 50


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"name": "  "}, "name is empty: give a definition's name, e.g. withStripeBackoff or Session.request"),
        ({"name": ["total"]}, "name must be a string, got list"),
        ({"name": "total", "limit": 0}, "limit must be from 1 to 500, got 0"),
        ({"name": "total", "limit": 501}, "limit must be from 1 to 500, got 501"),
        ({"name": "total", "depth": 11}, "depth must be from 1 to 10, got 11"),
        ({"name": "total", "depth": True}, "depth must be an integer from 1 to 10, got bool"),
        ({"name": "total", "repo": ["a", "b"]}, "repo must be one repository's name (a string), got list"),
        ({"name": "total", "include_ambiguous": "yes"}, "include_ambiguous must be true or false, got str"),
        ({"name": "total", "file_path": ""}, "file_path is empty: give a path relative to the repository root"),
    ],
)
def test_a_graph_request_that_breaks_a_rule_says_which(values: dict[str, Any], message: str) -> None:
    refused = refusal(GraphRequest, values)
    assert (refused.status, refused.message) == (422, message)


def test_the_cli_refuses_a_bad_graph_request_in_the_models_words(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for argv, values in (
        (["callers", "total", "--limit", "0"], {"name": "total", "limit": 0}),
        (["impact", "total", "--depth", "11"], {"name": "total", "depth": 11}),
    ):
        expected = refusal(GraphRequest, values).message
        assert cli.main(["--index-dir", str(tmp_path), *argv, "--no-daemon"]) == cli.EXIT_ERROR
        assert capsys.readouterr().err.strip().splitlines()[-1] == f"code-alias: error: {expected}"


def test_a_good_graph_request_keeps_what_was_asked() -> None:
    request = GraphRequest.parse({"name": " Tax.apply ", "depth": 2, "file_path": " shop/pricing.py", "repo": "shop"})
    assert (request.text, request.path, request.repo, request.depth, request.limit) == (
        "Tax.apply",
        "shop/pricing.py",
        "shop",
        2,
        50,
    )


def test_lexical_with_llm_is_one_rule_for_requests_and_settings() -> None:
    from haystack_integrations.components.code_alias.app.search import CodeSearch
    from haystack_integrations.components.code_alias.serving.service import ServiceSettings

    with pytest.raises(RequestError, match="drop mode 'llm' or lexical"):
        lexical_with_llm(True, True)
    lexical_with_llm(True, False)
    with pytest.raises(ValueError, match=LEXICAL_WITH_LLM):
        CodeSearch("unused-index", llm=True, lexical=True)
    with pytest.raises(ValueError, match=f"CODE_ALIAS_LEXICAL and CODE_ALIAS_LLM_BASE_URL/_GGUF: {LEXICAL_WITH_LLM}"):
        ServiceSettings.from_env({"CODE_ALIAS_LEXICAL": "1", "CODE_ALIAS_LLM_BASE_URL": "http://127.0.0.1:9/v1"})


# ---- the same words from every way in ------------------------------------------------------------------------------
#: One bad request of each kind: (the request, the CLI's arguments for it).
BAD_REQUESTS = {
    "empty question": ({"question": "   "}, ["ask", "   "]),
    "lexical with llm": ({"question": "retry", "lexical": True, "mode": "llm"}, ["ask", "retry", "--lexical", "--llm"]),
    "top_k out of range": ({"question": "retry", "top_k": 0}, ["ask", "retry", "--top-k", "0"]),
    "top_k over the ceiling": ({"question": "retry", "top_k": 101}, ["ask", "retry", "--top-k", "101"]),
    "code_lines out of range": ({"question": "retry", "code_lines": 41}, ["ask", "retry", "--code", "41"]),
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ThreadServer]:
    """`code-alias serve`'s app (REST and MCP) on an empty index folder: a request's rules come before the index."""
    from haystack_integrations.components.code_alias.serving.server import ServerSettings, build_app
    from haystack_integrations.components.code_alias.serving.service import ServiceSettings

    index_dir = tmp_path_factory.mktemp("no-index")
    app = build_app(ServerSettings(mcp=True), ServiceSettings(index_dir=index_dir))
    served = ThreadServer(app).start()
    yield served
    served.stop()


def _mcp_messages(server: ThreadServer, calls: list[dict[str, Any]]) -> list[Any]:
    import anyio
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async def main() -> list[Any]:
        async with (
            httpx.AsyncClient(timeout=60) as http,
            streamable_http_client(server.url + "/mcp", http_client=http) as streams,
            ClientSession(streams[0], streams[1]) as session,
        ):
            await session.initialize()
            return [await session.call_tool("code_alias_ask", arguments) for arguments in calls]

    return anyio.run(main)


def _hayhooks_message(values: dict[str, Any]) -> tuple[int, str]:
    """What `hayhooks run` answers: its request model of the wrapper's `run_api` validates, then `run_api` runs."""
    import docstring_parser
    from fastapi import HTTPException
    from hayhooks.server.pipelines.models import create_request_model_from_callable
    from pydantic import ValidationError

    from haystack_integrations.components.code_alias.serving.hayhooks_wrappers import AskWrapper
    from haystack_integrations.components.code_alias.serving.service import CodeAliasService, ServiceSettings

    wrapper = AskWrapper()
    wrapper.service = CodeAliasService(ServiceSettings(index_dir=Path("no-index-here")))
    docstring = docstring_parser.parse(wrapper.run_api.__doc__ or "")
    model = create_request_model_from_callable(wrapper.run_api, "code_alias_askRun", docstring)
    try:
        body = model.model_validate(values)
    except ValidationError as error:  # FastAPI's 422: each problem's `msg`
        return 422, "; ".join(problem["msg"] for problem in error.errors())
    with pytest.raises(HTTPException) as raised:
        wrapper.run_api(**body.model_dump())
    return raised.value.status_code, str(raised.value.detail)


def test_cli_rest_mcp_and_hayhooks_refuse_a_bad_request_in_the_same_words(
    server: ThreadServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("mcp")
    mcp = _mcp_messages(server, [values for values, _ in BAD_REQUESTS.values()])
    for (name, (values, argv)), tool in zip(BAD_REQUESTS.items(), mcp, strict=True):
        expected = refusal(AskRequest, values)

        assert cli.main(["--index-dir", str(tmp_path), *argv, "--no-daemon"]) == cli.EXIT_ERROR, name
        assert capsys.readouterr().err.strip().splitlines()[-1] == f"code-alias: error: {expected.message}", name

        response = httpx.post(server.url + "/code_alias_ask/run", json=values, timeout=60)
        assert (response.status_code, rest_message(response)) == (expected.status, expected.message), name
        assert "Traceback" not in response.text

        assert tool.isError, name
        assert tool.content[0].text == expected.message, name

        assert _hayhooks_message(values) == (expected.status, expected.message), name
