"""Hayhooks deployment `code_alias_rewrite`: an informal question -> real symbols, packages and intent, no retrieval.

REST: `POST /code_alias_rewrite/run` with `{"question": "...", "mode": "dictionary"}`. MCP: the tool
`code_alias_rewrite`. It runs the same rewriter instance as `code_alias_ask`, so both share the rewrite cache.
"""

from __future__ import annotations

from typing import Annotated, Literal

from hayhooks.server.utils.base_pipeline_wrapper import BasePipelineWrapper
from pydantic import Field

from haystack_integrations.components.code_alias.serving import (
    MAX_QUESTION_CHARS,
    CodeAliasService,
    RewriteResponse,
    get_service,
)


class PipelineWrapper(BasePipelineWrapper):
    """Serves the query pipeline's `ConstrainedQueryRewriter` (and, in LLM mode, `SymbolFaithfulnessFilter`)."""

    def setup(self) -> None:
        """Load the dictionary once (shared with the other code_alias deployments)."""
        self.service: CodeAliasService = get_service()
        self.pipeline = None

    def run_api(
        self,
        question: Annotated[str, Field(min_length=1, max_length=MAX_QUESTION_CHARS)],
        mode: Literal["dictionary", "llm"] = "dictionary",
    ) -> RewriteResponse:
        """Translate an informal question about the indexed code base into that code base's own vocabulary, \
without searching: returns the rewritten query, the real symbol and package names it is about (only names that \
exist in the indexed code; nothing is invented), the intent (locate_symbol, explain_behavior, how_to or debug) and \
the ranked candidate hints with their files. Use it to learn what something is called here, or to feed grep or \
your own search with the right identifiers.

        :param question: The question in your own words (at most 2,000 characters).
        :param mode: "dictionary" (default: deterministic, milliseconds) or "llm" (the server's language model
            chooses among the dictionary's candidates; only when the server has one configured).
        :returns: `rewritten`, `symbols`, `packages`, `intent`, `hints` (kind, name, score, qualified_names, files,
            package, reasons) and `meta` (mode, dictionary_version, latency_ms; in LLM mode also fallback, cache_hit
            and the names the faithfulness filter dropped).
        """
        return self.service.rewrite(question, mode)
