"""Hint evidence and confidence (issue 13), and what the ranking stage reads of it (`SymbolEvidence`)."""

from __future__ import annotations

import pytest

from haystack_integrations.components.code_alias.core.builder import DictionaryBuilder, SourceText
from haystack_integrations.components.code_alias.core.model import AliasDictionary
from haystack_integrations.components.code_alias.rewriting.hints import (
    EVIDENCE_CONFIDENCE,
    HintIndex,
    SymbolEvidence,
    combine_confidence,
)
from haystack_integrations.components.code_alias.rewriting.rewrite import dictionary_rewrite
from tests.support.repos import ACME_REPO


@pytest.fixture(scope="module")
def dictionary() -> AliasDictionary:
    return DictionaryBuilder().build(ACME_REPO)[0]


@pytest.fixture(scope="module")
def hints(dictionary: AliasDictionary) -> HintIndex:
    return HintIndex(dictionary)


def _hint(index: HintIndex, question: str, name: str, **kwargs: object):  # type: ignore[no-untyped-def]
    found = {h.name: h for h in index.lookup(question, **kwargs)}  # type: ignore[arg-type]
    assert name in found, f"{name} not among the hints for {question!r}: {list(found)}"
    return found[name]


# ---- each evidence type ----------------------------------------------------------------------------------------
def test_exact_identifier_is_evidence_with_high_confidence(hints: HintIndex) -> None:
    hint = _hint(hints, "what calls PostJournal on month end?", "PostJournal")
    assert "exact" in hint.evidence and hint.reasons[0] == "exact"
    assert hint.confidence >= EVIDENCE_CONFIDENCE["exact"] - 1e-9


def test_fuzzy_identifier_is_evidence(hints: HintIndex) -> None:
    hint = _hint(hints, "withStripeBakoff is flaky", "withStripeBackoff")
    assert "fuzzy" in hint.evidence and "exact" not in hint.evidence
    assert 0.4 < hint.evidence["fuzzy"] < EVIDENCE_CONFIDENCE["fuzzy"] + 1e-9


def test_nickname_is_evidence_with_its_phrase(hints: HintIndex) -> None:
    hint = _hint(hints, "who owns the bouncer?", "AccessGate")
    assert hint.evidence["nickname"] == EVIDENCE_CONFIDENCE["nickname"]
    assert "nickname:the bouncer" in hint.reasons


def test_package_name_words_are_package_evidence(hints: HintIndex) -> None:
    hint = _hint(hints, "is payments core on the latest stripe api", "@acme/payments-core")
    assert hint.kind == "package" and "package" in hint.evidence and "words" not in hint.evidence


def test_all_words_of_a_split_and_some_words(hints: HintIndex) -> None:
    all_words = _hint(hints, "where do we mint session jwt tokens", "mint_session_jwt")
    assert all_words.evidence["all-words"] == EVIDENCE_CONFIDENCE["all-words"]  # three content words
    some = _hint(hints, "where is the session created", "mint_session_jwt")
    assert "words" in some.evidence and "all-words" not in some.evidence
    assert some.evidence["words"] < all_words.evidence["words"] + 1e-9


def test_a_short_question_that_uses_every_word_describes_the_name(hints: HintIndex) -> None:
    described = _hint(hints, "where do we mint session jwt tokens", "mint_session_jwt")
    assert "described" in described.reasons and described.evidence["described"] == 0.0  # a label: no confidence
    padding = " ".join(["and then the request goes on through the middleware"] * 5)  # a bug report's length
    long_text = _hint(hints, f"where do we mint session jwt tokens {padding}", "mint_session_jwt")
    assert "all-words" in long_text.reasons and "described" not in long_text.reasons
    assert long_text.confidence == pytest.approx(described.confidence, abs=0.05)


def test_docstring_words_are_evidence(hints: HintIndex) -> None:
    hint = _hint(hints, "where's the payments retry helper?", "withStripeBackoff")
    assert hint.evidence["doc"] == EVIDENCE_CONFIDENCE["doc"]
    assert "exact" not in hint.evidence and "all-words" not in hint.evidence


