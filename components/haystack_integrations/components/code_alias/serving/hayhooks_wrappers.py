"""The deployments of the code-alias server, as Hayhooks `PipelineWrapper` classes (the reference graph's three in
`graph_wrappers.py`).

`code-alias serve` (see `server.py`) builds its app from exactly these classes, by import, and nothing else.
The folders under the repository's `hayhooks/` directory subclass them for `hayhooks run` and add
`require_fixed_deployments()`, which refuses to set up under a Hayhooks server whose runtime deployment routes
(`/deploy_files`, `/deploy-yaml`, `/undeploy`, MCP `deploy_pipeline`) are on.

The signatures and docstrings of `run_api` are the REST request schemas and the MCP tool descriptions; the
parameters' types are the application's request fields (`app.requests`), so a bad value gets the same message from
the schema as from `AskRequest` itself, and `run_api` builds the request (the rules between fields) through the
service.
"""

from __future__ import annotations

import os
from typing import Any, cast

from fastapi import HTTPException
from hayhooks.server.utils.base_pipeline_wrapper import BasePipelineWrapper
from starlette.datastructures import Headers

from haystack_integrations.components.code_alias.app.refresh import SyncStatus, read_status
from haystack_integrations.components.code_alias.app.requests import (
    DEFAULT_CODE_LINES,
    DEFAULT_TOP_K,
    CodeLines,
    Lexical,
    Limit,
    ModeField,
    PackageFilter,
    Prefix,
    Question,
    RepoFilter,
    TopK,
    UseRewrite,
)
from haystack_integrations.components.code_alias.serving.chat import ChatAnswer, CodeChat
from haystack_integrations.components.code_alias.serving.graph_service import attach_usage
from haystack_integrations.components.code_alias.serving.graph_wrappers import GRAPH_DEPLOYMENTS
from haystack_integrations.components.code_alias.serving.live import WebhookRefused, handle_webhook, webhook_for
from haystack_integrations.components.code_alias.serving.service import (
    AskResponse,
    AutocompleteResponse,
    CodeAliasService,
    RewriteResponse,
    StatusResponse,
    get_service,
    hide_paths,
)

ALLOW_RUNTIME_DEPLOY_ENV = "CODE_ALIAS_ALLOW_RUNTIME_DEPLOY"
UNSAFE_HAYHOOKS = (
    "refusing to serve code-alias under a Hayhooks server with runtime deployment on: any client that reaches it "
    "can upload Python through /deploy_files or the MCP deploy_pipeline tool, and the server runs it. Serve with "
    "`code-alias serve` instead, or start Hayhooks with HAYHOOKS_DURABLE_MODE=true (a fixed pipeline set; "
    "hayhooks >= 2.1) or HAYHOOKS_RUNTIME_DEPLOY_ENABLED=false (hayhooks >= 2.2); set "
    f"{ALLOW_RUNTIME_DEPLOY_ENV}=1 only on a machine no one else can reach"
)


def require_fixed_deployments() -> None:
    """
    Refuse to run inside a Hayhooks server that accepts new deployments at run time.

    Hayhooks loads the `hayhooks/` wrappers in the server it was started as; when that server keeps its deploy
    and undeploy routes (hayhooks 2.1's default), the wrappers' `setup()` fails with this message, so the unsafe
    configuration serves nothing of ours and says what to run instead.

    :raises RuntimeError: Runtime deployment is on and `CODE_ALIAS_ALLOW_RUNTIME_DEPLOY` is not set.
    """
    from hayhooks.settings import settings

    if os.environ.get(ALLOW_RUNTIME_DEPLOY_ENV, "").strip().lower() in ("1", "true", "yes"):
        return
    if getattr(settings, "durable_mode", False) or getattr(settings, "runtime_deploy_enabled", True) is False:
        return
    raise RuntimeError(UNSAFE_HAYHOOKS)


