"""How splitting one file scales with its number of definitions (issue 12: the splitter was quadratic).

The command line of `evaluation/split_scaling.py` (its docstring says more):

    python benchmarks/split_scaling.py                  # 2k, 4k, 8k, 100k definitions
    python benchmarks/split_scaling.py --sizes 2000 4000 --reference-max 4000
"""

import sys

from haystack_integrations.components.code_alias.evaluation.split_scaling import main

if __name__ == "__main__":
    sys.exit(main())
