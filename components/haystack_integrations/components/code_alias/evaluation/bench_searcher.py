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

from ..app.answer import AskResult
from ..app.requests import AskRequest
from ..app.search import CodeSearch
from ..indexing.dictionary_handle import DictionaryHandle
from ..paths import DICTIONARY_FILE, EMBEDDING_CACHE_ENV
from ..rewriting.generators import usable_chat_generator_spec
from .bench_variants import VariantSearch
from .runner import SearchResult


class PipelineSearcher:
    """
    `Searcher` for the evaluation runner over this package's YAML pipelines.

    :param cache_dir: Where per-corpus indexes and the shared embedding cache live.
    :param lexical: BM25 only (no embedding model): skips embedding and hybrid configs.
    :param candidates: Chunks each retriever returns before fusion and file grouping.
    :param chat_generator: A serialised ChatGenerator (`generators.chat_generator_spec`): the searcher then runs the
        LLM query pipeline, which serves the `none`, `dictionary` and `llm` rewrites per question (hybrid), and the
        `llm-free` rewrite (`bench_variants`: no schema limit on names, no faithfulness filter); on a lexical
        index the `llm` rows run `query_llm.yml` without its embedding parts.
    :param rewriter_params: Init parameters of the LLM pipeline's rewriter to override (`max_hints`, `timeout`).
    :param semantic_hints: Symbol cards with vectors for the rewrite's hints (`CodeSearch(semantic_hints=...)`); on
        a lexical index this is `--lexical --semantic-hints`: BM25 rows whose rewrite has semantic hints.
    :param rewrite_store: A folder for the LLM rewrites' disk cache and JSONL logs (`rewrites-<rewrite>.jsonl`),
        so a stopped run resumes without asking the model again; None = in-process cache only.
    """

    def __init__(
        self,
        cache_dir: Path,
        *,
        lexical: bool = False,
        candidates: int = 100,
        chat_generator: dict[str, Any] | None = None,
        rewriter_params: dict[str, Any] | None = None,
        rewrite_store: Path | None = None,
        semantic_hints: bool | None = None,
    ) -> None:
        self.cache_dir = cache_dir
        self.lexical = lexical
        self.candidates = candidates
        self.chat_generator = chat_generator
        self.rewriter_params = rewriter_params
        self.rewrite_store = rewrite_store
        # Lexical rows stay model-free unless asked; hybrid follows the index (cards on).
        self.semantic_hints = semantic_hints if semantic_hints is not None else (False if lexical else None)
        self._definitions: dict[str, list[tuple[str, str]]] = {}
        self._search: CodeSearch | None = None
        self._folder: Path | None = None
        self._variants: dict[str, VariantSearch] = {}
        self._answers: OrderedDict[tuple[str, str], AskResult] = OrderedDict()
        # One vector cache for every corpus (versions of a project share most chunks), given to each search.
        self._embedding_cache = os.environ.get(EMBEDDING_CACHE_ENV) or str(cache_dir / "embedding-cache")

    def supports(self, rewrite: str, retrieval: str) -> bool:
        if rewrite in ("llm", "llm-free") and not self.chat_generator:
            return False  # no generator configured (`code-alias bench run --llm-gguf/--llm-openai-base-url`)
        return retrieval == "bm25" if self.lexical else True

    def index(self, corpus_root: Path, *, name: str) -> None:
        for old in [self._search, *self._variants.values()]:
            if old is not None:
                old.close()  # one corpus in memory at a time: Lite visits 63 of them
        self._variants.clear()
        folder = self.cache_dir / "indexes" / ("lexical" if self.lexical else "hybrid") / name
        llm = self.chat_generator is not None and not self.lexical
        search = CodeSearch(
            folder,
            lexical=self.lexical,
            llm=llm,
            chat_generator=self.chat_generator,
            rewriter_params=self._rewriter_params("llm") if llm else None,
            semantic_hints=self.semantic_hints,
            embedding_cache=self._embedding_cache,
        )
        search.index(corpus_root)
        search.warm_up()
        self._search = search
        self._folder = folder
        self._definitions = symbol_definitions(folder)
        self._answers.clear()

    def _rewriter_params(self, rewrite: str) -> dict[str, Any] | None:
        params = dict(self.rewriter_params or {})
        if self.rewrite_store is not None:
            params["cache_path"] = str(self.rewrite_store / "cache")
            params["log_path"] = str(self.rewrite_store / f"rewrites-{rewrite}.jsonl")
        return params or None

    def _searcher_for(self, rewrite: str) -> CodeSearch:
        """The search that answers `rewrite`: the corpus's own, or an LLM variant on the same index."""
        if self._search is None or self._folder is None:
            raise RuntimeError("index() must be called before search()")
        if rewrite not in ("llm", "llm-free") or (rewrite == "llm" and self._search.llm):
            return self._search
        variant = self._variants.get(rewrite)
        if variant is None:
            assert self.chat_generator is not None
            variant = VariantSearch(
                self._folder,
                lexical=self.lexical,
                free=rewrite == "llm-free",
                chat_generator=self.chat_generator,
                rewriter_params=self._rewriter_params(rewrite),
                embedding_cache=self._embedding_cache,
                semantic_hints=self.semantic_hints,
            )
            self._variants[rewrite] = variant
        return variant

    def search(self, question: str, *, rewrite: str, retrieval: str, top_k: int) -> SearchResult:
        search = self._searcher_for(rewrite)
        key = (question, rewrite)
        answer = self._answers.get(key)
        if answer is None:
            # The request every client builds (`app.requests`); trusted: whole issue texts pass the length limit.
            values = {"question": question, "top_k": top_k, "use_rewrite": rewrite != "none"}
            request = AskRequest.parse(
                {**values, "mode": "llm" if rewrite.startswith("llm") else "dictionary"}, trusted=True
            )
            answer = search.ask(
                request.question,
                top_k=request.top_k,
                use_rewrite=request.use_rewrite,
                candidates=self.candidates,
                mode=request.mode if search.llm else None,
            )
            self._answers[key] = answer
            while len(self._answers) > 64:
                self._answers.popitem(last=False)
        files = [f["file_path"] for f in answer.ranked_files(retrieval, top_k)]
        # The symbols as the user sees them (`AskResult.ranked_symbols`: each definition once, tests after code).
        functions = [(s["file_path"], s["qualified_name"]) for s in answer.ranked_symbols(retrieval)]
        meta = answer.rewrite.get("meta", {})
        names: dict[str, int] = {}
        if isinstance(search, VariantSearch) and search.free:  # no filter ran: what it would have dropped
            names = search.invented_names(answer.rewrite, question)
        elif rewrite == "llm":
            dropped = [d for d in answer.rewrite.get("dropped", []) if d.get("kind") in ("symbol", "package")]
            kept = len(answer.rewrite.get("symbols", [])) + len(answer.rewrite.get("packages", []))
            names = {"proposed": kept + len(dropped), "dropped": len(dropped)}
        return SearchResult(
            files=files,
            functions=functions,
            rewrite_ms=float(meta.get("latency_ms", 0.0)) if rewrite != "none" else 0.0,
            dropped_symbols=names.get("invented", len(answer.rewrite.get("dropped", []))),
            cache_hit=bool(meta.get("cache_hit", False)),
            rewritten=answer.rewrite.get("rewritten") if rewrite != "none" else None,
            hints=[self._hint(h) for h in answer.rewrite.get("hints", [])] if rewrite != "none" else None,
            extra={
                "symbols": answer.rewrite.get("symbols", []),
                "intent": answer.rewrite.get("intent"),
                "fallback": meta.get("fallback"),
                **names,
            },
        )

    def _hint(self, hint: dict[str, Any]) -> dict[str, Any]:
        """A hint as the benchmark records it: what the rewrite saw, and every definition of its name."""
        name = str(hint.get("name", ""))
        return {
            "name": name,
            "kind": hint.get("kind"),
            "confidence": hint.get("confidence"),
            "score": hint.get("score"),
            "similarity": hint.get("similarity"),
            "evidence": hint.get("evidence", {}),
            "definitions": self._definitions.get(name, []) if hint.get("kind", "symbol") == "symbol" else [],
        }


