"""`GET /v1/models` and `POST /v1/chat/completions` of `code-alias serve`: OpenAI-compatible chat over the index.

One model, `code_alias_ask` (the name Hayhooks gives the same deployment). The body is read as raw JSON and
checked here rather than by a schema, so every bad request (not JSON, not an object, a wrong type, an unknown
model, a conversation without a user message) is a one-line 4xx that never repeats the input; the guard in
`server.py` has already bounded its size and checked the token. The answer is `chat.CodeChat`'s; a streamed reply
(`"stream": true`, server-sent events) sends it in pieces once it is complete and checked, then a last chunk with
the finish reason and the metadata (`code_alias`: mode, rewrite, citation check), then `data: [DONE]`.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Iterator
from typing import Any

from haystack_integrations.components.code_alias.serving.chat import CHAT_MODEL, ChatAnswer
from haystack_integrations.components.code_alias.serving.service import bad_request, json_object

#: Fields of an OpenAI request that are read; every other one (temperature, max_tokens, tools...) is ignored.
_BOOL_FIELDS = ("stream",)
_PIECE_RE = re.compile(r"[^\n]*\n|[^\n]+$")


def _created() -> int:
    return int(time.time())


def models_payload() -> dict[str, Any]:
    """The `/v1/models` answer: the one chat model."""
    return {
        "object": "list",
        "data": [{"id": CHAT_MODEL, "name": CHAT_MODEL, "object": "model", "created": 0, "owned_by": "code-alias"}],
    }


def read_chat_body(raw: bytes, content_type: str | None = "application/json") -> dict[str, Any]:
    """
    The chat request as a dict, checked: an object with `model` (ours), `messages` (a list) and, if given, a
    boolean `stream`; the message contents are checked by `chat.read_conversation`.

    :raises HTTPException: 400 when the body is not a JSON object, 422 on a wrong type, 404 on another model.
    """
    body = json_object(raw, "an OpenAI chat completion request", content_type)
    model = body.get("model")
    if not isinstance(model, str):
        raise bad_request("model must be a string: the model is code_alias_ask (see /v1/models)")
    if model != CHAT_MODEL:
        raise bad_request(f"no such model; the model is {CHAT_MODEL} (see /v1/models)", 404)
    if "messages" not in body:
        raise bad_request("messages is required: a list of {role, content} objects")
    for name in _BOOL_FIELDS:
        if name in body and body[name] is not None and not isinstance(body[name], bool):
            raise bad_request(f"{name} must be true or false, got {type(body[name]).__name__}")
    return body


def completion(answer: ChatAnswer, model: str) -> dict[str, Any]:
    """The non-streamed `chat.completion` object, with the answer's metadata under `code_alias`."""
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex}",
        "object": "chat.completion",
        "created": _created(),
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": answer.text}, "finish_reason": "stop"}],
        "usage": None,
        "code_alias": answer.meta,
    }


def stream_events(answer: ChatAnswer, model: str) -> Iterator[str]:
    """The server-sent events of a streamed reply: the role, the text line by line, the finish and metadata."""
    ident, created = f"chatcmpl-{uuid.uuid4().hex}", _created()

    def event(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> str:
        chunk = {
            "id": ident,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            **extra,
        }
        return f"data: {json.dumps(chunk, ensure_ascii=False)}\n\n"

    yield event({"role": "assistant", "content": ""})
    for piece in _PIECE_RE.findall(answer.text):
        yield event({"content": piece})
    yield event({}, "stop", code_alias=answer.meta)
    yield "data: [DONE]\n\n"


def add_openai_routes(app: Any, wrapper: Any) -> None:
    """
    Add `/v1/models` and `/v1/chat/completions` to `app`, answered by `wrapper.chat` (the ask deployment).

    :param app: The FastAPI app of `code-alias serve`.
    :param wrapper: The `AskWrapper` whose service answers.
    """
    from fastapi import Request
    from fastapi.concurrency import run_in_threadpool
    from fastapi.responses import JSONResponse, StreamingResponse

    async def list_models() -> JSONResponse:
        return JSONResponse(models_payload())

    async def chat_completions(request: Request) -> Any:
        body = read_chat_body(await request.body(), request.headers.get("content-type"))
        answer: ChatAnswer = await run_in_threadpool(wrapper.chat, body["messages"], body)
        if body.get("stream"):
            return StreamingResponse(
                stream_events(answer, body["model"]),
                media_type="text/event-stream",
                headers={"cache-control": "no-cache", "x-accel-buffering": "no"},
            )
        return JSONResponse(completion(answer, body["model"]))

    # FastAPI reads the real classes (this module's annotations are strings of names imported here).
    list_models.__annotations__ = {}
    chat_completions.__annotations__ = {"request": Request}
    app.add_api_route(
        "/v1/models",
        list_models,
        methods=["GET"],
        name="openai_models",
        tags=["openai"],
        response_model=None,
        description="The OpenAI-compatible model list: one model, code_alias_ask.",
    )
    app.add_api_route(
        "/v1/chat/completions",
        chat_completions,
        methods=["POST"],
        name="openai_chat_completions",
        tags=["openai"],
        description="OpenAI-compatible chat: the last user message is the question; the answer is the index's, in "
        "Markdown, or written by the server's chat generator with checked path:start-end citations "
        "(`code_alias.citation_check` counts what was dropped or flagged). `stream: true` for server-sent events.",
        response_model=None,
    )
