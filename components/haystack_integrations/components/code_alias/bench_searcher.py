"""The benchmark's searcher: the evaluation harness drives the same `CodeSearch` pipelines users run.

One query pipeline run yields the BM25, embedding and hybrid rankings at once (the pipeline exposes each
retriever's output), so the three retrieval configs of one (question, rewrite) share a run.
"""

from __future__ import annotations

import argparse
import os
from collections import OrderedDict
from pathlib import Path

from .evaluation.runner import SearchResult
from .paths import EMBEDDING_CACHE_ENV
from .search import AskResult, CodeSearch


class PipelineSearcher:
    """
    `Searcher` for the evaluation runner over this package's YAML pipelines.

    :param cache_dir: Where per-corpus indexes and the shared embedding cache live.
    :param lexical: BM25 only (no embedding model): skips embedding and hybrid configs.
    :param candidates: Chunks each retriever returns before fusion and file grouping.
    """

    def __init__(self, cache_dir: Path, *, lexical: bool = False, candidates: int = 100) -> None:
        self.cache_dir = cache_dir
        self.lexical = lexical
        self.candidates = candidates
        self._search: CodeSearch | None = None
        self._answers: OrderedDict[tuple[str, str], AskResult] = OrderedDict()
        os.environ.setdefault(EMBEDDING_CACHE_ENV, str(cache_dir / "embedding-cache"))

    def supports(self, rewrite: str, retrieval: str) -> bool:
        if rewrite == "llm":
            return False  # the LLM query pipeline is measured by benchmarks/llm_rewrite.py
        return retrieval == "bm25" if self.lexical else True

    def index(self, corpus_root: Path, *, name: str) -> None:
        folder = self.cache_dir / "indexes" / ("lexical" if self.lexical else "hybrid") / name
        search = CodeSearch(folder, lexical=self.lexical)
        search.index(corpus_root)
        search.warm_up()
        self._search = search
        self._answers.clear()

    def search(self, question: str, *, rewrite: str, retrieval: str, top_k: int) -> SearchResult:
        if self._search is None:
            raise RuntimeError("index() must be called before search()")
        key = (question, rewrite)
        answer = self._answers.get(key)
        if answer is None:
            answer = self._search.ask(question, top_k=top_k, use_rewrite=rewrite != "none", candidates=self.candidates)
            self._answers[key] = answer
            while len(self._answers) > 64:
                self._answers.popitem(last=False)
        documents = answer.ranking(retrieval)
        files = list(dict.fromkeys(d.meta["file_path"] for d in documents))[:top_k]
        functions = [(d.meta["file_path"], d.meta["qualified_name"]) for d in documents if d.meta.get("qualified_name")]
        meta = answer.rewrite.get("meta", {})
        return SearchResult(
            files=files,
            functions=functions,
            rewrite_ms=float(meta.get("latency_ms", 0.0)) if rewrite != "none" else 0.0,
            dropped_symbols=len(answer.rewrite.get("dropped", [])),
            cache_hit=bool(meta.get("cache_hit", False)),
            rewritten=answer.rewrite.get("rewritten") if rewrite != "none" else None,
            extra={"symbols": answer.rewrite.get("symbols", []), "intent": answer.rewrite.get("intent")},
        )


def make_searcher(args: argparse.Namespace) -> PipelineSearcher:
    """Factory the evaluation CLI calls (`--searcher` default)."""
    cache_dir = Path(getattr(args, "cache_dir", None) or ".bench-cache")
    return PipelineSearcher(cache_dir, lexical=bool(getattr(args, "lexical", False)))
