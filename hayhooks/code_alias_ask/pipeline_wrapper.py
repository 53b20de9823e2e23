"""Hayhooks deployment `code_alias_ask`: an informal question -> ranked files and definitions, and the rewrite used.

REST: `POST /code_alias_ask/run` with `{"question": "...", "top_k": 10, "mode": "dictionary"}`. MCP: the tool
`code_alias_ask`. The index, dictionary and embedding model load once per process (see
`haystack_integrations.components.code_alias.serving`).
"""

from __future__ import annotations

from typing import Annotated, Literal

from hayhooks.server.utils.base_pipeline_wrapper import BasePipelineWrapper
from pydantic import Field

from haystack_integrations.components.code_alias.serving import (
    MAX_QUESTION_CHARS,
    TOP_K_RANGE,
    AskResponse,
    CodeAliasService,
    get_service,
)


class PipelineWrapper(BasePipelineWrapper):
    """Serves `CodeSearch.ask` (the YAML query pipelines `query.yml` / `query_llm.yml`) over REST and MCP."""

    def setup(self) -> None:
        """Load the index, the dictionary and the model once (shared with the other code_alias deployments)."""
        self.service: CodeAliasService = get_service()
        self.pipeline = None

    def run_api(
        self,
        question: Annotated[str, Field(min_length=1, max_length=MAX_QUESTION_CHARS)],
        top_k: Annotated[int, Field(ge=TOP_K_RANGE[0], le=TOP_K_RANGE[1], strict=True)] = 10,
        mode: Literal["dictionary", "llm"] = "dictionary",
    ) -> AskResponse:
        """Find where something lives in the indexed code base from an informal question (e.g. "where's the \
payments retry helper?"): returns the files that answer it, best first, each with its matching definitions \
(symbol, qualified name, kind, start and end line), and the query rewrite that was used, i.e. the question \
expanded into real symbol and package names of this code base (never invented ones). Use it before opening files \
when you do not know a name or a path; ask one thing per call.

        :param question: The question in your own words; identifiers, typos and nicknames are fine (at most 2,000
            characters).
        :param top_k: How many files (and definitions) to return, 1 to 100.
        :param mode: "dictionary" (default: deterministic, milliseconds) rewrites with the alias dictionary alone;
            "llm" lets the server's language model choose among the dictionary's candidates (only when the
            server has one configured; see `code_alias_status`).
        :returns: `files` (rank, file_path, score, hits with symbol, qualified_name, kind, start_line, end_line),
            `symbols` (the same definitions as one ranked list), `rewrite` (rewritten, symbols, packages, intent,
            dropped, meta), `mode` and `seconds`.
        """
        return self.service.ask(question, top_k, mode)
