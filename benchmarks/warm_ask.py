"""Wall time of `code-alias ask` as a user runs it: through the warm server, with `--no-daemon`, lexical, raw.

    flock /work/notes/bench.lock python benchmarks/warm_ask.py --index-dir /tmp/flask-hybrid --rounds 10 \
        --out benchmarks/results/warm_ask_flask.json

Every ask is a new `code-alias ask` process (the console script's module, as `code-alias` runs it), timed from
start to exit. The warm rows start with no server (a private cache folder, so no other server is found): the first
ask starts the warm server and answers through it, the later ones find it. The server is stopped at the end.
Questions cycle through a small list so that no row answers one question only. `--no-rewrite` (the baseline
retrieval, the question as written) has both rows: in the asking process, and through the warm server.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

QUESTIONS = [
    "where do we register a blueprint on the app?",
    "how is the session cookie signed?",
    "where are url rules matched to view functions?",
    "who loads configuration from environment variables?",
    "where is the application context pushed?",
]
CLI = [sys.executable, "-m", "haystack_integrations.components.code_alias.cli"]


def _ask(index_dir: str, question: str, env: dict[str, str], *extra: str) -> tuple[float, dict[str, Any]]:
    started = time.perf_counter()
    done = subprocess.run(
        [*CLI, "--index-dir", index_dir, "ask", question, "--json", *extra],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return time.perf_counter() - started, json.loads(done.stdout)


def _stop(pid: int) -> None:
    """Stop a warm server and wait until it has exited (its announcement goes with it)."""
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 60
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.1)


def _summary(seconds: list[float]) -> dict[str, float]:
    ordered = sorted(seconds)
    return {
        "n": len(ordered),
        "p50": round(statistics.median(ordered), 3),
        "min": round(ordered[0], 3),
        "max": round(ordered[-1], 3),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index-dir", required=True, help="a hybrid index")
    parser.add_argument("--rounds", type=int, default=10, help="warm asks after the first")
    parser.add_argument("--cold-rounds", type=int, default=5, help="--no-daemon and lexical asks")
    parser.add_argument("--first-rounds", type=int, default=1, help="first asks, each starting a new server")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    cache = tempfile.mkdtemp(prefix="warm-ask-")
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "PYTEST_CURRENT_TEST", "CODE_ALIAS_NO_DAEMON")}
    env.update(CODE_ALIAS_CACHE_DIR=cache, HAYSTACK_TELEMETRY_ENABLED="False", HF_HUB_OFFLINE="1")
    asks = 3 * args.rounds + 3 * args.cold_rounds + args.first_rounds
    question = iter(QUESTIONS * (1 + asks // len(QUESTIONS)))
    rows: dict[str, Any] = {}
    cold = [_ask(args.index_dir, next(question), env, "--no-daemon")[0] for _ in range(args.cold_rounds)]
    rows["--no-daemon (hybrid, in the asking process)"] = _summary(cold)
    here = ("--lexical", "--no-daemon")
    lexical = [_ask(args.index_dir, next(question), env, *here)[0] for _ in range(args.cold_rounds)]
    rows["--lexical --no-daemon (in the asking process)"] = _summary(lexical)
    here = ("--no-rewrite", "--no-daemon")
    raw = [_ask(args.index_dir, next(question), env, *here)[0] for _ in range(args.cold_rounds)]
    rows["--no-rewrite --no-daemon (in the asking process)"] = _summary(raw)
    firsts: list[float] = []
    answer: dict[str, Any] = {}
    for _ in range(args.first_rounds):
        if firsts:  # a fresh start each time: the last one's server stopped and gone (same user cache, as a user's)
            _stop(int(answer["server_pid"]))
        first, answer = _ask(args.index_dir, next(question), env)
        assert answer.get("server_kind") == "warm", "the first ask did not start the warm server"
        firsts.append(first)
    rows["first ask (starts the warm server)"] = _summary(firsts)
    warm = []
    for _ in range(args.rounds):
        seconds, answer = _ask(args.index_dir, next(question), env)
        assert answer.get("server_pid") is not None, "a later ask did not go through the warm server"
        warm.append(seconds)
    rows["later asks (through the warm server)"] = _summary(warm)
    warm_lexical = []
    for _ in range(args.rounds):
        seconds, answer = _ask(args.index_dir, next(question), env, "--lexical")
        assert answer.get("retrieval") == "lexical" and answer.get("server_pid") is not None, "not a warm lexical ask"
        warm_lexical.append(seconds)
    rows["later --lexical asks (through the warm server)"] = _summary(warm_lexical)
    warm_raw = []
    for _ in range(args.rounds):
        seconds, answer = _ask(args.index_dir, next(question), env, "--no-rewrite")
        unused = (answer.get("rewrite") or {}).get("meta", {}).get("used") is False
        assert unused and answer.get("server_pid") is not None, "not a warm --no-rewrite ask"
        warm_raw.append(seconds)
    rows["later --no-rewrite asks (through the warm server)"] = _summary(warm_raw)
    _stop(int(answer["server_pid"]))
    for name, row in rows.items():
        print(f"{name:<50} p50 {row['p50']:>7.3f} s  (min {row['min']:.3f}, max {row['max']:.3f}, n {row['n']})")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        load = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else []
        args.out.write_text(json.dumps({"index_dir": args.index_dir, "load": load, "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
