"""benchmarks/mixed_index.py's SWE-bench path: instance order, anchors, and switching a repository between commits."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from haystack_integrations.components.code_alias.app.search import CodeSearch
from haystack_integrations.components.code_alias.evaluation import GoldenItem
from haystack_integrations.components.code_alias.evaluation import mixed_index as mixed_index_module
from haystack_integrations.components.code_alias.evaluation.runner import SearchResult


@pytest.fixture(scope="module")
def mixed_index() -> ModuleType:
    return mixed_index_module


def item(id: str, repo: str, commit: str, created: str) -> GoldenItem:
    return GoldenItem(
        id=id, question=id, gold_files=["a.py"], repo=repo, base_commit=commit, meta={"created_at": created}
    )


def test_order_groups_by_repository_anchor_first_then_by_date(mixed_index: ModuleType) -> None:
    items = [
        item("b1", "o/b", "b-new", "2024-01-01"),
        item("a1", "o/a", "a-mid", "2022-01-01"),
        item("b2", "o/b", "b-old", "2020-01-01"),
        item("a2", "o/a", "a-old", "2021-01-01"),
        item("a3", "o/a", "a-mid", "2022-02-01"),
    ]
    ordered, anchors = mixed_index.order_by_repository(items)
    assert anchors == {"o/b": "b-new", "o/a": "a-mid"}
    assert [i.id for i in ordered] == ["b1", "b2", "a1", "a3", "a2"]


def write(folder: Path, files: dict[str, str]) -> Path:
    for path, text in files.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(text, encoding="utf-8")
    return folder


OLD = {
    "pay/retry.py": "def retry_payment(charge):\n    return charge()\n",
    "pay/util.py": "def to_cents(amount):\n    return amount * 100\n",
}
NEW = {
    "pay/retry.py": "def retry_payment(charge):\n    return charge()\n",
    "pay/refund.py": "def refund_order(order):\n    return order.cancel()\n",
}
OTHER = {"mail/send.py": "def send_newsletter(recipients):\n    return recipients\n"}


def test_switching_replaces_one_repository_and_rereads_only_changed_files(
    mixed_index: ModuleType, tmp_path: Path
) -> None:
    old, new = write(tmp_path / "pay-old", OLD), write(tmp_path / "pay-new", NEW)
    other = write(tmp_path / "mail", OTHER)
    search = CodeSearch(tmp_path / "index", lexical=True)
    switching = mixed_index.SwitchingIndex(search, {"o/pay": old, "o/mail": other})
    built = switching.build()
    assert [b["repo"] for b in built] == ["o/pay", "o/mail"]
    switching.place("o/mail", other)
    assert switching.switches == []  # already in place: nothing re-indexed

    switching.place("o/pay", new)
    (switch,) = switching.switches
    assert switch["repo"] == "o/pay" and switch["files_changed"] == 1 and switch["files_removed"] == 1
    files = {f["file_path"] for f in search.ask("refund order cents", repo="o/pay", top_k=10).files}
    assert "pay/refund.py" in files and "pay/util.py" not in files
    assert {f["file_path"] for f in search.ask("send newsletter", repo="o/mail").files} == {"mail/send.py"}

    switching.place("o/mail", other)  # the asked repository is mail: pay goes back to its anchor
    assert [s["repo"] for s in switching.switches] == ["o/pay", "o/pay"]
    files = {f["file_path"] for f in search.ask("refund order cents", repo="o/pay", top_k=10).files}
    assert "pay/util.py" in files and "pay/refund.py" not in files
    assert switching.documents("o/pay") == built[0]["documents"]


def test_replay_answers_what_was_recorded_and_says_when_not(mixed_index: ModuleType) -> None:
    answer = SearchResult(files=["a.py"])
    replay = mixed_index.ReplaySearcher({("/c", "q"): answer}, "mixed-filter")
    replay.index(Path("/c"), name="c")
    assert replay.search("q", rewrite="dictionary", retrieval="bm25", top_k=10) is answer
    with pytest.raises(RuntimeError, match="mixed-filter: no recorded answer"):
        replay.search("other", rewrite="dictionary", retrieval="bm25", top_k=10)


def test_hit_counts_as_file_acc_at_5_every_gold_file(mixed_index: ModuleType) -> None:
    top = ["a.js", "b.js", "c.js", "d.js", "e.js", "f.js"]
    assert mixed_index._hit(top, ["a.js", "e.js"])
    assert not mixed_index._hit(top, ["a.js", "f.js"])  # one of two gold files below the top 5
    assert not mixed_index._hit(top, []) and not mixed_index._hit(None, ["a.js"])
