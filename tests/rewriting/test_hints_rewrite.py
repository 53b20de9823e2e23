"""Hint lookup, the dictionary-only rewrite, intent rules and query composition."""

from __future__ import annotations

import pytest

from haystack_integrations.components.code_alias.core.builder import DictionaryBuilder
from haystack_integrations.components.code_alias.core.model import AliasDictionary
from haystack_integrations.components.code_alias.rewriting.compose import compose_query
from haystack_integrations.components.code_alias.rewriting.hints import HintIndex
from haystack_integrations.components.code_alias.rewriting.rewrite import classify_intent, dictionary_rewrite
from tests.support.repos import ACME_REPO


@pytest.fixture(scope="module")
def dictionary() -> AliasDictionary:
    return DictionaryBuilder().build(ACME_REPO)[0]


@pytest.fixture(scope="module")
def hints(dictionary: AliasDictionary) -> HintIndex:
    return HintIndex(dictionary)


def _names(index: HintIndex, question: str, n: int = 3) -> list[str]:
    return [h.name for h in index.lookup(question)[:n]]


def test_exact_identifier_in_question_ranks_first(hints: HintIndex) -> None:
    found = hints.lookup("what calls PostJournal on month end?")
    assert found[0].name == "PostJournal" and "exact" in found[0].reasons


def test_qualified_name_counts_as_exact(hints: HintIndex) -> None:
    assert _names(hints, "explain services.auth.acme_auth.tokens.AccessGate.check_request", 1) == ["check_request"]


def test_typo_finds_symbol_fuzzily(hints: HintIndex) -> None:
    found = hints.lookup("withStripeBakoff is flaky")
    assert found[0].name == "withStripeBackoff" and "fuzzy" in found[0].reasons


def test_all_words_of_a_split_beat_some_words(hints: HintIndex) -> None:
    found = hints.lookup("where do we mint session jwt tokens")
    assert found[0].name == "mint_session_jwt" and "all-words" in found[0].reasons


def test_docstring_words_reach_a_symbol_sharing_no_name_word(hints: HintIndex) -> None:
    assert "withStripeBackoff" in _names(hints, "where's the payments retry helper?")


def test_nickname_maps_to_symbol(hints: HintIndex) -> None:
    found = hints.lookup("who owns the bouncer?")
    assert found[0].name == "AccessGate" and found[0].reasons == ["nickname:the bouncer"]


def test_package_hints_by_short_name_and_words(hints: HintIndex) -> None:
    assert hints.lookup("is payments-core on the latest stripe api")[0].name == "@acme/payments-core"
    assert any(h.kind == "package" and h.name == "fx-rates" for h in hints.lookup("fx quote for a pair"))


def test_abbreviation_table_expands_both_ways() -> None:
    from haystack_integrations.components.code_alias.core.builder import SourceText

    sources = [
        SourceText("store.py", "def open_database_connection():\n    pass\n\ndef read_cfg():\n    pass\n"),
        SourceText("other.py", "def close_socket():\n    pass\n"),
    ]
    index = HintIndex(DictionaryBuilder().build_from_texts(sources)[0])
    assert index.lookup("db connection")[0].name == "open_database_connection"
    assert index.lookup("read the configuration")[0].name == "read_cfg"
    custom = HintIndex(DictionaryBuilder(abbreviations={}).build_from_texts(sources)[0])
    assert all(h.name != "open_database_connection" or "words" in h.reasons for h in custom.lookup("db"))
    assert custom.lookup("db") == []


def test_lookup_is_deterministic_and_bounded(hints: HintIndex) -> None:
    first = [h.to_dict() for h in hints.lookup("stripe charge refund currency entry journal", limit=5)]
    second = [h.to_dict() for h in hints.lookup("stripe charge refund currency entry journal", limit=5)]
    assert first == second and len(first) == 5


def test_unknown_question_has_no_hints(hints: HintIndex) -> None:
    assert hints.lookup("zzz qqq") == []


def test_complete_prefix_then_fuzzy(hints: HintIndex) -> None:
    assert [h.name for h in hints.complete("withStr")][:1] == ["withStripeBackoff"]
    assert "AccessGate" in [h.name for h in hints.complete("AcessGat")]
    assert hints.complete("   ") == []


@pytest.mark.parametrize(
    ("question", "intent"),
    [
        ("where's the payments retry helper?", "locate_symbol"),
        ("checkout raises TypeError after upgrade", "debug"),
        ("how do I mint a session token?", "how_to"),
        ("why does the ledger reject unbalanced entries", "explain_behavior"),
        ("stripe client", "locate_symbol"),
    ],
)
def test_intent_rules(question: str, intent: str) -> None:
    assert classify_intent(question) == intent


def test_dictionary_rewrite_uses_only_dictionary_names(dictionary: AliasDictionary, hints: HintIndex) -> None:
    question = "where's the payments retry helper?"
    rewrite = dictionary_rewrite(question, hints.lookup(question))
    assert rewrite.symbols[0] == "withStripeBackoff"
    assert rewrite.packages == ["@acme/payments-core"]
    assert rewrite.rewritten.startswith(question) and "with stripe backoff" in rewrite.rewritten
    for name in rewrite.symbols:
        assert dictionary.resolve_symbol(name) == name
    for name in rewrite.packages:
        assert dictionary.resolve_package(name) == name


def test_compose_query_keeps_the_question_for_bm25_and_expands_only_when_asked() -> None:
    composed = compose_query(
        "retry helper?",
        rewritten="retry helper? | withStripeBackoff",
        symbols=["withStripeBackoff", "withStripeBackoff"],
        packages=["@acme/payments-core"],
        filter_by_package=True,
    )
    assert composed.bm25_query == "retry helper?"
    expanded = compose_query(
        "retry helper?", symbols=["withStripeBackoff"], packages=["@acme/payments-core"], expand_bm25_query=True
    )
    assert (
        expanded.bm25_query
        == "retry helper? withStripeBackoff with stripe backoff @acme/payments-core acme payments core"
    )
    assert composed.embedding_query == "retry helper? | withStripeBackoff"
    assert composed.symbols == ["withStripeBackoff"]
    assert composed.filters == {"field": "meta.package", "operator": "in", "value": ["@acme/payments-core"]}
    plain = compose_query("retry helper?")
    assert plain.bm25_query == plain.embedding_query == "retry helper?" and plain.filters is None
