"""Less arithmetic per chunk (issue 15): MiniLM's cost and quality per embedding text and sequence length.

The command line of `evaluation/embed_cost.py` (its docstring says more):

    python benchmarks/embed_cost.py speed --root .bench-cache/corpora/Django-3.0 --chunks 1000 --rounds 8
    python benchmarks/embed_cost.py summarize --runs chunk-256=<out> chunk-128=<out> ... \\
        [--speed benchmarks/results/embed-cost-speed.json] --out benchmarks/results/embed-cost.json
"""

import sys

from haystack_integrations.components.code_alias.evaluation.embed_cost import main

if __name__ == "__main__":
    sys.exit(main())