def symbol_definitions(folder: Path) -> dict[str, list[tuple[str, str]]]:
    """Symbol name -> its definitions' (file, qualified name) in the index in `folder` (for hint recall)."""
    definitions: dict[str, list[tuple[str, str]]] = {}
    for entry in DictionaryHandle.for_path(folder / DICTIONARY_FILE).dictionary.symbols:
        definitions.setdefault(entry.name, []).append((entry.file_path, entry.qualified_name))
    return definitions


def make_searcher(args: argparse.Namespace) -> PipelineSearcher:
    """Factory the evaluation CLI calls (`--searcher` default)."""
    cache_dir = Path(getattr(args, "cache_dir", None) or ".bench-cache").absolute()
    gguf = getattr(args, "llm_gguf", None)
    base_url = getattr(args, "llm_openai_base_url", None)
    chat_generator = None
    rewriter_params: dict[str, Any] = {}
    rewrite_store = None
    if gguf or base_url:
        chat_generator = usable_chat_generator_spec(
            gguf=gguf,
            openai_base_url=base_url,
            model=getattr(args, "llm_model", None),
            n_threads=getattr(args, "llm_threads", None),
        )
        rewriter_params["timeout"] = float(getattr(args, "llm_timeout", 60.0))
        if getattr(args, "llm_max_hints", None):
            rewriter_params["max_hints"] = int(args.llm_max_hints)
        if getattr(args, "llm_rewritten", None):
            rewriter_params["model_writes_rewritten"] = args.llm_rewritten == "model"
        out = getattr(args, "out", None)
        rewrite_store = Path(out).absolute() / "llm-rewrites" if out else None
    return PipelineSearcher(
        cache_dir,
        lexical=bool(getattr(args, "lexical", False)),
        semantic_hints=True if getattr(args, "semantic_hints", False) else None,
        chat_generator=chat_generator,
        rewriter_params=rewriter_params or None,
        rewrite_store=rewrite_store,
    )
