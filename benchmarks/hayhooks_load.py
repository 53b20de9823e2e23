"""Load check of the Hayhooks deployments: a loopback `hayhooks run` under a bounded burst of requests.

Starts `hayhooks run --pipelines-dir hayhooks` on 127.0.0.1 (a free port) over an index, sends a bounded number of
requests per endpoint (default 2,000 at 32 concurrent, each phase also capped in time), and records throughput,
p50/p95/p99 latency and errors. For comparison it measures, on the same index and in this process, the same
operations called directly (`CodeSearch.ask`, the rewriter, `HintIndex.complete`), and the same endpoints over HTTP
one request at a time (serving overhead without queueing).

Usage (this repository's own source, the default; the index is built once into .bench-cache/):

    python benchmarks/hayhooks_load.py
    python benchmarks/hayhooks_load.py --repo tests/fixtures/acme_repo --requests 500
    python benchmarks/hayhooks_load.py --phases ask --replicas 2 --max-concurrent-asks 16   # two servers, round robin
    # `code-alias serve` instead: the search page's completions, typing users (7 completions, then an ask), chat
    python benchmarks/hayhooks_load.py --server serve --phases autocomplete,typing,chat
    python benchmarks/hayhooks_load.py --server serve --replay-storm 20   # and a storm of replayed webhooks

`--replay-storm RATE` sends, during every load phase, RATE webhook deliveries a second of one and the same push
(GitLab's token and event id, the same body under fresh ids, and on `code-alias serve` GitHub's signature): the
first starts a sync, every later one must be acknowledged as a replay (2xx, nothing queued), and neither they nor
the questions asked meanwhile may fail.

Prints the figures and writes benchmarks/results/hayhooks_load.json. Traffic goes to 127.0.0.1 only, and every
phase stops after `--requests` requests or `--max-seconds`, whichever comes first.

Reading the figures: under a burst of C concurrent requests a server that completes X requests per second holds
each one about C / X seconds (Little's law), so the loaded p95 measures queueing on this machine's cores as much
as serving overhead; the one-at-a-time HTTP p95 against the in-process p95 is the overhead alone.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import httpx

REPO = Path(__file__).resolve().parents[1]
DEPLOYMENTS = REPO / "hayhooks"
RESULTS = REPO / "benchmarks" / "results" / "hayhooks_load.json"
CACHE = REPO / ".bench-cache" / "hayhooks-load"
HAYHOOKS = [sys.executable, "-c", "import sys; from hayhooks.cli import hayhooks_cli; sys.exit(hayhooks_cli())"]
PHASES = ("ask", "rewrite", "autocomplete")
#: Phases only `code-alias serve` has: the search page's own calls, and OpenAI-compatible chat.
SERVE_PHASES = ("typing", "page", "chat")
CLI = [sys.executable, "-m", "haystack_integrations.components.code_alias.cli"]
STORM_SECRET = "hayhooks-load-replay-storm"
STORM_PATH = "haystack_integrations/components/code_alias/serving/live.py"  # exists in the default --repo

# Informal questions about this repository's own code (and a few generic ones that fit any code base).
QUESTIONS = [
    "where is the alias dictionary built from the repository",
    "how does the rewriter fall back when the llm times out",
    "which class drops invented symbols from a rewrite",
    "where are camelCase identifiers split into words",
    "how are package.json names read",
    "where does the bm25 retriever boost symbols",
    "rank files by their best chunk",
    "what decides the intent of a question",
    "where are chunk embeddings cached",
    "how does autocomplete find names by prefix",
    "parse the json answer of the language model",
    "which files changed since the last index",
    "tree-sitter symbol extraction for typescript",
    "walk the repository and skip node_modules",
    "where is the rewrite cache key computed",
    "reload the dictionary when the file changes",
    "elasticsearch index mapping for code chunks",
    "compute recall at k and mrr",
    "where's the payments retry helper?",
    "who decides what the bouncer lets in",
]
PREFIXES = ["with", "Code", "rewr", "Alias", "dict", "split", "Hint", "load", "run", "fais", "bm25", "emb"]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] if ordered else float("nan")


def latency_summary(seconds: list[float]) -> dict[str, float]:
    return {
        "n": len(seconds),
        "p50_ms": round(percentile(seconds, 0.50) * 1000, 2),
        "p95_ms": round(percentile(seconds, 0.95) * 1000, 2),
        "p99_ms": round(percentile(seconds, 0.99) * 1000, 2),
        "max_ms": round(max(seconds) * 1000, 2) if seconds else float("nan"),
    }


def request_path(phase: str, i: int) -> str:
    """The route of request `i`: "typing" is a user typing, seven completions then the question (`/page/ask`)."""
    if phase == "typing":
        return "/page/ask" if i % 8 == 7 else "/code_alias_autocomplete/run"
    return {"page": "/page/ask", "chat": "/v1/chat/completions"}.get(phase, f"/code_alias_{phase}/run")


def request_body(phase: str, i: int) -> dict[str, Any]:
    if phase == "typing":
        return request_body("page" if i % 8 == 7 else "autocomplete", i)
    if phase == "page":
        return {"question": QUESTIONS[i % len(QUESTIONS)]}
    if phase == "chat":
        messages = [{"role": "user", "content": QUESTIONS[i % len(QUESTIONS)]}]
        return {"model": "code_alias_ask", "messages": messages, "stream": i % 2 == 1}
    if phase == "ask":
        return {"question": QUESTIONS[i % len(QUESTIONS)], "top_k": 10}
    if phase == "rewrite":
        return {"question": QUESTIONS[i % len(QUESTIONS)]}
    return {"prefix": PREFIXES[i % len(PREFIXES)], "limit": 10}


# ---- the server ------------------------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_server(
    index_dir: Path, log: Path, extra_env: dict[str, str], startup_seconds: float, server: str = "hayhooks"
) -> tuple[Any, str]:
    """`hayhooks run` (or `code-alias serve`) on loopback; returns (process, base URL) once every deployment is up."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("HAYHOOKS_")}
    env.update(CODE_ALIAS_INDEX_DIR=str(index_dir), HAYSTACK_TELEMETRY_ENABLED="False", HF_HUB_OFFLINE="1")
    # Our wrappers refuse a Hayhooks that accepts uploads: durable mode is Hayhooks 2.1's fixed set (docs/serving.md).
    env.update(HAYHOOKS_DURABLE_MODE="true")
    env.update(extra_env)
    if server == "serve":
        command = [*CLI, "--index-dir", str(index_dir), "serve", "--host", "127.0.0.1", "--port", str(port)]
    else:
        command = [*HAYHOOKS, "run", "--pipelines-dir", str(DEPLOYMENTS), "--host", "127.0.0.1", "--port", str(port)]
    with log.open("wb") as handle:
        process = subprocess.Popen(
            command,
            cwd=REPO,
            env=env,
            stdout=handle,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + startup_seconds
    wanted = {f"code_alias_{phase}" for phase in PHASES}
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"hayhooks exited with {process.returncode}; log: {log}")
        try:
            listing = httpx.get(url + "/status", timeout=2).json()
            if wanted <= set(listing.get("pipelines", [])):
                return process, url
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    process.terminate()
    raise SystemExit(f"hayhooks did not start within {startup_seconds:.0f} s; log: {log}")


