"""The benchmark answered by the YAML pipelines as a Haystack user loads them, not through `CodeSearch`.

`YamlPipelineSearcher` indexes each corpus as the normal searcher does (same folders, so the same index), then
answers every question with `Pipeline.loads` of the packaged YAML file (`index_dir: null` replaced by the index
folder, as a user edits it) and `pipeline.run`: the question to every component that takes one, `use_rewrite` to
the composer, `top_k` to the ranker. Its run and a `CodeSearch` run of the same questions should rank every row
alike (`benchmarks/same_rankings.py`): the ranking lives inside the pipeline, nothing is added after it.

    code-alias bench run ... --searcher \\
        haystack_integrations.components.code_alias.evaluation.yaml_searcher:make_yaml_searcher
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from haystack import Pipeline

from ..app.pipelines import pipeline_file
from ..indexing import index_mode
from .bench_searcher import PipelineSearcher, make_searcher
from .runner import SearchResult


class YamlPipelineSearcher:
    """`Searcher` over the packaged YAML query pipelines, loaded with Haystack's own `Pipeline.loads`."""

    def __init__(self, indexer: PipelineSearcher) -> None:
        self.indexer = indexer
        self.pipeline: Pipeline | None = None

    def supports(self, rewrite: str, retrieval: str) -> bool:
        if rewrite not in ("none", "dictionary"):
            return False
        return retrieval == ("bm25" if self.indexer.lexical else "hybrid")

    def index(self, corpus_root: Path, *, name: str) -> None:
        self.indexer.index(corpus_root, name=name)
        folder = self.indexer._folder
        assert folder is not None
        semantic = index_mode.recorded_semantic_hints(folder)
        kind = ("query_lexical_semantic" if semantic else "query_lexical") if self.indexer.lexical else "query"
        text = pipeline_file("embedded", kind).read_text(encoding="utf-8")
        self.pipeline = Pipeline.loads(text.replace("index_dir: null", f"index_dir: {str(folder)!r}"))

    def search(self, question: str, *, rewrite: str, retrieval: str, top_k: int) -> SearchResult:
        assert self.pipeline is not None
        data: dict[str, dict[str, Any]] = {
            name: {"question": question} for name, sockets in self.pipeline.inputs().items() if "question" in sockets
        }
        data.setdefault("composer", {})["use_rewrite"] = rewrite != "none"
        data.setdefault("ranker", {})["top_k"] = top_k
        output = self.pipeline.run(data, include_outputs_from={"rewriter"})
        ranked = output["ranker"]
        return SearchResult(
            files=[f["file_path"] for f in ranked["files"]],
            functions=[(s["file_path"], s["qualified_name"]) for s in ranked["symbols"]],
            rewritten=output["rewriter"]["rewritten"] if rewrite != "none" else None,
        )


def make_yaml_searcher(args: argparse.Namespace) -> YamlPipelineSearcher:
    """Factory for `code-alias bench run --searcher ...:make_yaml_searcher` (the options of `make_searcher`)."""
    return YamlPipelineSearcher(make_searcher(args))
