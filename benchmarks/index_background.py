"""How long `code-alias index PATH --background` takes to return, and where that time goes, side by side.

Each round indexes the same tree into a fresh folder with a fresh vector cache (a user's first index: nothing is
cached), once per source tree given with `--source NAME=COMPONENTS_DIR` (e.g. `before=/work/main/components` and
`after=$PWD/components`), alternating, so both see the same load. The detached vector worker each run starts is
stopped at once (it would take the cores from the next run). Reports, per source: the wall time until the command
returned, the `index` stats' `answerable_seconds` (dictionary + BM25 chunks saved: questions work) and `seconds`
(what `CodeSearch.index` took), medians over the rounds, and the load average.

    python benchmarks/index_background.py --tree /work/bench-cache/corpora/git-pytest-dev__pytest-5989efe3efec \\
        --source before=/work/main/components --source after=$PWD/components --rounds 3

`--profile NAME` also writes a cProfile of that source's first round (`--out` folder), for the breakdown.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

MODULE = "haystack_integrations.components.code_alias.cli"


def one_run(components: Path, tree: Path, work: Path, profile: Path | None) -> dict[str, Any]:
    folder = work / "index"
    cache = work / "vectors"
    env = {
        **os.environ,
        "PYTHONPATH": str(components),
        "HF_HUB_OFFLINE": "1",
        "HAYSTACK_TELEMETRY_ENABLED": "False",
        "CODE_ALIAS_EMBEDDING_CACHE": str(cache),
        "CODE_ALIAS_CACHE_DIR": str(work / "user-cache"),
    }
    command = [sys.executable]
    if profile is not None:
        command += ["-m", "cProfile", "-o", str(profile)]
    command += ["-m", MODULE, "index", str(tree), "--background", "--index-dir", str(folder), "--no-progress"]
    command += ["--json"]
    load = os.getloadavg()[0]
    started = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"index failed ({done.returncode}):\n{done.stderr[-2000:]}")
    text = done.stdout
    stats = json.loads(text[text.index("{") :])  # `--json`: the stats object (after the "Answerable now" line, if any)
    worker = (stats.get("vector_worker") or {}).get("pid")
    if isinstance(worker, int):
        with contextlib.suppress(ProcessLookupError):
            os.kill(worker, signal.SIGTERM)  # our own detached worker: the next run needs the cores
    return {
        "returned_s": round(wall, 2),
        "answerable_s": stats.get("answerable_seconds"),
        "index_s": stats.get("seconds"),
        "cards": stats.get("cards"),
        "cards_deferred": bool(stats.get("cards_deferred")),
        "worker_started": worker is not None,
        "load_before": round(load, 2),
        "load_after": round(os.getloadavg()[0], 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", required=True, help="the source tree to index")
    parser.add_argument("--source", action="append", required=True, help="NAME=COMPONENTS_DIR (repeat)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--profile", action="append", default=[], help="NAME of a source to profile (first round)")
    parser.add_argument("--out", default="benchmarks/results/index_background.json")
    args = parser.parse_args(argv)
    sources = dict(item.split("=", 1) for item in args.source)
    tree = Path(args.tree).resolve()
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in sources}
    profiles: dict[str, str] = {}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    for round_number in range(args.rounds):
        for name, components in sources.items():
            work = Path(tempfile.mkdtemp(prefix=f"index-background-{name}-"))
            profile = None
            if round_number == 0 and name in args.profile:
                profile = out.with_name(f"index_background_{name}.prof")
                profiles[name] = str(profile)
            try:
                result = one_run(Path(components).resolve(), tree, work, profile)
            finally:
                shutil.rmtree(work, ignore_errors=True)
            runs[name].append(result)
            print(f"round {round_number + 1} {name}: {json.dumps(result)}", flush=True)
    summary = {
        name: {
            "returned_s_median": statistics.median(r["returned_s"] for r in results),
            "answerable_s_median": statistics.median(r["answerable_s"] or 0.0 for r in results),
            "index_s_median": statistics.median(r["index_s"] or 0.0 for r in results),
            "loads": [r["load_before"] for r in results],
        }
        for name, results in runs.items()
    }
    report = {"tree": str(tree), "rounds": args.rounds, "sources": sources, "summary": summary, "runs": runs}
    report["profiles"] = profiles
    out.write_text(json.dumps(report, indent=1), encoding="utf-8")
    for name, figures in summary.items():
        print(f"{name}: {json.dumps(figures)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
