"""One picture of the LLM rewrite rows: each set a panel, each row's file Acc@1 / Acc@5 and symbol hit@5 as bars,
its rewrite p50 over them.

The command line of `evaluation/llm_plot.py` (its docstring says more):

    python benchmarks/llm_plot.py --set "SWE-QA dev (299)=.bench-cache/results/sweqa-llm-paired.json" \
        --set "JS/TS titles (33)=.bench-cache/results/jsts-llm-paired.json" --out benchmarks/results/llm-rows.png
"""

import sys

from haystack_integrations.components.code_alias.evaluation.llm_plot import main

if __name__ == "__main__":
    sys.exit(main())
