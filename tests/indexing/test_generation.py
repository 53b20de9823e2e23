"""Every answer comes from one generation of the index: the rewrite's dictionary and hints, the chunks, the vectors.

The interleavings that used to mix two builds are forced here with events (no sleeps): a question paused between
its pipeline's stages while a sync hands a new build over, or while another question moves the served build on.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from haystack_integrations.components.code_alias.app.answer import AskResult
from haystack_integrations.components.code_alias.app.push_sync import WarmIndexer
from haystack_integrations.components.code_alias.app.search import CodeSearch
from haystack_integrations.components.code_alias.indexing.code_index import CodeIndex
from haystack_integrations.components.code_alias.indexing.dictionary_handle import DictionaryHandle
from haystack_integrations.components.code_alias.indexing.index_files import current_manifest
from tests.support.repos import write_tree

WAIT = 60.0  # seconds an event may take before the test fails (a loaded machine), never a sleep
FILES = {
    "pkg/__init__.py": "",
    "pkg/payments.py": 'def charge_card(amount):\n    """Charge a card with retries."""\n    return amount\n',
    "pkg/orders.py": 'def place_order(item):\n    """Place an order for an item."""\n    return item\n',
}
FRESH = "pkg/fresh.py"
FRESH_TEXT = 'def fresh_marker_helper(value):\n    """A helper added by the push."""\n    return value\n'
QUESTION = "where is fresh_marker_helper defined"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "shop", FILES)


@pytest.fixture
def served(tree: Path, tmp_path: Path) -> Iterator[tuple[CodeSearch, Path]]:
    index_dir = tmp_path / "index"
    CodeSearch(index_dir, lexical=True).index(tree)
    query = CodeSearch(index_dir, lexical=True)
    query.ask("charge card")  # the query side is in use (its hint index built): a sync hands its build over
    yield query, index_dir
    query.close()


def consistent(answer: AskResult) -> bool:
    """The rewrite names the fresh symbol exactly when the answer's files hold its file (the question names it)."""
    named = "fresh_marker_helper" in answer.rewrite["symbols"]
    found = any(item["file_path"] == FRESH for item in answer.files)
    return named == found


class Gate:
    """
    Pauses one call until released: `reached` is set when the call arrives (`after`: once it has returned), and the
    call (or its return) waits for `release`.
    """

    def __init__(self, *, after: bool = False) -> None:
        self.reached = threading.Event()
        self.release = threading.Event()
        self.after = after

    def wrap(self, call: Callable[..., Any]) -> Callable[..., Any]:
        def paused(*args: Any, **kwargs: Any) -> Any:
            value = call(*args, **kwargs) if self.after else None
            self.reached.set()
            assert self.release.wait(WAIT), "the test never released this call"
            return value if self.after else call(*args, **kwargs)

        return paused

    def wait(self) -> None:
        assert self.reached.wait(WAIT), "the paused call was never reached"


def pause_before(search: CodeSearch, component: str) -> Gate:
    """A gate on one component of the search's query pipeline (its `run`, on this instance only)."""
    gate = Gate()
    instance = search.query_pipeline.get_component(component)
    instance.run = gate.wrap(instance.run)  # type: ignore[method-assign]
    return gate


def in_thread(work: Callable[[], Any]) -> tuple[threading.Thread, dict[str, Any]]:
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["result"] = work()
        except BaseException as error:  # handed to the test
            box["error"] = error

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, box


def result(thread: threading.Thread, box: dict[str, Any]) -> Any:
    thread.join(WAIT)
    assert not thread.is_alive(), "the thread did not finish"
    if "error" in box:
        raise box["error"]
    return box["result"]


