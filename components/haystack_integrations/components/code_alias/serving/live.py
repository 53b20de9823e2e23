# long: webhook re-indexing: signatures, the queue, the sync worker and its status
"""Refresh on push: a signed webhook (or `code-alias sync`) re-indexes a repository that is already indexed.

`code-alias sync` (cron, a person) refreshes with `CodeSearch.index` on the working tree the index was built from,
the very code path of `code-alias index`: it walks the tree and re-indexes the files whose content changed. A
server's syncs (embedded default) go through one warm `push_sync.WarmIndexer` per index folder, which runs the
same indexing components but keeps them loaded between syncs, reads only the paths the push names (the whole tree
when it names none), and hands the new build to the server's queries in one step with its BM25 index already
built; a hybrid index gets the changed chunks' vectors right after (they answer lexically until then). Both take
the index folder's lock (so syncs from the server, from cron and from a person queue behind each other), keep the
names a rename retired as aliases, and make the new dictionary and documents current with one atomic swap of
`manifest.json`. Until that swap every question is answered from the previous build; a sync that fails leaves the
previous build in place. Bringing the working tree up to date (`git pull`) is the deployer's job: see
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

Every sync (from the server or the CLI) records its outcome in `sync-status.json` in the index folder (written
atomically), which `code-alias status` and the server's `code_alias_status` report: last sync, trigger, dictionary
version, documents, last error. A refresh refused after authentication (a tree that is gone, a repository the
index does not hold, a body that is no push) is recorded there too (`last_refused`, `refusals`), and so is a
refresh whose follow-up failed (the synced chunks' vectors, folding the deltas: `last_warning`); each goes to the
server log with its reason. Requests refused before authentication are logged and counted in memory only
(`code_alias_status`'s `sync.unauthenticated`): anyone who reaches the port can send them, and they must not make
the server write.
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
from typing import TYPE_CHECKING, Any

from typing_extensions import NotRequired, TypedDict

from ..app.search import CodeSearch
from ..core.model import atomic_write_bytes, read_json_object
from ..core.processes import process_alive
from ..core.repositories import origin_url
from ..errors import CodeAliasError
from ..indexing import index_files
from ..indexing.dictionary_handle import DictionaryHandle
from ..indexing.index_files import current_manifest
from ..indexing.repositories import as_recorded, read_repositories
from ..paths import DICTIONARY_FILE
from .json_depth import MAX_JSON_DEPTH, too_deep
from .push_sync import WarmIndexer
from .service import hide_paths

if TYPE_CHECKING:
    from .push_sync import WarmIndexer

logger = logging.getLogger(__name__)

SECRET_ENV = "CODE_ALIAS_WEBHOOK_SECRET"
LOCK_TIMEOUT_ENV = "CODE_ALIAS_SYNC_LOCK_TIMEOUT"
DEFAULT_LOCK_TIMEOUT = 900.0
STATUS_FILE = "sync-status.json"
MAX_PATHS = 10_000
MAX_PATH_CHARS = 1_000
MAX_ERROR_CHARS = 500
#: A delivery seen this recently is a replay; a GitHub push older than this is stale (`DeliveryLog`).
REPLAY_WINDOW_SECONDS = 3600.0
#: Deliveries remembered at most (the oldest are forgotten first): a storm of fresh ids cannot grow the log.
MAX_DELIVERIES = 10_000
_STATUS_LOCK = threading.RLock()  # one writer of a `sync-status.json` at a time in this process


class WebhookRefused(CodeAliasError):
    """A webhook request refused before anything ran; `status_code` is the HTTP answer, `detail` says why."""

    def __init__(self, status_code: int, detail: str) -> None:
        super().__init__(detail)
        self.status_code = status_code
        self.detail = detail


class SyncStatus(TypedDict):
    """The outcome of the last refresh of an index folder (from `sync-status.json`)."""

    state: str  # "never", "running", "ok" or "failed"
    last_sync_id: int | None
    last_trigger: str | None
    last_started_at: str | None
    last_finished_at: str | None
    last_seconds: float | None
    last_ok_at: str | None
    last_error: str | None
    root: str | None
    dictionary_version: str | None
    documents: int | None
    files_changed: int | None
    files_removed: int | None
    paths: int | None
    refused: list[dict[str, str]]
    phases: dict[str, float] | None
    pid: int | None
    repositories: dict[str, Any]
    last_refused: dict[str, Any] | None  # {at, status, reason, trigger}: the last refresh refused after authentication
    refusals: int  # how many were refused after authentication, ever (this index folder)
    last_warning: dict[str, Any] | None  # {at, what, reason}: the last follow-up of a refresh that failed
    unauthenticated: NotRequired[dict[str, Any]]  # a server's requests refused before authentication (in memory)


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


# ---- the sync record -----------------------------------------------------------------------------------------------
def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def read_status(index_dir: Path) -> SyncStatus:
    """The last sync of `index_dir` (state "never" when none was recorded); a damaged record reads as "never"."""
    empty: SyncStatus = {
        "state": "never",
        "last_sync_id": None,
        "last_trigger": None,
        "last_started_at": None,
        "last_finished_at": None,
        "last_seconds": None,
        "last_ok_at": None,
        "last_error": None,
        "root": None,
        "dictionary_version": None,
        "documents": None,
        "files_changed": None,
        "files_removed": None,
        "paths": None,
        "refused": [],
        "phases": None,
        "pid": None,
        "repositories": {},
        "last_refused": None,
        "refusals": 0,
        "last_warning": None,
    }
    empty["repositories"] = dict(read_repositories(index_dir))
    manifest = None
    try:
        manifest = current_manifest(index_dir)
    except Exception:  # a damaged manifest is reported by the index status itself
        logger.debug("code-alias: no readable manifest in %s", index_dir)
    if manifest is not None:  # what serves now, whoever built it
        empty["dictionary_version"] = manifest.dictionary.version if manifest.dictionary else None
        empty["documents"] = manifest.documents.count if manifest.documents else None
    recorded = read_json_object(index_dir / STATUS_FILE)
    if recorded is None:
        return empty
    merged = {**empty, **{k: v for k, v in recorded.items() if k in empty and k != "repositories"}}
    merged["dictionary_version"] = empty["dictionary_version"] or merged["dictionary_version"]
    merged["documents"] = empty["documents"] if empty["documents"] is not None else merged["documents"]
    if merged["state"] == "running" and not process_alive(merged["pid"]):
        merged["state"] = "failed"
        merged["last_error"] = f"interrupted: process {merged['pid']} ended during the sync; the previous build serves"
    return merged  # type: ignore[return-value]


#: What `record_refusal` and `record_warning` write while a sync may be running: a sync's own record keeps them
#: as they are on disk when it writes (`_write_status(keep=...)`), instead of the values it read when it started.
_SIDE_FIELDS = ("last_refused", "refusals", "last_warning")


def _write_status(index_dir: Path, status: Mapping[str, Any], *, keep: tuple[str, ...] = ()) -> None:
    with _STATUS_LOCK:
        record = dict(status)
        if keep:
            current = read_status(index_dir)
            record.update({key: current[key] for key in keep if key in current})  # type: ignore[literal-required]
        try:
            atomic_write_bytes(index_dir / STATUS_FILE, json.dumps(record, indent=1).encode("utf-8"))
        except OSError as error:  # the sync itself is what matters; say why the record is stale
            logger.warning("code-alias: could not record the sync in %s: %s", index_dir / STATUS_FILE, error)


def _update_status(index_dir: Path, **fields: Any) -> SyncStatus:
    """Change some fields of the record on disk (read and written under the process's status lock)."""
    with _STATUS_LOCK:
        record: dict[str, Any] = {**read_status(index_dir), **fields}
        record.pop("repositories", None)  # read from repositories.json, never written here
        _write_status(index_dir, record)
    return record  # type: ignore[return-value]


def record_refusal(index_dir: Path, status: int, reason: str, *, trigger: str = "webhook") -> None:
    """
    A refresh refused after authentication: in the record (`last_refused`, `refusals`) and in the log, with why.
    """
    logger.warning("code-alias: refresh of %s refused (%d): %s", index_dir, status, reason)
    with _STATUS_LOCK:
        count = int(read_status(index_dir).get("refusals") or 0)
        refused = {"at": _now(), "status": status, "reason": hide_paths(reason)[:MAX_ERROR_CHARS], "trigger": trigger}
        _update_status(index_dir, last_refused=refused, refusals=count + 1)


def record_warning(index_dir: Path, what: str, reason: str) -> None:
    """A refresh whose follow-up (`what`: "vectors", "compaction") failed: in the record and (by the caller) the log."""
    _update_status(index_dir, last_warning={"at": _now(), "what": what, "reason": reason[:MAX_ERROR_CHARS]})


def _one_line(error: BaseException) -> str:
    while type(error).__name__ == "PipelineRuntimeError" and error.__cause__ is not None:
        error = error.__cause__

    text = hide_paths(" ".join(f"{type(error).__name__}: {error}".split()))
    return text if len(text) <= MAX_ERROR_CHARS else text[: MAX_ERROR_CHARS - 3] + "..."


def indexed_root(index_dir: Path) -> Path:
    """
    The working tree the index in `index_dir` was built from.

    :raises FileNotFoundError: No index, or its root is not a folder on this machine.
    """

    root = DictionaryHandle.for_path(index_dir / DICTIONARY_FILE).dictionary.root
    if not root or not Path(root).is_dir():
        raise FileNotFoundError(
            f"the index in {index_dir} was built from {root or 'an unknown folder'}, which is not a folder here"
        )
    return Path(root)


def sync_targets(
    index_dir: Path, root: str | os.PathLike[str] | None, repo: str | None
) -> list[tuple[Path, str | None]]:
    """
    (folder, repository name) pairs a sync refreshes: `root` as `repo`; else `repo`'s recorded folder; else every
    recorded repository; else the folder the index was built from.

    :raises FileNotFoundError: `repo` is not in the index and no `root` was given, or no folder is known.
    """
    if root is not None:
        return [(Path(root).expanduser().resolve(), repo)]
    records = read_repositories(index_dir)
    if repo is not None:
        name = as_recorded(repo, records)
        record = records.get(name)
        if record is None or not record.get("root"):
            known = ", ".join(sorted(records)) or "none"
            raise FileNotFoundError(f"no repository {repo!r} recorded in {index_dir} (it holds: {known})")
        return [(Path(str(record["root"])), name)]
    if len(records) > 1:
        return [(Path(str(r["root"])), name) for name, r in sorted(records.items()) if r.get("root")]
    return [(indexed_root(index_dir), None)]


def run_sync(
    index_dir: str | os.PathLike[str],
    root: str | os.PathLike[str] | None = None,
    *,
    backend: str = "embedded",
    lexical: bool | None = None,
    trigger: str = "cli",
    paths: tuple[str, ...] = (),
    sync_id: int | None = None,
    lock_timeout: float | None = None,
    repo: str | None = None,
    indexer: WarmIndexer | None = None,
) -> SyncStatus:
    """
    Refresh the index of `root` (default: the tree it was built from) with `CodeSearch.index`, and record how it went.

    In an index of several repositories, `repo` names the one to refresh (its recorded folder unless `root` is
    given); with neither `root` nor `repo`, every repository is refreshed in turn.

    :param index_dir: The index folder.
    :param root: The working tree; None = the one the index was built from.
    :param backend: "embedded" or "elasticsearch".
    :param lexical: As `CodeSearch`; None follows the index.
    :param trigger: What asked for the sync ("cli", "webhook", ...), for the record.
    :param paths: The paths the request said changed. With `indexer`, only they are re-read (none: the tree is
        walked); without, they are only recorded and the whole tree is compared by content.
    :param sync_id: A number for the record (the server counts its syncs).
    :param lock_timeout: Seconds to wait for another writer; None waits.
    :param repo: The repository to refresh, by the name the index knows it under.
    :param indexer: A server's warm indexer of this folder (`push_sync.WarmIndexer`, embedded default): its
        components stay loaded between syncs and the new build is handed to the server's queries at once.
    :returns: The record written to `sync-status.json`; `state` is "ok" or "failed" (then `last_error` says why).
    """

    folder = Path(index_dir).expanduser().resolve()
    previous = read_status(folder)
    started = time.perf_counter()
    record: dict[str, Any] = {
        **previous,
        "state": "running",
        "last_sync_id": sync_id,
        "last_trigger": trigger,
        "last_started_at": _now(),
        "paths": len(paths),
        "pid": os.getpid(),
    }
    _write_status(folder, record, keep=_SIDE_FIELDS)
    try:
        search = CodeSearch(folder, backend=backend, lexical=lexical)  # type: ignore[arg-type]
        for tree, name in sync_targets(folder, root, repo):
            if indexer is not None:
                stats = indexer.sync(tree, repo=name, paths=paths or None, lock_timeout=lock_timeout)
            else:
                stats = search.index(tree, lock_timeout=lock_timeout, repo=name)
    except Exception as error:
        logger.warning("code-alias: sync of %s failed; the previous build keeps serving: %s", folder, _one_line(error))
        record.update(state="failed", last_error=_one_line(error))
    else:
        record.update(
            state="ok",
            last_error=None,
            last_ok_at=_now(),
            root=stats["root"],
            files_changed=stats["files_changed"],
            files_removed=stats["files_removed"],
            refused=stats.get("refused") or [],
            phases=stats.get("phases"),
        )
    record.update(last_finished_at=_now(), last_seconds=round(time.perf_counter() - started, 3))
    manifest = current_manifest(folder)
    if manifest is not None:
        record["dictionary_version"] = manifest.dictionary.version if manifest.dictionary else None
        record["documents"] = manifest.documents.count if manifest.documents else None
    _write_status(folder, record, keep=_SIDE_FIELDS)
    return record  # type: ignore[return-value]


# ---- the server's queue ----------------------------------------------------------------------------------------------
@dataclass
class Syncer:
    """
    One background worker per index folder: requests queue, and the requests waiting when a sync ends are served by
    one more sync (a burst of pushes costs at most two refreshes). The index lock serialises it with `code-alias
    sync` / `code-alias index` run by other processes.
    """

    index_dir: Path
    backend: str = "embedded"
    lexical: bool | None = None
    lock_timeout: float | None = DEFAULT_LOCK_TIMEOUT
    _condition: threading.Condition = field(default_factory=threading.Condition)
    _requested: int = 0
    _done: int = 0
    _running: bool = False
    _paths: dict[str | None, list[str]] = field(default_factory=dict)  # per repository (None: the only one)
    _repos: set[str | None] = field(default_factory=set)
    _thread: threading.Thread | None = None
    _indexer: WarmIndexer | None = None
    _walks: set[str | None] = field(default_factory=set)  # repositories a request without paths asked for
    deliveries: DeliveryLog = field(default_factory=DeliveryLog)
    # Requests refused before authentication, counted in memory only (`handle_webhook`): count, last at/status/why.
    unauthenticated: dict[str, Any] = field(default_factory=lambda: {"count": 0})

    def __post_init__(self) -> None:
        # Ids go on from the last recorded sync, so a client polling `last_sync_id >= its id` after a server
        # restart never reads the previous server's record as its own sync done.
        last = read_status(Path(self.index_dir).expanduser()).get("last_sync_id")
        self._requested = self._done = last if isinstance(last, int) and last > 0 else 0

    def indexer(self) -> WarmIndexer | None:
        """The warm indexer the syncs share (embedded default only; Elasticsearch re-indexes as the CLI does)."""
        if self.backend != "embedded":
            return None
        if self._indexer is None:
            self._indexer = WarmIndexer(self.index_dir, lexical=self.lexical)
        return self._indexer

    def _fill_vectors(self) -> None:
        """
        A hybrid index: the synced chunks answer lexically from the swap on (`status` says the sync is done); their
        vectors come right after, before the next sync starts. A failure here leaves them to `code-alias embed`.
        """
        indexer = self._indexer
        if indexer is None:
            return
        try:
            indexer.fill_vectors(lock_timeout=self.lock_timeout)
        except Exception as error:
            logger.warning(
                "code-alias: vectors of the synced chunks not computed (%s); `code-alias embed` adds them",
                _one_line(error),
            )
            record_warning(Path(self.index_dir), "vectors", f"{_one_line(error)}; `code-alias embed` adds them")

    def submit(self, request: PushRequest, repo: str | None = None) -> dict[str, Any]:
        """
        Queue a refresh (of repository `repo` in an index of several; None: all); returns at once with its id
        (`status` shows `last_sync_id` >= it once done).
        """
        with self._condition:
            self._requested += 1
            self._paths.setdefault(repo, []).extend(request.paths)
            if not request.paths:  # one request without paths: compare the whole tree
                self._walks.add(repo)
            self._repos.add(repo)
            ahead = 1 if self._running else 0
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._work, name="code-alias-sync", daemon=True)
                self._thread.start()
            self._condition.notify_all()
            return {"accepted": True, "sync_id": self._requested, "running_ahead": ahead, "paths": len(request.paths)}

    def refused(self, refusal: WebhookRefused, *, authenticated: bool, client: str) -> None:
        """
        Say why a request was refused: in the log always; in the sync record when it was authenticated (a push
        the server could not act on), else only in this server's memory (`unauthenticated`).
        """
        if authenticated:
            record_refusal(Path(self.index_dir), refusal.status_code, f"{refusal.detail} (from {client})")
            return
        logger.warning("code-alias: webhook from %s refused (%s): %s", client, refusal.status_code, refusal.detail)
        with self._condition:
            self.unauthenticated = {
                "count": int(self.unauthenticated.get("count", 0)) + 1,
                "last_at": _now(),
                "last_status": refusal.status_code,
                "last_reason": refusal.detail,
            }

    def wait(self, sync_id: int, timeout: float | None = None) -> bool:
        """Block until the sync `sync_id` has finished (True), or `timeout` seconds passed (False)."""
        with self._condition:
            return self._condition.wait_for(lambda: self._done >= sync_id, timeout)

    def _compact(self) -> None:
        """
        When no push waits (`WarmIndexer.idle`): save the last sync's BM25 index for other processes, and fold the
        chains of deltas into whole files if they have grown past the soft limit, off the syncs' path. A failure
        leaves the chains, which still read right.
        """
        indexer = self._indexer
        if indexer is None:
            return
        try:
            indexer.idle(lock_timeout=1.0)  # another writer holds the index: it is not idle, try after the next
        except index_files.IndexLockedError:
            logger.info("code-alias: deltas not compacted now: another writer holds the index; the next idle retries")
        except Exception as error:
            logger.warning("code-alias: deltas not compacted (%s); the next idle moment retries", _one_line(error))
            record_warning(Path(self.index_dir), "compaction", f"{_one_line(error)}; the next idle moment retries")

    def _work(self) -> None:
        while True:
            with self._condition:
                if self._done >= self._requested:
                    self._thread = None
                    break
                target, pending, walks = self._requested, self._paths, self._walks
                self._paths, self._walks = {}, set()
                # One sync per repository asked for since the last one; None (all of them) covers every name.
                repos = [None] if None in self._repos else sorted(r for r in self._repos if r is not None)
                self._repos = set()
                self._running = True
            try:
                for repo in repos:
                    # A repository's own pushes' paths (all of them for None); none at all: walk its tree.
                    named = [p for r, ps in pending.items() if repo is None or r == repo for p in ps]
                    walk = None in walks or repo in walks or (repo is None and bool(walks))
                    run_sync(
                        self.index_dir,
                        backend=self.backend,
                        lexical=self.lexical,
                        trigger="webhook",
                        paths=() if walk else tuple(dict.fromkeys(named)),
                        sync_id=target,
                        lock_timeout=self.lock_timeout,
                        repo=repo,
                        indexer=self.indexer(),
                    )
                self._fill_vectors()
                if self._indexer is not None:
                    self._indexer.settle()
            except Exception:  # run_sync records its own failures; this is a bug, kept out of the worker's way
                logger.exception("code-alias: sync worker error")
            finally:
                with self._condition:
                    self._running = False
                    self._done = target
                    self._condition.notify_all()
        # Idle: a push arriving now starts another worker, which waits for the indexer while this compacts.
        self._compact()


