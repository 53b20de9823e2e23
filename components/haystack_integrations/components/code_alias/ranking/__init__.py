"""Ranking: every retrieved chunk -> features -> fitted models -> ranked symbols and files with a confidence.

`CodeRanker` (ranker.py) is the pipeline's last component; `fit.py` fits what it loads (benchmarks/fit_ranking.py).
Nothing is imported here: import the modules themselves (`ranking.ranker`, `ranking.features`, ...).
"""
