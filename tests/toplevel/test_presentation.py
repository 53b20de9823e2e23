"""Answers in words: *why* (whole and short), names beside their paths, the footer, absolute `path:line` for --json."""

from __future__ import annotations

import json
from pathlib import Path

from haystack_integrations.components.code_alias.presentation import (
    add_locations,
    display_name,
    footer_parts,
    ordinal,
    short_reason,
    why_in_words,
)
from haystack_integrations.components.code_alias.ranking.answer import evidence_record as evidence
from haystack_integrations.components.code_alias.ranking.answer import why_strings


def test_why_is_said_in_words() -> None:
    assert [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 102)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "102nd",
    ]  # fmt: skip
    said = why_in_words(evidence({"bm25": 2, "embedding": 1}, "withStripeBackoff", ["retrieved:#1", "doc"], 0.54))
    assert said == (
        "found by keyword search, 2nd; found by meaning (embeddings), 1st; the question's rewrite asks for it: "
        "defined in the 1st search hit, its doc has the question's words"
    )
    assert why_in_words(evidence({}, "AccessGate", ["nickname:the bouncer", "exact"], None)).endswith(
        "your nickname 'the bouncer' for it, the question names it"
    )
    assert "confidence" not in why_in_words(evidence({}, "x", [], 0.9))
    assert why_in_words(evidence({"bm25": 1}, None, [], None, ["its code names retry"])) == (
        "found by keyword search, 1st; its code names retry"
    )
    assert why_in_words(None) == ""  # an answer from before the record: nothing to say, nothing guessed


def test_the_words_come_from_the_record_that_why_is_written_from() -> None:
    """`why` (the strings JSON readers have) and the words are two renderings of one record, never one of the other."""
    record = evidence({"bm25": 2, "embedding": 11}, "withStripeBackoff", ["exact", "retrieved:#1"], 0.8)
    assert why_strings(record) == [
        "bm25 #2",
        "embedding #11",
        "rewrite: withStripeBackoff (exact, retrieved:#1, confidence 0.80)",
    ]
    assert (
        short_reason(record) == "the question names it; defined in the 1st search hit; keyword search 2nd, meaning 11th"
    )


def test_locations_are_absolute_per_repository(tmp_path: Path) -> None:
    (tmp_path / "repositories.json").write_text(
        json.dumps({"a": {"root": "/src/a"}, "b": {"root": "/src/b"}}), encoding="utf-8"
    )
    payload = {
        "symbols": [{"file_path": "x.py", "start_line": 7, "repo": "b"}],
        "files": [{"file_path": "y.py", "repo": "a", "hits": [{"start_line": None}, {"start_line": 3}]}],
    }
    add_locations(payload, tmp_path)
    assert payload["symbols"][0]["location"] == "/src/b/x.py:7"
    assert payload["files"][0]["absolute_path"] == "/src/a/y.py" and payload["files"][0]["location"] == "/src/a/y.py:3"


def test_the_short_reason_puts_the_rewrites_words_first() -> None:
    why = evidence({"bm25": 2, "embedding": 11}, "withStripeBackoff", ["exact", "retrieved:#1", "doc"], 0.8)
    assert short_reason(why) == "the question names it; defined in the 1st search hit; keyword search 2nd, meaning 11th"
    assert short_reason(evidence({"bm25": 3}, None, [], None)) == "keyword search 3rd"
    assert short_reason(evidence({}, "x", ["unheard-of"], None)) == "the question's rewrite asks for it"
    assert short_reason(None) == "ranked by the fused search"


def test_a_name_is_shown_without_the_module_its_path_says() -> None:
    item = {"qualified_name": "services.shop.fields.Field.clean", "file_path": "services/shop/fields.py"}
    assert display_name(item) == "Field.clean"
    assert display_name({"qualified_name": "com.acme.Mailer", "file_path": "src/Mailer.java"}) == "com.acme.Mailer"


def test_the_footer_says_the_rewrite_the_retrieval_and_who_answered() -> None:
    payload = {
        "rewrite": {
            "symbols": ["withStripeBackoff"],
            "packages": ["@acme/payments-core"],
            "meta": {"mode": "dictionary"},
        },
        "retrieval": "lexical",
        "server": "http://127.0.0.1:1416",
    }
    assert footer_parts(payload) == [
        "rewrite (dictionary): withStripeBackoff; packages @acme/payments-core",
        "retrieval: lexical",
        "answered by the code-alias server at http://127.0.0.1:1416",
    ]
    off = footer_parts({"rewrite": {"used": False, "symbols": [], "packages": []}})
    assert off == ["rewrite: off (the question as written)"]
