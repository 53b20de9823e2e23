"""Hayhooks deployment `code_alias_callers` for `hayhooks run --pipelines-dir hayhooks`.

The class lives in `haystack_integrations.components.code_alias.serving.graph_wrappers` (`code-alias serve` imports it
from there). This subclass adds the guard: it refuses to set up under a Hayhooks server whose runtime deployment
routes are on (hayhooks 2.1's default), so start Hayhooks with `HAYHOOKS_DURABLE_MODE=true`, or use `code-alias serve`
(see docs/serving.md).
"""

from __future__ import annotations

from haystack_integrations.components.code_alias.serving.graph_wrappers import CallersWrapper
from haystack_integrations.components.code_alias.serving.hayhooks_wrappers import require_fixed_deployments


class PipelineWrapper(CallersWrapper):
    """`CallersWrapper` behind the runtime-deployment guard."""

    def setup(self) -> None:
        """Refuse a Hayhooks server that accepts uploaded code, then share the process's service."""
        require_fixed_deployments()
        super().setup()
