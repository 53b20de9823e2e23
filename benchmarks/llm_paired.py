"""Paired lifts of the LLM rewrite rows of a harness run: `llm` against `none`, `dictionary` and `llm-free`.

The command line of `evaluation/llm_paired.py` (its docstring says more):

    python benchmarks/llm_paired.py --out .bench-cache/results/sweqa-llm-lexical [--json benchmarks/results/x.json]
    python benchmarks/llm_paired.py --out <1.5B run> --with 0.5b=<0.5B run> --with 0.5b-20h=<0.5B, 20 hints run>
"""

import sys

from haystack_integrations.components.code_alias.evaluation.llm_paired import main

if __name__ == "__main__":
    sys.exit(main())
