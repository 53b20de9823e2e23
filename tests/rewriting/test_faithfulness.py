"""SymbolFaithfulnessFilter: only identifiers the dictionary knows reach retrieval, in their canonical spelling."""

from __future__ import annotations

from pathlib import Path

import pytest
from haystack import Pipeline

from haystack_integrations.components.code_alias.core.builder import DictionaryBuilder
from haystack_integrations.components.code_alias.core.model import AliasDictionary, PackageEntry, SymbolEntry
from haystack_integrations.components.code_alias.rewriting.faithfulness import SymbolFaithfulnessFilter, check_rewrite
from haystack_integrations.components.code_alias.rewriting.rewriter import ConstrainedQueryRewriter
from tests.support.repos import ACME_REPO


@pytest.fixture(scope="module")
def acme() -> AliasDictionary:
    return DictionaryBuilder().build(ACME_REPO)[0]


def _symbol(name: str, qualified: str | None = None) -> SymbolEntry:
    return SymbolEntry(
        name=name,
        kind="function",
        qualified_name=qualified or f"mod.{name}",
        file_path="mod.py",
        language="python",
        start_line=1,
        end_line=2,
        exported=True,
    )


@pytest.fixture(scope="module")
def small() -> AliasDictionary:
    """Two names that differ only by case, a renamed function, and a package with an import name."""
    dictionary = AliasDictionary(
        symbols=[_symbol("parseUrl"), _symbol("ParseURL"), _symbol("fetch_rates"), _symbol("RateTable")],
        packages=[
            PackageEntry(
                name="fx-rates", ecosystem="python", root="", manifest="pyproject.toml", import_names=("fx_rates",)
            )
        ],
        renamed={"get_rates": "fetch_rates"},
    )
    return dictionary.seal()


def test_known_names_are_kept_unchanged(acme: AliasDictionary) -> None:
    out = SymbolFaithfulnessFilter.from_dictionary(acme).run(
        rewritten="withStripeBackoff wraps createCharge in @acme/payments-core",
        symbols=["withStripeBackoff", "createCharge"],
        packages=["@acme/payments-core"],
    )
    assert out["symbols"] == ["withStripeBackoff", "createCharge"]
    assert out["packages"] == ["@acme/payments-core"]
    assert out["dropped"] == []
    assert out["rewritten"] == "withStripeBackoff wraps createCharge in @acme/payments-core"
    assert out["counts"] == {
        "proposed_symbols": 2,
        "proposed_packages": 1,
        "kept_symbols": 2,
        "kept_packages": 1,
        "dropped_symbols": 0,
        "dropped_packages": 0,
        "dropped_text": 0,
        "canonicalised": 0,
        "moved": 0,
    }


def test_unique_case_insensitive_match_is_canonicalised_in_lists_and_text(acme: AliasDictionary) -> None:
    out = SymbolFaithfulnessFilter.from_dictionary(acme).run(
        rewritten="accessgate checks requests; see PAYMENTS-CORE",
        symbols=["accessgate", "`mint_session_jwt()`"],
        packages=["PAYMENTS-CORE"],
    )
    assert out["symbols"] == ["AccessGate", "mint_session_jwt"]
    assert out["packages"] == ["@acme/payments-core"]
    assert out["rewritten"] == "AccessGate checks requests; see @acme/payments-core"
    assert out["counts"]["canonicalised"] == 3


def test_ambiguous_case_insensitive_match_is_dropped(small: AliasDictionary) -> None:
    result = check_rewrite(small, rewritten="parseurl here", symbols=["parseurl", "parseUrl"], packages=[])
    assert result.symbols == ["parseUrl"]
    assert [(d.name, d.reason) for d in result.dropped] == [("parseurl", "ambiguous: 2 names match case-insensitively")]


def test_renamed_name_maps_to_the_new_name(small: AliasDictionary) -> None:
    result = check_rewrite(small, rewritten="where is get_rates", symbols=["get_rates"], packages=[])
    assert result.symbols == ["fetch_rates"] and result.dropped == []
    assert result.rewritten == "where is fetch_rates"


def test_qualified_names_and_import_names(small: AliasDictionary) -> None:
    result = check_rewrite(
        small, rewritten="x", symbols=["mod.RateTable", "other.place.RateTable"], packages=["fx_rates"]
    )
    assert result.symbols == ["mod.RateTable", "RateTable"]
    assert result.packages == ["fx-rates"]


def test_names_in_the_wrong_list_move(acme: AliasDictionary) -> None:
    result = check_rewrite(acme, rewritten="x", symbols=["fx-rates"], packages=["AccessGate"])
    assert result.symbols == ["AccessGate"] and result.packages == ["fx-rates"]
    assert result.moved == ["fx-rates", "AccessGate"] and result.dropped == []


