"""The reference graph on every surface (issue 43): REST routes, MCP tools (the official client), the ask answer of a
usage question, the chat's "who calls it?" follow-up, and the search page's callers / callees link (a real browser)."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from haystack_integrations.components.code_alias.app.requests import GraphRequest, RequestError
from tests.support.repos import FIXTURES, ROOT
from tests.support.servers import ThreadServer, rest_message

GRAPH_FIXTURE = FIXTURES / "graph" / "python"
TOKEN = "graph-token-43"
AUTH = {"authorization": f"Bearer {TOKEN}"}
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver") or shutil.which("chromium-driver")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ThreadServer]:
    from haystack_integrations.components.code_alias.app.search import CodeSearch
    from haystack_integrations.components.code_alias.serving.server import ServerSettings, build_app
    from haystack_integrations.components.code_alias.serving.service import ServiceSettings

    index_dir = tmp_path_factory.mktemp("graph-index")
    CodeSearch(index_dir, lexical=True).index(GRAPH_FIXTURE)
    app = build_app(ServerSettings(token=TOKEN, mcp=True), ServiceSettings(index_dir=index_dir, lexical=True))
    served = ThreadServer(app).start()
    yield served
    served.stop()


def _run(server: ThreadServer, route: str, body: dict[str, Any], headers: dict[str, str] = AUTH) -> httpx.Response:
    return httpx.post(f"{server.url}/{route}/run", json=body, headers=headers, timeout=60)


def test_callers_callees_and_impact_routes(server: ThreadServer) -> None:
    callers = _run(server, "code_alias_callers", {"name": "place_order"})
    assert callers.status_code == 200, callers.text
    [target] = callers.json()["result"]["targets"]
    assert (target["qualified_name"], target["file_path"], target["start_line"]) == (
        "shop.orders.place_order",
        "shop/orders.py",
        21,
    )
    [site] = target["callers"]
    assert (site["file_path"], site["line"], site["caller"]["qualified_name"]) == ("app.py", 8, "app.main")
    callees = _run(server, "code_alias_callees", {"name": "Order.taxed"}).json()["result"]
    assert [s["callee"]["qualified_name"] for s in callees["targets"][0]["callees"]] == [
        "shop.pricing.Tax",
        "shop.pricing.Tax.apply",
        "shop.orders.Order.price",
    ]
    impact = _run(server, "code_alias_impact", {"name": "shop.pricing.Tax.apply", "depth": 3}).json()["result"]
    assert [row["caller"]["qualified_name"] for row in impact["targets"][0]["tests"]] == [
        "tests.orders_check.test_confirm"
    ]


@pytest.mark.parametrize(
    ("route", "body", "status", "says"),
    [
        ("code_alias_callers", {"name": "nowhere_at_all"}, 404, "no definition named 'nowhere_at_all'"),
        ("code_alias_callers", {"name": ""}, 422, "name"),
        ("code_alias_callers", {"name": "total", "limit": 0}, 422, "limit"),
        ("code_alias_impact", {"name": "total", "depth": 11}, 422, "depth"),
        ("code_alias_impact", {"name": "total", "include_ambiguous": "yes"}, 422, "include_ambiguous"),
        ("code_alias_callees", {"name": ["total"]}, 422, "name"),
    ],
)
def test_bad_graph_requests_get_a_clear_4xx(
    server: ThreadServer, route: str, body: dict[str, Any], status: int, says: str
) -> None:
    answer = _run(server, route, body)
    assert answer.status_code == status, answer.text
    assert says in answer.text and "Traceback" not in answer.text
    if status == 422:  # the request model's own words (`app.requests.GraphRequest`), as every way in says them
        with pytest.raises(RequestError) as refused:
            GraphRequest.parse(body)
        assert rest_message(answer) == refused.value.message
    assert _run(server, route, {"name": "total"}, headers={}).status_code == 401


def test_a_usage_question_gets_the_graphs_answer_beside_the_search(server: ThreadServer) -> None:
    answer = _run(server, "code_alias_ask", {"question": "who calls place_order?", "top_k": 5})
    assert answer.status_code == 200, answer.text
    result = answer.json()["result"]
    assert result["rewrite"]["intent"] == "usage" and result["symbols"]
    usage = result["usage"]
    assert usage["kind"] == "callers" and usage["targets"][0]["qualified_name"] == "shop.orders.place_order"
    assert [(s["file_path"], s["line"]) for s in usage["targets"][0]["callers"]] == [("app.py", 8)]
    plain = _run(server, "code_alias_ask", {"question": "where is the order placed?", "top_k": 5}).json()["result"]
    assert "usage" not in plain


def test_mcp_lists_and_calls_the_graph_tools_with_the_official_client(server: ThreadServer) -> None:
    pytest.importorskip("mcp")
    import anyio
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async def main() -> Any:
        async with (
            httpx.AsyncClient(headers=AUTH, timeout=60) as http,
            streamable_http_client(server.url + "/mcp", http_client=http) as streams,
            ClientSession(streams[0], streams[1]) as session,
        ):
            await session.initialize()
            tools = {tool.name: tool for tool in (await session.list_tools()).tools}
            callers = await session.call_tool("code_alias_callers", {"name": "total"})
            impact = await session.call_tool("code_alias_impact", {"name": "Tax.apply", "depth": 2})
            missing = await session.call_tool("code_alias_callees", {"name": "nowhere_at_all"})
            return tools, callers, impact, missing

    tools, callers, impact, missing = anyio.run(main)
    assert {"code_alias_callers", "code_alias_callees", "code_alias_impact"} <= set(tools)
    assert "ambiguous" in tools["code_alias_callers"].description
    assert tools["code_alias_impact"].inputSchema["properties"]["depth"]["maximum"] == 10
    assert not callers.isError
    sites = json.loads(callers.content[0].text)["targets"][0]["callers"]
    assert {(s["file_path"], s["line"]) for s in sites} == {("shop/orders.py", 13), ("app.py", 9)}
    assert json.loads(impact.content[0].text)["targets"][0]["total"]["reached"] == 3
    assert missing.isError and "no definition named" in missing.content[0].text


def test_the_chat_answers_who_calls_it_about_the_previous_answers_symbol(server: ThreadServer) -> None:
    openai = pytest.importorskip("openai")
    client = openai.OpenAI(base_url=server.url + "/v1", api_key=TOKEN, max_retries=0, timeout=60)
    first = client.chat.completions.create(
        model="code_alias_ask", messages=[{"role": "user", "content": "where is place_order defined?"}]
    )
    previous = first.choices[0].message.content or ""
    assert "place_order" in previous
    follow = client.chat.completions.create(
        model="code_alias_ask",
        messages=[
            {"role": "user", "content": "where is place_order defined?"},
            {"role": "assistant", "content": previous},
            {"role": "user", "content": "who calls it?"},
        ],
    )
    text = follow.choices[0].message.content or ""
    assert "Who calls `shop.orders.place_order`" in text and "`app.py:8` in `app.main`" in text
    meta = (follow.model_extra or {})["code_alias"]  # the usage entry of the chat's follow-ups answered
    assert meta["mode"] == "graph" and meta["follow_up"] == {"kind": "usage", "subject": "place_order"}, meta
    impact = client.chat.completions.create(
        model="code_alias_ask", messages=[{"role": "user", "content": "what breaks if I change Tax.apply?"}]
    )
    reply = impact.choices[0].message.content or ""
    assert "`tests/orders_check.py:6` in `tests.orders_check.test_confirm` (test)" in reply


def test_the_page_graph_route(server: ThreadServer) -> None:
    body = {"name": "total", "file_path": "shop/pricing.py"}
    answer = httpx.post(server.url + "/page/graph", headers=AUTH, json=body)
    assert answer.status_code == 200, answer.text
    data = answer.json()
    assert data["callers"]["targets"][0]["total"]["callers"] == 2
    assert [s["callee"]["qualified_name"] for s in data["callees"]["targets"][0]["callees"]] == ["shop.pricing._round"]
    assert httpx.post(server.url + "/page/graph", json={"name": "total"}).status_code == 401
    bad = httpx.post(server.url + "/page/graph", headers=AUTH, json={"name": "total", "evil": 1})
    assert bad.status_code == 422 and "unknown field" in bad.text
    assert httpx.get(server.url + "/page/graph.js").status_code == 200


def test_a_symbols_callers_are_one_click_away_on_the_page(server: ThreadServer, tmp_path: Path) -> None:
    if CHROMIUM is None or CHROMEDRIVER is None:
        pytest.skip("no chromium/chromedriver here (Debian: apt-get install chromium chromium-driver)")
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ready
    from selenium.webdriver.support.ui import WebDriverWait

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run"):
        options.add_argument(flag)
    browser = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
    try:
        wait = WebDriverWait(browser, 30)
        browser.get(server.url + f"/#token={TOKEN}")
        box = wait.until(ready.element_to_be_clickable((By.ID, "q")))
        box.send_keys("place_order\n")
        wait.until(ready.visibility_of_element_located((By.CSS_SELECTOR, "#symbols .symbol details.graph")))
        first = browser.find_elements(By.CSS_SELECTOR, "#symbols .symbol")[0]
        name = first.find_element(By.CSS_SELECTOR, ".qualified")  # the name less the module its path says
        assert (name.text, name.get_attribute("title")) == ("place_order", "shop.orders.place_order")
        first.find_element(By.CSS_SELECTOR, "details.graph summary").click()
        wait.until(lambda _: first.find_elements(By.CSS_SELECTOR, ".graph-callers li code"))
        callers = [node.text for node in first.find_elements(By.CSS_SELECTOR, ".graph-callers li")]
        assert callers == ["app.py:8 app.main"]
        callees = [node.text for node in first.find_elements(By.CSS_SELECTOR, ".graph-callees li")]
        assert callees == ["price? one of 1"]
        shots = ROOT / "docs" if os.environ.get("CODE_ALIAS_PAGE_SCREENSHOTS") == "docs" else tmp_path
        browser.save_screenshot(str(shots / "page-graph.png"))
    finally:
        browser.quit()
