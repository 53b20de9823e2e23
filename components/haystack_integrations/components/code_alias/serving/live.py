"""Refresh on push, the HTTP side: a signed webhook queues a re-index of a repository that is already indexed.

The endpoint authenticates the request, reads which repository and paths the push names, drops replays, and
queues a sync on the index folder's `app.refresh.Syncer` (one per folder in this server, `syncer_for`): the
re-indexing itself, the warm indexer and the record of each sync are the indexing stage's (`app/refresh.py`,
`app/push_sync.py`). Bringing the working tree up to date (`git pull`) is the deployer's job: see
`docs/serving.md`.

What a webhook must carry (`verify_request`):

- GitHub: `X-Hub-Signature-256: sha256=<HMAC-SHA256 of the raw body with the secret>`;
- GitLab: `X-Gitlab-Token: <the secret>`;

the secret being `CODE_ALIAS_WEBHOOK_SECRET` in the server's environment. Without a secret configured the endpoint
answers 403 and does nothing; an unsigned or wrongly signed request gets 401 and changes nothing. Neither the
secret nor the signature is ever logged or echoed.

A delivery received again within `REPLAY_WINDOW_SECONDS` (the same `X-GitHub-Delivery` / `X-Gitlab-Event-UUID`, or
the same signed push body under any id), and a GitHub push whose signed `pushed_at` is older than that, is
acknowledged (200, `"accepted": false`) without a sync (`DeliveryLog`). A body nesting deeper than
`json_depth.MAX_JSON_DEPTH` is a 422 before it is parsed.

A refresh refused after authentication (a tree that is gone, a repository the index does not hold, a body that is
no push) is recorded in the index folder's `sync-status.json` (`app.refresh.record_refusal`) and logged with
its reason. Requests refused before authentication are logged and counted in memory only (`code_alias_status`'s
`sync.unauthenticated`, `Webhook.unauthenticated`): anyone who reaches the port can send them, and they must not
make the server write.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..app.refresh import (
    Syncer,
    indexed_root,
    one_line,
    record_refusal,
    sync_lock_timeout,
    utc_now,
)
from ..core.repositories import origin_url
from ..errors import CodeAliasError
from ..indexing.repositories import read_repositories
from .json_depth import MAX_JSON_DEPTH, too_deep

logger = logging.getLogger(__name__)

SECRET_ENV = "CODE_ALIAS_WEBHOOK_SECRET"
MAX_PATHS = 10_000
MAX_PATH_CHARS = 1_000
#: A delivery seen this recently is a replay; a GitHub push older than this is stale (`DeliveryLog`).
REPLAY_WINDOW_SECONDS = 3600.0
#: Deliveries remembered at most (the oldest are forgotten first): a storm of fresh ids cannot grow the log.
MAX_DELIVERIES = 10_000


class WebhookRefused(CodeAliasError):
    """A webhook request refused before anything ran; `status_code` is the HTTP answer, `detail` says why."""

    def __init__(self, status_code: int, detail: str) -> None:
        super().__init__(detail)
        self.status_code = status_code
        self.detail = detail


# ---- authentication ---------------------------------------------------------------------------------------------
def webhook_secret(environ: Mapping[str, str] | None = None) -> bytes | None:
    """The shared secret from `CODE_ALIAS_WEBHOOK_SECRET`, or None when refresh on push is off."""
    value = (os.environ if environ is None else environ).get(SECRET_ENV, "").strip()
    return value.encode("utf-8") if value else None


def signature_of(body: bytes, secret: bytes | str) -> str:
    """The `X-Hub-Signature-256` value GitHub sends for `body`: `sha256=<hex HMAC-SHA256>`."""
    key = secret.encode("utf-8") if isinstance(secret, str) else secret
    return "sha256=" + hmac.new(key, body, hashlib.sha256).hexdigest()


def verify_request(headers: Mapping[str, str], body: bytes | None, secret: bytes | None) -> str:
    """
    Check a webhook request's signature or token against the secret.

    :param headers: The request headers, names in lower case.
    :param body: The raw request body, exactly as received (None where a framework only gives parsed JSON: then
        only the GitLab token can be checked).
    :param secret: The shared secret; None = refresh on push is not configured.
    :returns: How the request was authenticated: "hmac-sha256" or "token".
    :raises WebhookRefused: 403 without a secret; 401 unsigned, badly signed, or a wrong token.
    """
    if secret is None:
        raise WebhookRefused(
            403, f"refresh on push is off: set {SECRET_ENV} in the server's environment (see docs/serving.md)"
        )
    signature = headers.get("x-hub-signature-256")
    if signature is not None:
        if body is None:
            raise WebhookRefused(
                401,
                "X-Hub-Signature-256 needs the raw request body: serve with `code-alias serve`, or send X-Gitlab-Token",
            )
        given = signature.strip().encode("latin-1", "replace")
        if not given.startswith(b"sha256=") or not hmac.compare_digest(given, signature_of(body, secret).encode()):
            raise WebhookRefused(401, "bad signature: X-Hub-Signature-256 does not match the body and the secret")
        return "hmac-sha256"
    token = headers.get("x-gitlab-token")
    if token is not None:
        if not hmac.compare_digest(token.strip().encode("utf-8", "replace"), secret):
            raise WebhookRefused(401, "wrong X-Gitlab-Token")
        return "token"
    raise WebhookRefused(401, "unsigned request: send X-Hub-Signature-256 (GitHub) or X-Gitlab-Token (GitLab)")


# ---- what a push names ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PushRequest:
    """A refresh request: which repository, the paths it says changed (a hint: the whole tree is compared)."""

    event: str  # "push", "paths" or "ping"
    repository: str | None = None
    paths: tuple[str, ...] = ()
    ref: str | None = None


def parse_push(payload: Any, headers: Mapping[str, str] | None = None) -> PushRequest:
    """
    Read a GitHub or GitLab push payload, or `{"repository": NAME, "paths": [...]}`.

    :raises WebhookRefused: 422 for anything else (the message names the field).
    """
    event = (headers or {}).get("x-github-event", "")
    if event == "ping":
        return PushRequest(event="ping")
    if not isinstance(payload, dict):
        raise WebhookRefused(422, f"the body must be a JSON object, got {type(payload).__name__}")
    repository = _repository_name(payload)
    if "commits" in payload:
        commits = payload["commits"]
        if not isinstance(commits, list):
            raise WebhookRefused(422, "commits must be a list")
        paths: list[Any] = []
        for commit in commits:
            if isinstance(commit, dict):
                for key in ("added", "modified", "removed"):
                    value = commit.get(key) or []
                    paths.extend(value if isinstance(value, list) else [])
        ref = payload.get("ref")
        return PushRequest("push", repository, _checked_paths(paths), ref if isinstance(ref, str) else None)
    if "paths" in payload:
        paths = payload["paths"]
        if not isinstance(paths, list):
            raise WebhookRefused(422, "paths must be a list of repository-relative file paths")
        return PushRequest("paths", repository, _checked_paths(paths))
    raise WebhookRefused(422, 'expected a push event (with "commits") or {"repository": ..., "paths": [...]}')


def _repository_name(payload: dict[str, Any]) -> str | None:
    repository = payload.get("repository")
    if isinstance(repository, dict):  # GitHub: full_name; GitLab: path_with_namespace (also under "project")
        repository = repository.get("full_name") or repository.get("path_with_namespace") or repository.get("name")
    if repository is None and isinstance(payload.get("project"), dict):
        repository = payload["project"].get("path_with_namespace")
    if repository is None:
        return None
    if not isinstance(repository, str) or not repository.strip() or len(repository) > 200:
        raise WebhookRefused(422, "repository must be a name such as owner/name")
    return repository.strip()


def _checked_paths(paths: list[Any]) -> tuple[str, ...]:
    if len(paths) > MAX_PATHS:
        raise WebhookRefused(422, f"{len(paths):,} paths; the limit is {MAX_PATHS:,}")
    checked: list[str] = []
    for path in paths:
        if not isinstance(path, str) or not path or len(path) > MAX_PATH_CHARS:
            raise WebhookRefused(422, "paths must be non-empty strings")
        parts = path.replace("\\", "/").split("/")
        if path.startswith(("/", "\\")) or ".." in parts or ":" in parts[0]:
            raise WebhookRefused(422, "paths must be relative to the repository root, without '..'")
        checked.append(path)
    return tuple(dict.fromkeys(checked))


def repository_names(root: Path) -> set[str]:
    """The names a request may give for the repository at `root`: the folder's name and git's `owner/name`."""
    names = {root.name.lower()}
    url = origin_url(root)
    if url:
        tail = url.rstrip("/").removesuffix(".git").replace(":", "/").split("/")
        if len(tail) >= 2:
            names.add(f"{tail[-2]}/{tail[-1]}".lower())
            names.add(tail[-1].lower())
    return names


# ---- replays ----------------------------------------------------------------------------------------------------
def delivery_keys(headers: Mapping[str, str], body: bytes | None, payload: Any, request: PushRequest) -> list[str]:
    """
    What identifies a webhook delivery: the host's delivery id (`X-GitHub-Delivery`, GitLab's
    `X-Gitlab-Event-UUID`) and, for a push event, a digest of the signed body. The id alone is not enough, since
    no signature covers a header: a captured delivery replayed with a fresh id has the same body. A plain
    `{"paths": [...]}` request has no body key: a cron job may send the same one every few minutes.
    """
    keys = [
        f"{name}:{value.strip()[:200]}"
        for name in ("x-github-delivery", "x-gitlab-event-uuid")
        if (value := headers.get(name, "")).strip()
    ]
    if request.event == "push":
        signed = body if body is not None else json.dumps(payload, sort_keys=True, default=str).encode()
        keys.append("body:" + hashlib.sha256(signed).hexdigest())
    return keys


def pushed_at(payload: Any) -> float | None:
    """When GitHub says the push happened (`repository.pushed_at`, seconds, inside the signed body); else None."""
    repository = payload.get("repository") if isinstance(payload, dict) else None
    value = repository.get("pushed_at") if isinstance(repository, dict) else None
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


@dataclass
class DeliveryLog:
    """
    The webhook deliveries of the last `window` seconds (at most `limit`): a delivery seen again in that time is a
    replay, acknowledged without a sync, so a captured delivery cannot keep the indexer busy. A GitHub push older
    than the window is stale (the log of a restarted server no longer has it), likewise acknowledged.
    """

    window: float = REPLAY_WINDOW_SECONDS
    limit: int = MAX_DELIVERIES
    _seen: OrderedDict[str, float] = field(default_factory=OrderedDict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def replayed(self, keys: list[str], pushed: float | None = None, now: float | None = None) -> str | None:
        """
        Record a delivery; why it must not sync ("replay" or "stale", with when), or None for a new one.

        :param keys: Its `delivery_keys`.
        :param pushed: Its `pushed_at`, when it has one.
        :param now: The time (seconds since the epoch); None = now.
        """
        moment = time.time() if now is None else now
        if pushed is not None and moment - pushed > self.window:
            return f"stale: pushed {moment - pushed:,.0f} s ago, longer than the {self.window:,.0f} s replay window"
        with self._lock:
            while self._seen and (
                len(self._seen) >= self.limit or moment - next(iter(self._seen.values())) > self.window
            ):
                self._seen.popitem(last=False)
            for key in keys:
                seen = self._seen.get(key)
                if seen is not None and moment - seen <= self.window:
                    return f"replay: this delivery was received {moment - seen:,.0f} s ago"
            for key in keys:
                self._seen[key] = moment
        return None


# ---- the endpoint of one index folder -------------------------------------------------------------------------------
@dataclass
class Webhook:
    """
    The webhook endpoint of one index folder in this server: the folder's sync queue, the deliveries it has seen
    (replays), and the requests refused before authentication (counted in memory only, never written).
    """

    syncer: Syncer
    deliveries: DeliveryLog = field(default_factory=DeliveryLog)
    # Requests refused before authentication (`handle_webhook`): count, last at/status/why.
    unauthenticated: dict[str, Any] = field(default_factory=lambda: {"count": 0})
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def refused(self, refusal: WebhookRefused, *, authenticated: bool, client: str) -> None:
        """
        Say why a request was refused: in the log always; in the sync record when it was authenticated (a push
        the server could not act on), else only in this server's memory (`unauthenticated`).
        """
        if authenticated:
            record_refusal(Path(self.syncer.index_dir), refusal.status_code, f"{refusal.detail} (from {client})")
            return
        logger.warning("code-alias: webhook from %s refused (%s): %s", client, refusal.status_code, refusal.detail)
        with self._lock:
            self.unauthenticated = {
                "count": int(self.unauthenticated.get("count", 0)) + 1,
                "last_at": utc_now(),
                "last_status": refusal.status_code,
                "last_reason": refusal.detail,
            }


_WEBHOOKS: dict[Path, Webhook] = {}
_WEBHOOKS_LOCK = threading.Lock()


def webhook_for(index_dir: Path, *, backend: str = "embedded", lexical: bool | None = None) -> Webhook:
    """The process's one webhook endpoint (and sync queue) for `index_dir`."""
    with _WEBHOOKS_LOCK:
        webhook = _WEBHOOKS.get(index_dir)
        if webhook is None:
            syncer = Syncer(index_dir, backend=backend, lexical=lexical, lock_timeout=sync_lock_timeout())
            webhook = _WEBHOOKS[index_dir] = Webhook(syncer)
        return webhook