def stop_server(process: Any) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


# ---- load ------------------------------------------------------------------------------------------------------
async def burst(urls: list[str], phase: str, requests: int, concurrency: int, max_seconds: float) -> dict[str, Any]:
    """
    `requests` POSTs to one endpoint from `concurrency` workers; stops early after `max_seconds`.

    With several servers (replicas of the same index), request i goes to `urls[i % len(urls)]`, as a round-robin
    proxy would send it.
    """
    latencies: list[float] = []
    statuses: Counter[str] = Counter()
    errors: list[str] = []
    counter = iter(range(requests))
    deadline = time.monotonic() + max_seconds
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with contextlib.AsyncExitStack() as stack:
        clients = [
            await stack.enter_async_context(httpx.AsyncClient(base_url=url, timeout=120, limits=limits)) for url in urls
        ]

        async def worker() -> None:
            for i in counter:
                if time.monotonic() > deadline:
                    return
                started = time.perf_counter()
                try:
                    client = clients[i % len(clients)]
                    response = await client.post(request_path(phase, i), json=request_body(phase, i))
                    statuses[str(response.status_code)] += 1
                    if response.status_code != 200 and len(errors) < 5:
                        errors.append(f"{response.status_code}: {response.text[:300]}")
                except httpx.HTTPError as error:
                    statuses[type(error).__name__] += 1
                    if len(errors) < 5:
                        errors.append(f"{type(error).__name__}: {error}")
                latencies.append(time.perf_counter() - started)

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        wall = time.perf_counter() - started
    failed = sum(n for code, n in statuses.items() if code != "200")
    return {
        "endpoint": request_path(phase, 0) if phase != "typing" else "7 x autocomplete, 1 x /page/ask",
        "requests": len(latencies),
        "concurrency": concurrency,
        "seconds": round(wall, 3),
        "throughput_rps": round(len(latencies) / wall, 2) if wall else None,
        "errors": failed,
        "statuses": dict(statuses),
        "error_samples": errors,
        "stopped_by_time": len(latencies) < requests,
        **latency_summary(latencies),
    }


