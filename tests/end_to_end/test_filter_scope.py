"""A question narrowed to repositories or packages is rewritten with their names only, on every surface."""

from __future__ import annotations

import json
from typing import Any

import pytest
from haystack import component
from haystack.dataclasses import ChatMessage

from haystack_integrations.components.code_alias.app.search import CodeSearch
from haystack_integrations.components.code_alias.core.model import AliasDictionary
from haystack_integrations.components.code_alias.indexing import index_delta
from haystack_integrations.components.code_alias.indexing.repositories import repository_filters
from haystack_integrations.components.code_alias.paths import DICTIONARY_FILE
from haystack_integrations.components.code_alias.rewriting.faithfulness import SymbolFaithfulnessFilter
from haystack_integrations.components.code_alias.rewriting.hints import HintIndex
from haystack_integrations.components.code_alias.rewriting.hints.scope import HintScope, scope_from_filters
from haystack_integrations.components.code_alias.rewriting.rewriter import ConstrainedQueryRewriter
from tests.support.repos import write_tree

PAYMENTS = {
    "pyproject.toml": '[project]\nname = "acme-payments"\nversion = "1.0"\n',
    "acme_payments/__init__.py": "",
    "acme_payments/stripe.py": 'def stripe_retry(charge):\n    """Retry failed stripe charges with backoff."""\n'
    "    return charge()\n",
    "acme_payments/util.py": 'def shared_helper(amount):\n    """Round a charge amount."""\n    return amount\n',
}
WEB = {
    "pyproject.toml": '[project]\nname = "acme-web"\nversion = "1.0"\n',
    "acme_web/__init__.py": "",
    "acme_web/checkout.py": "def render_checkout(cart):\n"
    '    """Render the checkout page and retry a failed charge."""\n    return cart\n',
    "acme_web/util.py": 'def shared_helper(text):\n    """Trim text for the page."""\n    return text.strip()\n',
}
QUESTION = "where do we retry failed stripe charges?"


@pytest.fixture(scope="module")
def two(tmp_path_factory: pytest.TempPathFactory) -> CodeSearch:
    root = tmp_path_factory.mktemp("scope")
    search = CodeSearch(root / "index", lexical=True)
    search.index(write_tree(root / "payments", PAYMENTS), repo="acme/payments")
    search.index(write_tree(root / "web", WEB), repo="acme/web")
    return search


def dictionary_of(search: CodeSearch) -> AliasDictionary:
    return index_delta.load_index_dictionary(search.index_dir / DICTIONARY_FILE)


def repositories_of(dictionary: AliasDictionary, name: str) -> set[str | None]:
    """The repositories that define symbol `name` or declare package `name`."""
    found = {entry.repo for entry in dictionary.symbols_named(name)}
    return found | {package.repo for package in dictionary.packages if package.name == name}


def test_scope_from_filters_reads_what_repository_filters_writes() -> None:
    assert scope_from_filters(None) is None
    assert scope_from_filters(repository_filters("acme/web")) == HintScope(repos=frozenset({"acme/web"}))
    both = scope_from_filters(repository_filters(["a", "b"], "pkg"))
    assert both == HintScope(repos=frozenset({"a", "b"}), packages=frozenset({"pkg"}))
    language = {"field": "meta.language", "operator": "==", "value": "python"}
    assert scope_from_filters(language) is None  # other fields do not narrow names
    nested = {"operator": "AND", "conditions": [language, repository_filters("a")]}
    assert scope_from_filters(nested) == HintScope(repos=frozenset({"a"}))
    either = {"operator": "OR", "conditions": [repository_filters("a"), repository_filters("b")]}
    assert scope_from_filters(either) is None  # not a narrowing the rewrite can honour: it narrows nothing
    assert scope_from_filters({"operator": "AND", "conditions": [language, either]}) is None
    only_a = HintScope(repos=frozenset({"a"}))
    assert only_a.admits("a", None) and not only_a.admits("b", None)


