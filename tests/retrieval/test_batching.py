"""Micro-batching of concurrent calls (`retrieval.batching.MicroBatcher`) and the batched question embedder."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from haystack_integrations.components.code_alias.retrieval.batching import MicroBatcher
from haystack_integrations.components.code_alias.retrieval.embedders import CodeTextEmbedder


class SlowSquares:
    """A batch function that records its batches and holds the model slot long enough for others to queue."""

    def __init__(self, seconds: float = 0.05) -> None:
        self.seconds = seconds
        self.batches: list[list[int]] = []
        self.lock = threading.Lock()

    def __call__(self, numbers: list[int]) -> list[int]:
        with self.lock:
            self.batches.append(list(numbers))
        time.sleep(self.seconds)
        return [n * n for n in numbers]


def test_a_lone_call_runs_at_once_in_a_batch_of_one() -> None:
    function = SlowSquares(0.0)
    batcher = MicroBatcher(function, max_batch=8)
    assert batcher(7) == 49
    assert function.batches == [[7]]


def test_concurrent_calls_share_batches_and_each_gets_its_own_result() -> None:
    function = SlowSquares(0.05)
    batcher = MicroBatcher(function, max_batch=8)
    with ThreadPoolExecutor(max_workers=20) as pool:
        results = list(pool.map(batcher, range(20)))
    assert results == [n * n for n in range(20)]
    assert sorted(n for batch in function.batches for n in batch) == list(range(20))  # each item exactly once
    assert len(function.batches) < 20  # callers that queued behind a running batch went together
    assert max(len(batch) for batch in function.batches) <= 8
    assert batcher.items == 20 and batcher.batches == len(function.batches)


def test_equal_items_from_different_callers_are_separate_jobs() -> None:
    """The same question asked by many clients at once: every caller is answered, none is lost or answered twice."""
    function = SlowSquares(0.02)
    batcher = MicroBatcher(function, max_batch=4)
    with ThreadPoolExecutor(max_workers=24) as pool:
        results = list(pool.map(batcher, [3, 5] * 12))
    assert results == [9, 25] * 12
    assert sum(len(batch) for batch in function.batches) == 24


def test_max_parallel_bounds_the_calls_running_at_once() -> None:
    running = 0
    most = 0
    lock = threading.Lock()

    def tracked(numbers: list[int]) -> list[int]:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        time.sleep(0.02)
        with lock:
            running -= 1
        return numbers

    batcher = MicroBatcher(tracked, max_batch=2, max_parallel=2)
    with ThreadPoolExecutor(max_workers=16) as pool:
        assert list(pool.map(batcher, range(16))) == list(range(16))
    assert most == 2


def test_an_error_reaches_every_caller_of_its_batch_and_later_calls_still_work() -> None:
    gate = threading.Event()

    def failing(numbers: list[int]) -> list[int]:
        gate.wait(1.0)
        if 13 in numbers:
            raise ValueError("unlucky batch")
        return numbers

    batcher = MicroBatcher(failing, max_batch=16)
    with ThreadPoolExecutor(max_workers=4) as pool:
        first = pool.submit(batcher, 1)  # holds the slot until the gate opens
        time.sleep(0.05)
        others = [pool.submit(batcher, n) for n in (13, 2, 3)]  # queue behind it: one batch
        time.sleep(0.05)
        gate.set()
        assert first.result() == 1
        for future in others:
            with pytest.raises(ValueError, match="unlucky batch"):
                future.result()
    assert batcher(4) == 4  # the slot was released


def test_a_wrong_number_of_results_is_an_error_not_a_misaligned_answer() -> None:
    batcher: MicroBatcher[int, int] = MicroBatcher(lambda numbers: numbers[:-1] if len(numbers) > 0 else numbers)
    with pytest.raises(RuntimeError, match="returned 0 results for 1 items"):
        batcher(1)


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="max_batch"):
        MicroBatcher(lambda items: items, max_batch=0)


@pytest.mark.slow
def test_concurrent_questions_embed_like_single_ones() -> None:
    """The packaged MiniLM: a question embedded in a batch of concurrent ones equals the same question alone."""
    embedder = CodeTextEmbedder()
    embedder.warm_up()
    questions = [f"where is the retry helper number {n} for payments" for n in range(12)] + ["withStripeBackoff"]
    alone = {q: np.array(embedder.run(text=q)["embedding"]) for q in questions}
    before = embedder._batcher.batches
    with ThreadPoolExecutor(max_workers=len(questions)) as pool:
        vectors = list(pool.map(lambda q: np.array(embedder.run(text=q)["embedding"]), questions))
    together = dict(zip(questions, vectors, strict=True))
    for question in questions:
        assert np.allclose(alone[question], together[question], atol=1e-5), question
    assert embedder._batcher.batches - before < len(questions)  # some questions did share a model call


def test_text_embedder_round_trips_its_batch_size() -> None:
    embedder = CodeTextEmbedder(max_batch_size=4)
    again = CodeTextEmbedder.from_dict(embedder.to_dict())
    assert again.max_batch_size == 4 and again._batcher.max_batch == 4
    with pytest.raises(TypeError, match="one string"):
        embedder.run(text=["not", "a", "string"])  # type: ignore[arg-type]


def test_the_retriever_takes_the_array_and_leaves_it_as_it_was(tmp_path: Path) -> None:
    """`CodeTextEmbedder.vector` (an array) ranks like the list of floats, and is not normalised in place."""
    from haystack import Document

    from haystack_integrations.components.code_alias import CodeEmbeddingRetriever, CodeIndexDocumentStore

    store = CodeIndexDocumentStore(index_dir=str(tmp_path))
    store.write_documents(
        [
            Document(id="x", content="x axis", embedding=[1.0, 0.0, 0.0]),
            Document(id="y", content="y axis", embedding=[0.0, 1.0, 0.0]),
            Document(id="xy", content="diagonal", embedding=[1.0, 1.0, 0.0]),
        ]
    )
    retriever = CodeEmbeddingRetriever(document_store=store, top_k=3)
    as_list = [d.id for d in retriever.run(query_embedding=[3.0, 1.0, 0.0])["documents"]]
    vector = np.array([3.0, 1.0, 0.0], dtype=np.float32)
    as_array = [d.id for d in retriever.run(query_embedding=vector)["documents"]]
    assert as_list == as_array == ["x", "xy", "y"]
    assert vector.tolist() == [3.0, 1.0, 0.0]
