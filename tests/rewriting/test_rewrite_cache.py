"""The rewrite cache: normalised keys, LRU and persistent stores, no LLM call on a hit, invalidation on re-index."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest
from haystack.components.generators.chat import MockChatGenerator
from haystack.dataclasses import ChatMessage

from haystack_integrations.components.code_alias.core.builder import DictionaryBuilder
from haystack_integrations.components.code_alias.core.model import AliasDictionary
from haystack_integrations.components.code_alias.rewriting.cache import (
    DiskRewriteCache,
    LRURewriteCache,
    cache_key,
    make_rewrite_cache,
    normalise_question,
)
from haystack_integrations.components.code_alias.rewriting.rewriter import ConstrainedQueryRewriter
from tests.support.repos import ACME_REPO

ANSWER = (
    '{"rewritten": "withStripeBackoff retry", "symbols": ["withStripeBackoff"], "packages": [], '
    '"intent": "locate_symbol"}'
)


class Counter:
    """A response function that counts the LLM calls."""

    def __init__(self, reply: str = ANSWER, fail_first: int = 0) -> None:
        self.calls = 0
        self.reply = reply
        self.fail_first = fail_first

    def __call__(self, messages: list[ChatMessage]) -> str:
        self.calls += 1
        if self.calls <= self.fail_first:
            raise ConnectionError("server down")
        return self.reply


@pytest.fixture(scope="module")
def dictionary() -> AliasDictionary:
    return DictionaryBuilder().build(ACME_REPO)[0]


def rewriter_for(dictionary: AliasDictionary, counter: Counter, **kwargs: object) -> ConstrainedQueryRewriter:
    return ConstrainedQueryRewriter.from_dictionary(
        dictionary, chat_generator=MockChatGenerator(response_fn=counter), **kwargs
    )


def test_normalisation_and_keys() -> None:
    assert normalise_question("  Where's  the\tRetry HELPER? ") == "where's the retry helper?"
    key = cache_key("Where is X?", "v1", "cfg")
    assert key == cache_key("where   is x?", "v1", "cfg")
    assert key != cache_key("where is y?", "v1", "cfg")
    assert key != cache_key("where is x?", "v2", "cfg")
    assert key != cache_key("where is x?", "v1", "other")


def test_lru_evicts_least_recently_used_and_counts() -> None:
    cache = LRURewriteCache(max_size=2)
    cache.set("a", {"v": 1})
    cache.set("b", {"v": 2})
    assert cache.get("a") == {"v": 1}
    cache.set("c", {"v": 3})
    assert cache.get("b") is None and cache.get("c") == {"v": 3}
    assert cache.stats() == {"hits": 2, "misses": 1, "size": 2, "backend": "memory"}
    value = cache.get("a")
    assert value is not None
    value["v"] = 99
    assert cache.get("a") == {"v": 1}  # a hit hands out a copy
    with pytest.raises(ValueError):
        LRURewriteCache(max_size=0)
    assert make_rewrite_cache(cache_path=None, cache_size=0) is None


def test_lru_is_thread_safe() -> None:
    cache = LRURewriteCache(max_size=50)

    def work(offset: int) -> None:
        for i in range(500):
            cache.set(f"k{(i + offset) % 80}", {"i": i})
            cache.get(f"k{(i * 7) % 80}")

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    stats = cache.stats()
    assert stats["hits"] + stats["misses"] == 8 * 500 and len(cache) == 50


def test_identical_questions_hit_and_cost_no_llm_call(dictionary: AliasDictionary) -> None:
    counter = Counter()
    rewriter = rewriter_for(dictionary, counter)
    first = rewriter.run(question="Where's the payments retry helper?")
    assert first["meta"]["cache_hit"] is False and counter.calls == 1
    started = time.perf_counter()
    second = rewriter.run(question="  where's THE payments   retry helper?  ")
    elapsed_ms = (time.perf_counter() - started) * 1000
    assert counter.calls == 1
    assert second["meta"]["cache_hit"] is True and second["meta"]["llm_latency_ms"] is None
    assert elapsed_ms < 50  # the benchmark measures the real p95 (<= 1 ms); this only catches a gross regression
    for key in ("rewritten", "symbols", "packages", "intent", "hints"):
        assert second[key] == first[key]
    assert rewriter.cache_stats() == {"hits": 1, "misses": 1, "size": 1, "backend": "memory"}
    assert second["meta"]["cache"]["hits"] == 1


def test_dictionary_mode_and_fallbacks_are_not_cached(dictionary: AliasDictionary) -> None:
    counter = Counter(fail_first=1)
    rewriter = rewriter_for(dictionary, counter)
    rewriter.run(question="who owns the bouncer?", mode="dictionary")
    assert counter.calls == 0 and rewriter.cache_stats()["size"] == 0
    failed = rewriter.run(question="who owns the bouncer?")
    assert failed["meta"]["fallback"].startswith("error: ConnectionError") and rewriter.cache_stats()["size"] == 0
    recovered = rewriter.run(question="who owns the bouncer?")
    assert recovered["meta"]["fallback"] is None and counter.calls == 2
    assert rewriter.run(question="who owns the bouncer?")["meta"]["cache_hit"] is True and counter.calls == 2


def test_config_is_part_of_the_key(dictionary: AliasDictionary) -> None:
    one = rewriter_for(dictionary, Counter())
    other_model = ConstrainedQueryRewriter.from_dictionary(
        dictionary, chat_generator=MockChatGenerator(response_fn=Counter(), model="other")
    )
    other_cap = rewriter_for(dictionary, Counter(), max_output_tokens=32)
    same = rewriter_for(dictionary, Counter())
    assert one.config_fingerprint() != other_model.config_fingerprint()
    assert one.config_fingerprint() != other_cap.config_fingerprint()
    assert one.config_fingerprint() == same.config_fingerprint()


def test_cache_can_be_turned_off(dictionary: AliasDictionary) -> None:
    counter = Counter()
    rewriter = rewriter_for(dictionary, counter, cache_size=0)
    rewriter.run(question="who owns the bouncer?")
    rewriter.run(question="who owns the bouncer?")
    assert counter.calls == 2 and rewriter.cache_stats()["hits"] == 0


def test_dictionary_refresh_invalidates(tmp_path: Path) -> None:
    import shutil

    repo = tmp_path / "repo"
    shutil.copytree(ACME_REPO, repo, symlinks=True)
    path = tmp_path / "index" / "dictionary.json"
    builder = DictionaryBuilder()
    first_dictionary = builder.build(repo)[0]
    first_dictionary.save(path)
    counter = Counter()
    rewriter = ConstrainedQueryRewriter(
        dictionary_path=str(path), chat_generator=MockChatGenerator(response_fn=counter)
    )
    rewriter.run(question="where's the payments retry helper?")
    rewriter.run(question="where's the payments retry helper?")
    assert counter.calls == 1

    retry = repo / "packages" / "payments-core" / "src" / "retry.ts"
    retry.write_text(retry.read_text() + "\nexport function withPaypalBackoff() {}\n")
    refreshed = builder.refresh(repo, previous=first_dictionary)[0]
    assert refreshed.version != first_dictionary.version
    refreshed.save(path)
    stamp = time.time_ns() + 5_000_000_000
    os.utime(path, ns=(stamp, stamp))  # a distinct mtime even on coarse file systems

    out = rewriter.run(question="where's the payments retry helper?")
    assert out["meta"]["cache_hit"] is False and counter.calls == 2
    assert out["meta"]["dictionary_version"] == refreshed.version
    assert rewriter.run(question="where's the payments retry helper?")["meta"]["cache_hit"] is True
    assert counter.calls == 2


def test_persistent_cache_survives_a_restart(dictionary: AliasDictionary, tmp_path: Path) -> None:
    folder = tmp_path / "rewrite-cache"
    counter = Counter()
    first = rewriter_for(dictionary, counter, cache_path=str(folder))
    first.run(question="who owns the bouncer?")
    assert first.cache_stats()["backend"] == "disk"
    first.close()
    second = rewriter_for(dictionary, counter, cache_path=str(folder))
    out = second.run(question="Who owns the bouncer?")
    assert out["meta"]["cache_hit"] is True and counter.calls == 1
    second.close()

    cache = DiskRewriteCache(path=folder)
    cache.set("k", {"a": [1, 2]})
    assert cache.get("k") == {"a": [1, 2]} and cache.get("missing") is None
    assert cache.stats()["hits"] == 1 and cache.stats()["misses"] == 1
    cache.clear()
    assert len(cache) == 0
    cache.close()
