"""Hayhooks deployment `code_alias_status`: is the index loaded, what does it hold, how is the server configured.

REST only (`POST /code_alias_status/run` with `{}`); Hayhooks' own `GET /status` lists the deployments.
"""

from __future__ import annotations

from hayhooks.server.utils.base_pipeline_wrapper import BasePipelineWrapper

from haystack_integrations.components.code_alias.serving import CodeAliasService, StatusResponse, get_service


class PipelineWrapper(BasePipelineWrapper):
    """Reports the shared service's state; answers 200 even without an index (then `ready` is false)."""

    skip_mcp = True

    def setup(self) -> None:
        """Share the process's service."""
        self.service: CodeAliasService = get_service()
        self.pipeline = None

    def run_api(self) -> StatusResponse:
        """Health and status of the code-alias server: whether the index is loaded (and if not, how to build \
it), the index folder, dictionary version and size, document count, the rewrite modes available and whether a \
chat generator is configured.

        :returns: `ready`, `error`, `index_dir`, `backend`, `dictionary` (version, root, symbols, packages,
            files), `documents`, `modes`, `generator` (configured, kind, model, base_url, timeout),
            `rewrite_cache`, `limits`, `torch_threads` and `uptime_seconds`.
        """
        return self.service.status()
