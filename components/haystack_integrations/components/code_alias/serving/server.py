# long: the REST and MCP application: every route and how its errors map to status codes
"""`code-alias serve`: the four code-alias deployments over REST (and MCP), and nothing else.

`hayhooks run` (2.1) keeps Hayhooks' runtime deployment routes on: whoever reaches its port can POST Python to
`/deploy_files` (or call the MCP tool `deploy_pipeline`) and the server imports it. This module builds its own
FastAPI app from the wrapper classes in `hayhooks_wrappers.py`, by import: the routes are exactly
`POST /code_alias_{ask,rewrite,autocomplete,status,sync}/run`, `GET /status`, the OpenAPI page and, with `mcp=True`,
the MCP streamable-HTTP endpoint `/mcp` whose tools are `code_alias_ask` and `code_alias_rewrite`. There is no
route or tool that deploys, undeploys, writes a file or imports a module, so none can be reached.

Around the app (see `docs/serving.md` for the threat model):

- it binds 127.0.0.1 unless told otherwise, and refuses another address without a token (or `allow_remote`);
- the `Host` header must name this server (loopback names by default: no DNS rebinding from a web page);
- a request with an `Origin` header is refused (403) unless it is same-origin or listed in
  `CODE_ALIAS_CORS_ORIGINS` (then, and only then, CORS headers are sent);
- with `CODE_ALIAS_API_TOKEN` set, every request (REST, docs, MCP) needs `Authorization: Bearer TOKEN` (401),
  except the push webhook `POST /code_alias_sync/run`, which a Git host cannot give a bearer token: it must be
  signed with `CODE_ALIAS_WEBHOOK_SECRET` instead (`serving/live.py`; 401 unsigned, 403 without a secret configured);
- a body over `CODE_ALIAS_MAX_BODY_BYTES` (64 KiB; 1 MiB for the webhook, whose push payloads list commits) is a
  413, read no further; one nesting deeper than `json_depth.MAX_JSON_DEPTH` a 422 (400 with a JSON-RPC parse error
  on `/mcp`), before a recursive parser can fail on it;
- a request that does not fit the schema is a 422 whose body never repeats the input, and any other failure a
  one-line 500 with no traceback or path; the connection stays usable either way.
"""

from __future__ import annotations

import hmac
import inspect
import ipaddress
import json
import logging
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field, replace
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from haystack_integrations.components.code_alias.app.requests import problem_text, request_error
from haystack_integrations.components.code_alias.serving.hayhooks_wrappers import DEPLOYMENTS
from haystack_integrations.components.code_alias.serving.json_depth import MAX_JSON_DEPTH, too_deep
from haystack_integrations.components.code_alias.serving.live import WebhookRefused
from haystack_integrations.components.code_alias.serving.openai_routes import add_openai_routes
from haystack_integrations.components.code_alias.serving.page import add_page_routes, is_page_asset
from haystack_integrations.components.code_alias.serving.server_discovery import (
    HELLO_PATH,
    LOOPBACK_NAMES,
    TOKEN_ENV,
    announce,
    local_url,
    new_proof_key,
    proof,
)
from haystack_integrations.components.code_alias.serving.service import ServiceSettings, get_service, hide_paths

logger = logging.getLogger(__name__)

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 1416
DEFAULT_MAX_BODY_BYTES = 64 * 1024
MAX_ERRORS_SHOWN = 10
MAX_MESSAGE_CHARS = 200
SYNC_PATH = "/code_alias_sync/run"
SYNC_MAX_BODY_BYTES = 1024 * 1024
#: Seconds an idle keep-alive connection stays open. Longer than the idle expiry of every common client (httpx and
#: the openai client 5 s, aiohttp 15 s, Go's net/http 90 s, Firefox 115 s), so a client always gives up an idle
#: connection before the server closes it: when both did it at once (uvicorn's default is 5 s, httpx's too), a
#: request sent on a connection the server was closing failed with a read error and nothing in the server's log.
DEFAULT_KEEP_ALIVE_SECONDS = 120


