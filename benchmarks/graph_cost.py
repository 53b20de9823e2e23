"""What the reference graph costs on a tree: build time beside the dictionary alone, size, incremental refresh.

    python benchmarks/graph_cost.py --tree Django-3.0/django --base BASE/components --rounds 5 \\
        --out benchmarks/results/graph_cost_django.json

Each round runs, in fresh processes and alternating which goes first:

- `base`: the dictionary build of the code before the graph (`--base`: a `components/` folder of that commit, e.g.
  `git archive ed1a04b components | tar x -C BASE`), which parses every file for its definitions alone;
- `graph`: this code's dictionary build (definitions and references from one parse per file), then the graph's
  resolution (`ReferenceGraph`), timed apart.

Both builds use the builder's own worker processes. One `graph` process also measures the size the references add to
the dictionary file (its JSON with and without them), and the refresh after editing one file: a function that calls
another is appended to a file (then the edit is undone, and so on), the dictionary is refreshed
(`DictionaryBuilder.refresh`: the file re-read, re-parsed) and the graph refreshed from the previous one
(`ReferenceGraph.refreshed`), checked against a full resolution of the same dictionary. Medians are printed with the
load average before and after.
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

HERE = Path(__file__).resolve().parents[1]

_BASE = """
import json, sys, time
from haystack_integrations.components.code_alias.core.builder import DictionaryBuilder
started = time.perf_counter()
dictionary, stats = DictionaryBuilder().build(sys.argv[1])
print(json.dumps({"build": time.perf_counter() - started, "symbols": stats.symbols}))
"""

_GRAPH = """
import json, sys, time
from haystack_integrations.components.code_alias.core.builder import DictionaryBuilder
from haystack_integrations.components.code_alias.core.graph import ReferenceGraph
started = time.perf_counter()
dictionary, stats = DictionaryBuilder().build(sys.argv[1])
built = time.perf_counter()
graph = ReferenceGraph(dictionary)
resolved = time.perf_counter()
out = {"build": built - started, "resolve": resolved - built, "symbols": stats.symbols, "graph": graph.summary()}
if sys.argv[2] == "details":
    with_refs = len(dictionary.model_dump_json().encode())
    without = len(dictionary.model_dump_json(exclude={"files": {"__all__": {"references"}}}).encode())
    out["bytes"] = {"dictionary": with_refs, "without_references": without, "references": with_refs - without}
    out["references"] = sum(len(r.references) for r in dictionary.files.values())
    out["refresh"] = refresh_rounds(sys.argv[1], dictionary, graph, int(sys.argv[3]))
