"""Sample resolved call sites of a repository's reference graph, to check each by reading the code.

    python benchmarks/graph_sample.py TREE --count 30 --seed 43 > sample.md

Builds the tree's dictionary and graph, draws `--count` resolved call or instantiation edges at random (seeded;
test files included, as the graph has them) and prints each with the line of the call, the enclosing definition,
and the definition the graph resolved it to with its first line, so a person can judge each one against the code.
The judgement (correct or not, and why) is written down by hand next to the sample (BENCHMARKS.md section 15).
With `--verdicts FILE` (YAML: `site: ok | wrong: reason`) it prints the precision of the judged sample.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

import yaml


def main(argv: list[str] | None = None) -> int:
    from haystack_integrations.components.code_alias.core.builder import DictionaryBuilder
    from haystack_integrations.components.code_alias.core.graph import CALL_KINDS, ReferenceGraph

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree", type=Path)
    parser.add_argument("--count", type=int, default=30)
    parser.add_argument("--seed", type=int, default=43)
    parser.add_argument("--verdicts", type=Path, help="YAML of site -> 'ok' or 'wrong: why'; prints the precision")
    args = parser.parse_args(argv)
    dictionary, _ = DictionaryBuilder().build(args.tree)
    graph = ReferenceGraph(dictionary)
    resolved = [e for e in graph.edges if e.kind in CALL_KINDS and e.status == "resolved"]
    ambiguous = sum(1 for e in graph.edges if e.kind in CALL_KINDS and e.status == "ambiguous")
    sample = random.Random(args.seed).sample(resolved, min(args.count, len(resolved)))
    sample.sort(key=lambda e: (graph.file_path(e), e.line))

    def line(path: str, number: int) -> str:
        lines = (args.tree / path).read_text(encoding="utf-8", errors="replace").splitlines()
        return lines[number - 1].strip() if 0 < number <= len(lines) else ""

    print(f"# {args.tree.name}: {len(resolved):,} resolved call sites, {ambiguous:,} ambiguous; {len(sample)} drawn\n")
    for edge in sample:
        site = f"{graph.file_path(edge)}:{edge.line}"
        caller = graph.definitions[edge.source].qualified_name if edge.source is not None else "<module>"
        target = graph.definitions[edge.targets[0]]
        print(f"- `{site}` in `{caller}`: `{line(graph.file_path(edge), edge.line)[:140]}`")
        print(f"  -> `{target.qualified_name}` ({target.kind}) `{target.file_path}:{target.start_line}`: "
              f"`{line(target.file_path, target.start_line)[:120]}`")  # fmt: skip
    if args.verdicts:
        verdicts = yaml.safe_load(args.verdicts.read_text(encoding="utf-8")) or {}
        sites = [f"{graph.file_path(e)}:{e.line}" for e in sample]
        judged = [str(verdicts[s]) for s in sites if s in verdicts]
        correct = sum(v == "ok" for v in judged)
        precision = correct / max(len(judged), 1)
        print(f"\njudged {len(judged)} of {len(sites)}: {correct} correct, precision {precision:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