def syncer_for(index_dir: Path, *, backend: str = "embedded", lexical: bool | None = None) -> Syncer:
    """The process's one `Syncer` for `index_dir` (its lock timeout from `CODE_ALIAS_SYNC_LOCK_TIMEOUT`)."""
    return webhook_for(index_dir, backend=backend, lexical=lexical).syncer


def handle_webhook(
    index_dir: Path,
    headers: Mapping[str, str],
    body: bytes | None,
    payload: Any = None,
    *,
    backend: str = "embedded",
    lexical: bool | None = None,
    secret: bytes | None = None,
    client: str = "?",
) -> dict[str, Any]:
    """
    Authenticate, parse and queue one webhook request; the endpoint's whole logic (server and Hayhooks alike).

    :param headers: Request headers, names in lower case.
    :param body: The raw body (None when only `payload` is available: then only the GitLab token authenticates).
    :param payload: The parsed JSON when `body` is None.
    :param secret: The secret; None reads `CODE_ALIAS_WEBHOOK_SECRET`.
    :param client: Who sent it, for the log.
    :raises WebhookRefused: 403/401/422/404 with the reason (never the secret or the signature).
    """
    webhook = webhook_for(index_dir, backend=backend, lexical=lexical)
    try:
        how = verify_request(headers, body, secret if secret is not None else webhook_secret())
    except WebhookRefused as refused:
        webhook.refused(refused, authenticated=False, client=client)
        raise
    try:
        return _queue_push(webhook, index_dir, headers, body, payload, how=how, client=client)
    except WebhookRefused as refused:
        webhook.refused(refused, authenticated=True, client=client)
        raise


