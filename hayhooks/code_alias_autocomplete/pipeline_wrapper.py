"""Hayhooks deployment `code_alias_autocomplete`: a prefix -> symbol and package names from the alias dictionary.

REST only (`POST /code_alias_autocomplete/run` with `{"prefix": "withStr", "limit": 10}`): it is for search boxes,
so it is left out of the MCP tools. Dictionary alone: prefix matches, then fuzzy ones; no model, no LLM.
"""

from __future__ import annotations

from typing import Annotated

from hayhooks.server.utils.base_pipeline_wrapper import BasePipelineWrapper
from pydantic import Field

from haystack_integrations.components.code_alias.serving import (
    LIMIT_RANGE,
    MAX_PREFIX_CHARS,
    AutocompleteResponse,
    CodeAliasService,
    get_service,
)


class PipelineWrapper(BasePipelineWrapper):
    """Serves `HintIndex.complete` over the shared, auto-reloading dictionary."""

    skip_mcp = True

    def setup(self) -> None:
        """Share the process's service (the dictionary is loaded once and reloaded when re-indexed)."""
        self.service: CodeAliasService = get_service()
        self.pipeline = None

    def run_api(
        self,
        prefix: Annotated[str, Field(min_length=1, max_length=MAX_PREFIX_CHARS)],
        limit: Annotated[int, Field(ge=LIMIT_RANGE[0], le=LIMIT_RANGE[1], strict=True)] = 10,
    ) -> AutocompleteResponse:
        """Complete a symbol or package name from the alias dictionary: names that start with the prefix \
(case-insensitive), then fuzzy matches for typos.

        :param prefix: What the user has typed so far (at most 200 characters).
        :param limit: How many completions to return, 1 to 50.
        :returns: `prefix`, `dictionary_version` and `completions` (kind, name, score, qualified_names, files,
            package, reasons), best first.
        """
        return self.service.autocomplete(prefix, limit)