_SYNCERS: dict[Path, Syncer] = {}
_SYNCERS_LOCK = threading.Lock()


def sync_lock_timeout(environ: Mapping[str, str] | None = None) -> float:
    """
    Seconds a server's sync waits behind another writer (`CODE_ALIAS_SYNC_LOCK_TIMEOUT`, default 900) before it
    fails and says who holds the index.

    :raises ValueError: Not a positive number (naming the variable).
    """
    text = (os.environ if environ is None else environ).get(LOCK_TIMEOUT_ENV, "").strip()
    if not text:
        return DEFAULT_LOCK_TIMEOUT
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise ValueError(f"{LOCK_TIMEOUT_ENV} must be a positive number of seconds, got {text!r}")
    return value


def syncer_for(index_dir: Path, *, backend: str = "embedded", lexical: bool | None = None) -> Syncer:
    """The process's one `Syncer` for `index_dir` (its lock timeout from `CODE_ALIAS_SYNC_LOCK_TIMEOUT`)."""
    with _SYNCERS_LOCK:
        syncer = _SYNCERS.get(index_dir)
        if syncer is None:
            syncer = Syncer(index_dir, backend=backend, lexical=lexical, lock_timeout=sync_lock_timeout())
            _SYNCERS[index_dir] = syncer
        return syncer


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
    syncer = syncer_for(index_dir, backend=backend, lexical=lexical)
    try:
        how = verify_request(headers, body, secret if secret is not None else webhook_secret())
    except WebhookRefused as refused:
        syncer.refused(refused, authenticated=False, client=client)
        raise
    try:
        return _queue_push(syncer, index_dir, headers, body, payload, how=how, client=client)
    except WebhookRefused as refused:
        syncer.refused(refused, authenticated=True, client=client)
        raise


def _queue_push(
    syncer: Syncer,
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
            raise WebhookRefused(404, f"no indexed repository to refresh: {_one_line(error)}") from error
        if request.repository is not None:
            names = repository_names(root) | {name.lower() for name in records}
            if request.repository.lower() not in names and request.repository.split("/")[-1].lower() not in names:
                raise WebhookRefused(404, f"this server indexes {sorted(names)[0]!r}, not {request.repository!r}")
        shown = root.name
    replay = syncer.deliveries.replayed(delivery_keys(headers, body, payload, request), pushed_at(payload))
    if replay is not None:  # acknowledged (2xx: the host does not retry), and nothing queued
        logger.info("code-alias: webhook from %s not synced (%s)", client, replay)
        return {"accepted": False, "event": request.event, "repository": shown, "detail": f"{replay}; no new sync"}
    queued = syncer.submit(request, target)
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