async def replay_storm(url: str, rate: float, stop: asyncio.Event, signed: bool) -> dict[str, Any]:
    """
    Webhook deliveries of one push at `rate` a second until `stop`: GitLab's token with the same event id, the same
    body under fresh ids, and (`signed`: `code-alias serve`) GitHub's HMAC signature under fresh delivery ids.
    """
    from haystack_integrations.components.code_alias.serving.live import signature_of

    body = json.dumps({"ref": "refs/heads/main", "commits": [{"id": "1" * 40, "modified": [STORM_PATH]}]}).encode()
    statuses: Counter[str] = Counter()
    outcomes: Counter[str] = Counter()
    errors: list[str] = []
    sent = 0
    async with httpx.AsyncClient(base_url=url, timeout=60) as client:
        while not stop.is_set():
            headers = {"content-type": "application/json", "x-gitlab-token": STORM_SECRET}
            kind = sent % 3 if signed else sent % 2
            if kind == 0:
                headers["x-gitlab-event-uuid"] = "storm-1"
            elif kind == 1:
                headers["x-gitlab-event-uuid"] = f"storm-fresh-{sent}"
            else:
                headers = {
                    "content-type": "application/json",
                    "x-github-event": "push",
                    "x-github-delivery": f"storm-gh-{sent}",
                    "x-hub-signature-256": signature_of(body, STORM_SECRET),
                }
            sent += 1
            try:
                response = await client.post("/code_alias_sync/run", content=body, headers=headers)
                statuses[str(response.status_code)] += 1
                result = response.json().get("result", {}) if response.status_code < 300 else {}
                outcomes["accepted" if result.get("accepted") else str(result.get("detail", "?")).split(":")[0]] += 1
                if response.status_code >= 300 and len(errors) < 5:
                    errors.append(f"{response.status_code}: {response.text[:300]}")
            except httpx.HTTPError as error:
                statuses[type(error).__name__] += 1
                if len(errors) < 5:
                    errors.append(f"{type(error).__name__}: {error}")
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=1.0 / rate)
    failed = sum(n for code, n in statuses.items() if not code.startswith("2"))
    return {
        "sent": sent,
        "statuses": dict(statuses),
        "outcomes": dict(outcomes),
        "errors": failed,
        "error_samples": errors,
    }


