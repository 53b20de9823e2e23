"""The benchmark's searcher: the evaluation harness drives the same `CodeSearch` pipelines users run.

One query pipeline run yields the BM25, embedding and hybrid rankings at once (the pipeline exposes each
retriever's output), so the three retrieval configs of one (question, rewrite) share a run.
"""

from __future__ import annotations

import argparse
import os
from collections import OrderedDict
from pathlib import Path
from typing import Any

from .evaluation.runner import SearchResult
from .paths import EMBEDDING_CACHE_ENV
from .search import AskResult, CodeSearch, environment_variable


class PipelineSearcher:
    """
    `Searcher` for the evaluation runner over this package's YAML pipelines.

    :param cache_dir: Where per-corpus indexes and the shared embedding cache live.
    :param lexical: BM25 only (no embedding model): skips embedding and hybrid configs.
    :param candidates: Chunks each retriever returns before fusion and file grouping.
    :param chat_generator: A serialised ChatGenerator (`rewriter.chat_generator_spec`): the searcher then runs the
        LLM query pipeline, which serves the `none`, `dictionary` and `llm` rewrites per question.
    :param rewriter_params: Init parameters of the LLM pipeline's rewriter to override (`max_hints`, `timeout`).
    """

    def __init__(
        self,
        cache_dir: Path,
        *,
        lexical: bool = False,
        candidates: int = 100,
        chat_generator: dict[str, Any] | None = None,
        rewriter_params: dict[str, Any] | None = None,
    ) -> None:
        if lexical and chat_generator:
            raise ValueError("the LLM rewrite runs on the hybrid pipelines; drop --lexical")
        self.cache_dir = cache_dir
        self.lexical = lexical
        self.candidates = candidates
        self.chat_generator = chat_generator
        self.rewriter_params = rewriter_params
        self._search: CodeSearch | None = None
        self._answers: OrderedDict[tuple[str, str], AskResult] = OrderedDict()
        # One vector cache for every corpus (versions of a project share most chunks); set only while this
        # searcher builds pipelines, so the process's other users keep their own.
        self._embedding_cache = os.environ.get(EMBEDDING_CACHE_ENV) or str(cache_dir / "embedding-cache")

    def supports(self, rewrite: str, retrieval: str) -> bool:
        if rewrite == "llm" and not self.chat_generator:
            return False  # no generator configured (`code-alias bench run --llm-gguf/--llm-openai-base-url`)
        return retrieval == "bm25" if self.lexical else True

    def index(self, corpus_root: Path, *, name: str) -> None:
        if self._search is not None:
            self._search.close()  # one corpus in memory at a time: Lite visits 63 of them
        folder = self.cache_dir / "indexes" / ("lexical" if self.lexical else "hybrid") / name
        llm = self.chat_generator is not None
        search = CodeSearch(
            folder,
            lexical=self.lexical,
            llm=llm,
            chat_generator=self.chat_generator,
            rewriter_params=self.rewriter_params if llm else None,
        )
        with environment_variable(EMBEDDING_CACHE_ENV, self._embedding_cache):
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
            answer = self._search.ask(
                question,
                top_k=top_k,
                use_rewrite=rewrite != "none",
                candidates=self.candidates,
                mode=("llm" if rewrite == "llm" else "dictionary") if self.chat_generator else None,
            )
            self._answers[key] = answer
            while len(self._answers) > 64:
                self._answers.popitem(last=False)
        files = [f["file_path"] for f in answer.ranked_files(retrieval, top_k)]
        # The symbols as the user sees them (`AskResult.ranked_symbols`: each definition once, tests after code).
        functions = [(s["file_path"], s["qualified_name"]) for s in answer.ranked_symbols(retrieval)]
        meta = answer.rewrite.get("meta", {})
        return SearchResult(
            files=files,
            functions=functions,
            rewrite_ms=float(meta.get("latency_ms", 0.0)) if rewrite != "none" else 0.0,
            dropped_symbols=len(answer.rewrite.get("dropped", [])),
            cache_hit=bool(meta.get("cache_hit", False)),
            rewritten=answer.rewrite.get("rewritten") if rewrite != "none" else None,
            extra={
                "symbols": answer.rewrite.get("symbols", []),
                "intent": answer.rewrite.get("intent"),
                "fallback": meta.get("fallback"),
            },
        )


def make_searcher(args: argparse.Namespace) -> PipelineSearcher:
    """Factory the evaluation CLI calls (`--searcher` default)."""
    cache_dir = Path(getattr(args, "cache_dir", None) or ".bench-cache").absolute()
    gguf = getattr(args, "llm_gguf", None)
    base_url = getattr(args, "llm_openai_base_url", None)
    chat_generator = None
    rewriter_params: dict[str, Any] = {}
    if gguf or base_url:
        from .rewriter import usable_chat_generator_spec

        chat_generator = usable_chat_generator_spec(
            gguf=gguf, openai_base_url=base_url, model=getattr(args, "llm_model", None)
        )
        rewriter_params["timeout"] = float(getattr(args, "llm_timeout", 60.0))
        if getattr(args, "llm_max_hints", None):
            rewriter_params["max_hints"] = int(args.llm_max_hints)
    return PipelineSearcher(
        cache_dir,
        lexical=bool(getattr(args, "lexical", False)),
        chat_generator=chat_generator,
        rewriter_params=rewriter_params or None,
    )
