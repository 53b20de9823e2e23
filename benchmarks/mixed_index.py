"""One index holding every repository of a golden set vs one index per repository (issue 11), lexical.

The command line of `evaluation/mixed_index.py` (its docstring says more):

    python benchmarks/mixed_index.py --golden ../shared/bench/swe_qa_dev_primary.jsonl --git-root /work/.mirror \
        --corpus-cache $PWD/.bench-cache --work /tmp/mixed-bench --out /tmp/mixed-bench/results
    python benchmarks/mixed_index.py --swebench ../shared/bench/swebench_multilingual_jsts.jsonl \
        --git-root /work/.mirror --corpus-cache $PWD/.bench-cache --work /tmp/mixed-jsts --out /tmp/mixed-jsts/results \
        --modes mixed,mixed-filter,mixed-select,mixed-infer,per-repo
"""

import os
import sys

from haystack_integrations.components.code_alias.evaluation.mixed_index import main

if __name__ == "__main__":
    os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")
    sys.exit(main())