@dataclass(frozen=True)
class ServerSettings:
    """
    How `code-alias serve` listens and whom it answers; see `from_env` for the variables.

    :param host: The address to bind (127.0.0.1 by default).
    :param port: The port.
    :param token: When set, every request needs `Authorization: Bearer <token>`.
    :param cors_origins: Origins allowed to call from a browser (none by default).
    :param allowed_hosts: `Host` header values accepted; empty = loopback names when bound to loopback, else any.
    :param max_body_bytes: The largest request body accepted (413 above it).
    :param mcp: Also serve MCP (streamable HTTP) at `/mcp`.
    :param allow_remote: Bind a non-loopback address without a token (behind a proxy that authenticates).
    :param keep_alive: Seconds an idle keep-alive connection stays open (`DEFAULT_KEEP_ALIVE_SECONDS`).
    """

    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    token: str | None = field(default=None, repr=False)
    cors_origins: tuple[str, ...] = ()
    allowed_hosts: tuple[str, ...] = ()
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    mcp: bool = False
    allow_remote: bool = False
    keep_alive: int = DEFAULT_KEEP_ALIVE_SECONDS

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> ServerSettings:
        """
        Read `CODE_ALIAS_HOST`, `CODE_ALIAS_PORT`, `CODE_ALIAS_API_TOKEN`, `CODE_ALIAS_CORS_ORIGINS` and
        `CODE_ALIAS_ALLOWED_HOSTS` (comma-separated), `CODE_ALIAS_MAX_BODY_BYTES`, `CODE_ALIAS_KEEP_ALIVE_SECONDS`;
        `overrides` (not None) win.

        :raises ValueError: A value that cannot work, naming the variable.
        """
        env = dict(os.environ if environ is None else environ)
        port_text = env.get("CODE_ALIAS_PORT", "").strip() or str(DEFAULT_PORT)
        body_text = env.get("CODE_ALIAS_MAX_BODY_BYTES", "").strip() or str(DEFAULT_MAX_BODY_BYTES)
        keep_alive_text = env.get("CODE_ALIAS_KEEP_ALIVE_SECONDS", "").strip() or str(DEFAULT_KEEP_ALIVE_SECONDS)
        settings = cls(
            host=env.get("CODE_ALIAS_HOST", "").strip() or DEFAULT_HOST,
            port=_int_in(port_text, "CODE_ALIAS_PORT", 1, 65535),
            token=env.get(TOKEN_ENV, "").strip() or None,
            cors_origins=_csv(env.get("CODE_ALIAS_CORS_ORIGINS", "")),
            allowed_hosts=_csv(env.get("CODE_ALIAS_ALLOWED_HOSTS", "")),
            max_body_bytes=_int_in(body_text, "CODE_ALIAS_MAX_BODY_BYTES", 1024, 64 * 1024 * 1024),
            keep_alive=_int_in(keep_alive_text, "CODE_ALIAS_KEEP_ALIVE_SECONDS", 1, 3600),
        )
        settings = replace(settings, **{k: v for k, v in overrides.items() if v is not None})
        if "*" in settings.cors_origins:
            raise ValueError("CODE_ALIAS_CORS_ORIGINS must list origins (https://app.example), not '*'")
        return settings

    @property
    def loopback(self) -> bool:
        """Whether `host` is a loopback address (or `localhost`)."""
        if self.host == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host.strip("[]")).is_loopback
        except ValueError:
            return False

    def host_patterns(self) -> list[str]:
        """The `Host` values accepted (Starlette's `TrustedHostMiddleware` patterns)."""
        if self.allowed_hosts:
            return list(self.allowed_hosts)
        return list(LOOPBACK_NAMES) if self.loopback else ["*"]

    def check_exposure(self) -> None:
        """
        Refuse to listen beyond this machine without authentication.

        :raises ValueError: `host` is not loopback, no token is set and `allow_remote` is off.
        """
        if not self.loopback and not self.token and not self.allow_remote:
            raise ValueError(
                f"refusing to serve on {self.host} without authentication: set CODE_ALIAS_API_TOKEN, or pass "
                "--allow-remote when a reverse proxy in front authenticates (see docs/serving.md)"
            )


def _csv(text: str) -> tuple[str, ...]:
    return tuple(item.strip().rstrip("/") for item in text.split(",") if item.strip())


