"""The reference graph's deployments: `code_alias_callers`, `code_alias_callees`, `code_alias_impact` (REST and MCP).

Hayhooks `PipelineWrapper` classes like the others of `hayhooks_wrappers.py` (which lists them in `DEPLOYMENTS`, so
`code-alias serve` and its warm server route them and offer them as MCP tools). The signatures and docstrings of
`run_api` are the request schemas and the tool descriptions.
"""

from __future__ import annotations

from typing import Any

from hayhooks.server.utils.base_pipeline_wrapper import BasePipelineWrapper

# The parameters are `GraphRequest`'s own field types: the REST and MCP schemas, and every message, are its.
from haystack_integrations.components.code_alias.app.requests import (
    DEFAULT_DEPTH,
    Depth,
    FilePath,
    IncludeAmbiguous,
    SymbolName,
)
from haystack_integrations.components.code_alias.app.requests import GraphLimit as Limit
from haystack_integrations.components.code_alias.app.requests import OneRepo as Repo
from haystack_integrations.components.code_alias.serving.graph_service import graph_answer
from haystack_integrations.components.code_alias.serving.service import CodeAliasService, get_service


class _GraphWrapper(BasePipelineWrapper):
    def setup(self) -> None:
        """Share the process's service (the dictionary, and the graph resolved from it once per version)."""
        self.service: CodeAliasService = get_service()
        self.pipeline = None


class CallersWrapper(_GraphWrapper):
    """Serves `core.graph_answers.callers_answer` over the index's reference graph."""

    def run_api(
        self, name: SymbolName, file_path: FilePath = None, repo: Repo = None, limit: Limit = 50
    ) -> dict[str, Any]:
        """Who calls a function, method or class of the indexed code base (calls and instantiations): every \
call site with its file and line and the definition it is in (a test, or module-level code), resolved through the \
caller's imports and scope. Sites that may call it but whose target cannot be told from the source (a method called \
on a value of unknown type, a name several definitions share) are listed apart as ambiguous, never as callers. Use \
it before changing or removing a definition, or to find example uses.

        :param name: The definition's name (`withStripeBackoff`), or its qualified name (`Session.request`,
            `requests.sessions.Session.request`) to pick one of several of that name.
        :param file_path: Only the definition in this file (a path relative to the repository root).
        :param repo: Only definitions of this repository (in an index of several).
        :param limit: At most this many callers (and as many ambiguous sites) per definition, 1 to 500.
        :returns: `query`, `dictionary_version`, `definitions` (how many have the name) and `targets`: for each
            definition (qualified_name, kind, file_path, start_line, end_line), its `callers` and `ambiguous` sites
            (file_path, line, kind, status, caller with its qualified_name, kind and lines, test; ambiguous ones
            with candidates and the reason) and their totals.
        """
        return graph_answer(self.service, "callers", name, limit=limit, file_path=file_path, repo=repo)


class CalleesWrapper(_GraphWrapper):
    """Serves `core.graph_answers.callees_answer` over the index's reference graph."""

    def run_api(
        self, name: SymbolName, file_path: FilePath = None, repo: Repo = None, limit: Limit = 50
    ) -> dict[str, Any]:
        """What a function, method or class of the indexed code base calls: each call in its body with the \
line, resolved to the definition it reaches in this code base (file and line), or listed as ambiguous (the \
candidates that share the name) or as outside the index (library and builtin calls). Use it to follow what a \
definition depends on without opening every file.

        :param name: The definition's name, or its qualified name to pick one of several of that name.
        :param file_path: Only the definition in this file (a path relative to the repository root).
        :param repo: Only definitions of this repository (in an index of several).
        :param limit: At most this many entries per list, 1 to 500.
        :returns: `query`, `dictionary_version`, `definitions` and `targets`: for each definition, `callees` (line,
            name, callee with qualified_name, file_path, start_line), `ambiguous` (line, name, candidates,
            candidate_names, reason), `external` (line, name, qualifier) and their totals.
        """
        return graph_answer(self.service, "callees", name, limit=limit, file_path=file_path, repo=repo)


class ImpactWrapper(_GraphWrapper):
    """Serves `core.graph_answers.impact_answer` over the index's reference graph."""

    def run_api(
        self,
        name: SymbolName,
        depth: Depth = DEFAULT_DEPTH,
        file_path: FilePath = None,
        repo: Repo = None,
        include_ambiguous: IncludeAmbiguous = False,
        limit: Limit = 100,
    ) -> dict[str, Any]:
        """What a change of a function, method or class of the indexed code base can break: every definition \
that reaches it through calls, instantiations, subclasses and type uses, transitively up to `depth` hops, nearest \
first, each with the file and line of the use; the tests among them are marked (and listed in `tests`: the tests \
that exercise it). Use it to size a change and to pick the tests to run.

        :param name: The definition's name, or its qualified name to pick one of several of that name.
        :param depth: How many hops of callers to follow, 1 to 10.
        :param file_path: Only the definition in this file (a path relative to the repository root).
        :param repo: Only definitions of this repository (in an index of several).
        :param include_ambiguous: Also follow uses whose target is ambiguous (they are listed, marked, either way).
        :param limit: At most this many entries, 1 to 500.
        :returns: `query`, `dictionary_version`, `definitions`, `depth` and `targets`: for each definition,
            `impact` (depth, file_path, line, kind, status, via, caller, test), `tests` and totals (reached, tests,
            ambiguous).
        """
        return graph_answer(
            self.service,
            "impact",
            name,
            depth=depth,
            limit=limit,
            file_path=file_path,
            repo=repo,
            include_ambiguous=include_ambiguous,
        )


#: The graph's deployments, by route and MCP tool name (`hayhooks_wrappers.DEPLOYMENTS` includes them).
GRAPH_DEPLOYMENTS: dict[str, type[BasePipelineWrapper]] = {
    "code_alias_callers": CallersWrapper,
    "code_alias_callees": CalleesWrapper,
    "code_alias_impact": ImpactWrapper,
}
