"""The same rows of two harness runs (two commits, or two settings), paired by instance: what a change moved.

The command line of `evaluation/runs_paired.py` (its docstring says more):

    python benchmarks/runs_paired.py --before <old run folder> --after <new run folder> [--json out.json]
"""

import sys

from haystack_integrations.components.code_alias.evaluation.runs_paired import main

if __name__ == "__main__":
    sys.exit(main())
