"""Stress `code-alias serve` while its index switches builds: no mixed answer, no dropped connection.

A served lexical index of two repositories (a copy of this repository's `components/` as `acme/core`, the fixture
repository as `acme/fixture`) takes `--switches` new builds, alternately by a re-index in another process
(`code-alias index ... --repo acme/core`) and by a signed push webhook that the server syncs itself. Each switch adds
a file defining a new marker function (a random name) and removes the marker of two switches before, so every build
holds a known set of markers; after each switch the manifest's build id is recorded with that set.

Meanwhile `--clients` clients send requests with the common HTTP clients, each on its own kept-alive connections:
httpx (asyncio), aiohttp, requests (threads) and the openai client (threads, retries off, so a dropped connection
is counted, not retried away). A share of requests (`--idle-share`) comes after an idle gap of 4.5-5.5 s, about the
5 s after which httpx and the openai client give an idle connection up (and uvicorn's default keep-alive closed it).
Some clients are probers: they ask about the markers of the last switches and check every answer:

- `mixed_in_answer`: the rewrite names a marker while the answer's files and symbols lack its file, or the asked
  marker's file is in the files while the rewrite does not name it;
- `mixed_across`: two answers reporting the same generation (`generation.build`) disagree on whether a marker exists
  (ask and `code_alias_rewrite` alike);
- `wrong_for_build`: an answer whose build was recorded after a switch disagrees with that build's markers;
- `scope_violations`: an ask narrowed to `acme/fixture` whose rewrite names a marker (an `acme/core` name);
- `no_generation`: an ask or rewrite answer without its generation.

Errors are every non-2xx answer and every exception (a `ReadError` included), from the clients, the probers and
the switches (a webhook that is not accepted, a sync or re-index that fails). The run ends once `--requests`
requests and `--switches` switches are done (or after `--max-seconds`). `--keep-alive 5` serves with uvicorn's old
default, for the comparison; `--switches 0` is a plain keep-alive run.

    python benchmarks/generation_stress.py --clients 32 --switches 60 --requests 10000 \\
        --out benchmarks/results/generation_stress.json

Traffic goes to 127.0.0.1 only. Prints the figures and writes the JSON report (with the load average sampled
through the run).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import shutil
import signal
import socket
import string
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import aiohttp
import httpx
import requests
from openai import OpenAI

REPO = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "haystack_integrations.components.code_alias.cli"]
SECRET = "generation-stress-secret"
CORE, FIXTURE = "acme/core", "acme/fixture"
MARKER_DIR = "stress_markers"
QUESTIONS = [
    "where is the alias dictionary built from the repository",
    "how does the rewriter fall back when the llm times out",
    "which class drops invented symbols from a rewrite",
    "where are camelCase identifiers split into words",
    "where does the bm25 retriever boost symbols",
    "where's the payments retry helper?",
    "who decides what the bouncer lets in",
]
PREFIXES = ["with", "Code", "rewr", "Alias", "dict", "split", "Hint", "load", "run", "bm25"]


def marker_name(rng: random.Random) -> str:
    """A function name shared by nothing else (two random words, so no two markers are near each other's spelling)."""
    letters = string.ascii_lowercase
    return "".join(rng.choice(letters) for _ in range(7)) + "_" + "".join(rng.choice(letters) for _ in range(7))


@dataclass
class Tally:
    """What every worker adds to (one event loop and a few threads: guarded by a lock)."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    requests: Counter[str] = field(default_factory=Counter)
    statuses: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    error_samples: list[str] = field(default_factory=list)
    checks: Counter[str] = field(default_factory=Counter)
    check_samples: list[dict[str, Any]] = field(default_factory=list)
    idle_gaps: int = 0
    # (build, marker) -> {exists?: count}, from asks and rewrites
    observed: dict[tuple[str, str], Counter[bool]] = field(default_factory=lambda: defaultdict(Counter))
    truth: dict[str, set[str]] = field(default_factory=dict)  # build -> markers it holds (recorded after switches)
    loads: list[float] = field(default_factory=list)

    def request(self, kind: str, status: int | str) -> None:
        with self.lock:
            self.requests[kind] += 1
            self.statuses[str(status)] += 1
            if not (isinstance(status, int) and 200 <= status < 300):
                self.errors[f"{kind}:{status}"] += 1

    def error(self, kind: str, error: BaseException | str) -> None:
        text = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
        with self.lock:
            self.requests[kind] += 1
            name = text.split(":")[0]
            self.statuses[name] += 1
            self.errors[f"{kind}:{name}"] += 1
            if len(self.error_samples) < 20:
                self.error_samples.append(f"{kind}: {text[:300]}")

    def check(self, name: str, sample: dict[str, Any] | None = None) -> None:
        with self.lock:
            self.checks[name] += 1
            if sample is not None and name != "ok" and self.checks[name] <= 5:  # the first five of each kind
                self.check_samples.append({"check": name, **sample})

    def observe(self, build: str, marker: str, exists: bool) -> None:
        with self.lock:
            self.observed[(build, marker)][exists] += 1

    @property
    def total(self) -> int:
        with self.lock:
            return sum(self.requests.values())


@dataclass
class Markers:
    """The markers of the switches so far: name -> its file; `recent` the last few, for the probers."""

    files: dict[str, str] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, name: str, path: str) -> None:
        with self.lock:
            self.files[name] = path
            self.order.append(name)

    def recent(self, count: int = 4) -> list[str]:
        with self.lock:
            return self.order[-count:]

    def file_of(self, name: str) -> str | None:
        with self.lock:
            return self.files.get(name)

    def known(self) -> dict[str, str]:
        with self.lock:
            return dict(self.files)


# ---- the server ------------------------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def environment(work: Path, components: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CODE_ALIAS_", "HAYHOOKS_"))}
    env.update(
        HAYSTACK_TELEMETRY_ENABLED="False",
        HF_HUB_OFFLINE="1",
        CODE_ALIAS_CACHE_DIR=str(work / "user-cache"),
        PYTHONPATH=os.pathsep.join([str(components), env.get("PYTHONPATH", "")]),
    )
    return env


def build_index(tree: Path, fixture: Path, index_dir: Path, env: dict[str, str]) -> None:
    for root, name in ((tree, CORE), (fixture, FIXTURE)):
        command = [*CLI, "index", str(root), "--repo", name, "--index-dir", str(index_dir), "--lexical"]
        subprocess.run([*command, "--no-progress"], env=env, check=True, capture_output=True)


def start_server(index_dir: Path, work: Path, env: dict[str, str], keep_alive: int | None) -> tuple[Any, str]:
    port = free_port()
    served = dict(env, CODE_ALIAS_WEBHOOK_SECRET=SECRET)
    if keep_alive is not None:
        served["CODE_ALIAS_KEEP_ALIVE_SECONDS"] = str(keep_alive)
    log = (work / "server.log").open("wb")
    command = [*CLI, "--index-dir", str(index_dir), "serve", "--host", "127.0.0.1", "--port", str(port)]
    process = subprocess.Popen(command, env=served, stdout=log, stderr=subprocess.STDOUT, cwd=work)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"the server exited with {process.returncode}; log: {work / 'server.log'}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.post(url + "/code_alias_status/run", json={}, timeout=5).json()["result"]["ready"]:
                return process, url
        time.sleep(0.5)
    process.terminate()
    raise SystemExit(f"the server did not start; log: {work / 'server.log'}")


def stop_server(process: Any) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


# ---- the switches ------------------------------------------------------------------------------------------------
def signature(body: bytes) -> str:
    from haystack_integrations.components.code_alias.serving.live import signature_of

    return signature_of(body, SECRET)


def current_build(index_dir: Path) -> str:
    return str(json.loads((index_dir / "manifest.json").read_text(encoding="utf-8"))["build"])


def switch(
    number: int,
    tree: Path,
    index_dir: Path,
    url: str,
    env: dict[str, str],
    markers: Markers,
    tally: Tally,
    rng: random.Random,
) -> float:
    """One switch: a marker added, the one of two switches before removed; a re-index (odd) or a webhook (even)."""
    started = time.perf_counter()
    name = marker_name(rng)
    path = f"{MARKER_DIR}/marker_{number:04d}.py"
    (tree / MARKER_DIR).mkdir(exist_ok=True)
    body_text = f'def {name}(value):\n    """Stress marker number {number}: {name.replace("_", " ")}."""\n'
    (tree / path).write_text(body_text + f"    return value + {number}\n", encoding="utf-8")
    changed = [path]
    recent = markers.recent(2)
    if len(recent) == 2:
        old = markers.file_of(recent[0])
        if old and (tree / old).exists():
            (tree / old).unlink()
            changed.append(old)
    markers.add(name, path)
    present = {m for m, p in markers.known().items() if (tree / p).exists()}
    kind = "reindex" if number % 2 else "webhook"
    if kind == "reindex":
        command = [*CLI, "index", str(tree), "--repo", CORE, "--index-dir", str(index_dir), "--lexical"]
        done = subprocess.run([*command, "--no-progress"], env=env, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            tally.error("switch", f"ReindexFailed: {done.stderr[-300:]}")
            return time.perf_counter() - started
    else:
        body = json.dumps({"repository": CORE, "paths": changed}).encode()
        headers = {"content-type": "application/json", "x-hub-signature-256": signature(body)}
        try:
            answer = httpx.post(url + "/code_alias_sync/run", content=body, headers=headers, timeout=120)
        except httpx.HTTPError as error:
            tally.error("switch", error)
            return time.perf_counter() - started
        if answer.status_code != 202 or not answer.json()["result"].get("accepted"):
            tally.error("switch", f"WebhookNotAccepted: {answer.status_code} {answer.text[:200]}")
            return time.perf_counter() - started
        sync_id = answer.json()["result"]["sync_id"]
        deadline = time.monotonic() + 300
        while True:
            try:
                status = httpx.post(url + "/code_alias_status/run", json={}, timeout=60).json()["result"]["sync"]
            except (httpx.HTTPError, ValueError, KeyError) as error:
                tally.error("switch", error)
                return time.perf_counter() - started
            if (status.get("last_sync_id") or 0) >= sync_id and status.get("state") in ("ok", "failed"):
                if status["state"] != "ok":
                    tally.error("switch", f"SyncFailed: {status.get('last_error')}")
                break
            if time.monotonic() > deadline:
                tally.error("switch", "SyncTimedOut")
                break
            time.sleep(0.1)
    with tally.lock:
        tally.truth[current_build(index_dir)] = present
        tally.requests[f"switch:{kind}"] += 1
    return time.perf_counter() - started


# ---- the clients ---------------------------------------------------------------------------------------------------
def plain_request(i: int, rng: random.Random) -> tuple[str, str, dict[str, Any]]:
    roll = rng.random()
    question = QUESTIONS[i % len(QUESTIONS)]
    if roll < 0.35:
        return "ask", "/code_alias_ask/run", {"question": question, "top_k": 10}
    if roll < 0.55:
        return "rewrite", "/code_alias_rewrite/run", {"question": question}
    if roll < 0.85:
        return "autocomplete", "/code_alias_autocomplete/run", {"prefix": PREFIXES[i % len(PREFIXES)]}
    if roll < 0.95:
        return "ask_filtered", "/code_alias_ask/run", {"question": question, "repo": FIXTURE}
    return "status", "/code_alias_status/run", {}


def check_answer(kind: str, result: dict[str, Any], asked: str, markers: Markers, tally: Tally) -> None:
    """The prober's checks of one ask or rewrite answer about marker `asked`."""
    generation = result.get("generation") or {}
    build = generation.get("build")
    if not build:  # a server without the field (`--components` of an older tree): the checks within one answer run
        tally.check("no_generation")
    named = set(result["rewrite"]["symbols"] if kind.startswith("ask") else result["symbols"])
    if kind == "ask_filtered":
        if named & set(markers.known()):
            tally.check("scope_violations", {"asked": asked, "named": sorted(named), "build": build})
        else:
            tally.check("ok")
        return
    known = markers.known()
    exists = asked in named
    problems = []
    if kind == "ask":
        paths = {f["file_path"] for f in result["files"]} | {s["file_path"] for s in result.get("symbols", [])}
        for marker in named & set(known):
            if known[marker] not in paths:
                problems.append(f"named {marker} without its file")
        if known[asked] in paths and not exists:
            problems.append(f"{asked}'s file without the rewrite naming it")
    truth = tally.truth.get(build) if build else None
    if truth is not None and exists != (asked in truth):
        tally.check("wrong_for_build", {"kind": kind, "asked": asked, "named": exists, "build": build})
    if problems:
        tally.check("mixed_in_answer", {"kind": kind, "asked": asked, "problems": problems, "build": build})
    else:
        tally.check("ok")
    if build:
        tally.observe(build, asked, exists)


async def gap(rng: random.Random, share: float, tally: Tally) -> None:
    if rng.random() < share:
        with tally.lock:
            tally.idle_gaps += 1
        await asyncio.sleep(rng.uniform(4.5, 5.5))


async def httpx_worker(url: str, seed: int, stop: asyncio.Event, markers: Markers, tally: Tally, share: float) -> None:
    """A client on httpx's defaults (5 s keep-alive expiry); `seed` % 4 == 0: a prober."""
    rng = random.Random(seed)
    prober = seed % 4 == 0
    async with httpx.AsyncClient(base_url=url, timeout=120) as client:
        i = 0
        while not stop.is_set():
            i += 1
            recent = markers.recent(4)
            if prober and recent:
                asked = rng.choice(recent)
                question = f"where is {asked} defined?"
                roll = rng.random()
                if roll < 0.5:
                    kind, path, body = "ask", "/code_alias_ask/run", {"question": question, "top_k": 20}
                elif roll < 0.8:
                    kind, path, body = "rewrite", "/code_alias_rewrite/run", {"question": question}
                else:
                    kind, path, body = "ask_filtered", "/code_alias_ask/run", {"question": question, "repo": FIXTURE}
            else:
                asked = ""
                kind, path, body = plain_request(i, rng)
                await gap(rng, share, tally)
            try:
                answer = await client.post(path, json=body)
            except httpx.HTTPError as error:
                tally.error(kind, error)
                continue
            tally.request(kind, answer.status_code)
            if prober and asked and answer.status_code == 200:
                check_answer(kind, answer.json()["result"], asked, markers, tally)


async def aiohttp_worker(url: str, seed: int, stop: asyncio.Event, tally: Tally, share: float) -> None:
    """A client on aiohttp's defaults (15 s keep-alive)."""
    rng = random.Random(seed)
    timeout = aiohttp.ClientTimeout(total=120)
    async with aiohttp.ClientSession(base_url=url, timeout=timeout) as session:
        i = 0
        while not stop.is_set():
            i += 1
            kind, path, body = plain_request(i, rng)
            await gap(rng, share, tally)
            try:
                async with session.post(path, json=body) as answer:
                    await answer.read()
                    tally.request(kind, answer.status)
            except (aiohttp.ClientError, asyncio.TimeoutError) as error:
                tally.error(kind, error)


def requests_worker(url: str, seed: int, stop: threading.Event, tally: Tally, share: float) -> None:
    """A client on requests' defaults (urllib3: no idle expiry; a dropped connection is noticed before reuse)."""
    rng = random.Random(seed)
    with requests.Session() as session:
        i = 0
        while not stop.is_set():
            i += 1
            kind, path, body = plain_request(i, rng)
            if rng.random() < share:
                with tally.lock:
                    tally.idle_gaps += 1
                time.sleep(rng.uniform(4.5, 5.5))
            try:
                answer = session.post(url + path, json=body, timeout=120)
                tally.request(kind, answer.status_code)
            except requests.RequestException as error:
                tally.error(kind, error)


def openai_worker(url: str, seed: int, stop: threading.Event, tally: Tally, share: float) -> None:
    """The openai client (httpx underneath, 5 s keep-alive expiry) on the chat route, its retries off."""
    rng = random.Random(seed)
    client = OpenAI(base_url=url + "/v1", api_key="unused", max_retries=0, timeout=120)
    try:
        i = 0
        while not stop.is_set():
            i += 1
            if rng.random() < share:
                with tally.lock:
                    tally.idle_gaps += 1
                time.sleep(rng.uniform(4.5, 5.5))
            question = QUESTIONS[i % len(QUESTIONS)]
            try:
                reply = client.chat.completions.create(
                    model="code_alias_ask", messages=[{"role": "user", "content": question}]
                )
                tally.request("chat", 200 if reply.choices and reply.choices[0].message.content else "empty")
            except Exception as error:  # the openai client's own error classes: each one counts
                tally.error("chat", error)
    finally:
        client.close()


# ---- the run -------------------------------------------------------------------------------------------------------
async def run(args: argparse.Namespace) -> dict[str, Any]:
    work = Path(args.work or tempfile.mkdtemp(prefix="generation-stress-")).resolve()
    tree, fixture, index_dir = work / "core", work / "fixture", work / "index"
    for target, source in ((tree, Path(args.tree)), (fixture, REPO / "tests" / "fixtures" / "acme_repo")):
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__", ".code-alias", "*.pyc"))
    shutil.rmtree(index_dir, ignore_errors=True)
    env = environment(work, Path(args.components).resolve())
    started_build = time.perf_counter()
    build_index(tree, fixture, index_dir, env)
    build_seconds = time.perf_counter() - started_build
    process, url = start_server(index_dir, work, env, args.keep_alive)
    tally = Tally()
    markers = Markers()
    rng = random.Random(args.seed)
    stop = asyncio.Event()
    stop_threads = threading.Event()
    switch_seconds: list[float] = []
    switches_done = threading.Event()
    load_stop = threading.Event()

    def sample_load() -> None:
        while not load_stop.wait(10):
            with tally.lock:
                tally.loads.append(round(os.getloadavg()[0], 2))

    def switcher() -> None:
        try:
            for number in range(1, args.switches + 1):
                if stop_threads.is_set():
                    return
                switch_seconds.append(switch(number, tree, index_dir, url, env, markers, tally, rng))
                time.sleep(rng.uniform(0.5, 2.0))
        finally:
            switches_done.set()

    threading.Thread(target=sample_load, daemon=True).start()
    counts = {"httpx": args.clients // 2, "aiohttp": args.clients // 8, "requests": args.clients // 8}
    counts["openai"] = args.clients - sum(counts.values())
    threads = [
        threading.Thread(target=requests_worker, args=(url, 1000 + n, stop_threads, tally, args.idle_share))
        for n in range(counts["requests"])
    ] + [
        threading.Thread(target=openai_worker, args=(url, 2000 + n, stop_threads, tally, args.idle_share))
        for n in range(counts["openai"])
    ]
    switching = threading.Thread(target=switcher, daemon=True)
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    switching.start()
    tasks = [
        asyncio.create_task(httpx_worker(url, n, stop, markers, tally, args.idle_share)) for n in range(counts["httpx"])
    ] + [
        asyncio.create_task(aiohttp_worker(url, 3000 + n, stop, tally, args.idle_share))
        for n in range(counts["aiohttp"])
    ]
    deadline = started + args.max_seconds
    last_report = started
    while time.perf_counter() < deadline:
        await asyncio.sleep(1)
        if tally.total >= args.requests and switches_done.is_set():
            break
        if time.perf_counter() - last_report > 30:
            last_report = time.perf_counter()
            print(
                f"  {time.perf_counter() - started:5.0f} s: {tally.total:,} requests, {len(switch_seconds)} switches, "
                f"errors {sum(tally.errors.values())}, checks {dict(tally.checks)}, load {os.getloadavg()[0]:.1f}",
                flush=True,
            )
    stop.set()
    stop_threads.set()
    await asyncio.gather(*tasks, return_exceptions=True)
    for thread in threads:
        thread.join(180)
    switching.join(600)
    load_stop.set()
    wall = time.perf_counter() - started
    stop_server(process)
    disagreements = [
        {"build": build, "marker": marker, "seen": {str(k): v for k, v in seen.items()}}
        for (build, marker), seen in tally.observed.items()
        if len(seen) > 1
    ]
    mixed = tally.checks["mixed_in_answer"] + len(disagreements) + tally.checks["wrong_for_build"]
    errors = sum(tally.errors.values())
    requests_sent = sum(n for kind, n in tally.requests.items() if not kind.startswith("switch:"))
    return {
        "tree": str(args.tree),
        "clients": counts,
        "keep_alive": args.keep_alive or "server default",
        "idle_share": args.idle_share,
        "idle_gaps": tally.idle_gaps,
        "index_build_seconds": round(build_seconds, 1),
        "seconds": round(wall, 1),
        "requests": requests_sent,
        "throughput_rps": round(requests_sent / wall, 2),
        "by_kind": dict(tally.requests),
        "statuses": dict(tally.statuses),
        "switches": {
            "done": len(switch_seconds),
            "reindex": tally.requests["switch:reindex"],
            "webhook": tally.requests["switch:webhook"],
            "median_seconds": round(sorted(switch_seconds)[len(switch_seconds) // 2], 2) if switch_seconds else None,
            "builds_recorded": len(tally.truth),
        },
        "probes": dict(tally.checks),
        "mixed": mixed,
        "mixed_across": disagreements[:20],
        "scope_violations": tally.checks["scope_violations"],
        "no_generation": tally.checks["no_generation"],
        "errors": errors,
        "errors_by_kind": dict(tally.errors),
        "error_samples": tally.error_samples,
        "check_samples": tally.check_samples,
        "builds_seen": len({build for build, _ in tally.observed}),
        "load": {
            "min": min(tally.loads, default=None),
            "median": sorted(tally.loads)[len(tally.loads) // 2] if tally.loads else None,
            "max": max(tally.loads, default=None),
        },
        "work": str(work),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", default=str(REPO / "components"), help="the served repository (copied)")
    parser.add_argument("--work", help="a folder for the copies, the index and the server log (default: temporary)")
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--requests", type=int, default=10_000, help="run at least this many requests")
    parser.add_argument("--switches", type=int, default=60, help="builds to switch to (0: none)")
    parser.add_argument("--max-seconds", type=float, default=2400.0)
    parser.add_argument("--idle-share", type=float, default=0.1, help="share of requests after a 4.5-5.5 s gap")
    parser.add_argument("--keep-alive", type=int, help="the server's CODE_ALIAS_KEEP_ALIVE_SECONDS (default: its)")
    parser.add_argument("--seed", type=int, default=46)
    parser.add_argument(
        "--components",
        default=str(REPO / "components"),
        help="the source the server and the re-indexes run (an older tree's, for a before/after comparison)",
    )
    parser.add_argument("--out", default=str(REPO / "benchmarks" / "results" / "generation_stress.json"))
    args = parser.parse_args(argv)
    report = asyncio.run(run(args))
    report["command"] = " ".join(["python", "benchmarks/generation_stress.py", *(argv or sys.argv[1:])])
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1), encoding="utf-8")
    names = ("requests", "seconds", "throughput_rps", "switches", "probes", "mixed", "scope_violations", "errors")
    shown = {k: report[k] for k in names}
    print(json.dumps({**shown, "errors_by_kind": report["errors_by_kind"], "load": report["load"]}, indent=1))
    failed = report["mixed"] or report["errors"] or report["scope_violations"] or report["no_generation"]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
