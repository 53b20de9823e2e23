"""Refresh on push, measured end to end (issue 11): a real `code-alias serve`, signed GitHub pushes, asks meanwhile.

Copies a tree (default: Django 3.0 from the harness's corpus cache), indexes it (lexical by default, `--hybrid` for
the embedded default with vectors), starts `code-alias serve` on loopback with a webhook secret, and sends N signed
GitHub-style push events that each change one file: alternately a body edit (a comment with a unique marker word
inside a function) and a rename of that function. For each push it measures:

- request -> `status` reports the sync done (`last_sync_id` reaches the push's id, state "ok");
- request -> the first `ask` that sees the change (a rename: the new name among the answer's symbols; a body edit:
  the edited file first for the marker word), asked in a loop from the moment the push is sent;
- `ask` latency (a fixed question, asked in a loop by another client for the whole run) while a sync runs vs idle.

Usage::

    flock /tmp/s5/bench.lock python benchmarks/sync_latency.py --pushes 10
    flock /tmp/s5/bench.lock python benchmarks/sync_latency.py --repo path/to/tree --file pkg/x.py --function f

Writes benchmarks/results/sync_latency.json (or `--out`).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from haystack_integrations.components.code_alias.serving.live import signature_of

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = REPO_ROOT / ".bench-cache" / "corpora" / "Django-3.0"
DEFAULT_FILE = "django/db/models/query.py"
DEFAULT_FUNCTION = "bulk_create"
LOAD_QUESTION = "where are the rows of a queryset fetched from the database?"
SECRET = "sync-latency-secret"
TOKEN = "sync-latency-token"
AUTH = {"authorization": f"Bearer {TOKEN}"}
CLI = [sys.executable, "-m", "haystack_integrations.components.code_alias.cli"]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def summary(values: list[float]) -> dict[str, Any]:
    if not values:
        return {"n": 0}
    return {
        "n": len(values),
        "median": round(statistics.median(values), 3),
        "min": round(min(values), 3),
        "max": round(max(values), 3),
    }


# ---- the tree and the server -------------------------------------------------------------------------------------
def prepare_tree(source: Path, work: Path) -> Path:
    """A copy of the tree (the source one inside the corpus cache, or `--repo`, is never edited)."""
    tree = work / "repo"
    if tree.exists():
        shutil.rmtree(tree)
    shutil.copytree(source, tree, symlinks=True)
    return tree


def index_tree(tree: Path, index_dir: Path, hybrid: bool, env: dict[str, str]) -> float:
    started = time.perf_counter()
    argv = [*CLI, "index", str(tree), "--index-dir", str(index_dir), "--no-progress", "--json"]
    if not hybrid:
        argv.append("--lexical")
    subprocess.run(argv, check=True, env=env, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def start_server(index_dir: Path, work: Path, env: dict[str, str]) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    log = (work / "server.log").open("wb")
    process = subprocess.Popen(
        [*CLI, "--index-dir", str(index_dir), "serve", "--port", str(port)],
        cwd=work,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 300
    while True:
        if process.poll() is not None:
            raise SystemExit(f"code-alias serve exited with {process.returncode}; log: {work / 'server.log'}")
        if time.monotonic() > deadline:
            process.terminate()
            raise SystemExit(f"code-alias serve did not answer; log: {work / 'server.log'}")
        try:
            if httpx.get(url + "/status", headers=AUTH, timeout=2).status_code == 200:
                return process, url
        except httpx.HTTPError:
            pass
        time.sleep(0.3)


# ---- the pushes ------------------------------------------------------------------------------------------------
def push_body(path: str, repository: str) -> bytes:
    event = {
        "ref": "refs/heads/main",
        "before": "0" * 40,
        "after": "1" * 40,
        "repository": {"full_name": f"bench/{repository}", "name": repository},
        "commits": [{"id": "1" * 40, "added": [], "modified": [path], "removed": []}],
    }
    return json.dumps(event).encode()


def edit(tree: Path, rel_path: str, name: str, number: int, rename: bool) -> tuple[str, str]:
    """Change the file; returns (the function's name now, the word an ask must find)."""
    path = tree / rel_path
    text = path.read_text(encoding="utf-8")
    match = re.search(rf"^(\s*)def {re.escape(name)}\(.*?\):\s*$", text, flags=re.MULTILINE | re.DOTALL)
    if match is None:
        raise SystemExit(f"{rel_path}: no `def {name}(` to edit")
    if rename:
        new = f"{name.split('_v')[0]}_v{number}" if "_v" in name else f"{name}_v{number}"
        text = re.sub(rf"\bdef {re.escape(name)}\(", f"def {new}(", text, count=1)
        path.write_text(text, encoding="utf-8")
        return new, new
    # One lower-case word per push, in no file before it (no separator, so the tokenizer keeps it whole).
    marker = "synclatencymark" + "".join(chr(ord("a") + int(digit)) for digit in str(number))
    indent = match.group(1) + "    "
    text = text[: match.end()] + f"\n{indent}# {marker}" + text[match.end() :]
    path.write_text(text, encoding="utf-8")
    return name, marker


class Asker(threading.Thread):
    """Asks LOAD_QUESTION in a loop; records (start, seconds, status)."""

    def __init__(self, url: str, pause: float) -> None:
        super().__init__(daemon=True)
        self.url = url
        self.pause = pause
        self.stop = threading.Event()
        self.samples: list[tuple[float, float, int]] = []

    def run(self) -> None:
        with httpx.Client(base_url=self.url, headers=AUTH, timeout=120) as http:
            while not self.stop.is_set():
                started = time.monotonic()
                response = http.post("/code_alias_ask/run", json={"question": LOAD_QUESTION, "top_k": 5})
                self.samples.append((started, time.monotonic() - started, response.status_code))
                time.sleep(self.pause)


def sees(http: httpx.Client, rel_path: str, word: str, rename: bool) -> bool:
    result = http.post("/code_alias_ask/run", json={"question": word, "top_k": 5}).json().get("result", {})
    if rename:
        return word in {s.get("symbol") for s in result.get("symbols", [])}
    files = result.get("files", [])
    return bool(files) and files[0]["file_path"] == rel_path


def one_push(
    url: str, tree: Path, rel_path: str, name: str, number: int, rename: bool, repository: str
) -> dict[str, Any]:
    new_name, word = edit(tree, rel_path, name, number, rename)
    body = push_body(rel_path, repository)
    headers = {
        "content-type": "application/json",
        "x-github-event": "push",
        "x-hub-signature-256": signature_of(body, SECRET),
    }
    with httpx.Client(base_url=url, headers=AUTH, timeout=120) as http:
        seen_before = sees(http, rel_path, word, rename)
        started = time.monotonic()
        response = httpx.post(url + "/code_alias_sync/run", content=body, headers=headers, timeout=60)
        if response.status_code != 202:
            raise SystemExit(f"webhook answered {response.status_code}: {response.text}")
        sync_id = response.json()["result"]["sync_id"]
        done: float | None = None
        seen: float | None = None
        status: dict[str, Any] = {}
        deadline = started + 300
        while (done is None or seen is None) and time.monotonic() < deadline:
            if seen is None and sees(http, rel_path, word, rename):
                seen = time.monotonic() - started
            if done is None:
                status = http.post("/code_alias_status/run", json={}).json()["result"]["sync"]
                if (status.get("last_sync_id") or 0) >= sync_id and status.get("state") in ("ok", "failed"):
                    done = time.monotonic() - started
                    if status["state"] != "ok":
                        raise SystemExit(f"sync {sync_id} failed: {status.get('last_error')}")
            time.sleep(0.02)
    return {
        "push": number,
        "kind": "rename" if rename else "body edit",
        "name": new_name,
        "sync_id": sync_id,
        "started": started,
        "done_seconds": None if done is None else round(done, 3),
        "seen_seconds": None if seen is None else round(seen, 3),
        "seen_before_push": seen_before,
        "server_sync_seconds": status.get("last_seconds"),
        "files_changed": status.get("files_changed"),
        "phases": status.get("phases"),
        "finished": started + (done or 0.0),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", type=Path, default=DEFAULT_CORPUS, help="tree to copy (default: Django 3.0)")
    parser.add_argument("--file", default=DEFAULT_FILE, help="file the pushes change (relative to the tree)")
    parser.add_argument("--function", default=DEFAULT_FUNCTION, help="function edited and renamed")
    parser.add_argument("--pushes", type=int, default=10)
    parser.add_argument("--hybrid", action="store_true", help="hybrid index (embedded default) instead of lexical")
    parser.add_argument("--work", type=Path, default=None, help="working folder (default: a temporary one)")
    parser.add_argument("--pause", type=float, default=1.5, help="seconds between pushes")
    parser.add_argument("--ask-pause", type=float, default=0.05, help="seconds between two asks of the load client")
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "benchmarks" / "results" / "sync_latency.json")
    args = parser.parse_args()

    work = args.work or Path(tempfile.mkdtemp(prefix="sync-latency-"))
    work.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CODE_ALIAS_", "HAYHOOKS_"))}
    env.update(
        HAYSTACK_TELEMETRY_ENABLED="False",
        HF_HUB_OFFLINE="1",
        CODE_ALIAS_WEBHOOK_SECRET=SECRET,
        CODE_ALIAS_API_TOKEN=TOKEN,
        PYTHONPATH=os.pathsep.join([str(REPO_ROOT / "components"), env.get("PYTHONPATH", "")]),
    )
    load_start = os.getloadavg()
    tree = prepare_tree(args.repo.resolve(), work)
    index_dir = work / "index"
    index_seconds = index_tree(tree, index_dir, args.hybrid, env)
    print(f"indexed {tree} in {index_seconds:.1f} s ({'hybrid' if args.hybrid else 'lexical'})", flush=True)
    process, url = start_server(index_dir, work, env)
    asker = Asker(url, args.ask_pause)
    pushes: list[dict[str, Any]] = []
    try:
        with httpx.Client(base_url=url, headers=AUTH, timeout=120) as http:
            for _ in range(3):  # warm: the first asks load the pipelines and the BM25 index
                http.post("/code_alias_ask/run", json={"question": LOAD_QUESTION, "top_k": 5})
        asker.start()
        time.sleep(3.0)
        name = args.function
        for number in range(1, args.pushes + 1):
            result = one_push(url, tree, args.file, name, number, number % 2 == 0, tree.name)
            name = result["name"]
            pushes.append(result)
            print(
                f"push {number} ({result['kind']}): status done {result['done_seconds']} s, "
                f"first ask seeing it {result['seen_seconds']} s (server sync {result['server_sync_seconds']} s)",
                flush=True,
            )
            time.sleep(args.pause)
        time.sleep(2.0)
    finally:
        asker.stop.set()
        asker.join(timeout=120)
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
    windows = [(p["started"], p["finished"]) for p in pushes]
    during = [s for start, s, _ in asker.samples if any(a <= start + s and start <= b for a, b in windows)]
    idle = [s for start, s, _ in asker.samples if not any(a <= start + s and start <= b for a, b in windows)]
    errors = sum(1 for _, _, code in asker.samples if code != 200)
    load_end = os.getloadavg()
    report = {
        "benchmark": "sync_latency",
        "corpus": str(args.repo),
        "retrieval": "hybrid" if args.hybrid else "lexical",
        "file": args.file,
        "function": args.function,
        "pushes": len(pushes),
        "ask_pause": args.ask_pause,
        "index_seconds": round(index_seconds, 1),
        "request_to_status_done": summary([p["done_seconds"] for p in pushes if p["done_seconds"] is not None]),
        "request_to_first_ask_seeing_it": summary([p["seen_seconds"] for p in pushes if p["seen_seconds"] is not None]),
        "server_sync_seconds": summary([p["server_sync_seconds"] for p in pushes if p["server_sync_seconds"]]),
        "ask_during_sync": {
            "n": len(during),
            "p50": percentile(during, 0.5),
            "p95": percentile(during, 0.95),
            "max": max(during, default=None),
        },
        # Between syncs the server also compacts deltas and saves BM25 for other processes: the slowest ask shows it.
        "ask_idle": {
            "n": len(idle),
            "p50": percentile(idle, 0.5),
            "p95": percentile(idle, 0.95),
            "max": max(idle, default=None),
        },
        "ask_errors": errors,
        "per_push": [{k: v for k, v in p.items() if k not in ("started", "finished")} for p in pushes],
        "load_before": [round(x, 2) for x in load_start],
        "load_after": [round(x, 2) for x in load_end],
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1), encoding="utf-8")
    for key in ("request_to_status_done", "request_to_first_ask_seeing_it", "server_sync_seconds"):
        print(f"{key}: {report[key]}")
    print(f"ask p50/p95 idle {report['ask_idle']}, during a sync {report['ask_during_sync']}, errors {errors}")
    print(f"load {report['load_before']} -> {report['load_after']}; wrote {args.out}")


if __name__ == "__main__":
    main()