def test_a_warm_sync_between_the_rewrite_and_the_retrieval_does_not_mix_builds(
    served: tuple[CodeSearch, Path], tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """
    The interleaving that mixed builds: a question's BM25 read the old chunks; the sync saved the new build and
    handed it over, its dictionary installed while the sync still held the handle; the question's rewrite then
    read that held (new) dictionary and named the new symbol; the sync let go; the question's definition lookup
    read its pinned (old) manifest again and reloaded the old chunks. The rewrite named a symbol its files lacked.
    """
    query, index_dir = served
    before = current_manifest(index_dir)
    assert before is not None
    indexer = WarmIndexer(index_dir, lexical=True)
    installed = Gate(after=True)
    monkeypatch.setattr(DictionaryHandle, "install", installed.wrap(DictionaryHandle.install))
    rewrite_gate = pause_before(query, "rewriter")
    definitions_gate = pause_before(query, "definitions")

    asking, asked = in_thread(lambda: query.ask(QUESTION))
    rewrite_gate.wait()  # BM25 has ranked the old chunks
    (tree / FRESH).write_text(FRESH_TEXT, encoding="utf-8")
    syncing, synced = in_thread(lambda: indexer.sync(tree, paths=[FRESH]))
    installed.wait()  # the new chunks are served and the new dictionary installed; the handle still held
    rewrite_gate.release.set()
    definitions_gate.wait()  # the rewrite has run
    installed.release.set()
    result(syncing, synced)  # the sync has let go of everything
    definitions_gate.release.set()
    answer = result(asking, asked)
    indexer.close()

    assert consistent(answer), (answer.rewrite["symbols"], [f["file_path"] for f in answer.files])
    assert answer.generation is not None and answer.generation["build"] == before.build  # it started on the old one
    after = query.ask(QUESTION)  # the next question reads the new build, whole
    assert after.generation is not None and after.generation["build"] != before.build
    assert "fresh_marker_helper" in after.rewrite["symbols"] and consistent(after)


def test_a_question_on_the_old_build_does_not_move_the_served_build_back(
    served: tuple[CodeSearch, Path], tree: Path
) -> None:
    """
    A question pinned to the old build finishes on it while another process's re-index is current and another
    question already serves the new build: it neither mixes the two nor reloads the old build for everyone.
    """
    query, index_dir = served
    before = current_manifest(index_dir)
    assert before is not None
    gate = pause_before(query, "definitions")
    asking, asked = in_thread(lambda: query.ask(QUESTION))
    gate.wait()  # its BM25 and rewrite ran on the old build
    (tree / FRESH).write_text(FRESH_TEXT, encoding="utf-8")
    CodeSearch(index_dir, lexical=True).index(tree)  # a re-index (as another process's `code-alias index`)
    other = CodeSearch(index_dir, lexical=True)  # another search of the same folder, as a second server thread
    fresh = other.ask(QUESTION)
    assert fresh.generation is not None and fresh.generation["build"] != before.build
    assert "fresh_marker_helper" in fresh.rewrite["symbols"] and consistent(fresh)
    gate.release.set()
    answer = result(asking, asked)

    assert answer.generation is not None and answer.generation["build"] == before.build
    assert consistent(answer) and "fresh_marker_helper" not in answer.rewrite["symbols"]
    served_now = CodeIndex.open(index_dir).served.manifest
    assert served_now is not None and served_now.build == fresh.generation["build"]  # not reloaded back
    again = query.ask(QUESTION)
    assert again.generation == fresh.generation and consistent(again)
    other.close()


def test_a_removal_mid_question_keeps_the_answer_whole(served: tuple[CodeSearch, Path], tree: Path) -> None:
    """The other direction: the symbol goes while a question that started with it is between its stages."""
    query, index_dir = served
    (tree / FRESH).write_text(FRESH_TEXT, encoding="utf-8")
    indexer = WarmIndexer(index_dir, lexical=True)
    indexer.sync(tree, paths=[FRESH])
    first = query.ask(QUESTION)
    assert "fresh_marker_helper" in first.rewrite["symbols"] and consistent(first)
    gate = pause_before(query, "definitions")
    asking, asked = in_thread(lambda: query.ask(QUESTION))
    gate.wait()
    (tree / FRESH).unlink()
    indexer.sync(tree, paths=[FRESH])
    gate.release.set()
    answer = result(asking, asked)
    indexer.close()
    assert answer.generation == first.generation and consistent(answer)
    assert "fresh_marker_helper" in answer.rewrite["symbols"]  # the build it started on still had it
    gone = query.ask(QUESTION)
    assert "fresh_marker_helper" not in gone.rewrite["symbols"] and consistent(gone)


def test_the_answer_reports_its_generation(served: tuple[CodeSearch, Path]) -> None:
    query, index_dir = served
    answer = query.ask("charge card")
    manifest = current_manifest(index_dir)
    assert manifest is not None and manifest.dictionary is not None
    assert answer.to_dict()["generation"] == {
        "build": manifest.build,
        "dictionary_version": manifest.dictionary.version,
        "documents": manifest.documents.count if manifest.documents else None,
        "embedded": None if manifest.documents is None else manifest.documents.embedded,
    }


def test_an_older_builds_derived_values_stay_while_read_and_go_after(
    served: tuple[CodeSearch, Path], tree: Path
) -> None:
    """
    A question still on the build before a swap finds that build's definition map (and BM25 index) in the cache
    instead of rebuilding it over the current one; once the last such question ends, they go.
    """
    from haystack_integrations.components.code_alias.retrieval import definitions

    query, index_dir = served
    code_index = CodeIndex.open(index_dir)
    cache = code_index.derived.cache(definitions._DEFINITIONS)
    indexer = WarmIndexer(index_dir, lexical=True)
    gate = pause_before(query, "definitions")
    asking, asked = in_thread(lambda: query.ask("charge card"))
    gate.wait()
    assert code_index.pinned_generation() is None  # the question's generation is its own context's, not ours
    (tree / FRESH).write_text(FRESH_TEXT, encoding="utf-8")
    indexer.sync(tree, paths=[FRESH])  # hands the new build over, with its derived values built ahead
    assert any(cache._earlier.values())  # the old build's definition map stays: a question reads that build
    gate.release.set()
    answer = result(asking, asked)
    indexer.close()
    assert answer.files and not any(cache._earlier.values())  # the last reader ended: retired
    assert code_index.live(code_index.served.generation) is False  # no question in flight now