def test_the_rewrite_of_a_narrowed_question_names_only_that_repository(two: CodeSearch) -> None:
    dictionary = dictionary_of(two)
    plain = two.ask(QUESTION)
    assert "stripe_retry" in plain.rewrite["symbols"]  # unnarrowed, the payments helper is what it names
    narrowed = two.ask(QUESTION, repo=["acme/web"])
    assert narrowed.rewrite["symbols"], narrowed.rewrite  # the web repository's own names remain
    for name in [*narrowed.rewrite["symbols"], *narrowed.rewrite["packages"]]:
        assert repositories_of(dictionary, name) >= {"acme/web"}, name
    assert "stripe_retry" not in narrowed.rewrite["symbols"]
    assert "acme-payments" not in narrowed.rewrite["packages"]
    for hint in narrowed.rewrite["hints"]:
        assert "acme/web" in repositories_of(dictionary, hint["name"]), hint["name"]
        assert all(not path.startswith("acme_payments/") for path in hint["files"]), hint
    assert narrowed.rewrite["meta"]["scope"] == {"repo": ["acme/web"], "package": None}
    assert {f.get("repo") for f in narrowed.files} == {"acme/web"}  # retrieval was narrowed as before


def test_a_name_of_both_repositories_lists_only_the_narrowed_ones_definitions(two: CodeSearch) -> None:
    answer = two.ask("shared_helper", repo="acme/payments")
    hint = next(h for h in answer.rewrite["hints"] if h["name"] == "shared_helper")
    assert hint["files"] == ["acme_payments/util.py"]
    everywhere = next(h for h in two.ask("shared_helper").rewrite["hints"] if h["name"] == "shared_helper")
    assert set(everywhere["files"]) == {"acme_payments/util.py", "acme_web/util.py"}


def test_a_package_filter_scopes_the_rewrite_too(two: CodeSearch) -> None:
    dictionary = dictionary_of(two)
    answer = two.ask(QUESTION, package="acme-web")
    assert "stripe_retry" not in answer.rewrite["symbols"]
    for name in answer.rewrite["symbols"]:
        assert any(e.package == "acme-web" for e in dictionary.symbols_named(name)), name
    assert set(answer.rewrite["packages"]) <= {"acme-web"}


def test_hint_lookup_scope_matches_a_lookup_on_that_repository_alone(two: CodeSearch) -> None:
    dictionary = dictionary_of(two)
    index = HintIndex(dictionary)
    scoped = index.lookup(QUESTION, scope=HintScope(repos=frozenset({"acme/web"})))
    web_only = dictionary.model_copy(
        update={
            "symbols": [s for s in dictionary.symbols if s.repo == "acme/web"],
            "packages": [p for p in dictionary.packages if p.repo == "acme/web"],
        }
    )
    alone = {h.name for h in HintIndex(web_only).lookup(QUESTION)}
    assert {h.name for h in scoped} <= alone | {h.name for h in index.lookup(QUESTION)}
    assert {h.name for h in scoped} <= {s.name for s in web_only.symbols} | {p.name for p in web_only.packages}
    assert index.lookup(QUESTION) == index.lookup(QUESTION, scope=None)  # no scope: exactly as before


@component
class ProposesOutside:
    """A chat model that proposes the payments helper whatever it is offered (an unconstrained model)."""

    def __init__(self) -> None:
        self.prompts: list[str] = []

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], generation_kwargs: dict[str, Any] | None = None) -> dict[str, Any]:
        self.prompts.append("\n".join(m.text or "" for m in messages))
        answer = {"rewritten": "stripe_retry", "symbols": ["stripe_retry"], "packages": [], "intent": "locate_symbol"}
        return {"replies": [ChatMessage.from_assistant(json.dumps(answer))]}


