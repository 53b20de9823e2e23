"""How fast `code-alias callers` / `impact` answer through the warm server, and without it.

    python benchmarks/graph_latency.py --index-dir IDX --names merge_setting,QuerySet.filter --rounds 10

Uses the index's warm server (`serving/warm.py`; started here when none runs, as an `ask` would), then measures:

- `first`: the first graph request the server gets (it resolves the graph then, once per dictionary version);
- `request`: the request alone, through the proven Unix socket (`client.call_peer`), p50 / p95 over the rounds and
  names, for `code_alias_callers` and `code_alias_impact` (depth 3);
- `cli`: the whole `code-alias callers NAME` / `impact NAME` command as a user runs it (a new Python process that
  finds the server, proves it and asks), p50;
- `cli_no_daemon`: the same command answering in its own process (`--no-daemon`: the dictionary read and the graph
  resolved there), p50.

Prints a JSON summary with the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any


def _percentiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"p50_ms": round(1000 * statistics.median(ordered), 1), "p95_ms": round(1000 * p95, 1), "n": len(values)}


def _cli(args: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "haystack_integrations.components.code_alias.cli", *args], env=env,
                   check=True, capture_output=True)  # fmt: skip
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    from haystack_integrations.components.code_alias.serving.client import call_peer
    from haystack_integrations.components.code_alias.serving.warm import ensure_warm_server

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index-dir", type=Path, required=True)
    parser.add_argument("--names", required=True, help="comma-separated definition names to ask about")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    names = [name.strip() for name in args.names.split(",") if name.strip()]
    load_before = os.getloadavg()
    env = {**os.environ, "CODE_ALIAS_DAEMON": "1", "HAYSTACK_TELEMETRY_ENABLED": "False"}
    os.environ["CODE_ALIAS_DAEMON"] = "1"  # this benchmark's own process: allow the warm server (as a user's ask)
    started = time.perf_counter()
    peer = ensure_warm_server(args.index_dir)
    if peer is None:
        raise SystemExit("no warm server could be started (see its log)")
    server_start = time.perf_counter() - started
    first_started = time.perf_counter()
    call_peer(peer, "/code_alias_callers/run", {"name": names[0]}, timeout=120)
    first = time.perf_counter() - first_started
    requests: dict[str, list[float]] = {"callers": [], "impact": []}
    sizes: dict[str, Any] = {}
    for _ in range(args.rounds):
        for name in names:
            for route, body in (("callers", {"name": name}), ("impact", {"name": name, "depth": 3})):
                t = time.perf_counter()
                answer = call_peer(peer, f"/code_alias_{route}/run", body, timeout=60)
                requests[route].append(time.perf_counter() - t)
                sizes[f"{route}:{name}"] = {k: v for t in answer["targets"][:1] for k, v in t["total"].items()}
    cli: dict[str, list[float]] = {"callers": [], "impact": []}
    cli_here: dict[str, list[float]] = {"callers": [], "impact": []}
    for _ in range(max(3, args.rounds // 3)):
        for route in ("callers", "impact"):
            base = [route, names[0], "--index-dir", str(args.index_dir)]
            cli[route].append(_cli(base, env))
            cli_here[route].append(_cli([*base, "--no-daemon"], env))
    summary = {
        "index_dir": str(args.index_dir),
        "names": names,
        "server_start_s": round(server_start, 2),
        "first_graph_request_ms": round(1000 * first, 1),
        "request": {route: _percentiles(values) for route, values in requests.items()},
        "cli": {route: _percentiles(values) for route, values in cli.items()},
        "cli_no_daemon": {route: _percentiles(values) for route, values in cli_here.items()},
        "answers": sizes,
        "load": {"before": [round(x, 2) for x in load_before], "after": [round(x, 2) for x in os.getloadavg()]},
        "at": time.strftime("%Y-%m-%d %H:%M"),
    }
    print(json.dumps(summary, indent=1))
    if args.out:
        args.out.write_text(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