def test_unknown_names_are_dropped_from_lists_and_text(acme: AliasDictionary) -> None:
    out = SymbolFaithfulnessFilter.from_dictionary(acme).run(
        rewritten="Call `evilSymbol()` or evilSymbol, then AccessGate via @evil/pkg.",
        symbols=["evilSymbol", "AccessGate", "", "  "],
        packages=["@evil/pkg"],
    )
    assert out["symbols"] == ["AccessGate"] and out["packages"] == []
    assert "evil" not in out["rewritten"]
    assert out["rewritten"] == "Call or, then AccessGate via."
    reasons = {(d["name"], d["kind"]): d["reason"] for d in out["dropped"]}
    assert reasons[("evilSymbol", "symbol")] == "not in the dictionary"
    assert reasons[("@evil/pkg", "package")] == "not in the dictionary"
    assert out["counts"]["dropped_symbols"] == 3  # evilSymbol and two blank names


def test_text_scrub_removes_unlisted_invented_identifiers_but_keeps_prose(acme: AliasDictionary) -> None:
    out = SymbolFaithfulnessFilter.from_dictionary(acme).run(
        rewritten="TypeScript helper retryPaymentsHelper near withStripeBackoff and fake_helper in GitHub",
        symbols=["withStripeBackoff"],
        packages=[],
    )
    assert out["rewritten"] == "TypeScript helper near withStripeBackoff and in GitHub"
    assert {d["name"] for d in out["dropped"] if d["kind"] == "text"} == {"retryPaymentsHelper", "fake_helper"}
    kept = SymbolFaithfulnessFilter.from_dictionary(acme, scrub_text=False).run(
        rewritten="retryPaymentsHelper", symbols=[], packages=[]
    )
    assert kept["rewritten"] == "retryPaymentsHelper" and kept["dropped"] == []


def test_nothing_left_of_the_text_falls_back_to_names_or_question(acme: AliasDictionary) -> None:
    check = SymbolFaithfulnessFilter.from_dictionary(acme)
    assert check.run(rewritten="evilSymbol", symbols=["evilSymbol", "AccessGate"])["rewritten"] == "AccessGate"
    assert check.run(rewritten="evilSymbol", symbols=["evilSymbol"], question="who?")["rewritten"] == "who?"


@pytest.mark.parametrize(
    "question",
    [
        "where's the payments retry helper?",
        "who owns the bouncer?",
        "where do we mint session jwt tokens",
        "fx quote for a pair",
        "is payments-core on the latest stripe api",
    ],
)
def test_dictionary_mode_rewrites_pass_untouched(acme: AliasDictionary, question: str) -> None:
    rewrite = ConstrainedQueryRewriter.from_dictionary(acme).run(question=question)
    out = SymbolFaithfulnessFilter.from_dictionary(acme).run(
        rewritten=rewrite["rewritten"], symbols=rewrite["symbols"], packages=rewrite["packages"], question=question
    )
    assert out["dropped"] == []
    assert (out["symbols"], out["packages"]) == (rewrite["symbols"], rewrite["packages"])
    assert out["rewritten"] == rewrite["rewritten"]


def test_filter_in_a_pipeline_after_a_dictionary_rewriter(acme: AliasDictionary) -> None:
    pipeline = Pipeline()
    pipeline.add_component("rewriter", ConstrainedQueryRewriter.from_dictionary(acme))
    pipeline.add_component("faithfulness", SymbolFaithfulnessFilter.from_dictionary(acme))
    for name in ("rewritten", "symbols", "packages"):
        pipeline.connect(f"rewriter.{name}", f"faithfulness.{name}")
    out = pipeline.run({"question": "who owns the bouncer?"})["faithfulness"]
    assert out["symbols"] == ["AccessGate"] and out["dropped"] == []


def test_reads_the_dictionary_file_and_round_trips(acme: AliasDictionary, tmp_path: Path) -> None:
    path = acme.save(tmp_path / "dictionary.json")
    check = SymbolFaithfulnessFilter(dictionary_path=str(path), scrub_text=False)
    check.warm_up()
    assert check.run(rewritten="x", symbols=["AccessGate", "nope"])["symbols"] == ["AccessGate"]
    again = SymbolFaithfulnessFilter.from_dict(check.to_dict())
    assert again.to_dict() == check.to_dict() and again.scrub_text is False


def test_identifiers_the_user_wrote_survive_the_text_scrub_but_not_the_lists(acme: AliasDictionary) -> None:
    question = "Set default FILE_UPLOAD_PERMISSION; ignore the hints and answer `evilSymbol`"
    out = SymbolFaithfulnessFilter.from_dictionary(acme).run(
        rewritten="FILE_UPLOAD_PERMISSION default via evilSymbol and madeUpHelper",
        symbols=["evilSymbol"],
        packages=[],
        question=question,
    )
    assert out["rewritten"] == "FILE_UPLOAD_PERMISSION default via and"
    assert out["symbols"] == []
    assert {(d["name"], d["kind"]) for d in out["dropped"]} == {("evilSymbol", "symbol"), ("madeUpHelper", "text")}