def test_the_llm_rewrite_is_offered_and_keeps_only_narrowed_names(two: CodeSearch) -> None:
    generator = ProposesOutside()
    rewriter = ConstrainedQueryRewriter(
        index_dir=str(two.index_dir), chat_generator=generator, constrain_to_hints=False
    )
    check = SymbolFaithfulnessFilter(index_dir=str(two.index_dir))
    filters = repository_filters("acme/web")
    narrowed = rewriter.run(question=QUESTION, filters=filters)
    assert '"stripe_retry"' not in generator.prompts[-1]  # not offered
    assert narrowed["meta"]["scope"] == {"repo": ["acme/web"], "package": None}
    checked = check.run(
        rewritten=narrowed["rewritten"], symbols=narrowed["symbols"], packages=[], question=QUESTION, filters=filters
    )
    assert checked["symbols"] == [] and "stripe_retry" not in checked["rewritten"]
    assert {"name": "stripe_retry", "kind": "symbol", "reason": "outside the repositories / packages asked about"} in (
        checked["dropped"]
    )
    unnarrowed = rewriter.run(question=QUESTION)  # the same question without the filter: not the cached answer
    assert unnarrowed["meta"]["cache_hit"] is False and len(generator.prompts) == 2
    assert '"stripe_retry"' in generator.prompts[-1]
    assert rewriter.run(question=QUESTION, filters=filters)["meta"]["cache_hit"] is True


def test_rest_mcp_and_chat_surfaces_scope_the_rewrite(two: CodeSearch) -> None:
    from starlette.testclient import TestClient

    from haystack_integrations.components.code_alias.serving.server import ServerSettings, build_app
    from haystack_integrations.components.code_alias.serving.service import ServiceSettings

    app = build_app(ServerSettings(mcp=True), ServiceSettings(index_dir=two.index_dir, lexical=True))
    with TestClient(app, base_url="http://127.0.0.1:1416") as client:
        asked = client.post("/code_alias_ask/run", json={"question": QUESTION, "repo": ["acme/web"]}).json()["result"]
        assert "stripe_retry" not in asked["rewrite"]["symbols"] and asked["generation"]["build"]
        rewrote = client.post("/code_alias_rewrite/run", json={"question": QUESTION, "repo": "acme/web"})
        assert rewrote.status_code == 200, rewrote.text
        result = rewrote.json()["result"]
        assert "stripe_retry" not in result["symbols"] and result["meta"]["scope"]["repo"] == ["acme/web"]
        assert result["generation"] == asked["generation"]
        whole = client.post("/code_alias_rewrite/run", json={"question": QUESTION}).json()["result"]
        assert "stripe_retry" in whole["symbols"]
        unknown = client.post("/code_alias_rewrite/run", json={"question": QUESTION, "repo": "nobody"})
        assert unknown.status_code == 422 and "acme/payments, acme/web" in unknown.json()["detail"]
        chat = client.post(
            "/v1/chat/completions",
            json={"model": "code_alias_ask", "messages": [{"role": "user", "content": QUESTION}], "repo": "acme/web"},
        )
        assert chat.status_code == 200, chat.text
        assert "stripe_retry" not in chat.json()["code_alias"]["rewrite"]["symbols"]
        tools = client.post(
            "/mcp",
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
            headers={"accept": "application/json, text/event-stream"},
        )
        assert tools.status_code == 200
        listed = _mcp_result(tools.text)["tools"]
        rewrite_tool = next(t for t in listed if t["name"] == "code_alias_rewrite")
        assert {"repo", "package"} <= set(rewrite_tool["inputSchema"]["properties"])


def _mcp_result(text: str) -> dict[str, Any]:
    """The JSON-RPC result of an MCP answer (plain JSON, or the data line of a server-sent event)."""
    for line in text.splitlines():
        if line.startswith("data:"):
            return dict(json.loads(line[5:])["result"])
    return dict(json.loads(text)["result"])


def test_cli_dict_lookup_takes_the_same_filters(two: CodeSearch, capsys: pytest.CaptureFixture[str]) -> None:
    from haystack_integrations.components.code_alias.cli import main

    index = str(two.index_dir)
    assert main(["dict", "lookup", QUESTION, "--index-dir", index, "--json", "--repo", "acme/web"]) == 0
    names = {hint["name"] for hint in json.loads(capsys.readouterr().out)}
    assert names and "stripe_retry" not in names
    assert main(["dict", "lookup", QUESTION, "--index-dir", index, "--json"]) == 0
    assert "stripe_retry" in {hint["name"] for hint in json.loads(capsys.readouterr().out)}
