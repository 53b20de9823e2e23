"""Test doubles of other people's components (a ChatGenerator), real Haystack components so pipelines and YAML take
them; the pipelines' YAML names them by this module's path."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from haystack import component, default_from_dict, default_to_dict
from haystack.dataclasses import ChatMessage


@component
class FakeChatGenerator:
    """A scripted ChatGenerator that records its calls (a real component: run, run_async, to_dict, from_dict)."""

    def __init__(self, *, answer: str = "", delay: float = 0.0, fail: str | None = None) -> None:
        self.answer = answer
        self.delay = delay
        self.fail = fail
        self.calls: list[dict[str, Any]] = []
        self.warmed = 0
        self.closed = 0

    def warm_up(self) -> None:
        self.warmed += 1

    def close(self) -> None:
        self.closed += 1

    def _reply(self, messages: list[ChatMessage], generation_kwargs: dict[str, Any] | None) -> dict[str, Any]:
        self.calls.append({"messages": messages, "generation_kwargs": generation_kwargs})
        if self.fail:
            raise RuntimeError(self.fail)
        return {"replies": [ChatMessage.from_assistant(self.answer)]}

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], generation_kwargs: dict[str, Any] | None = None) -> dict[str, Any]:
        if self.delay:
            time.sleep(self.delay)
        return self._reply(messages, generation_kwargs)

    @component.output_types(replies=list[ChatMessage])
    async def run_async(
        self, messages: list[ChatMessage], generation_kwargs: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        if self.delay:
            await asyncio.sleep(self.delay)
        return self._reply(messages, generation_kwargs)

    def to_dict(self) -> dict[str, Any]:
        return default_to_dict(self, answer=self.answer, delay=self.delay, fail=self.fail)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FakeChatGenerator:
        return default_from_dict(cls, data)
