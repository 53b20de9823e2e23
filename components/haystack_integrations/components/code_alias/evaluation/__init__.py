"""Evaluation harness: golden sets, SWE-bench gold from patches, corpora, metrics, the ablation runner, reports.

Framework-free except where Haystack's evaluators are used as a cross-check (:func:`haystack_file_metrics`).
The retrieval backend plugs in through the :class:`Searcher` protocol; `bench_searcher` (the default searcher: the
shipped `CodeSearch` pipelines) and `bench_variants` (the LLM rewrite variants) are imported by name, not here.
"""

from haystack_integrations.components.code_alias.evaluation.corpus import (
    PYPI_DISTRIBUTIONS,
    Corpus,
    CorpusCache,
    CorpusError,
    CorpusResolver,
    PipDownloader,
    map_repo_path,
    prefetch,
)
from haystack_integrations.components.code_alias.evaluation.golden import (
    GoldenItem,
    load_golden,
    load_swebench,
    save_golden,
)
from haystack_integrations.components.code_alias.evaluation.metrics import haystack_file_metrics
from haystack_integrations.components.code_alias.evaluation.runner import (
    BenchConfig,
    BenchOptions,
    Searcher,
    SearchResult,
    bench_main,
    config_grid,
    run_bench,
)

__all__ = [
    "PYPI_DISTRIBUTIONS",
    "BenchConfig",
    "BenchOptions",
    "Corpus",
    "CorpusCache",
    "CorpusError",
    "CorpusResolver",
    "GoldenItem",
    "PipDownloader",
    "SearchResult",
    "Searcher",
    "bench_main",
    "config_grid",
    "haystack_file_metrics",
    "load_golden",
    "load_swebench",
    "map_repo_path",
    "prefetch",
    "run_bench",
    "save_golden",
]
