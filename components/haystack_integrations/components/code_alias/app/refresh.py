"""Refreshing an index that is already built: `run_sync`, the record of each refresh, and a server's sync queue.

`code-alias sync` (cron, a person) refreshes with `CodeSearch.index` on the working tree the index was built from,
the very code path of `code-alias index`: it walks the tree and re-indexes the files whose content changed. A
server's syncs (embedded default; its webhook, `serving/live.py`, queues them on a `Syncer`) go through one warm
`push_sync.WarmIndexer` per index folder, which runs the same indexing components but keeps them loaded between
syncs, reads only the paths the push names (the whole tree when it names none), and hands the new build to the
server's queries in one step with its BM25 index already built; a hybrid index gets the changed chunks' vectors
right after (they answer lexically until then). Both take the index folder's lock (so syncs from the server, from
cron and from a person queue behind each other), keep the names a rename retired as aliases, and make the new
dictionary and documents current with one atomic swap of `manifest.json`. Until that swap every question is
answered from the previous build; a sync that fails leaves the previous build in place.

Every sync (from the server or the CLI) records its outcome in `sync-status.json` in the index folder (written
atomically), which `code-alias status` and the server's `code_alias_status` report: last sync, trigger, dictionary
version, documents, last error. A refresh refused after authentication (a tree that is gone, a repository the
index does not hold, a body that is no push) is recorded there too (`last_refused`, `refusals`), and so is a
refresh whose follow-up failed (the synced chunks' vectors, folding the deltas: `last_warning`). Errors are
recorded without the server's directories (`errors.hide_paths`): the record is served.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from typing_extensions import NotRequired, TypedDict

from ..core.model import atomic_write_bytes, read_json_object
from ..core.processes import process_alive
from ..errors import hide_paths
from ..indexing import index_files
from ..indexing.dictionary_handle import DictionaryHandle
from ..indexing.index_files import current_manifest
from ..indexing.repositories import as_recorded, read_repositories
from ..paths import DICTIONARY_FILE
from .push_sync import WarmIndexer
from .search import CodeSearch

logger = logging.getLogger(__name__)

LOCK_TIMEOUT_ENV = "CODE_ALIAS_SYNC_LOCK_TIMEOUT"
DEFAULT_LOCK_TIMEOUT = 900.0
STATUS_FILE = "sync-status.json"
MAX_ERROR_CHARS = 500
_STATUS_LOCK = threading.RLock()  # one writer of a `sync-status.json` at a time in this process


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


# ---- the sync record -----------------------------------------------------------------------------------------------
def utc_now() -> str:
    """Now, as the record writes times (UTC, seconds)."""
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
        refused = {
            "at": utc_now(),
            "status": status,
            "reason": hide_paths(reason)[:MAX_ERROR_CHARS],
            "trigger": trigger,
        }
        _update_status(index_dir, last_refused=refused, refusals=count + 1)


def record_warning(index_dir: Path, what: str, reason: str) -> None:
    """A refresh whose follow-up (`what`: "vectors", "compaction") failed: in the record and (by the caller) the log."""
    _update_status(index_dir, last_warning={"at": utc_now(), "what": what, "reason": reason[:MAX_ERROR_CHARS]})


def one_line(error: BaseException) -> str:
    """An error in one line for the record and the log: its root cause, no server paths, at most `MAX_ERROR_CHARS`."""
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
        "last_started_at": utc_now(),
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
        logger.warning("code-alias: sync of %s failed; the previous build keeps serving: %s", folder, one_line(error))
        record.update(state="failed", last_error=one_line(error))
    else:
        record.update(
            state="ok",
            last_error=None,
            last_ok_at=utc_now(),
            root=stats["root"],
            files_changed=stats["files_changed"],
            files_removed=stats["files_removed"],
            refused=stats.get("refused") or [],
            phases=stats.get("phases"),
        )
    record.update(last_finished_at=utc_now(), last_seconds=round(time.perf_counter() - started, 3))
    manifest = current_manifest(folder)
    if manifest is not None:
        record["dictionary_version"] = manifest.dictionary.version if manifest.dictionary else None
        record["documents"] = manifest.documents.count if manifest.documents else None
    _write_status(folder, record, keep=_SIDE_FIELDS)
    return record  # type: ignore[return-value]


# ---- a server's queue ----------------------------------------------------------------------------------------------
@dataclass
class Syncer:
    """
    One background worker per index folder: requests queue, and the requests waiting when a sync ends are served by
    one more sync (a burst of pushes costs at most two refreshes). The index lock serialises it with `code-alias
    sync` / `code-alias index` run by other processes. A server holds one per folder (`serving.live.syncer_for`).

    ### Usage example

    ```python
    from pathlib import Path
    from haystack_integrations.components.code_alias.app.refresh import Syncer, read_status

    syncer = Syncer(Path(".code-alias"))
    queued = syncer.submit(["pkg/payments.py"])   # the paths a push named
    syncer.wait(queued["sync_id"], timeout=120)
    print(read_status(Path(".code-alias"))["state"])
    ```
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
                one_line(error),
            )
            record_warning(Path(self.index_dir), "vectors", f"{one_line(error)}; `code-alias embed` adds them")

    def submit(self, paths: tuple[str, ...] | list[str] = (), repo: str | None = None) -> dict[str, Any]:
        """
        Queue a refresh (of repository `repo` in an index of several; None: all) of the `paths` a push named (none:
        compare the whole tree); returns at once with its id (`read_status` shows `last_sync_id` >= it once done).
        """
        with self._condition:
            self._requested += 1
            self._paths.setdefault(repo, []).extend(paths)
            if not paths:  # one request without paths: compare the whole tree
                self._walks.add(repo)
            self._repos.add(repo)
            ahead = 1 if self._running else 0
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._work, name="code-alias-sync", daemon=True)
                self._thread.start()
            self._condition.notify_all()
            return {"accepted": True, "sync_id": self._requested, "running_ahead": ahead, "paths": len(paths)}

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
            logger.warning("code-alias: deltas not compacted (%s); the next idle moment retries", one_line(error))
            record_warning(Path(self.index_dir), "compaction", f"{one_line(error)}; the next idle moment retries")

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
