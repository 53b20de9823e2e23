"""Opportunistic micro-batching: concurrent single calls to a batch function share one call.

A server embeds one question per request. On a CPU, MiniLM embeds 16 short questions in one call for about a fifth
of what 16 separate calls cost (measured in BENCHMARKS.md section 5), so when several requests are in flight their
questions should go through the model together. `MicroBatcher` does that without a timer: a call that finds a free
slot runs at once with whatever else is waiting; calls that arrive while every slot is busy wait and go together
in the next batch. A lone request therefore never waits, and under load the batch grows with the queue.

Framework-free: the Haystack component (`CodeTextEmbedder`) wraps it.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")

_WAITING, _TAKEN, _DONE = 0, 1, 2


@dataclass(eq=False)  # identity: two callers may submit equal items, and the queue must tell their jobs apart
class _Job(Generic[Item, Result]):
    item: Item
    state: int = _WAITING
    result: Result | None = None
    error: BaseException | None = None


class MicroBatcher(Generic[Item, Result]):
    """
    Calls `function(items)` on batches of the items that concurrent callers submit.

    ### Usage example

    ```python
    from haystack_integrations.components.code_alias.retrieval.batching import MicroBatcher

    square_all = MicroBatcher(lambda numbers: [n * n for n in numbers], max_batch=16)
    print(square_all(3))   # 9, computed in a batch with any calls made at the same time by other threads
    ```

    :param function: Maps a list of items to one result per item, in order.
    :param max_batch: The most items in one call.
    :param max_parallel: How many calls of `function` may run at once (each in the thread of one of its callers).
    """

    def __init__(
        self, function: Callable[[list[Item]], Sequence[Result]], *, max_batch: int = 32, max_parallel: int = 1
    ) -> None:
        if max_batch < 1 or max_parallel < 1:
            raise ValueError(f"max_batch and max_parallel must be >= 1 (got {max_batch}, {max_parallel})")
        self.function = function
        self.max_batch = max_batch
        self.max_parallel = max_parallel
        self._condition = threading.Condition()
        self._waiting: deque[_Job[Item, Result]] = deque()
        self._running = 0
        self.batches = 0
        self.items = 0

    def __call__(self, item: Item) -> Result:
        """
        The result of `function` for `item`, computed alone or together with other callers' items.

        :param item: One input.
        :returns: Its result.
        :raises BaseException: Whatever `function` raised for the batch the item was in.
        """
        job: _Job[Item, Result] = _Job(item)
        with self._condition:
            self._waiting.append(job)
            while job.state == _TAKEN or (job.state == _WAITING and self._running >= self.max_parallel):
                self._condition.wait()
            if job.state == _WAITING:  # a slot is free and nobody took this item: lead a batch with it
                batch = self._take(job)
                self._running += 1
            else:
                batch = []
        if batch:
            self._run(batch)
        return self._outcome(job)

    def _take(self, leader: _Job[Item, Result]) -> list[_Job[Item, Result]]:
        """The leader's job and the oldest waiting ones, up to `max_batch` (called with the lock held)."""
        self._waiting.remove(leader)
        batch = [leader]
        while self._waiting and len(batch) < self.max_batch:
            batch.append(self._waiting.popleft())
        for job in batch:
            job.state = _TAKEN
        return batch

    def _run(self, batch: list[_Job[Item, Result]]) -> None:
        error: BaseException | None = None
        results: Sequence[Result] = ()
        try:
            results = self.function([job.item for job in batch])
            if len(results) != len(batch):
                raise RuntimeError(f"the batch function returned {len(results)} results for {len(batch)} items")
        except BaseException as raised:  # every caller of the batch gets it, not only the leader
            error = raised
        with self._condition:
            for position, job in enumerate(batch):
                if error is None:
                    job.result = results[position]
                job.error = error
                job.state = _DONE
            self._running -= 1
            self.batches += 1
            self.items += len(batch)
            self._condition.notify_all()

    @staticmethod
    def _outcome(job: _Job[Item, Result]) -> Result:
        if job.error is not None:
            raise job.error
        return job.result  # type: ignore[return-value]