def _int_in(text: str, name: str, low: int, high: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"{name} must be an integer from {low} to {high}, got {text!r}") from None
    if not low <= value <= high:
        raise ValueError(f"{name} must be from {low} to {high}, got {value}")
    return value


# ---- the guard: origin, token, body size, and a last catch-all --------------------------------------------------
async def _send_json(send: Send, status: int, detail: str, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    body = json.dumps({"detail": detail}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *(headers or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class GuardMiddleware:
    """
    Pure-ASGI checks in front of every HTTP route (REST, docs and MCP alike).

    In order: a cross-origin request not allowed is a 403; without the bearer token (when one is set) a 401; a
    body over the limit a 413 (the body is read up to the limit, then replayed to the app). Any exception the
    app lets through before answering becomes a one-line 500, so uvicorn never drops the connection.

    :param app: The application.
    :param settings: The server settings (token, allowed origins, body limit).
    """

    def __init__(self, app: ASGIApp, settings: ServerSettings) -> None:
        self.app = app
        self.settings = settings
        self.origins = {origin.lower() for origin in settings.cors_origins}
        self.token = settings.token.encode() if settings.token else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {key.decode("latin-1").lower(): value.decode("latin-1") for key, value in scope["headers"]}
        origin = headers.get("origin")
        if origin is not None and not self._origin_allowed(origin, headers.get("host", ""), scope):
            await _send_json(send, 403, "cross-origin requests are not allowed (see CODE_ALIAS_CORS_ORIGINS)")
            return
        webhook = scope.get("path") == SYNC_PATH  # signed with the webhook secret instead (checked by the route)
        # The challenge comes before the token: a client proves the server before it sends the token to it.
        # The search page's static files hold no data and a browser cannot send a token on navigation (`page.py`).
        public = scope.get("path") == HELLO_PATH or is_page_asset(scope.get("method", ""), scope.get("path", ""))
        if (
            self.token is not None
            and not (webhook or public)
            and not self._authorized(headers.get("authorization", ""))
        ):
            await _send_json(
                send, 401, "missing or wrong bearer token", [(b"www-authenticate", b'Bearer realm="code-alias"')]
            )
            return
        limit = max(self.settings.max_body_bytes, SYNC_MAX_BODY_BYTES) if webhook else self.settings.max_body_bytes
        declared = headers.get("content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > limit):
            await self._too_large(send, limit)
            return
        body, more = await self._read_body(receive, limit)
        if more:
            await self._too_large(send, limit)
            return
        if too_deep(body):  # before any parser recurses into it (`json_depth`)
            await self._too_deep(send, str(scope.get("path", "")))
            return
        await self._run(scope, self._replay(body, receive), send)

    def _origin_allowed(self, origin: str, host: str, scope: Scope) -> bool:
        origin = origin.strip().rstrip("/").lower()
        if origin in self.origins:
            return True
        scheme = "https" if scope.get("scheme") == "https" else "http"
        return bool(host) and origin == f"{scheme}://{host.strip().lower()}"

    def _authorized(self, header: str) -> bool:
        scheme, _, credentials = header.partition(" ")
        assert self.token is not None
        return scheme.lower() == "bearer" and hmac.compare_digest(credentials.strip().encode(), self.token)

    async def _too_large(self, send: Send, limit: int) -> None:
        await _send_json(
            send, 413, f"request body over {limit:,} bytes (CODE_ALIAS_MAX_BODY_BYTES)", [(b"connection", b"close")]
        )

    @staticmethod
    async def _too_deep(send: Send, path: str) -> None:
        detail = f"the JSON body nests deeper than {MAX_JSON_DEPTH} levels"
        if path.rstrip("/") != "/mcp":
            await _send_json(send, 422, detail)
            return
        # What the MCP SDK answers for a body it cannot parse: HTTP 400 with a JSON-RPC parse error (-32700).
        body = json.dumps(
            {"jsonrpc": "2.0", "id": "server-error", "error": {"code": -32700, "message": f"Parse error: {detail}"}}
        ).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 400,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
            }
        )
        await send({"type": "http.response.body", "body": body})

    async def _read_body(self, receive: Receive, limit: int) -> tuple[bytes, bool]:
        """The whole body, or (what was read, True) as soon as it passes the limit."""
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return b"", False
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                return b"", True
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks), False

    @staticmethod
    def _replay(body: bytes, receive: Receive) -> Receive:
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        return replay

    async def _run(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = False

        async def watch(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, watch)
        except Exception:
            logger.exception("code-alias: unhandled error on %s %s", scope.get("method"), scope.get("path"))
            if started:  # nothing more can be said on this response
                raise
            await _send_json(send, 500, "internal server error (the server log has the details)")


# ---- the app -----------------------------------------------------------------------------------------------------
def _short(text: Any) -> str:
    message = hide_paths(" ".join(str(text).split()))
    return message if len(message) <= MAX_MESSAGE_CHARS else message[: MAX_MESSAGE_CHARS - 3] + "..."


def validation_errors(errors: Any) -> list[dict[str, Any]]:
    """
    Pydantic/FastAPI errors without the `input` (or `ctx`) they carry: only where, what and why, the why in the
    requests' own words (`app.requests.problem_text`: what MCP and the CLI say).
    """
    shown: list[dict[str, Any]] = []
    for error in list(errors)[:MAX_ERRORS_SHOWN]:
        location = [part if isinstance(part, int) else _short(part) for part in error.get("loc", ())]
        shown.append({"loc": location, "msg": _short(problem_text(error)), "type": str(error.get("type", ""))})
    return shown


def _run_route(name: str, wrapper: Any) -> dict[str, Any]:
    """`add_api_route` arguments for `POST /NAME/run`, with the request/response models Hayhooks derives."""
    import docstring_parser
    from fastapi.concurrency import run_in_threadpool
    from hayhooks.server.pipelines.models import (
        create_request_model_from_callable,
        create_response_model_from_callable,
    )

    docstring = docstring_parser.parse(inspect.getdoc(wrapper.run_api) or "")
    request_model = create_request_model_from_callable(wrapper.run_api, f"{name}Run", docstring)
    response_model = create_response_model_from_callable(wrapper.run_api, f"{name}Run", docstring)

    async def endpoint(body: Any) -> dict[str, Any]:
        return {"result": await run_in_threadpool(wrapper.run_api, **body.model_dump())}

    # FastAPI reads the body model from the signature; it is built at run time, so it is set here.
    endpoint.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter("body", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=request_model)]
    )
    return {
        "path": f"/{name}/run",
        "endpoint": endpoint,
        "methods": ["POST"],
        "name": f"{name}_run",
        "response_model": response_model,
        "description": docstring.short_description or None,
        "tags": ["code-alias"],
    }


