"""Symbol cards: their text, their vectors' incremental refresh, semantic hint evidence, the fitted calibration."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

from haystack_integrations.components.code_alias.core.cards import (
    CardsError,
    SymbolCards,
    build_cards,
    card_text,
    cards_file,
    dictionary_cards,
)
from haystack_integrations.components.code_alias.core.identifiers import split_identifier
from haystack_integrations.components.code_alias.core.model import AliasDictionary, SymbolEntry
from haystack_integrations.components.code_alias.indexing.card_vectors import refresh_card_vectors
from haystack_integrations.components.code_alias.rewriting.hints import SEMANTIC_DEPTH, HintIndex
from haystack_integrations.components.code_alias.rewriting.hints.calibration import (
    HintCalibration,
    Logistic,
    fit_logistic,
)
from haystack_integrations.components.code_alias.rewriting.rewrite import dictionary_rewrite


def _entry(name: str, file: str, *, kind: str = "function", doc: tuple[str, ...] = (), package: str | None = None):
    module = file.rsplit(".", 1)[0].replace("/", ".")
    return SymbolEntry(
        name=name,
        kind=kind,  # type: ignore[arg-type]
        qualified_name=f"{module}.{name}",
        file_path=file,
        language="python",
        start_line=1,
        end_line=3,
        exported=True,
        package=package,
        words=split_identifier(name),
        doc_words=doc,
    )


def _dictionary(*entries: SymbolEntry) -> AliasDictionary:
    return AliasDictionary(symbols=list(entries)).seal()


class CountingEmbedder:
    """A deterministic stand-in for the model: a vector per text from its hash; counts what it was asked."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def __call__(self, texts: list[str]) -> list[list[float]]:
        self.texts += texts
        out = []
        for text in texts:
            seed = int(hashlib.sha1(text.encode()).hexdigest()[:8], 16)
            out.append(np.random.default_rng(seed).normal(size=8).tolist())
        return out


def test_card_text_has_kind_name_words_package_and_doc_words() -> None:
    entry = _entry(
        "withStripeBackoff", "payments/stripe.ts", doc=("retry", "stripe", "call", "delays"), package="@acme/payments"
    )
    text = card_text([entry])
    assert text == "function: payments stripe with stripe backoff (package @acme/payments). retry stripe call delays"


def test_cards_leave_out_test_only_names_and_dunders() -> None:
    dictionary = _dictionary(
        _entry("parse_config", "app/config.py"),
        _entry("helper_for_tests", "tests/test_config.py"),
        _entry("__init__", "app/config.py", kind="method"),
        _entry("parse_config", "tests/test_parse.py"),  # a test copy of a real name: one card, from the real one
    )
    cards = dictionary_cards(dictionary)
    assert [c.name for c in cards] == ["parse_config"]
    assert cards[0].text.startswith("function: app config parse config")


def test_refresh_embeds_only_new_cards_and_follows_renames_and_deletions(tmp_path: Path) -> None:
    embed = CountingEmbedder()
    before = _dictionary(_entry("retry_call", "a.py"), _entry("send_mail", "b.py"), _entry("parse_rows", "c.py"))
    stats = refresh_card_vectors(tmp_path, before, embed)
    assert (stats["cards"], stats["embedded"]) == (3, 3)
    first = cards_file(tmp_path, before.version)
    assert first.is_file()

    # a rename in a.py and the removal of c.py: one new card embedded, the old file replaced
    after = _dictionary(_entry("retry_with_backoff", "a.py"), _entry("send_mail", "b.py"))
    embed.texts.clear()
    stats = refresh_card_vectors(tmp_path, after, embed)
    assert (stats["cards"], stats["embedded"], stats["reused"]) == (2, 1, 1)
    assert embed.texts == ["function: a retry with backoff"]
    assert not first.exists() and cards_file(tmp_path, after.version).is_file()
    cards = SymbolCards.load(cards_file(tmp_path, after.version))
    assert cards.names == ["retry_with_backoff", "send_mail"] and cards.version == after.version
    # the kept card's vector is the one embedded the first time
    assert np.allclose(cards.matrix[1], cards.matrix[1] / np.linalg.norm(cards.matrix[1]))

    embed.texts.clear()
    assert refresh_card_vectors(tmp_path, after, embed)["embedded"] == 0 and embed.texts == []


def test_cards_round_trip_and_a_damaged_file_is_named(tmp_path: Path) -> None:
    cards, embedded = build_cards(dictionary_cards(_dictionary(_entry("x_y", "a.py"))), CountingEmbedder(), version="v")
    assert embedded == 1
    path = tmp_path / "cards-v.npz"
    cards.save(path)
    again = SymbolCards.load(path)
    assert again.names == cards.names and np.allclose(again.matrix, cards.matrix)
    path.write_bytes(b"not a zip")
    with pytest.raises(CardsError, match=r"cards-v\.npz"):
        SymbolCards.load(path)


def test_nearest_and_mismatched_vectors() -> None:
    cards = SymbolCards(["a", "b", "c"], np.eye(3), ["1", "2", "3"], version="v")
    assert [name for name, _ in cards.nearest([0.1, 0.9, 0.3], 2)] == ["b", "c"]
    assert cards.nearest([1.0, 0.0], 2) == []  # another model's dimensions: nothing, not an error
    assert cards.nearest([0.0, 0.0, 0.0], 2) == []


