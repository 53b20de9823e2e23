"""Precision and recall of the reference graph's callers on the hand-written fixtures, one per language.

The command line of `evaluation/graph_fixtures.py` (its docstring says more):

    python benchmarks/graph_fixtures.py            # the table
    python benchmarks/graph_fixtures.py --json out.json --show-misses
"""

import sys
from pathlib import Path

from haystack_integrations.components.code_alias.evaluation.graph_fixtures import main

if __name__ == "__main__":
    sys.exit(main(fixtures=Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "graph"))