def _sync_route(wrapper: Any) -> dict[str, Any]:
    """
    `POST /code_alias_sync/run`: the push webhook. It reads the raw body (the guard has read it once, within its
    size limit, and replays it byte for byte), because GitHub's signature is an HMAC of exactly those bytes.
    """
    from fastapi import Request
    from fastapi.concurrency import run_in_threadpool
    from fastapi.responses import JSONResponse

    async def endpoint(request: Request) -> JSONResponse:
        body = await request.body()
        headers = {key.lower(): value for key, value in request.headers.items()}
        client = request.client.host if request.client else "?"
        try:
            result = await run_in_threadpool(wrapper.webhook, headers, body, client)
        except WebhookRefused as refused:
            return JSONResponse({"detail": hide_paths(refused.detail)}, status_code=refused.status_code)
        return JSONResponse({"result": result}, status_code=202 if result.get("accepted") else 200)

    endpoint.__annotations__ = {"request": Request, "return": JSONResponse}  # real classes, not this module's strings
    return {
        "path": SYNC_PATH,
        "endpoint": endpoint,
        "methods": ["POST"],
        "name": "code_alias_sync_run",
        "description": "Push webhook (GitHub `X-Hub-Signature-256` or GitLab `X-Gitlab-Token`, secret from "
        'CODE_ALIAS_WEBHOOK_SECRET) or `{"repository": NAME, "paths": [...]}`: refresh the index from the '
        "working tree in the background; 202 with a `sync_id` that `code_alias_status` reports once done.",
        "tags": ["code-alias"],
    }


