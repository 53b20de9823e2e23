"""Precision and recall of the reference graph's callers on the hand-written fixtures, one per language.

Each `tests/fixtures/graph/<language>/callers.yaml` lists every call site of a definition of that fixture, written
by hand from the code (`resolved`: site, caller, callee), and the sites whose callee the source does not tell
(`ambiguous`). The fixture is indexed as a repository of its own (the dictionary builder, as `code-alias index`),
its graph built, and every call or instantiation edge it resolves to a definition of the fixture is compared with
the list:

- precision: resolved edges that the list has / all resolved edges;
- recall: listed sites the graph resolved to the listed callee / all listed sites;
- ambiguous: listed ambiguous sites the graph reports as ambiguous (never as a caller) / all listed.

    python benchmarks/graph_fixtures.py            # the table
    python benchmarks/graph_fixtures.py --json out.json --show-misses
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import yaml

from ..core.builder import DictionaryBuilder
from ..core.graph import CALL_KINDS, ReferenceGraph

LANGUAGES = ("python", "javascript", "typescript", "go", "rust", "java")


def evaluate(folder: Path) -> dict[str, Any]:
    """The figures of one fixture folder (see the module docstring)."""

    truth = yaml.safe_load((folder / "callers.yaml").read_text(encoding="utf-8"))
    expected = {(row["site"], row["caller"], row["callee"]) for row in truth.get("resolved") or []}
    ambiguous = {(row["site"], row["name"]) for row in truth.get("ambiguous") or []}
    dictionary, _ = DictionaryBuilder().build(folder)
    graph = ReferenceGraph(dictionary)
    found: set[tuple[str, str, str]] = set()
    reported_ambiguous: set[tuple[str, str]] = set()
    for edge in graph.edges:
        if edge.kind not in CALL_KINDS:
            continue
        site = f"{graph.file_path(edge)}:{edge.line}"
        if edge.status == "ambiguous":
            reported_ambiguous.add((site, edge.name))
        if edge.status != "resolved":
            continue
        caller = graph.definitions[edge.source].qualified_name if edge.source is not None else "<module>"
        for target in edge.targets:
            found.add((site, caller, graph.definitions[target].qualified_name))
    hits = found & expected
    return {
        "sites": len(expected),
        "resolved_edges": len(found),
        "precision": len(hits) / len(found) if found else 1.0,
        "recall": len(hits) / len(expected) if expected else 1.0,
        "ambiguous_listed": len(ambiguous),
        "ambiguous_reported": len(ambiguous & reported_ambiguous),
        "ambiguous_resolved_wrongly": sorted(
            f"{site} {name}"
            for site, name in ambiguous
            if any(f[0] == site and f[2].endswith("." + name) for f in found)
        ),
        "false_positives": sorted(" ".join(row) for row in found - expected),
        "misses": sorted(" ".join(row) for row in expected - found),
        "graph": graph.summary(),
    }


def main(argv: list[str] | None = None, *, fixtures: Path) -> int:
    """The command line (`benchmarks/graph_fixtures.py`); `fixtures` holds one folder per language."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument("--show-misses", action="store_true", help="list false positives and misses")
    args = parser.parse_args(argv)
    results = {language: evaluate(fixtures / language) for language in LANGUAGES}
    print(f"{'language':<12}{'sites':>6}{'edges':>7}{'precision':>11}{'recall':>8}{'ambiguous':>11}")
    for language, row in results.items():
        ambiguous = f"{row['ambiguous_reported']}/{row['ambiguous_listed']}"
        print(
            f"{language:<12}{row['sites']:>6}{row['resolved_edges']:>7}{row['precision']:>11.3f}"
            f"{row['recall']:>8.3f}{ambiguous:>11}"
        )
        if args.show_misses:
            for line in row["false_positives"]:
                print("    false positive:", line)
            for line in row["misses"]:
                print("    missed:", line)
            for line in row["ambiguous_resolved_wrongly"]:
                print("    ambiguous site resolved:", line)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0
