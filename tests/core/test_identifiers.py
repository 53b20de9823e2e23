import pytest

from haystack_integrations.components.code_alias.core.identifiers import (
    code_tokenize,
    find_identifiers,
    identifier_phrase,
    split_identifier,
    text_words,
)


@pytest.mark.parametrize(
    ("identifier", "words"),
    [
        ("withStripeBackoff", ("with", "stripe", "backoff")),
        ("WithStripeBackoff", ("with", "stripe", "backoff")),
        ("parseHTTPResponse", ("parse", "http", "response")),
        ("XMLHttpRequest", ("xml", "http", "request")),
        ("MAX_RETRY_COUNT", ("max", "retry", "count")),
        ("snake_case_name", ("snake", "case", "name")),
        ("payments-core", ("payments", "core")),
        ("@acme/payments-core", ("acme", "payments", "core")),
        ("sha256sum", ("sha", "256", "sum")),
        ("getV2Api", ("get", "v", "2", "api")),
        ("__init__", ("init",)),
        ("HTTP", ("http",)),
        ("", ()),
        ("___", ()),
    ],
)
def test_split_identifier_handles_every_style(identifier: str, words: tuple[str, ...]) -> None:
    assert split_identifier(identifier) == words


def test_identifier_phrase() -> None:
    assert identifier_phrase("withStripeBackoff") == "with stripe backoff"


def test_code_tokenize_keeps_whole_identifier_and_its_words() -> None:
    tokens = code_tokenize("def withStripeBackoff(fn): return the_HTTP_client")
    assert "withstripebackoff" in tokens
    assert {"stripe", "backoff", "http", "client", "def", "fn"} <= set(tokens)
    # stop-words stay out of the word splits
    assert "the" not in tokens and "with" not in tokens


def test_text_words_drops_stop_words_and_splits_identifiers() -> None:
    assert text_words("Where's the paymentsRetry helper?") == ["payments", "retry", "helper"]


def test_find_identifiers_keeps_dotted_and_kebab_names() -> None:
    assert find_identifiers("call django.db.models.Q or payments-core now") == [
        "call",
        "django.db.models.Q",
        "or",
        "payments-core",
        "now",
    ]