async def burst_with_storm(
    urls: list[str], phase: str, requests: int, concurrency: int, max_seconds: float, rate: float, signed: bool
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """`burst`, and a `replay_storm` against the first server for as long as it runs (none when `rate` is 0)."""
    if rate <= 0:
        return await burst(urls, phase, requests, concurrency, max_seconds), None
    stop = asyncio.Event()
    storm = asyncio.create_task(replay_storm(urls[0], rate, stop, signed))
    try:
        load = await burst(urls, phase, requests, concurrency, max_seconds)
    finally:
        stop.set()
    return load, await storm


def serial_http(url: str, phase: str, count: int) -> dict[str, float]:
    """One request at a time over a kept-alive connection: serving overhead without queueing."""
    seconds: list[float] = []
    with httpx.Client(base_url=url, timeout=120) as client:
        for i in range(count):
            started = time.perf_counter()
            response = client.post(request_path(phase, i), json=request_body(phase, i))
            seconds.append(time.perf_counter() - started)
            if response.status_code != 200:
                raise SystemExit(f"serial {phase} request failed: {response.status_code} {response.text[:300]}")
    return latency_summary(seconds)


# ---- in process ------------------------------------------------------------------------------------------------
def in_process(index_dir: Path, count: int, torch_threads: int | None) -> dict[str, dict[str, float]]:
    """The same operations called directly on the same index, one at a time, with the server's torch threads."""
    from haystack_integrations.components.code_alias.app.search import CodeSearch
    from haystack_integrations.components.code_alias.indexing.dictionary_handle import DictionaryHandle
    from haystack_integrations.components.code_alias.paths import DICTIONARY_FILE

    if torch_threads:
        import torch

        torch.set_num_threads(torch_threads)
    search = CodeSearch(index_dir)
    search.warm_up()
    rewriter: Any = search.query_pipeline.get_component("rewriter")
    hints = DictionaryHandle.for_path(index_dir / DICTIONARY_FILE).hints
    operations: dict[str, Callable[[int], Any]] = {
        "ask": lambda i: search.ask(QUESTIONS[i % len(QUESTIONS)], top_k=10),
        "rewrite": lambda i: rewriter.run(question=QUESTIONS[i % len(QUESTIONS)], mode="dictionary"),
        "autocomplete": lambda i: hints.complete(PREFIXES[i % len(PREFIXES)], limit=10),
    }
    figures: dict[str, dict[str, float]] = {}
    for phase, operation in operations.items():
        for i in range(min(10, count)):
            operation(i)
        seconds: list[float] = []
        for i in range(count):
            started = time.perf_counter()
            operation(i)
            seconds.append(time.perf_counter() - started)
        figures[phase] = latency_summary(seconds)
    return figures


def ensure_index(repo: Path, index_dir: Path) -> dict[str, Any]:
    from haystack_integrations.components.code_alias.app.search import CodeSearch

    started = time.perf_counter()
    stats = CodeSearch(index_dir).index(repo)  # incremental: a second run only checks the files
    return {
        "repo": str(repo),
        "files": stats["files"],
        "symbols": stats["dictionary"].get("symbols"),
        "documents": stats["sync"].get("documents"),
        "seconds": round(time.perf_counter() - started, 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", default="components", help="what to index (default: this repository's source)")
    parser.add_argument("--index-dir", help="index folder (default: .bench-cache/hayhooks-load/<repo name>)")
    parser.add_argument("--requests", type=int, default=2000, help="requests per endpoint under load")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--max-seconds", type=float, default=600.0, help="time cap of each load phase")
    parser.add_argument("--serial", type=int, default=100, help="one-at-a-time requests per endpoint (HTTP)")
    parser.add_argument("--in-process", type=int, default=200, help="direct calls per operation for comparison")
    parser.add_argument("--phases", default=",".join(PHASES), help="endpoints to load, in order")
    parser.add_argument("--torch-threads", type=int, default=1, help="CODE_ALIAS_TORCH_THREADS of the server")
    parser.add_argument(
        "--replicas",
        type=int,
        default=1,
        help="servers of the same index, each `hayhooks run` on its own port, sent requests in turn (Hayhooks' "
        "durable mode, which the code_alias deployments require, refuses --workers)",
    )
    parser.add_argument("--max-concurrent-asks", type=int, default=4, help="CODE_ALIAS_MAX_CONCURRENT_ASKS")
    parser.add_argument(
        "--server-env",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="extra environment of the server, e.g. HAYHOOKS_TRACING_ENABLED=false (repeatable)",
    )
    parser.add_argument(
        "--server",
        choices=("hayhooks", "serve"),
        default="hayhooks",
        help="`hayhooks run --pipelines-dir hayhooks` (default) or `code-alias serve` (also has the page and chat)",
    )
    parser.add_argument(
        "--replay-storm",
        type=float,
        default=0.0,
        metavar="RATE",
        help="also send RATE replayed webhook deliveries a second during each load phase (0: none)",
    )
    parser.add_argument("--startup-seconds", type=float, default=300.0)
    parser.add_argument("--output", default=str(RESULTS))
    args = parser.parse_args(argv)
    phases = [p.strip() for p in args.phases.split(",") if p.strip()]
    known = PHASES + (SERVE_PHASES if args.server == "serve" else ())
    if unknown := set(phases) - set(known):
        parser.error(f"unknown phases {sorted(unknown)}; choose from {', '.join(known)} (--server {args.server})")
    if args.requests <= 0 or args.concurrency <= 0:
        parser.error("--requests and --concurrency must be > 0")

    load_before = os.getloadavg() if hasattr(os, "getloadavg") else None
    repo = Path(args.repo).resolve()
    index_dir = Path(args.index_dir or CACHE / repo.name).resolve()
    print(f"indexing {repo} -> {index_dir} ...", flush=True)
    index = ensure_index(repo, index_dir)
    print(f"  {index}", flush=True)

    server_env = {
        "CODE_ALIAS_TORCH_THREADS": str(args.torch_threads),
        "CODE_ALIAS_MAX_CONCURRENT_ASKS": str(args.max_concurrent_asks),
    }
    if args.replay_storm > 0:
        server_env["CODE_ALIAS_WEBHOOK_SECRET"] = STORM_SECRET
    for item in args.server_env:
        key, sep, value = item.partition("=")
        if not sep or not key:
            parser.error(f"--server-env wants KEY=VALUE, got {item!r}")
        server_env[key] = value
    log = Path(tempfile.mkdtemp(prefix="hayhooks-load-")) / "server.log"
    started = time.perf_counter()
    servers = [
        start_server(index_dir, log.with_name(f"server-{n}.log"), server_env, args.startup_seconds, args.server)
        for n in range(args.replicas)
    ]
    urls = [url for _, url in servers]
    url = urls[0]
    startup = round(time.perf_counter() - started, 2)
    print(f"{args.server} up at {', '.join(urls)} in {startup} s (logs: {log.parent})", flush=True)
    load: dict[str, Any] = {}
    serial: dict[str, Any] = {}
    storms: dict[str, Any] = {}
    try:
        for phase in phases:
            asyncio.run(burst(urls, phase, min(50, args.requests), args.concurrency, 60.0))  # warm the servers up
            serial[phase] = serial_http(url, phase, args.serial)
            print(f"{phase}: one at a time over HTTP {serial[phase]}", flush=True)
            load[phase], storm = asyncio.run(
                burst_with_storm(
                    urls,
                    phase,
                    args.requests,
                    args.concurrency,
                    args.max_seconds,
                    args.replay_storm,
                    args.server == "serve",
                )
            )
            figures = {k: v for k, v in load[phase].items() if k not in ("error_samples", "endpoint")}
            print(f"{phase}: {args.concurrency} concurrent {figures}", flush=True)
            if storm is not None:
                storms[phase] = storm
                print(f"{phase}: replay storm meanwhile {storm}", flush=True)
            for sample in load[phase]["error_samples"]:
                print(f"  error: {sample}", flush=True)
    finally:
        for process, _ in servers:
            stop_server(process)

    print("in-process comparison ...", flush=True)
    direct = in_process(index_dir, args.in_process, args.torch_threads)
    comparison: dict[str, dict[str, Any]] = {}
    for phase in [phase for phase in phases if phase in direct]:  # the page's and chat's have no direct twin
        base = direct[phase]["p95_ms"]
        comparison[phase] = {
            "in_process_p95_ms": base,
            "http_serial_p95_ms": serial[phase]["p95_ms"],
            "http_loaded_p95_ms": load[phase]["p95_ms"],
            "serial_ratio": round(serial[phase]["p95_ms"] / base, 2) if base else None,
            "loaded_ratio": round(load[phase]["p95_ms"] / base, 2) if base else None,
            "littles_law_wait_ms": round(args.concurrency / load[phase]["throughput_rps"] * 1000, 1)
            if load[phase]["throughput_rps"]
            else None,
        }
        print(f"{phase}: in process {direct[phase]} -> {comparison[phase]}", flush=True)

    ask = comparison.get("ask", {})
    report: dict[str, Any] = {
        "benchmark": "hayhooks_load",
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
            "load_average_at_start": load_before,
        },
        "config": {
            "requests": args.requests,
            "concurrency": args.concurrency,
            "max_seconds": args.max_seconds,
            "torch_threads": args.torch_threads,
            "max_concurrent_asks": args.max_concurrent_asks,
            "server_env": server_env,
            "server": f"{args.replicas} x {'code-alias serve' if args.server == 'serve' else 'hayhooks run'} "
            "(1 process each), loopback; the client runs on the same machine",
            "replay_storm_per_second": args.replay_storm,
        },
        "index": index,
        "startup_seconds": startup,
        "load": load,
        "replay_storm": storms or None,
        "serial_http": serial,
        "in_process": direct,
        "comparison": comparison,
        "targets": {
            "zero_errors": all(load[p]["errors"] == 0 for p in phases)
            and all(storm["errors"] == 0 for storm in storms.values()),
            # One push, delivered over and over: one sync in all (the first delivery), every other one a replay.
            "one_sync_per_push": not storms or sum(s["outcomes"].get("accepted", 0) for s in storms.values()) == 1,
            "ask_p95_within_3x_in_process_serial": bool(ask) and ask["serial_ratio"] <= 3,
            "ask_p95_within_3x_in_process_loaded": bool(ask) and ask["loaded_ratio"] <= 3,
        },
    }
    output = Path(args.output)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"targets: {report['targets']}\nwrote {output}", flush=True)
    return 0 if report["targets"]["zero_errors"] and report["targets"]["one_sync_per_push"] else 1


if __name__ == "__main__":
    sys.exit(main())