class AskWrapper(BasePipelineWrapper):
    """Serves `CodeSearch.ask` (the YAML query pipelines `query.yml` / `query_llm.yml`) over REST and MCP."""

    def setup(self) -> None:
        """Load the index, the dictionary and the model once (shared with the other code_alias deployments)."""
        self.service: CodeAliasService = get_service()
        self.pipeline = None

    def run_api(
        self,
        question: Question,
        top_k: TopK = DEFAULT_TOP_K,
        mode: ModeField = "dictionary",
        repo: RepoFilter = None,
        package: PackageFilter = None,
        lexical: Lexical = False,
        use_rewrite: UseRewrite = True,
        code_lines: CodeLines = DEFAULT_CODE_LINES,
    ) -> AskResponse:
        """Find where something lives in the indexed code base from an informal question (e.g. "where's the \
payments retry helper?"): returns the definitions that answer it, best first (qualified name, kind, file, \
start and end line, and why each is there), the files they are in, and the query rewrite that was used, i.e. \
the question expanded into real symbol and package names of this code base (never invented ones). Use it before \
opening files when you do not know a name or a path; ask one thing per call.

        :param question: The question in your own words; identifiers, typos and nicknames are fine (at most 2,000
            characters).
        :param top_k: How many files (and definitions) to return, 1 to 100.
        :param mode: "dictionary" (default: deterministic, milliseconds) rewrites with the alias dictionary alone;
            "llm" lets the server's language model choose among the dictionary's candidates (only when the
            server has one configured; see `code_alias_status`).
        :param repo: Only this repository of the index, or any of these (its name, as `code_alias_status` lists
            the repositories); a name the index does not hold is an error that lists those it holds.
        :param package: Only this package, or any of these (its declared name); likewise checked.
        :param lexical: Keyword search (BM25) and the dictionary rewrite only, without the embedding model, whatever
            the index was built with (what `code-alias ask --lexical` answers); not with mode "llm".
        :param use_rewrite: false retrieves with the question exactly as written (no rewrite: the baseline that
            `code-alias ask --no-rewrite` answers).
        :param code_lines: How many lines of each definition's code to return (0 to 40; 6 by default), centred on
            the lines that match the question, each with its line number in the file.
        :returns: `symbols` (rank, qualified_name, symbol, kind, file_path, start_line, end_line, package, score,
            why: the evidence behind its place, code: {language, lines: [[line number, text], ...]}), `files` (rank,
            file_path, score, hits with symbol, qualified_name, kind, start_line, end_line), `rewrite` (rewritten,
            symbols, packages, intent, dropped, meta), `confidence` and `abstained` (true: no confident match, the
            symbols are only the closest places), `mode` and `seconds`; for a question about usage ("who calls X",
            "what breaks if I change X": intent `usage`) also `usage`, the reference graph's callers (or impact) of
            the symbol asked about, as `code_alias_callers` / `code_alias_impact` answer.
        """
        answer = self.service.ask(
            question,
            top_k,
            mode,
            repo=repo,
            package=package,
            lexical=lexical,
            use_rewrite=use_rewrite,
            code_lines=code_lines,
        )
        return cast(AskResponse, attach_usage(self.service, dict(answer)))  # `usage`: a usage question's graph part

    def use_chat_generator(self, generator: Any | None) -> None:
        """Answer chats with `generator` (a Haystack ChatGenerator) instead of the service's own, if any."""
        self._chat = CodeChat(self.service, generator=generator)

    def chat(self, messages: Any, body: dict[str, Any] | None = None) -> ChatAnswer:
        """The chat reply (text and metadata) to an OpenAI `messages` list (`chat.CodeChat.answer`)."""
        chat: CodeChat | None = getattr(self, "_chat", None)
        if chat is None or chat.service is not self.service:
            chat = self._chat = CodeChat(self.service)
        return chat.answer(messages, body)

    def run_chat_completion(self, model: str, messages: list[dict], body: dict) -> str:
        """
        OpenAI-compatible chat (`/v1/chat/completions` under Hayhooks): the last user message is the question.

        The reply is the answer in Markdown, written from the retrieved code with checked `path:start-end`
        citations when the server has a chat generator, and ends with the citation check's counts.
        """
        return self.chat(messages, body).text

    async def run_chat_completion_async(self, model: str, messages: list[dict], body: dict) -> str:
        """`run_chat_completion` off the event loop (retrieval and generation block)."""
        from fastapi.concurrency import run_in_threadpool

        return await run_in_threadpool(self.run_chat_completion, model, messages, body)