def _queue_push(
    webhook: Webhook,
    index_dir: Path,
    headers: Mapping[str, str],
    body: bytes | None,
    payload: Any,
    *,
    how: str,
    client: str,
) -> dict[str, Any]:
    """`handle_webhook` once the request is authenticated: parse it, find its repository, queue its sync."""
    if body is not None:
        if too_deep(body):  # `json.loads` would recurse into it and raise RecursionError, not ValueError
            raise WebhookRefused(422, f"the JSON body nests deeper than {MAX_JSON_DEPTH} levels")
        try:
            payload = json.loads(body.decode("utf-8")) if body.strip() else {}
        except (UnicodeDecodeError, ValueError, RecursionError):
            raise WebhookRefused(422, "the body is not JSON") from None
    request = parse_push(payload, headers)
    if request.event == "ping":
        return {"accepted": False, "event": "ping", "detail": "pong: the secret matches"}
    records = read_repositories(index_dir)
    if len(records) > 1:
        target: str | None = webhook_repository(records, request.repository)
        shown = str(target)
    else:
        target = None
        try:
            root = indexed_root(index_dir)
        except Exception as error:
            raise WebhookRefused(404, f"no indexed repository to refresh: {one_line(error)}") from error
        if request.repository is not None:
            names = repository_names(root) | {name.lower() for name in records}
            if request.repository.lower() not in names and request.repository.split("/")[-1].lower() not in names:
                raise WebhookRefused(404, f"this server indexes {sorted(names)[0]!r}, not {request.repository!r}")
        shown = root.name
    replay = webhook.deliveries.replayed(delivery_keys(headers, body, payload, request), pushed_at(payload))
    if replay is not None:  # acknowledged (2xx: the host does not retry), and nothing queued
        logger.info("code-alias: webhook from %s not synced (%s)", client, replay)
        return {"accepted": False, "event": request.event, "repository": shown, "detail": f"{replay}; no new sync"}
    queued = webhook.syncer.submit(request.paths, target)
    logger.info("code-alias: sync %s queued by %s (%s, %d paths)", queued["sync_id"], client, how, len(request.paths))
    return {**queued, "event": request.event, "repository": shown}


def webhook_repository(records: Mapping[str, Mapping[str, Any]], requested: str | None) -> str:
    """
    Which of an index's repositories a webhook request names: its name (any case), its last segment when that
    is unique, or a name its folder's git remote answers to.

    :raises WebhookRefused: 422 when the request names none (an index of several needs one); 404 when no
        repository of the index matches.
    """
    if requested is None:
        raise WebhookRefused(
            422, 'this server indexes several repositories: name one ("repository": "owner/name" or a push payload)'
        )
    wanted = requested.lower()
    for name in records:
        if name.lower() == wanted:
            return name
    tail = wanted.split("/")[-1]
    by_tail = [name for name in records if name.lower().split("/")[-1] == tail]
    if len(by_tail) == 1:
        return by_tail[0]
    for name, record in sorted(records.items()):
        root = Path(str(record.get("root") or ""))
        if root.is_dir() and wanted in repository_names(root):
            return name
    raise WebhookRefused(404, f"this server indexes no repository {requested!r}")
