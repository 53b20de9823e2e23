"""Which repository of a mixed index a question is about (issue 11): `retrieval.repository_selection` and `ask`."""

from __future__ import annotations

from pathlib import Path

import pytest

from haystack_integrations.components.code_alias.app.search import CodeSearch
from haystack_integrations.components.code_alias.retrieval.repository_selection import (
    FILTER_POSTERIOR,
    cori_evidence,
    ranking_votes,
    select_repository,
)
from tests.support.repos import write_tree

PAYMENTS = {
    "billing/charges.py": 'def retry_card_charge(invoice):\n    """Retry a declined card charge of an invoice."""\n'
    "    return invoice.charge_card(backoff=True)\n",
    "billing/refunds.py": 'def refund_invoice(invoice):\n    """Refund an invoice to the card it was charged on."""\n'
    "    return invoice.refund()\n",
    "billing/config.py": 'def load_config(path):\n    """Load the settings file."""\n    return open(path).read()\n',
}
IMAGING = {
    "pictures/thumbnails.py": 'def resize_thumbnail(image, width):\n    """Resize an image to a thumbnail width."""\n'
    "    return image.resize(width)\n",
    "pictures/crop.py": 'def crop_pixels(image, box):\n    """Crop the pixels of an image to a box."""\n'
    "    return image.crop(box)\n",
    "pictures/config.py": 'def load_config(path):\n    """Load the settings file."""\n    return open(path).read()\n',
}


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> CodeSearch:
    root = tmp_path_factory.mktemp("mixed")
    search = CodeSearch(root / "index", lexical=True)
    search.index(write_tree(root / "payments", PAYMENTS), repo="payments")
    search.index(write_tree(root / "imaging", IMAGING), repo="imaging")
    return search


# ---- the framework-free core ---------------------------------------------------------------------------------------
def test_cori_weighs_a_word_one_repository_holds_over_a_word_all_hold() -> None:
    documents = {"a": 100, "b": 100}
    only_a = cori_evidence(["invoice"], {"invoice": {"a": 10}}, documents)
    both = cori_evidence(["config"], {"config": {"a": 10, "b": 10}}, documents)
    assert only_a["b"] == 0.0 and only_a["a"] > both["a"] > 0.0
    assert both["a"] == pytest.approx(both["b"])
    assert cori_evidence(["unknown"], {}, documents) == {"a": 0.0, "b": 0.0}


def test_ranking_votes_count_reciprocal_ranks_to_the_depth() -> None:
    assert ranking_votes(["a", "b", "a", None]) == pytest.approx({"a": 1 + 1 / 3, "b": 0.5})
    assert ranking_votes(["a", "b"], depth=1) == {"a": 1.0}


def test_select_repository_filters_only_on_strong_joint_evidence() -> None:
    documents = {"a": 100, "b": 100}
    terms = {"invoice": {"a": 20}, "config": {"a": 5, "b": 5}}
    strong = select_repository(["invoice", "config"], terms, documents, ["a", "a", "b"])
    assert strong is not None and strong.repo == "a" and strong.action == "filter"
    assert strong.confidence >= FILTER_POSTERIOR and sum(strong.posterior.values()) == pytest.approx(1.0)
    weak = select_repository(["config"], terms, documents, ["a", "b", "a", "b"])
    assert weak is not None and weak.action == "boost" and weak.confidence < FILTER_POSTERIOR
    assert weak.to_dict()["action"] == "boost" and set(weak.to_dict()["posterior"]) == {"a", "b"}  # type: ignore[arg-type]
    # No repository to choose between, no known word, or an empty answer: nothing is inferred.
    assert select_repository(["invoice"], terms, {"a": 100}, ["a"]) is None
    assert select_repository(["unknown"], terms, documents, ["a"]) is None
    assert select_repository(["invoice"], terms, documents, []) is None
    with pytest.raises(ValueError, match="filter_posterior"):
        select_repository(["invoice"], terms, documents, ["a"], filter_posterior=1.5)


# ---- through `CodeSearch.ask` on a two-repository index -------------------------------------------------------------
def test_question_words_of_one_repository_narrow_the_answer_to_it(mixed: CodeSearch) -> None:
    question = "how does the config retry a declined card charge of an invoice?"
    plain = mixed.ask(question, select_repository=False)
    assert plain.rewrite["inferred_repository"] is None
    assert {f.get("repo") for f in plain.files} == {"payments", "imaging"}  # the shared config file matches too
    assert mixed.ask(question).rewrite["inferred_repository"] is None  # off unless asked for
    answer = mixed.ask(question, select_repository=True)
    inferred = answer.rewrite["inferred_repository"]
    assert inferred["repo"] == "payments" and inferred["used"] == "filter"
    assert inferred["confidence"] >= FILTER_POSTERIOR
    assert answer.files and {f.get("repo") for f in answer.files} == {"payments"}
    assert answer.files[0]["file_path"] == "billing/charges.py"
    assert {f.get("repo") for f in answer.ranked_files("bm25")} == {"payments"}


def test_weak_evidence_is_recorded_and_changes_nothing(mixed: CodeSearch) -> None:
    question = "where is the settings file loaded?"  # words both repositories hold alike
    answer = mixed.ask(question, select_repository=True)
    inferred = answer.rewrite["inferred_repository"]
    assert inferred is not None and inferred["used"] is None and inferred["confidence"] < FILTER_POSTERIOR
    plain = mixed.ask(question, select_repository=False)
    assert [f["file_path"] for f in answer.files] == [f["file_path"] for f in plain.files]  # no boost, no filter


def test_nothing_is_inferred_with_a_caller_filter_or_one_repository(mixed: CodeSearch, tmp_path: Path) -> None:
    question = "how does the config retry a declined card charge of an invoice?"
    assert mixed.ask(question, repo="imaging", select_repository=True).rewrite["inferred_repository"] is None
    single = CodeSearch(tmp_path / "single", lexical=True)
    single.index(write_tree(tmp_path / "payments", PAYMENTS), repo="payments")
    assert single.ask(question, select_repository=True).rewrite["inferred_repository"] is None
