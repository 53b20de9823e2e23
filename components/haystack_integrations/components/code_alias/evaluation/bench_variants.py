"""The benchmark's LLM rewrite variants: the shipped LLM pipeline, adapted to a lexical index or unconstrained.

`query_llm.yml` is the one source: a variant takes it as it is and only removes parts, so every other setting
(first pass, definitions, `CodeRanker`) stays the shipped one.

- lexical: without the text embedder and the embedding retriever (BM25 + the rewrite's definitions, fused by
  `CodeRanker`, as `query_lexical.yml` does with the dictionary rewrite);
- free (the unconstrained anchor, `llm-free` in the harness): the same model and prompt, but the answer schema no
  longer limits names to the offered hints and there is no `SymbolFaithfulnessFilter`: whatever the model names
  goes to retrieval. `invented_names` counts what the filter would have dropped.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from haystack import Pipeline

from ..app.pipelines import pipeline_file
from ..app.search import CodeSearch
from ..rewriting.faithfulness import check_rewrite
from ..rewriting.rewriter import ConstrainedQueryRewriter

EMBEDDING_COMPONENTS: frozenset[str] = frozenset({"text_embedder", "embedding_retriever"})
#: The question's own embedder: it feeds the rewriter's semantic hints (symbol cards), which a lexical index built
#: with `--semantic-hints` keeps and a plain lexical one (model-free) does not.
QUESTION_EMBEDDER = "question_embedder"
REWRITE_SOCKETS: tuple[str, ...] = ("rewritten", "symbols", "packages")


def variant_pipeline_dict(
    data: dict[str, Any], *, lexical: bool, free: bool, semantic_hints: bool = False
) -> dict[str, Any]:
    """
    `query_llm.yml`'s dict (changed in place and returned) without the embedding parts (`lexical`; the question
    embedder stays when `semantic_hints`: the rewriter's hints then include the nearest symbol cards, as in
    `query_lexical_semantic.yml`) and, when `free`, without the faithfulness filter (the rewriter's outputs go
    straight to the composer) and with `constrain_to_hints` off.

    :raises ValueError: The pipeline lacks the rewriter or the composer.
    """
    components: dict[str, Any] = data.get("components", {})
    if "rewriter" not in components or "composer" not in components:
        raise ValueError("the LLM query pipeline must have a `rewriter` and a `composer`")
    removed = set(EMBEDDING_COMPONENTS) if lexical else set()
    if lexical and not semantic_hints:
        removed.add(QUESTION_EMBEDDER)
    connections = list(data.get("connections", []))
    if free:
        removed.add("faithfulness")
        components["rewriter"].setdefault("init_parameters", {})["constrain_to_hints"] = False
        connections += [
            {"sender": f"rewriter.{socket}", "receiver": f"composer.{socket}"} for socket in REWRITE_SOCKETS
        ]
    for name in removed:
        components.pop(name, None)
    data["connections"] = [
        c
        for c in connections
        if c["sender"].split(".", 1)[0] not in removed and c["receiver"].split(".", 1)[0] not in removed
    ]
    return data


class VariantSearch(CodeSearch):
    """
    A `CodeSearch` over an existing index whose query pipeline is a variant of `query_llm.yml` (see the module).

    :param index_dir: The index folder (built by another `CodeSearch`; this one only asks).
    :param lexical: The index is lexical: the variant has no embedding retriever.
    :param free: The unconstrained variant: no schema limit on names, no faithfulness filter.
    :param chat_generator: The serialised ChatGenerator.
    :param rewriter_params: Init parameters of the rewriter to override (`max_hints`, `timeout`, `cache_path`...).
    :param embedding_cache: The vector cache (`CodeSearch`).
    :param semantic_hints: As `CodeSearch` (None: as the index was built).
    """

    def __init__(
        self,
        index_dir: Path,
        *,
        lexical: bool,
        free: bool,
        chat_generator: dict[str, Any],
        rewriter_params: dict[str, Any] | None = None,
        embedding_cache: str | Path | None = None,
        semantic_hints: bool | None = None,
    ) -> None:
        super().__init__(
            index_dir,
            embedding_cache=embedding_cache,
            llm=not lexical,
            lexical=True if lexical else None,
            chat_generator=chat_generator,
            rewriter_params=rewriter_params,
            semantic_hints=semantic_hints,
        )
        self.free = free

    def load_pipeline(self, kind: str, *, writer: str | None = None) -> Pipeline:
        if kind not in ("query_llm", "query_lexical", "query_lexical_semantic"):
            return super().load_pipeline(kind, writer=writer)
        path = pipeline_file(self.backend, "query_llm", self.pipelines)
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        params = data["components"]["rewriter"].setdefault("init_parameters", {})
        params.update(self.rewriter_params or {})
        params["chat_generator"] = self.chat_generator
        lexical = kind != "query_llm"
        variant_pipeline_dict(data, lexical=lexical, free=self.free, semantic_hints=kind == "query_lexical_semantic")
        return self.pipeline_from_dict(data)  # bound like every pipeline of this folder (store, vector cache)

    def invented_names(self, rewrite: dict[str, Any], question: str) -> dict[str, int]:
        """
        What the faithfulness filter would have done with `rewrite` (an `AskResult.rewrite`): names proposed, and
        the symbols/packages and text identifiers the dictionary lacks (in the free variant they reached retrieval).
        """
        rewriter = self.query_pipeline.get_component("rewriter")
        if not isinstance(rewriter, ConstrainedQueryRewriter):
            raise TypeError(f"the query pipeline's rewriter is a {type(rewriter).__name__}")
        dictionary = rewriter.handle.dictionary
        symbols, packages = list(rewrite.get("symbols") or []), list(rewrite.get("packages") or [])
        checked = check_rewrite(
            dictionary, rewritten=rewrite.get("rewritten") or "", symbols=symbols, packages=packages, question=question
        )
        return {
            "proposed": len(symbols) + len(packages),
            "invented": sum(1 for d in checked.dropped if d.kind in ("symbol", "package")),
            "invented_text": sum(1 for d in checked.dropped if d.kind == "text"),
        }