def test_abbreviation_table_is_labelled() -> None:
    sources = [SourceText("store.py", "def open_database_connection():\n    pass\n")]
    index = HintIndex(DictionaryBuilder().build_from_texts(sources)[0])
    hint = _hint(index, "db connection", "open_database_connection")
    assert "abbreviation" in hint.evidence
    written = _hint(index, "database connection", "open_database_connection")
    assert "abbreviation" not in written.evidence


def test_retrieved_evidence_decays_with_rank_and_adds_hints(hints: HintIndex) -> None:
    question = "where is the session created"
    plain = _hint(hints, question, "mint_session_jwt")
    first = _hint(hints, question, "mint_session_jwt", retrieved=["mint_session_jwt", "AccessGate"])
    second = _hint(hints, question, "mint_session_jwt", retrieved=["AccessGate", "mint_session_jwt"])
    assert "retrieved" not in plain.evidence
    assert first.evidence["retrieved"] > second.evidence["retrieved"] > 0
    assert first.confidence > second.confidence > plain.confidence
    assert first.score > plain.score and first.lexical_score == pytest.approx(plain.score)
    # A name only the retrieval pass found is offered (for an LLM to choose), but never put in the rewrite.
    only = _hint(hints, question, "AccessGate", retrieved=["AccessGate"])
    assert only.reasons == ["retrieved:#1"]
    rewrite = dictionary_rewrite(question, hints.lookup(question, retrieved=["AccessGate"]))
    assert "AccessGate" not in rewrite.symbols


def test_words_and_retrieval_together_make_a_strong_hint(hints: HintIndex) -> None:
    question = "where do we mint the session"
    weak = dictionary_rewrite(question, hints.lookup(question))
    corroborated = dictionary_rewrite(question, hints.lookup(question, retrieved=["mint_session_jwt"]))
    assert "mint_session_jwt" not in weak.symbols
    assert "mint_session_jwt" in corroborated.symbols


# ---- the confidence scale --------------------------------------------------------------------------------------
def test_confidence_orders_evidence_kinds(hints: HintIndex) -> None:
    exact = _hint(hints, "what calls PostJournal?", "PostJournal").confidence
    nickname = _hint(hints, "who owns the bouncer?", "AccessGate").confidence
    all_words = _hint(hints, "where do we mint session jwt tokens", "mint_session_jwt").confidence
    docstring = _hint(hints, "where's the payments retry helper?", "withStripeBackoff").confidence
    some_words = _hint(hints, "where is the session created", "mint_session_jwt").confidence
    assert exact > nickname > all_words > some_words
    assert all_words > docstring


def test_combine_confidence_is_noisy_or() -> None:
    assert combine_confidence([]) == 0.0
    assert combine_confidence([0.5, 0.5]) == pytest.approx(0.75)
    assert combine_confidence([0.2, 0.3]) > max(0.2, 0.3)
    assert combine_confidence([1.5, -1.0]) == 1.0  # clipped to [0, 1]


def test_hint_dict_carries_evidence_and_confidence(hints: HintIndex) -> None:
    data = _hint(hints, "what calls PostJournal?", "PostJournal").to_dict()
    assert set(data["evidence"]) >= {"exact"} and 0 < data["confidence"] <= 1  # type: ignore[operator]


# ---- what the ranking stage reads of the hints -------------------------------------------------------------
def test_many_written_names_each_say_less(hints: HintIndex) -> None:
    one = _hint(hints, "what calls PostJournal?", "PostJournal")
    many = _hint(hints, "PostJournal calls withStripeBackoff and mint_session_jwt via AccessGate", "PostJournal")
    assert "exact" in many.evidence
    assert many.evidence["exact"] == pytest.approx(one.evidence["exact"] / 2)  # four names written: / sqrt(4)


def test_symbol_evidence_is_shared_not_copied_and_carries_every_kind(hints: HintIndex) -> None:
    import copy

    found = [h.to_dict() for h in hints.lookup("who owns the bouncer?")]
    evidence = SymbolEvidence.from_hints(found)
    assert copy.deepcopy(evidence) is evidence  # immutable: a pipeline's deep copy of its input costs nothing
    gate = evidence["AccessGate"]
    assert gate.rank == 1 and gate.confidence == pytest.approx(found[0]["confidence"], abs=1e-4)
    assert gate.value("nickname") == pytest.approx(EVIDENCE_CONFIDENCE["nickname"]) and gate.value("exact") == 0.0
    assert "nickname:the bouncer" in gate.reasons