class RewriteWrapper(BasePipelineWrapper):
    """
    Serves the rewrite of the query pipeline (`ConstrainedQueryRewriter`, and in LLM mode `SymbolFaithfulnessFilter`)
    as `ask` runs it: the same hints reach it, so it names the same symbols.
    """

    def setup(self) -> None:
        """Load the dictionary once (shared with the other code_alias deployments)."""
        self.service: CodeAliasService = get_service()
        self.pipeline = None

    def run_api(
        self,
        question: Question,
        mode: ModeField = "dictionary",
        repo: RepoFilter = None,
        package: PackageFilter = None,
    ) -> RewriteResponse:
        """Translate an informal question about the indexed code base into that code base's own vocabulary: \
returns the rewritten query, the real symbol and package names it is about (only names that exist in the indexed \
code; nothing is invented; the same names code_alias_ask uses for this question), the intent (locate_symbol, \
explain_behavior, how_to, debug or usage) and the ranked candidate hints with their files. Use it to learn what \
something is called here, or to feed grep or your own search with the right identifiers.

        :param question: The question in your own words (at most 2,000 characters).
        :param mode: "dictionary" (default: deterministic, milliseconds) or "llm" (the server's language model
            chooses among the dictionary's candidates; only when the server has one configured).
        :param repo: Only names of this repository of the index, or of any of these (as `code_alias_ask` takes it).
        :param package: Only names of this package, or of any of these.
        :returns: `rewritten`, `symbols`, `packages`, `intent`, `hints` (kind, name, score, qualified_names, files,
            package, reasons), `meta` (mode, dictionary_version, latency_ms, scope when narrowed; in LLM mode also
            fallback, cache_hit and the names the faithfulness filter dropped) and `generation` (the index build).
        """
        return self.service.rewrite(question, mode, repo=repo, package=package)


class AutocompleteWrapper(BasePipelineWrapper):
    """Serves `HintIndex.complete` over the shared, auto-reloading dictionary."""

    skip_mcp = True

    def setup(self) -> None:
        """Share the process's service (the dictionary is loaded once and reloaded when re-indexed)."""
        self.service: CodeAliasService = get_service()
        self.pipeline = None

    def run_api(
        self,
        prefix: Prefix,
        limit: Limit = 10,
    ) -> AutocompleteResponse:
        """Complete a symbol or package name from the alias dictionary: names that start with the prefix \
(case-insensitive), then fuzzy matches for typos.

        :param prefix: What the user has typed so far (at most 200 characters).
        :param limit: How many completions to return, 1 to 50.
        :returns: `prefix`, `dictionary_version` and `completions` (kind, name, score, qualified_names, files,
            package, reasons), best first.
        """
        return self.service.autocomplete(prefix, limit)


class StatusWithSync(StatusResponse):
    """`code_alias_status`'s answer: the service's status and the last refresh of its index folder."""

    sync: SyncStatus


