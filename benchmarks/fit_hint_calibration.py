"""Fit how much semantic hint evidence counts, from benchmark runs that recorded their hints.

The command line of `rewriting/hints/fit.py` (its docstring says what is fitted and how):

    python benchmarks/fit_hint_calibration.py /work/bench-runs/sem1-sweqa [more runs] --write
"""

from haystack_integrations.components.code_alias.rewriting.hints.fit import main

if __name__ == "__main__":
    main()