@dataclass(frozen=True)
class LinkIdentity:
    """
    What a server announced to local clients, to answer their challenge (`server_discovery`).

    :param proof_key: This run's random key (in the 0600 announcement only).
    :param address: The address it announced (the loopback URL or the socket path).
    :param index_dir: The resolved index folder it serves.
    """

    proof_key: str = field(repr=False)
    address: str
    index_dir: str


# long: the route table of the REST and MCP application
def build_app(
    settings: ServerSettings | None = None,
    service_settings: ServiceSettings | None = None,
    link: LinkIdentity | None = None,
    *,
    chat_generator: Any | None = None,
) -> Any:
    """
    The FastAPI app of `code-alias serve`, with the service loaded (index, dictionary, model: once).

    :param settings: How to listen and whom to answer (default: from the environment).
    :param service_settings: The index and models (default: `ServiceSettings.from_env()`).
    :param link: The announced identity; with it, `POST /code_alias_hello` answers a local client's challenge.
    :param chat_generator: A Haystack ChatGenerator for the chat answers (default: the service's own, if any).
    :returns: A FastAPI application wrapped in the host check, CORS (only when configured) and the guard.
    """
    from fastapi import FastAPI, Request
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import JSONResponse
    from starlette.exceptions import HTTPException as StarletteHTTPException
    from starlette.middleware.cors import CORSMiddleware
    from starlette.middleware.trustedhost import TrustedHostMiddleware

    chosen = settings or ServerSettings.from_env()
    get_service(service_settings)  # load once, before the first request, and fail early on bad settings
    wrappers: dict[str, Any] = {}
    for name, wrapper_class in DEPLOYMENTS.items():
        wrapper = wrapper_class()
        if service_settings is not None:
            wrapper.service = get_service(service_settings)
            wrapper.pipeline = None
        else:
            wrapper.setup()
        wrappers[name] = wrapper
    mcp_app = _mcp_app(wrappers) if chosen.mcp else None

    @asynccontextmanager
    async def lifespan(_app: Any) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            if mcp_app is not None:
                await stack.enter_async_context(mcp_app.session_manager.run())
            yield

    app = FastAPI(
        title="code-alias",
        version=_version(),
        description="Informal questions -> real symbols, files and lines of the indexed code base.",
        lifespan=lifespan,
        redoc_url=None,
    )
    for name, wrapper in wrappers.items():
        app.add_api_route(**(_sync_route(wrapper) if name == "code_alias_sync" else _run_route(name, wrapper)))
    _add_browser_and_chat_routes(app, wrappers["code_alias_ask"], chat_generator)

    @app.get("/status", tags=["code-alias"])
    async def status() -> dict[str, Any]:
        """Up, and the deployments served."""
        return {"status": "Up!", "pipelines": list(wrappers)}

    if link is not None:
        app.add_api_route(**_hello_route(link))

    if mcp_app is not None:
        from starlette.routing import Route

        app.router.routes.append(Route("/mcp", endpoint=mcp_app, methods=["GET", "POST", "DELETE"]))

    @app.exception_handler(RequestValidationError)
    async def invalid(_request: Request, error: RequestValidationError) -> JSONResponse:
        return JSONResponse({"detail": validation_errors(error.errors())}, status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_request: Request, error: StarletteHTTPException) -> JSONResponse:
        detail = error.detail if isinstance(error.detail, str) else "request refused"
        return JSONResponse({"detail": hide_paths(detail)}, status_code=error.status_code, headers=error.headers)

    guarded: Any = GuardMiddleware(app, chosen)
    if chosen.cors_origins:
        guarded = CORSMiddleware(
            guarded,
            allow_origins=list(chosen.cors_origins),
            allow_methods=["GET", "POST"],
            allow_headers=["authorization", "content-type", "mcp-protocol-version", "mcp-session-id"],
        )
    return _Served(TrustedHostMiddleware(guarded, allowed_hosts=chosen.host_patterns()), app)