class StatusWrapper(BasePipelineWrapper):
    """Reports the shared service's state; answers 200 even without an index (then `ready` is false)."""

    skip_mcp = True

    def setup(self) -> None:
        """Share the process's service."""
        self.service: CodeAliasService = get_service()
        self.pipeline = None

    def run_api(self) -> StatusWithSync:
        """Health and status of the code-alias server: whether the index is loaded (and if not, how to build \
it), the index folder, dictionary version and size, document count, the rewrite modes available, whether a \
chat generator is configured, and the last refresh (sync) of the index.

        :returns: `ready`, `error`, `index_dir`, `backend`, `dictionary` (version, root, symbols, packages,
            files), `documents`, `modes`, `generator` (configured, kind, model, base_url, timeout),
            `rewrite_cache`, `limits`, `torch_threads`, `uptime_seconds` and `sync` (state, last_sync_id,
            last_trigger, last_started_at, last_finished_at, last_seconds, last_ok_at, last_error, root,
            dictionary_version, documents, files_changed, files_removed, paths, last_refused and refusals (a push
            refused after authentication, with why), last_warning (a refresh's failed follow-up) and
            unauthenticated (requests refused before authentication: count, last status and reason)).
        """
        settings = self.service.settings
        sync = read_status(settings.index_dir)
        webhook = webhook_for(settings.index_dir, backend=settings.backend, lexical=settings.lexical)
        sync["unauthenticated"] = dict(webhook.unauthenticated)  # this server's, never written to disk
        return {**self.service.status(), "sync": sync}


class SyncWrapper(BasePipelineWrapper):
    """
    Refresh on push: re-index the served repository from its working tree (`serving/live.py` queues it,
    `app/refresh.py` runs it: `CodeSearch.index`).

    Under `code-alias serve` the route reads the raw body and accepts GitHub's `X-Hub-Signature-256`; under
    `hayhooks run` only the parsed JSON reaches `run_api`, so only GitLab's `X-Gitlab-Token` (the secret itself)
    can authenticate there.
    """

    skip_mcp = True

    def setup(self) -> None:
        """Share the process's service (its index folder and backend)."""
        self.service: CodeAliasService = get_service()
        self.pipeline = None

    def webhook(self, headers: dict[str, str], body: bytes | None, client: str = "?", payload: Any = None) -> Any:
        """Authenticate, parse and queue a request (raises `WebhookRefused`)."""
        settings = self.service.settings
        return handle_webhook(
            settings.index_dir,
            headers,
            body,
            payload,
            backend=settings.backend,
            lexical=settings.lexical,
            client=client,
        )

    def run_api(
        self,
        repository: dict[str, Any] | str | None = None,
        paths: list[str] | None = None,
        commits: list[dict[str, Any]] | None = None,
        project: dict[str, Any] | None = None,
        ref: str | None = None,
        headers: Headers | None = None,
    ) -> dict[str, Any]:
        """Refresh the index after a push: a GitHub/GitLab push event, or `{"repository": NAME, "paths": [...]}` \
for a repository this server already indexes. Signed with CODE_ALIAS_WEBHOOK_SECRET; answers at once, the \
refresh runs in the background and `code_alias_status` reports it.

        :param repository: The repository (GitHub's object or a name such as owner/name).
        :param paths: The changed paths (a plain request).
        :param commits: The push event's commits (their added, modified and removed paths).
        :param project: GitLab's project object.
        :param ref: The pushed ref.
        :returns: `accepted`, `sync_id`, `running_ahead`, `paths`, `event` and `repository`.
        """
        payload: dict[str, Any] = {"repository": repository, "ref": ref}
        if commits is not None:
            payload["commits"] = commits
        elif paths is not None:
            payload["paths"] = paths
        if project is not None:
            payload["project"] = project
        lowered = {key.lower(): value for key, value in (headers or {}).items()}
        try:
            return self.webhook(lowered, None, payload=payload)
        except WebhookRefused as refused:
            raise HTTPException(status_code=refused.status_code, detail=hide_paths(refused.detail)) from None


#: The deployments, by the name of their route (`/NAME/run`) and MCP tool; nothing else is ever served.
DEPLOYMENTS: dict[str, type[BasePipelineWrapper]] = {
    "code_alias_ask": AskWrapper,
    "code_alias_rewrite": RewriteWrapper,
    "code_alias_autocomplete": AutocompleteWrapper,
    "code_alias_status": StatusWrapper,
    "code_alias_sync": SyncWrapper,
    **GRAPH_DEPLOYMENTS,  # callers, callees, impact (`graph_wrappers.py`)
}
