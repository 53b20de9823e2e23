"""`HintIndex.updated`: the index of a sync's dictionary, redone for the changed names only, answers as a full one."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest

from haystack_integrations.components.code_alias.core.builder import DictionaryBuilder
from haystack_integrations.components.code_alias.core.model import AliasDictionary
from haystack_integrations.components.code_alias.rewriting.hints import HintIndex
from tests.support.repos import ROOT

SOURCE = ROOT / "components" / "haystack_integrations" / "components" / "code_alias"
QUESTIONS = [
    "where is the hint index built?",
    "HintIndex lookup",
    "how are deltas of the dictionary applied?",
    "apply_dictionary_delta",
    "compact the chain of deltas",
    "charge the card with retries",
    "where is charge_card?",
    "charge_with_retry",
    "who persists the documents store",
    "warm indexer sync of pushed paths",
    "bm25 retriever top k",
    "ranked answer of a pool",
    "dict lookup",
    "refund payment",
]
PREFIXES = ["charge", "Hint", "apply", "refu", "persist", "ind"]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    shutil.copytree(SOURCE, root / "code_alias", ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "config"))
    (root / "shop").mkdir()
    (root / "shop" / "payments.py").write_text(
        'def charge_card(amount):\n    """Charge a card with retries."""\n    return amount\n\n\n'
        'def charge_card_later(amount):\n    """Charge later."""\n    return amount\n',
        encoding="utf-8",
    )
    return root


def answers(hints: HintIndex) -> list[object]:
    looked = [[h.to_dict() for h in hints.lookup(q, retrieved=["charge_card", "HintIndex"])] for q in QUESTIONS]
    completed = [[h.to_dict() for h in hints.complete(p)] for p in PREFIXES]
    return [looked, completed]


def postings(hints: HintIndex) -> dict[str, object]:
    """The index's postings by target name (its internal numbering aside)."""

    def named(table: dict[str, list[int]]) -> dict[str, Counter[str]]:
        return {key: Counter(hints.targets[i].name for i in ids) for key, ids in table.items() if ids}

    return {
        "exact": named(hints.by_exact),
        "name": named(hints.by_name_word),
        "doc": named(hints.by_doc_word),
        "nickname": named(hints.by_nickname),
        "idf": (hints.idf_name, hints.idf_doc, hints._symbol_count),
        "vocabulary": (hints.name_vocabulary, hints.word_vocabulary),
    }


def refreshed(tree: Path, before: AliasDictionary, builder: DictionaryBuilder) -> AliasDictionary:
    return builder.refresh(tree, before)[0]


def test_an_updated_index_answers_as_a_full_build(tree: Path) -> None:
    builder = DictionaryBuilder()
    before = builder.refresh(tree, None)[0]
    hints = HintIndex(before)
    payments = tree / "shop" / "payments.py"
    # a rename (the old name becomes an alias), a removed file, a new file, an edited docstring
    payments.write_text(payments.read_text().replace("def charge_card(", "def charge_with_retry("), encoding="utf-8")
    (tree / "code_alias" / "ranking" / "answer.py").unlink()
    (tree / "shop" / "refunds.py").write_text('def refund(amount):\n    """Refund a payment."""\n', encoding="utf-8")
    hints_file = tree / "code_alias" / "rewriting" / "hints" / "index.py"
    hints_file.write_text(hints_file.read_text().replace("Inverted indexes", "Inverted posting lists"), "utf-8")
    after = refreshed(tree, before, builder)
    updated = hints.updated(before, after)
    assert updated is not None
    full = HintIndex(after)
    assert answers(updated) == answers(full)
    assert postings(updated) == postings(full)
    assert updated.version == after.version
    assert "charge_with_retry" in [h.name for h in updated.lookup("where is charge_card?")]  # the alias
    assert answers(hints) == answers(HintIndex(before)), "the index it was made from must not change"
    # and again from the updated one (a second sync)
    payments.write_text(payments.read_text().replace("charge_card_later", "charge_card_soon"), encoding="utf-8")
    again = refreshed(tree, after, builder)
    twice = updated.updated(after, again)
    assert twice is not None
    assert answers(twice) == answers(HintIndex(again))
    assert postings(twice) == postings(HintIndex(again))


def test_a_full_build_is_asked_for_when_shared_inputs_change(tree: Path) -> None:
    builder = DictionaryBuilder()
    before = builder.refresh(tree, None)[0]
    hints = HintIndex(before)
    nicknamed = before.model_copy(update={"nicknames": {"payer": ["charge_card"]}, "version": "other"})
    assert hints.updated(before, nicknamed) is None  # nicknames point at names: full build
    assert hints.updated(nicknamed, before) is None  # not the dictionary this index was built from
    payments = tree / "shop" / "payments.py"
    payments.write_text(payments.read_text().replace("charge_card", "charge_now"), encoding="utf-8")
    after = refreshed(tree, before, builder)
    assert hints.updated(before, after, max_names=0) is None  # too many names changed