def _hello_route(link: LinkIdentity) -> dict[str, Any]:
    """`POST /code_alias_hello {"nonce": HEX}`: this server's proof that it is the announced one (no token needed)."""
    from fastapi.responses import JSONResponse

    class Hello(BaseModel):
        nonce: str = Field(pattern="^[0-9a-f]{32,128}$")

    async def endpoint(body: Hello) -> JSONResponse:
        return JSONResponse({"proof": proof(link.proof_key, body.nonce, link.address, link.index_dir)})

    endpoint.__annotations__ = {"body": Hello, "return": JSONResponse}
    return {"path": HELLO_PATH, "endpoint": endpoint, "methods": ["POST"], "include_in_schema": False}


def _add_browser_and_chat_routes(app: Any, ask: Any, chat_generator: Any | None) -> None:
    """The search page (`page.py`) and the OpenAI-compatible chat routes (`openai_routes.py`) of the ask deployment."""
    if chat_generator is not None:
        ask.use_chat_generator(chat_generator)
    add_openai_routes(app, ask)
    add_page_routes(app, ask.service)


def _version() -> str:
    try:
        return version("code-alias-haystack")
    except PackageNotFoundError:  # pragma: no cover - a source checkout without an install
        return "0"


@dataclass
class _Served:
    """The outermost ASGI callable, keeping the FastAPI app at hand (`.fastapi`) for tests and introspection."""

    asgi: Any
    fastapi: Any

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.asgi(scope, receive, send)


# ---- MCP ---------------------------------------------------------------------------------------------------------
@dataclass
class _McpEndpoint:
    """The MCP streamable-HTTP endpoint: our tools only, stateless sessions."""

    session_manager: Any

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.session_manager.handle_request(scope, receive, send)


def _mcp_app(wrappers: dict[str, Any]) -> _McpEndpoint:
    """An MCP server whose tools are the deployments without `skip_mcp` (ask and rewrite), and nothing else."""
    import anyio
    import docstring_parser
    from fastapi import HTTPException
    from hayhooks.server.pipelines.models import create_request_model_from_callable
    from mcp.server.lowlevel import Server
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from mcp.types import TextContent, Tool

    tools: dict[str, tuple[Any, Any, Tool]] = {}
    for name, wrapper in wrappers.items():
        if getattr(wrapper, "skip_mcp", False):
            continue
        docstring = docstring_parser.parse(inspect.getdoc(wrapper.run_api) or "")
        model = create_request_model_from_callable(wrapper.run_api, f"{name}Run", docstring)
        tool = Tool(name=name, description=docstring.short_description or "", inputSchema=model.model_json_schema())
        tools[name] = (wrapper, model, tool)

    server: Any = Server("code-alias")

    @server.list_tools()
    async def list_tools() -> list[Tool]:
        return [tool for _, _, tool in tools.values()]

    @server.call_tool(validate_input=False)
    async def call_tool(name: str, arguments: dict[str, Any]) -> tuple[list[TextContent], dict[str, Any]]:
        if name not in tools:
            raise ValueError(f"unknown tool {_short(name)!r}; the tools are {', '.join(tools)}")
        wrapper, model, _ = tools[name]
        try:
            request = model.model_validate(arguments or {})
        except ValidationError as error:  # the requests' own words, as REST and the CLI say them (`app.requests`)
            raise ValueError(hide_paths(request_error(error).message)) from None
        try:
            result = await anyio.to_thread.run_sync(lambda: wrapper.run_api(**request.model_dump()))
        except HTTPException as error:
            raise ValueError(hide_paths(str(error.detail))) from None
        except Exception:
            logger.exception("code-alias: MCP tool %s failed", name)
            raise ValueError("internal server error (the server log has the details)") from None
        # The answer as `structuredContent`, and as JSON text for clients that read only `content`.
        return [TextContent(type="text", text=json.dumps(result))], result

    manager = StreamableHTTPSessionManager(app=server, event_store=None, json_response=False, stateless=True)
    return _McpEndpoint(manager)


# ---- running -----------------------------------------------------------------------------------------------------
def bind_tcp(host: str, port: int) -> socket.socket:
    """
    A listening TCP socket on `host:port`, bound before anything is loaded or announced: a port that another
    process holds fails here, in a second, and no client is ever told to go there.

    :raises OSError: The address is in use or cannot be bound (said with the address).
    """
    bare = host.strip("[]")
    family = socket.AF_INET6 if ":" in bare else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # not SO_REUSEPORT: no sharing of the port
        listener.bind((bare, port))
        listener.listen(2048)
    except OSError as error:
        listener.close()
        raise OSError(error.errno, f"cannot listen on {host}:{port}: {error.strerror}") from None
    listener.set_inheritable(True)
    return listener


