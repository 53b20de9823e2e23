"""Entry point of ``code-alias bench``: :func:`bench_main` (implemented in :mod:`.runner`)."""

from haystack_integrations.components.code_alias.evaluation.runner import (
    DEFAULT_SEARCHER_FACTORY,
    bench_main,
    build_parser,
)

__all__ = ["DEFAULT_SEARCHER_FACTORY", "bench_main", "build_parser"]