def _semantic_setup() -> tuple[HintIndex, SymbolCards]:
    dictionary = _dictionary(
        _entry("withStripeBackoff", "payments/stripe.ts"),
        _entry("createCharge", "payments/stripe.ts"),
        _entry("retryFailedExports", "ledger/exports.ts"),
        _entry("helper_words", "misc/helper.py"),
    )
    names = ["withStripeBackoff", "createCharge", "retryFailedExports", "helper_words", "gone_from_dictionary"]
    vectors = np.array([[1.0, 0.1, 0], [0.3, 1, 0], [0.5, 0.2, 1], [0, 0, 1], [0.95, 0.1, 0]])
    return HintIndex(dictionary), SymbolCards(names, vectors, [str(i) for i in range(5)], version="old")


def test_semantic_evidence_names_what_words_cannot() -> None:
    index, cards = _semantic_setup()
    question = "where's the payments retry helper?"
    assert "withStripeBackoff" not in [h.name for h in index.lookup(question)]  # no shared word, no card: absent
    calibration = HintCalibration(semantic=Logistic(intercept=-4.0, coefficients={"similarity": 6.0, "gap": -8.0}))
    hints = index.lookup(question, question_vector=[1.0, 0.1, 0.0], cards=cards, calibration=calibration)
    first = hints[0]
    assert first.name == "withStripeBackoff" and "semantic" in first.evidence
    expected = calibration.semantic_confidence(first.similarity or 0.0, 0, first.similarity or 0.0)
    assert first.evidence["semantic"] == pytest.approx(expected)
    assert first.reasons[0].startswith("semantic:")
    assert "gone_from_dictionary" not in [h.name for h in hints]  # a card of a name no longer defined: ignored
    # the rewrite picks it when the calibrated confidence is strong
    assert dictionary_rewrite(question, hints).symbols[:1] == ["withStripeBackoff"]


def test_semantic_candidates_keep_their_places_under_the_hint_cap() -> None:
    entries = [_entry(f"payments_retry_{i}", f"p{i}.py") for i in range(60)] + [_entry("stripeBackoff", "s.py")]
    index = HintIndex(_dictionary(*entries))
    names = [e.name for e in entries]
    vectors = np.array([[0.0, 1.0]] * 60 + [[1.0, 0.0]])
    cards = SymbolCards(names, vectors, [str(i) for i in range(61)], version="v")
    plain = [h.name for h in index.lookup("payments retry", limit=10)]
    assert "stripeBackoff" not in plain
    hints = index.lookup("payments retry", limit=10, question_vector=[1.0, 0.0], cards=cards)
    assert len(hints) == 10 and "stripeBackoff" in [h.name for h in hints]
    assert SEMANTIC_DEPTH >= 1


def test_a_word_hint_whose_card_is_far_loses_confidence() -> None:
    index, cards = _semantic_setup()
    words = Logistic(intercept=-3.0, coefficients={"similarity": 6.0})
    calibration = HintCalibration(semantic=Logistic(intercept=-4.0, coefficients={}), words=words, words_reference=0.5)
    plain = {h.name: h for h in index.lookup("helper words please")}
    near = {
        h.name: h
        for h in index.lookup("helper words please", question_vector=[0, 0, 1], cards=cards, calibration=calibration)
    }
    far = {
        h.name: h
        for h in index.lookup("helper words please", question_vector=[1, 0, 0], cards=cards, calibration=calibration)
    }
    assert near["helper_words"].confidence >= plain["helper_words"].confidence - 1e-9  # near: nothing lost
    assert far["helper_words"].confidence < 0.5 * plain["helper_words"].confidence  # far: most of it gone
    assert calibration.word_factor(0.9) == 1.0 and calibration.word_factor(0.0) < 0.1


def test_fit_logistic_on_a_small_hand_made_set() -> None:
    rows = [{"similarity": s} for s in (0.1, 0.2, 0.25, 0.3, 0.35, 0.5, 0.55, 0.6, 0.7, 0.8)]
    labels = [0, 0, 0, 1, 0, 0, 1, 1, 1, 1]
    model = fit_logistic(rows, labels, l2=0.01)
    assert model.coefficients["similarity"] > 0
    assert model(similarity=0.8) > 0.8 > 0.2 > model(similarity=0.1)
    # its mean prediction matches the base rate (a property of the maximum-likelihood intercept)
    assert np.mean([model(**r) for r in rows]) == pytest.approx(0.5, abs=0.02)
    with pytest.raises(ValueError, match="both classes"):
        fit_logistic(rows, [1] * len(rows))


def test_the_packaged_calibration_loads_and_says_where_it_came_from() -> None:
    calibration = HintCalibration.load()
    assert 0.0 < calibration.semantic_confidence(0.6, 0, 0.6) < 1.0
    assert calibration.semantic_confidence(0.6, 0, 0.6) > calibration.semantic_confidence(0.3, 10, 0.6)
    assert "fit_hint_calibration" in calibration.source