print(json.dumps(out))
"""

_REFRESH = """
def refresh_rounds(root, dictionary, graph, rounds):
    import pathlib
    builder = DictionaryBuilder()
    paths = sorted(
        p for p, r in dictionary.files.items()
        if r.language == "python" and 20 < len(r.symbols) < 200 and any(s.kind == "function" for s in r.symbols)
    )
    target = pathlib.Path(root) / paths[len(paths) // 2]
    original = target.read_text(encoding="utf-8")
    callee = next(s.name for s in dictionary.files[paths[len(paths) // 2]].symbols if s.kind == "function")
    rows = []
    for round_ in range(rounds):
        edited = original + f"\\n\\ndef graph_cost_probe_{round_}():\\n    return {callee}()\\n"
        for text in (edited, original):
            target.write_text(text, encoding="utf-8")
            started = time.perf_counter()
            new, stats = builder.refresh(root, dictionary)
            refreshed_at = time.perf_counter()
            updated = ReferenceGraph.refreshed(graph, new)
            graphed_at = time.perf_counter()
            full = ReferenceGraph(new)
            full_at = time.perf_counter()
            same = edges(updated) == edges(full)
            rows.append({"dictionary": refreshed_at - started, "graph": graphed_at - refreshed_at,
                         "full_graph": full_at - graphed_at, "parsed": stats.files_parsed, "same_edges": same,
                         "incremental": updated.refreshed_files is not None})
            dictionary, graph = new, updated
    target.write_text(original, encoding="utf-8")
    return {"file": str(paths[len(paths) // 2]), "rows": rows}


def edges(graph):
    def name(i):
        return "<module>" if i is None else graph.definitions[i].qualified_name
    return {(graph.file_path(e), e.line, e.kind, e.status, name(e.source), tuple(sorted(name(t) for t in e.targets)))
            for e in graph.edges}
"""


def _run(script: str, pythonpath: Path, *args: str) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(pythonpath), "HAYSTACK_TELEMETRY_ENABLED": "False"}
    done = subprocess.run([sys.executable, "-c", script, *args], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"the measuring process failed:\n{done.stderr[-3000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def _median(values: list[float]) -> float:
    return round(statistics.median(values), 4)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, required=True, help="the source tree (e.g. Django 3.0's django/)")
    parser.add_argument("--base", type=Path, required=True, help="a components/ folder of the code before the graph")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--refresh-rounds", type=int, default=5, help="edit-and-undo pairs for the refresh figure")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    load_before = os.getloadavg()
    graph_script = _GRAPH.replace("started = time.perf_counter()", _REFRESH + "\nstarted = time.perf_counter()", 1)
    base_rows: list[dict[str, Any]] = []
    graph_rows: list[dict[str, Any]] = []
    details: dict[str, Any] = {}
    for round_ in range(args.rounds):
        order = ("base", "graph") if round_ % 2 == 0 else ("graph", "base")
        for which in order:
            if which == "base":
                base_rows.append(_run(_BASE, args.base, str(args.tree)))
            else:
                mode = "details" if not details else "plain"
                row = _run(graph_script, HERE / "components", str(args.tree), mode, str(args.refresh_rounds))
                if mode == "details":
                    details = {key: row.pop(key) for key in ("bytes", "references", "refresh")}
                graph_rows.append(row)
        print(f"round {round_ + 1}: base {base_rows[-1]['build']:.2f} s, graph {graph_rows[-1]['build']:.2f} s "
              f"+ resolve {graph_rows[-1]['resolve']:.2f} s", flush=True)  # fmt: skip
    base = _median([row["build"] for row in base_rows])
    build = _median([row["build"] for row in graph_rows])
    resolve = _median([row["resolve"] for row in graph_rows])
    refresh = details["refresh"]["rows"]
    summary = {
        "tree": str(args.tree),
        "rounds": args.rounds,
        "symbols": {"base": base_rows[0]["symbols"], "graph": graph_rows[0]["symbols"]},
        "dictionary_alone_s": base,
        "dictionary_with_references_s": build,
        "graph_resolution_s": resolve,
        "ratio_build": round(build / base, 3),
        "ratio_build_and_resolution": round((build + resolve) / base, 3),
        "graph": graph_rows[0]["graph"],
        "bytes": details["bytes"],
        "references": details["references"],
        "refresh": {
            "file": details["refresh"]["file"],
            "edits": len(refresh),
            "dictionary_ms_p50": round(1000 * statistics.median(r["dictionary"] for r in refresh), 1),
            "graph_ms_p50": round(1000 * statistics.median(r["graph"] for r in refresh), 1),
            "dictionary_and_graph_ms_p50": round(
                1000 * statistics.median(r["dictionary"] + r["graph"] for r in refresh), 1
            ),
            "full_graph_ms_p50": round(1000 * statistics.median(r["full_graph"] for r in refresh), 1),
            "all_incremental": all(r["incremental"] for r in refresh),
            "same_edges_as_full": all(r["same_edges"] for r in refresh),
        },
        "load": {"before": [round(x, 2) for x in load_before], "after": [round(x, 2) for x in os.getloadavg()]},
        "at": time.strftime("%Y-%m-%d %H:%M"),
    }
    print(json.dumps(summary, indent=1))
    if args.out:
        args.out.write_text(
            json.dumps({**summary, "base_rows": base_rows, "graph_rows": graph_rows, "refresh_rows": refresh}, indent=1)
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
