"""The JSONL rewrite log, and the reader that replays it for evaluation.

One line per rewrite: the question, the hints offered, the raw LLM answer, the final rewrite, what the
faithfulness check dropped, the mode, latency, whether the cache answered, and why a fallback fired. Lines are
appended under a lock of this process and the file lock `<log>.lock` (`core.locks`), so threads and worker
processes of a server can share one file.
"""

from __future__ import annotations

import json
import os
import statistics
import threading
from collections.abc import Iterable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, ClassVar

from ..core.locks import exclusive

LOG_FIELDS: tuple[str, ...] = (
    "ts",
    "question",
    "mode",
    "dictionary_version",
    "hints",
    "raw_answer",
    "rewrite",
    "dropped",
    "latency_ms",
    "cache_hit",
    "fallback",
    "generator",
    "problems",
)


class RewriteLog:
    """
    Appends one JSON line per rewrite to a file.

    ### Usage example

    ```python
    from haystack_integrations.components.code_alias.rewriting.rewrite_log import RewriteLog, read_rewrite_log

    log = RewriteLog(path=".code-alias/rewrites.jsonl")
    log.write({"question": "where's the retry helper?", "mode": "llm", "latency_ms": 812.0})
    for record in read_rewrite_log(".code-alias/rewrites.jsonl"):
        print(record["question"], record["latency_ms"])
    ```

    :param path: The JSONL file (its folder is created when missing).
    """

    _locks: ClassVar[dict[str, threading.Lock]] = {}
    _locks_guard: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, *, path: str | Path) -> None:
        self.path = Path(path)
        key = str(self.path.resolve())
        with RewriteLog._locks_guard:
            self._lock = RewriteLog._locks.setdefault(key, threading.Lock())

    def write(self, record: dict[str, Any]) -> None:
        """Append `record` as one line (a `ts` is added when missing). Never raises on a JSON-unfriendly value."""
        line = json.dumps({"ts": _now(), **record}, ensure_ascii=False, default=str) + "\n"
        data = line.encode("utf-8")
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # A lock file beside the log, not the log itself: the lock's back end may write into its file.
            with exclusive(self.path.with_name(self.path.name + ".lock")):
                fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
                try:
                    os.write(fd, data)
                finally:
                    os.close(fd)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def read_rewrite_log(path: str | Path, *, errors: list[str] | None = None) -> Iterator[dict[str, Any]]:
    """
    The records of a rewrite log, in order. A line that is not a JSON object (a crash mid-write) is skipped.

    :param path: The JSONL file.
    :param errors: When given, receives one `"line N: why"` per skipped line.
    """
    with Path(path).open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError as error:
                if errors is not None:
                    errors.append(f"line {number}: {error}")
                continue
            if not isinstance(record, dict):
                if errors is not None:
                    errors.append(f"line {number}: not an object")
                continue
            yield record


def logged_rewrites(records: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """
    Question -> its last logged final rewrite (`rewritten`, `symbols`, `packages`, `intent`), so an evaluation
    can replay retrieval with the rewrites a model produced, without calling the model again.
    """
    rewrites: dict[str, dict[str, Any]] = {}
    for record in records:
        question, rewrite = record.get("question"), record.get("rewrite")
        if isinstance(question, str) and isinstance(rewrite, dict):
            rewrites[question] = rewrite
    return rewrites


def _percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    return statistics.quantiles(ordered, n=100, method="inclusive")[int(q) - 1] if 0 < q < 100 else ordered[-1]


def summarise_rewrite_log(records: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """
    Figures of a log: rewrites per mode, cache hit rate, fallback rate and reasons, latency p50/p95 of LLM calls
    (cache misses) and of cache hits, and the share of proposed symbols/packages the faithfulness check dropped.
    """
    rows = list(records)
    llm = [r for r in rows if r.get("mode") == "llm"]
    hits = [r for r in llm if r.get("cache_hit")]
    misses = [r for r in llm if not r.get("cache_hit")]
    fallbacks = [r for r in misses if r.get("fallback")]
    reasons: dict[str, int] = {}
    for record in fallbacks:
        reason = str(record["fallback"]).split(":")[0]
        reasons[reason] = reasons.get(reason, 0) + 1
    proposed = dropped = 0
    for record in misses:
        if record.get("fallback"):
            continue
        rewrite = record.get("proposed") or record.get("rewrite") or {}
        proposed += len(rewrite.get("symbols", []) or []) + len(rewrite.get("packages", []) or [])
        dropped += sum(1 for d in record.get("dropped", []) or [] if d.get("kind") in ("symbol", "package"))

    def latencies(items: list[dict[str, Any]]) -> list[float]:
        return [float(r["latency_ms"]) for r in items if isinstance(r.get("latency_ms"), (int, float))]

    return {
        "records": len(rows),
        "by_mode": {
            mode: sum(1 for r in rows if r.get("mode") == mode) for mode in sorted({str(r.get("mode")) for r in rows})
        },
        "llm_rewrites": len(llm),
        "cache_hits": len(hits),
        "cache_hit_rate": round(len(hits) / len(llm), 4) if llm else None,
        "fallbacks": len(fallbacks),
        "fallback_rate": round(len(fallbacks) / len(misses), 4) if misses else None,
        "fallback_reasons": reasons,
        "llm_latency_ms": {"p50": _percentile(latencies(misses), 50), "p95": _percentile(latencies(misses), 95)},
        "cache_hit_latency_ms": {"p50": _percentile(latencies(hits), 50), "p95": _percentile(latencies(hits), 95)},
        "proposed_identifiers": proposed,
        "dropped_identifiers": dropped,
        "dropped_share": round(dropped / proposed, 4) if proposed else None,
    }


def replay_rewrite_log(
    records: Iterable[dict[str, Any]], rewrite: Any, *, mode: str | None = None
) -> Iterator[dict[str, Any]]:
    """
    Run each distinct logged question through `rewrite` again and pair the new answer with the logged one, e.g.
    to compare a new model or template against what production saw.

    :param records: Records from `read_rewrite_log`.
    :param rewrite: A `ConstrainedQueryRewriter` (or anything with `run(question=..., mode=...)`), optionally
        followed by a faithfulness filter through a callable taking the question and returning the rewrite dict.
    :param mode: Passed to the rewriter's `run` ("dictionary" or "llm"); None = its default.
    :returns: Per question: `question`, `logged` (the logged final rewrite), `replayed` (the new output),
        `same_symbols` and `same_packages`.
    """
    seen: set[str] = set()
    for record in records:
        question = record.get("question")
        if not isinstance(question, str) or question in seen:
            continue
        seen.add(question)
        replayed = rewrite.run(question=question, mode=mode) if hasattr(rewrite, "run") else rewrite(question)
        logged = record.get("rewrite") or {}
        yield {
            "question": question,
            "logged": logged,
            "replayed": replayed,
            "same_symbols": sorted(logged.get("symbols", [])) == sorted(replayed.get("symbols", [])),
            "same_packages": sorted(logged.get("packages", [])) == sorted(replayed.get("packages", [])),
        }