def run_uvicorn(
    app: Any,
    listener: socket.socket,
    *,
    idle_seconds: float | None = None,
    keep_alive: int = DEFAULT_KEEP_ALIVE_SECONDS,
) -> None:
    """
    Serve `app` on an already bound socket until interrupted, or until `idle_seconds` pass with no request.

    :param idle_seconds: Exit after this long without a request (the warm server); None serves until stopped.
    :param keep_alive: Seconds an idle keep-alive connection stays open (see `DEFAULT_KEEP_ALIVE_SECONDS`).
    """
    import uvicorn

    served = app
    last = [time.monotonic()]
    busy = [0]
    if idle_seconds is not None:

        async def watched(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] == "lifespan":  # runs as long as the server: not a request
                await app(scope, receive, send)
                return
            busy[0] += 1
            try:
                await app(scope, receive, send)
            finally:
                busy[0] -= 1
                last[0] = time.monotonic()

        served = watched
    config = uvicorn.Config(
        served, server_header=False, timeout_graceful_shutdown=5, log_level="warning", timeout_keep_alive=keep_alive
    )
    server = uvicorn.Server(config)
    if idle_seconds is not None:

        def watch() -> None:
            while not server.should_exit:
                time.sleep(min(5.0, max(0.2, idle_seconds / 4)))
                if busy[0] == 0 and time.monotonic() - last[0] > idle_seconds:
                    server.should_exit = True

        threading.Thread(target=watch, name="code-alias-idle", daemon=True).start()
    server.run(sockets=[listener])


def serve(settings: ServerSettings, service_settings: ServiceSettings | None = None) -> None:
    """
    Bind, build the app, announce it to local `code-alias ask` (only now that it listens), serve until interrupted.

    :raises ValueError: The settings would expose the server without authentication.
    :raises OSError: The port cannot be bound.
    """
    settings.check_exposure()
    listener = bind_tcp(settings.host, settings.port)
    url = local_url(settings.host, settings.port)
    index_dir = (service_settings or ServiceSettings.from_env()).index_dir
    link = LinkIdentity(proof_key=new_proof_key(), address=url, index_dir=str(index_dir.resolve()))
    app = build_app(settings, service_settings, link=link)
    where = f"http://{settings.host}:{settings.port}"
    print(
        f"code-alias: serving {where} (REST{' + MCP at /mcp' if settings.mcp else ''}; "
        f"{'bearer token required' if settings.token else 'no token'}; "
        f"CORS {'for ' + ', '.join(settings.cors_origins) if settings.cors_origins else 'off'})",
        flush=True,
    )
    record: dict[str, Any] = {"transport": "tcp", "address": url, "proof_key": link.proof_key, "kind": "serve"}
    record["token_required"] = bool(settings.token)  # the token itself stays in the user's environment
    # `code-alias ask` on the same index answers through this server while it runs (server_discovery).
    with announce(index_dir, record):
        run_uvicorn(app, listener, keep_alive=settings.keep_alive)


def serve_from_cli(
    *,
    index_dir: str,
    backend: str,
    host: str | None,
    port: int | None,
    mcp: bool,
    allow_remote: bool,
) -> int:
    """The `code-alias serve` command: settings from the environment, the command line's options on top."""
    service = ServiceSettings.from_env()

    chosen_backend = backend if backend != "embedded" else service.backend
    service = replace(service, index_dir=Path(index_dir).expanduser().resolve(), backend=chosen_backend)  # type: ignore[arg-type]
    settings = ServerSettings.from_env(host=host, port=port, mcp=mcp or None, allow_remote=allow_remote or None)
    # uvicorn shuts down gracefully on SIGTERM and then re-raises it to the handler it found: make that handler
    # an exit, so the announcement is taken back (a stale one is ignored anyway: its process is gone).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    serve(settings, service)
    return 0
