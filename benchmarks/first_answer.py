"""Time to the first answer: `code-alias index` on a fresh index and an empty vector cache, then `code-alias ask`.

What a new user meets on the embedded default: the command builds the dictionary and BM25 first and prints
"Answerable now", then fills the chunk vectors. This script starts `code-alias index PATH` (hybrid) in a fresh
index folder with an empty embedding cache, runs `code-alias ask QUESTION` in a new process the moment
"Answerable now" is printed (as a person in a second terminal would, without a server), repeats the ask a few
times while the vectors fill, and reports: start -> "Answerable now", start -> first answer, each ask's wall time,
and how far the vectors had come. With `--full` it also waits for the whole hybrid index; otherwise it interrupts
the index (which keeps the vectors already saved) once the asks are done.

    python benchmarks/first_answer.py --repo .bench-cache/corpora/Django-3.0/django \
        --question "where does the session middleware save the session on the response"

Writes benchmarks/results/first_answer.json (or --output). Needs the two cores to itself; it says the load.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results" / "first_answer.json"
CLI = [sys.executable, "-m", "haystack_integrations.components.code_alias.cli"]
ANSWERABLE = "Answerable now"


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else []


def ask(index_dir: Path, question: str, env: dict[str, str]) -> dict[str, Any]:
    started = time.perf_counter()
    done = subprocess.run(
        [*CLI, "--index-dir", str(index_dir), "ask", question, "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    seconds = time.perf_counter() - started
    answer: dict[str, Any] = {}
    if done.returncode == 0:
        try:
            answer = json.loads(done.stdout)
        except ValueError:
            answer = {}
    symbols = answer.get("symbols") or []
    return {
        "seconds": round(seconds, 2),
        "rc": done.returncode,
        "first_symbol": (symbols[0].get("qualified_name") if symbols else None),
        "error": done.stderr.strip().splitlines()[-1][:300] if done.returncode and done.stderr.strip() else None,
    }


def vectors(index_dir: Path, env: dict[str, str]) -> dict[str, Any] | None:
    done = subprocess.run(
        [*CLI, "--index-dir", str(index_dir), "status", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    try:
        status = json.loads(done.stdout)
    except ValueError:
        return None
    found = status.get("vectors")
    return found if isinstance(found, dict) else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", required=True, help="the source tree to index")
    parser.add_argument("--question", action="append", required=True, help="asked in turn (repeatable)")
    parser.add_argument("--asks", type=int, default=3, help="asks while the vectors fill (default 3)")
    parser.add_argument("--work", help="scratch folder (default: a new temporary folder, removed after)")
    parser.add_argument("--full", action="store_true", help="also wait for the whole hybrid index")
    parser.add_argument("--output", default=str(RESULTS))
    args = parser.parse_args(argv)

    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="first-answer-"))
    index_dir, cache = work / "index", work / "embedding-cache"
    for folder in (index_dir, cache, work / "user-cache"):
        shutil.rmtree(folder, ignore_errors=True)
    env = {
        **os.environ,
        "HAYSTACK_TELEMETRY_ENABLED": "False",
        "HF_HUB_OFFLINE": "1",
        "CODE_ALIAS_EMBEDDING_CACHE": str(cache),  # empty: every vector is computed
        "CODE_ALIAS_CACHE_DIR": str(work / "user-cache"),  # no server of an earlier run is found
        "PYTHONUNBUFFERED": "1",
    }
    load_before = load()
    started = time.perf_counter()
    index = subprocess.Popen(
        [*CLI, "--index-dir", str(index_dir), "index", str(Path(args.repo).resolve()), "--no-progress"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    assert index.stdout is not None
    answerable_at: float | None = None
    lines: list[str] = []
    for line in index.stdout:
        lines.append(line.rstrip())
        if ANSWERABLE in line:
            answerable_at = time.perf_counter() - started
            break
    if answerable_at is None:
        index.wait()
        print("\n".join(lines[-20:]), file=sys.stderr)
        raise SystemExit(f"the index ended (rc {index.returncode}) without printing {ANSWERABLE!r}")
    print(f"{ANSWERABLE} after {answerable_at:.1f} s (load {load()})", flush=True)
    asks: list[dict[str, Any]] = []
    for i in range(max(1, args.asks)):
        question = args.question[i % len(args.question)]
        result = ask(index_dir, question, env)
        result["answered_at"] = round(time.perf_counter() - started, 2)
        result["question"] = question
        result["load"] = load()
        asks.append(result)
        print(f"ask {i + 1}: {result}", flush=True)
    during = vectors(index_dir, env)
    complete_at: float | None = None
    if args.full:
        for line in index.stdout:
            lines.append(line.rstrip())
        index.wait()
        complete_at = time.perf_counter() - started
    else:
        index.send_signal(signal.SIGINT)  # the fill keeps the vectors it saved and says how to resume
        try:
            index.wait(timeout=120)
        except subprocess.TimeoutExpired:
            index.kill()
    report = {
        "benchmark": "first_answer",
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "load_at_start": load_before},
        "repo": str(Path(args.repo).resolve()),
        "answerable_seconds": round(answerable_at, 2),
        "first_answer_seconds": asks[0]["answered_at"],
        "asks": asks,
        "vectors_after_asks": during,
        "complete_seconds": round(complete_at, 2) if complete_at is not None else None,
        "load_at_end": load(),
    }
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps({k: report[k] for k in ("answerable_seconds", "first_answer_seconds", "complete_seconds")}))
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if all(a["rc"] == 0 for a in asks) else 1


if __name__ == "__main__":
    sys.exit(main())
