# long: the service behind every endpoint: its checks, answers, rewrites, completions, status
"""The code-alias service behind the Hayhooks wrappers: one per process, shared by every endpoint.

Hayhooks deploys each folder next to this file (`code_alias_ask/`, `code_alias_rewrite/`, ...) as a
`PipelineWrapper`; this module is not a deployment (Hayhooks only deploys folders and `*.yml` files) but the
code they share, so the index, the dictionary and the embedding model load once per process, whichever wrapper's
`setup()` runs first, and the rewrite cache is the same for `/code_alias_ask` and `/code_alias_rewrite`.

It is a client of `CodeSearch` and of the pipelines' own components (rewriter, faithfulness filter) and of the
shared `DictionaryHandle`; it implements no retrieval or rewriting of its own. What it adds is what a server
needs: request validation with clear 4xx answers, JSON-safe payloads, configuration from the environment, a
bound on concurrent pipeline runs, and a status report.

Configuration (environment variables, read once when the service is created):

- `CODE_ALIAS_INDEX_DIR`: the index folder (default `.code-alias` in the server's working directory).
- `CODE_ALIAS_BACKEND`: `embedded` (default) or `elasticsearch`.
- `CODE_ALIAS_LLM_BASE_URL`: an OpenAI-compatible server (Ollama, vLLM, llama.cpp server) for `mode="llm"`;
  `CODE_ALIAS_LLM_MODEL` names the model there, the key comes from `CODE_ALIAS_OPENAI_API_KEY` or
  `OPENAI_API_KEY` (any value for local servers).
- `CODE_ALIAS_LLM_GGUF`: a local GGUF model for `mode="llm"` instead (needs the `[llama-cpp]` extra).
- `CODE_ALIAS_LLM_TIMEOUT`: seconds an LLM rewrite may take before the dictionary-only fallback (default 20;
  120 with `CODE_ALIAS_LLM_GGUF`: a time-out cannot stop an in-process generation, it only discards its answer).
- `CODE_ALIAS_TORCH_THREADS`: torch intra-op threads, and numpy's BLAS threads (default 1: a one-sentence query
  gains nothing from more, and several requests at once each get a core).
- `CODE_ALIAS_MAX_CONCURRENT_ASKS`: pipeline runs at once; more requests wait their turn (default 4).
- `CODE_ALIAS_LEXICAL`: `1` serves the BM25-only query pipeline (`query_lexical.yml`): no embedding model in memory.
- `CODE_ALIAS_LINK_TEMPLATE`: where the page's and the chat's links to code go by default: `vscode` (the default),
  `jetbrains`, `file`, or a template such as `https://git.example/acme/pay/blob/main/{path}#L{line}`.

Error messages never carry a traceback or an absolute file path (`bad_request` shortens paths to their last
part), so an answer tells a client what to fix without showing the server's file system.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar, cast

from fastapi import HTTPException
from haystack import Document
from haystack.document_stores.errors import DocumentStoreError
from threadpoolctl import threadpool_limits
from typing_extensions import NotRequired, TypedDict

from haystack_integrations.components.code_alias.answer_view import (
    LINK_PRESETS,
    attach_code,
    check_link_template,
    match_terms,
    order_completions,
)
from haystack_integrations.components.code_alias.app.pipelines import Backend, IndexMissingError
from haystack_integrations.components.code_alias.app.requests import (
    LIMIT_RANGE,
    MAX_PREFIX_CHARS,
    MAX_QUESTION_CHARS,
    TOP_K_RANGE,
    AskRequest,
    CompleteRequest,
    Mode,
    Request,
    RequestError,
    RewriteRequest,
    lexical_with_llm,
)
from haystack_integrations.components.code_alias.app.search import CodeSearch
from haystack_integrations.components.code_alias.core.model import DictionaryError
from haystack_integrations.components.code_alias.errors import hide_paths
from haystack_integrations.components.code_alias.indexing.dictionary_handle import DictionaryHandle
from haystack_integrations.components.code_alias.indexing.index_files import index_exists
from haystack_integrations.components.code_alias.indexing.repositories import read_repositories
from haystack_integrations.components.code_alias.paths import DICTIONARY_FILE, resolve_index_dir
from haystack_integrations.components.code_alias.ranking.answer import Hit, RankedSymbol
from haystack_integrations.components.code_alias.rewriting.generators import (
    default_rewrite_timeout,
    usable_chat_generator_spec,
)

from ..indexing.vector_fill import vector_status

logger = logging.getLogger(__name__)

#: The searches one service holds: its index's own (a rewrite mode) and, once asked for, the BM25-only one.
SearchKey = Literal["dictionary", "llm", "lexical"]
_Request = TypeVar("_Request", bound=Request)
BUILD_HINT = (
    "build it with `code-alias index PATH --index-dir DIR`, DIR being the server's CODE_ALIAS_INDEX_DIR "
    "(the server picks it up on the next request)"
)


# ---- response shapes (TypedDicts: Hayhooks turns them into the OpenAPI schema, and MCP gets plain JSON) ----------
class RankedFile(TypedDict):
    """A file, ranked by its best definition, with its best definitions (at most five)."""

    rank: int
    file_path: str
    repo: NotRequired[str]
    score: float
    hits: list[Hit]


class CodeView(TypedDict):
    """A few lines of a definition's code (`answer_view.Snippet.to_dict`), each `[line number, text]`."""

    language: str
    lines: list[list[Any]]
    window: list[int]
    complete: bool


class AnsweredSymbol(RankedSymbol):
    """A ranked symbol as an answer carries it: with its best-matching code lines when asked for."""

    code: NotRequired[CodeView | None]


class RewriteUsed(TypedDict):
    """The rewrite that retrieval used."""

    rewritten: str
    symbols: list[str]
    packages: list[str]
    intent: str | None
    dropped: list[dict[str, Any]]
    meta: dict[str, Any]


class AskResponse(TypedDict):
    """Answer of `code_alias_ask`."""

    question: str
    mode: str
    symbols: list[AnsweredSymbol]
    rewrite: RewriteUsed
    files: list[RankedFile]
    seconds: float
    confidence: float | None  # how sure the answer is (0-1; None where the ranking gives no calibrated figure)
    abstained: bool  # no confident match: the symbols are the closest places, not an answer
    retrieval: NotRequired[str]  # "hybrid" or "lexical" (a hybrid index without vectors yet answers lexically)
    usage: NotRequired[dict[str, Any]]  # a usage question's callers or impact, from the reference graph
    vectors: NotRequired[dict[str, Any]]  # how far the chunk vectors are, while they are still being computed
    generation: NotRequired[dict[str, Any] | None]  # the one build of the index the whole answer comes from


class RewriteResponse(TypedDict):
    """Answer of `code_alias_rewrite`."""

    rewritten: str
    symbols: list[str]
    packages: list[str]
    intent: str
    hints: list[dict[str, Any]]
    meta: dict[str, Any]
    generation: NotRequired[dict[str, Any] | None]  # the one build of the index the rewrite comes from


class Completion(TypedDict):
    """One autocomplete candidate."""

    kind: str
    name: str
    score: float
    qualified_names: list[str]
    files: list[str]
    package: str | None
    reasons: list[str]
    symbol_kind: NotRequired[str | None]  # function, class, method, constant... of its first definition
    line: NotRequired[int | None]  # where that definition starts


class AutocompleteResponse(TypedDict):
    """Answer of `code_alias_autocomplete`."""

    prefix: str
    dictionary_version: str
    completions: list[Completion]


class GeneratorStatus(TypedDict):
    """The chat generator that `mode="llm"` uses, if any (never its key)."""

    configured: bool
    kind: str | None
    model: str | None
    base_url: str | None
    timeout: float | None


class DictionaryStatus(TypedDict):
    """The loaded alias dictionary."""

    version: str
    root: str
    symbols: int
    packages: int
    files: int


class StatusResponse(TypedDict):
    """Answer of `code_alias_status`."""

    ready: bool
    error: str | None
    index_dir: str
    backend: str
    dictionary: DictionaryStatus | None
    documents: int | None
    vectors: dict[str, Any] | None
    repositories: dict[str, Any]
    modes: list[str]
    generator: GeneratorStatus
    rewrite_cache: dict[str, Any] | None
    limits: dict[str, Any]
    torch_threads: int | None
    uptime_seconds: float


# ---- configuration -------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ServiceSettings:
    """What the environment configures; see the module docstring for the variables."""

    index_dir: Path
    backend: Backend = "embedded"
    llm_base_url: str | None = None
    llm_gguf: str | None = None
    llm_model: str | None = None
    llm_timeout: float = 20.0
    torch_threads: int | None = 1
    max_concurrent_asks: int = 4
    lexical: bool | None = None  # None: as the index was built (`index_mode.py`)
    #: Where the page's and the chat's links to code go by default (`answer_view.LINK_PRESETS`, or a template).
    link_template: str = LINK_PRESETS["vscode"]

    @property
    def generator_configured(self) -> bool:
        return bool(self.llm_base_url or self.llm_gguf)

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> ServiceSettings:
        """
        Read the settings from the environment.

        :param environ: The variables; None = `os.environ`.
        :raises ValueError: A variable has a value that cannot work (named in the message).
        """
        env = dict(os.environ if environ is None else environ)
        backend = env.get("CODE_ALIAS_BACKEND", "embedded").strip() or "embedded"
        if backend not in ("embedded", "elasticsearch"):
            raise ValueError(f"CODE_ALIAS_BACKEND must be 'embedded' or 'elasticsearch', got {backend!r}")
        base_url = env.get("CODE_ALIAS_LLM_BASE_URL", "").strip() or None
        gguf = env.get("CODE_ALIAS_LLM_GGUF", "").strip() or None
        if base_url and gguf:
            raise ValueError("set CODE_ALIAS_LLM_BASE_URL or CODE_ALIAS_LLM_GGUF, not both")
        threads_text = env.get("CODE_ALIAS_TORCH_THREADS", "1").strip()
        threads = None if threads_text in ("", "0") else _positive_int(threads_text, "CODE_ALIAS_TORCH_THREADS")
        lexical = _flag(env.get("CODE_ALIAS_LEXICAL", ""), "CODE_ALIAS_LEXICAL") or None
        try:
            lexical_with_llm(lexical, bool(base_url or gguf))
        except RequestError as error:  # the same rule as a request's, said with the variables to change
            raise ValueError(f"CODE_ALIAS_LEXICAL and CODE_ALIAS_LLM_BASE_URL/_GGUF: {error}") from None
        return cls(
            index_dir=resolve_index_dir(env.get("CODE_ALIAS_INDEX_DIR") or None).resolve(),
            backend=backend,  # type: ignore[arg-type]
            llm_base_url=base_url,
            llm_gguf=gguf,
            llm_model=env.get("CODE_ALIAS_LLM_MODEL", "").strip() or None,
            llm_timeout=_positive_float(
                env.get("CODE_ALIAS_LLM_TIMEOUT", "").strip() or str(default_rewrite_timeout(gguf=gguf) or 20),
                "CODE_ALIAS_LLM_TIMEOUT",
            ),
            torch_threads=threads,
            max_concurrent_asks=_positive_int(
                env.get("CODE_ALIAS_MAX_CONCURRENT_ASKS", "4"), "CODE_ALIAS_MAX_CONCURRENT_ASKS"
            ),
            lexical=lexical,
            link_template=_link_template(env.get("CODE_ALIAS_LINK_TEMPLATE", "")),
        )

    def chat_generator(self) -> dict[str, Any] | None:
        """The serialised ChatGenerator for `mode="llm"`, or None."""
        if not self.generator_configured:
            return None

        try:
            return usable_chat_generator_spec(
                gguf=self.llm_gguf, openai_base_url=self.llm_base_url, model=self.llm_model, timeout=self.llm_timeout
            )
        except FileNotFoundError as error:  # name the setting, not only the file
            raise ValueError(f"CODE_ALIAS_LLM_GGUF={self.llm_gguf}: no such file") from error

    def generator_status(self) -> GeneratorStatus:
        if self.llm_gguf:
            return {
                "configured": True,
                "kind": "llama.cpp",
                "model": self.llm_gguf,
                "base_url": None,
                "timeout": self.llm_timeout,
            }
        if self.llm_base_url:
            return {
                "configured": True,
                "kind": "openai-compatible",
                "model": self.llm_model or "qwen2.5-coder:1.5b",
                "base_url": self.llm_base_url,
                "timeout": self.llm_timeout,
            }
        return {"configured": False, "kind": None, "model": None, "base_url": None, "timeout": None}


def _link_template(text: str) -> str:
    try:
        return check_link_template(text) if text.strip() else LINK_PRESETS["vscode"]
    except ValueError as error:
        raise ValueError(f"CODE_ALIAS_LINK_TEMPLATE: {error}") from None


def _positive_int(text: str, name: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"{name} must be a positive integer, got {text!r}") from None
    if value <= 0:
        raise ValueError(f"{name} must be a positive integer, got {text!r}")
    return value


def _flag(text: str, name: str) -> bool:
    value = text.strip().lower()
    if value in ("", "0", "false", "no", "off"):
        return False
    if value in ("1", "true", "yes", "on"):
        return True
    raise ValueError(f"{name} must be 1/true/yes or 0/false/no, got {text!r}")


def _positive_float(text: str, name: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{name} must be a positive number, got {text!r}") from None
    if value <= 0:
        raise ValueError(f"{name} must be a positive number, got {text!r}")
    return value


# ---- validation (the REST schema checks the same; MCP calls arrive without it) -------------------------------------
def bad_request(message: str, status_code: int = 422) -> HTTPException:
    """An error answer with a one-line message and no absolute paths (Hayhooks passes HTTPException through)."""
    return HTTPException(status_code=status_code, detail=hide_paths(" ".join(message.split())))


def json_object(raw: bytes, what: str, content_type: str | None) -> dict[str, Any]:
    """
    A request body that must be a JSON object (`what` says which, for the message): 415 unless it is declared
    `application/json` (which a cross-site form cannot send without a CORS preflight), 400 when it is not one.
    """
    media = (content_type or "").split(";")[0].strip().lower()
    if media != "application/json" and not (media.startswith("application/") and media.endswith("+json")):
        raise bad_request(f"send the body as application/json ({what})", 415)
    try:
        body = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):  # nesting past Python's stack is not a request either
        raise bad_request(f"the body must be a JSON object ({what})", 400) from None
    if not isinstance(body, dict):
        raise bad_request(f"the body must be a JSON object ({what}), got {type(body).__name__}", 400)
    return body


def json_fields(raw: bytes, content_type: str | None, *, allowed: frozenset[str], required: str) -> dict[str, Any]:
    """`json_object` with only the `allowed` fields (400 naming the others) and the `required` one among them."""
    body = json_object(raw, f"with a {required}", content_type)
    unknown = sorted(set(body) - allowed)
    if unknown:
        raise bad_request(f"unknown field(s) {', '.join(repr(name[:40]) for name in unknown[:5])}")
    if required not in body:
        raise bad_request(f"{required} is required")
    return body


def parse_request(model: type[_Request], values: dict[str, Any]) -> _Request:
    """
    The request of `values` (`app.requests`: every rule and its message are there), or the 4xx that says why not:
    422 for a field's value, 400 for fields that cannot go together.
    """
    try:
        return model.parse(values)
    except RequestError as error:
        raise bad_request(error.message, error.status) from None


def plain(value: Any) -> Any:
    """A JSON-safe copy (numpy numbers, tuples and paths become JSON types), so REST and MCP answers agree."""
    return json.loads(json.dumps(value, default=_json_default))


def _json_default(value: Any) -> Any:
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    return str(value)


# ---- the service ---------------------------------------------------------------------------------------------------
@dataclass
class CodeAliasService:
    """
    The index, dictionary and pipelines of one server process, and the four operations the endpoints expose.

    :param settings: The configuration (see `ServiceSettings.from_env`).
    """

    settings: ServiceSettings
    started: float = field(default_factory=time.monotonic)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._searches: dict[SearchKey, CodeSearch] = {}
        self._slots = threading.BoundedSemaphore(self.settings.max_concurrent_asks)
        self._torch_threads: int | None = None

    # ---- lifecycle ---------------------------------------------------------------------------------------------
    def warm_up(self) -> None:
        """
        Load the dictionary, the documents and the model(s) now. A missing index is not an error here: the endpoints
        answer 404 with how to build it until it exists, and then load it on the next request.
        """
        try:
            self._search()
        except HTTPException as error:
            logger.warning("code-alias: %s", error.detail)

    @property
    def modes(self) -> list[Mode]:
        return ["dictionary", "llm"] if self.settings.generator_configured else ["dictionary"]

    def _set_torch_threads(self) -> None:
        threads = self.settings.torch_threads
        if threads is None:
            return
        # The same bound for numpy's BLAS: OpenBLAS threads spin for each other when several requests multiply at
        # once (a 0.05 ms query-times-matrix product took 3-6 ms at 16 concurrent callers on 2 cores).

        threadpool_limits(limits=threads, user_api="blas")
        if "torch" not in sys.modules:  # no model loaded (a lexical index): torch stays out
            return
        import torch

        torch.set_num_threads(threads)
        self._torch_threads = torch.get_num_threads()

    def _search(self, *, lexical: bool = False) -> CodeSearch:
        """
        The warmed `CodeSearch` that serves every mode, loaded on first use; with `lexical`, the BM25-only search
        (dictionary rewrite, no model: what `code-alias ask --lexical` answers with) beside it on the same index.

        With a generator configured, one LLM pipeline serves both modes (the rewrite is chosen per call), so the
        index and the embedding model are loaded once. Both searches open the same `CodeIndex`, so the lexical one
        adds its pipelines, not a second copy of the chunks.

        :raises HTTPException: 404 (with how to build it) while there is no index; 503 when the index or its
            backend cannot be loaded (a server-side problem, said in one line).
        """
        llm = self.settings.generator_configured and not lexical
        key: SearchKey = "lexical" if lexical else "llm" if llm else "dictionary"
        search = self._searches.get(key)
        if search is not None:
            return search
        with self._lock:
            search = self._searches.get(key)
            if search is None:
                try:
                    search = CodeSearch(
                        self.settings.index_dir,
                        backend=self.settings.backend,
                        llm=llm,
                        lexical=True if lexical else self.settings.lexical,
                        semantic_hints=False if lexical else None,  # as `ask --lexical` in the asking process
                        chat_generator=self.settings.chat_generator() if llm else None,
                        rewriter_params={"timeout": self.settings.llm_timeout} if llm else None,
                    )
                    search.warm_up()
                    self._set_torch_threads()  # once the model (if any) is loaded
                except (IndexMissingError, DictionaryError) as error:
                    raise self._missing_index(error) from error
                except Exception as error:  # e.g. Elasticsearch unreachable: retried on the next request
                    logger.exception("code-alias: could not load the %s query pipeline", key)
                    message = " ".join(str(error).split())[:300]
                    raise bad_request(
                        f"could not load the index ({self.settings.backend} backend): "
                        f"{type(error).__name__}: {message}",
                        status_code=503,
                    ) from error
                self._searches[key] = search
        return search

    def _missing_index(self, error: Exception | None = None) -> HTTPException:
        index_dir = self.settings.index_dir
        reason = f"no index at {index_dir}" if not index_exists(index_dir) else str(error)
        return bad_request(f"{reason}; {BUILD_HINT}", status_code=404)

    @contextmanager
    def _backend_errors(self, what: str) -> Iterator[None]:
        """
        Turn a failure of the retrieval backend (Elasticsearch down, a store that cannot be read) into a 503.

        Haystack wraps a component's error in `PipelineRuntimeError`; the chain is searched for a
        `DocumentStoreError` (`CodeAliasBackendError` is one) or a connection/OS error.

        :param what: The operation, for the log.
        """
        try:
            yield
        except HTTPException:
            raise
        except (IndexMissingError, DictionaryError) as error:
            raise self._missing_index(error) from error
        except Exception as error:
            cause = _backend_cause(error)
            if cause is None:
                raise
            logger.warning("code-alias: %s failed on the %s backend: %s", what, self.settings.backend, cause)
            raise bad_request(
                f"the {self.settings.backend} backend is unavailable ({type(cause).__name__}: "
                f"{' '.join(str(cause).split())[:300]}); try again later",
                status_code=503,
            ) from error

    def _require_mode(self, checked: Mode) -> Mode:
        """`mode`, when this server can answer it (a request's mode is checked by the request)."""
        if checked == "llm" and not self.settings.generator_configured:
            raise bad_request(
                "mode 'llm' needs a chat generator and this server has none: set CODE_ALIAS_LLM_BASE_URL (an "
                "OpenAI-compatible server) or CODE_ALIAS_LLM_GGUF (a local model) and restart, or use mode "
                "'dictionary'",
                status_code=400,
            )
        return checked

    @contextmanager
    def _slot(self) -> Iterator[None]:
        with self._slots:
            yield

    # ---- operations --------------------------------------------------------------------------------------------
    def ask(
        self,
        question: Any,
        top_k: Any = 10,
        mode: Any = "dictionary",
        repo: Any = None,
        package: Any = None,
        *,
        lexical: Any = False,
        use_rewrite: Any = True,
        code_lines: Any = 0,
    ) -> AskResponse:
        """
        Ranked files and definitions for a question, and the rewrite used (see the ask wrapper): `answer` of the
        `AskRequest` of these values (422/400 when it breaks a rule).

        :param code_lines: Give each symbol its `code_lines` best-matching lines of code (`answer_view.snippet`).
        """
        values = {"question": question, "top_k": top_k, "mode": mode, "repo": repo, "package": package}
        return self.answer(
            parse_request(
                AskRequest, {**values, "lexical": lexical, "use_rewrite": use_rewrite, "code_lines": code_lines}
            )
        )

    def answer(self, request: AskRequest) -> AskResponse:
        """The answer to a request (`ask`), with each symbol's `code_lines` best-matching lines of code."""
        payload, documents = self.answer_with_chunks(request)
        if request.code_lines:
            used = payload["rewrite"]["symbols"] if payload["rewrite"]["meta"].get("used", True) else []
            attach_code(payload["symbols"], documents, match_terms(payload["question"], used), lines=request.code_lines)  # type: ignore[arg-type]
        return payload

    def ask_with_chunks(
        self,
        question: Any,
        top_k: Any = 10,
        mode: Any = "dictionary",
        repo: Any = None,
        package: Any = None,
        *,
        lexical: Any = False,
        use_rewrite: Any = True,
    ) -> tuple[AskResponse, list[Document]]:
        """
        `ask`'s answer and the retrieved chunks behind it (their code: what the page and the chat quote).

        :param lexical: BM25 and the dictionary rewrite only, whatever the index was built with (no model).
        :param use_rewrite: False retrieves with the question as written (`code-alias ask --no-rewrite`).
        """
        values = {"question": question, "top_k": top_k, "mode": mode, "repo": repo, "package": package}
        return self.answer_with_chunks(
            parse_request(AskRequest, {**values, "lexical": lexical, "use_rewrite": use_rewrite})
        )

    def answer_with_chunks(self, request: AskRequest) -> tuple[AskResponse, list[Document]]:
        """`answer` without the code lines, and the retrieved chunks behind it."""
        chosen = self._require_mode(request.mode)
        repo, package = request.repo, request.package
        search = self._search(lexical=request.lexical)
        if repo is not None or package is not None:
            try:  # here, not only inside `ask`: an unknown name is the client's mistake (422), never a 500
                repo, package = search.check_filters(repo, package)
            except ValueError as error:
                raise bad_request(str(error)) from None
        with self._slot(), self._backend_errors("ask"):
            answer = search.ask(
                request.text,
                top_k=request.top_k,
                use_rewrite=request.use_rewrite,
                mode=chosen if search.llm else None,
                repo=repo,
                package=package,
            )
        payload = cast(AskResponse, answer.to_dict(mode=chosen))  # the one JSON of an answer (`AskResult.to_dict`)
        # As `code-alias ask` says it when it answers itself: the CLI prints the same lines for a server's answer.
        payload["retrieval"] = search.answering_with
        count = search.vectors() if search.retrieval == "hybrid" and not search.llm else None
        if count is not None and not count.complete:
            payload["vectors"] = count.to_dict()
        return plain(payload), list(answer.documents)

    def roots(self) -> dict[str, str]:
        """Repository name -> the folder it was indexed from (`""` -> the index's only or first one); {} without one."""
        try:
            dictionary = DictionaryHandle.for_path(self.settings.index_dir / DICTIONARY_FILE).dictionary
        except (DictionaryError, FileNotFoundError):
            return {}
        roots = {str(name): str(record.root) for name, record in dictionary.repositories.items() if record.root}
        if dictionary.root:
            roots.setdefault("", str(dictionary.root))
        return roots

    def chat_generator(self) -> Any | None:
        """The warmed ChatGenerator of the LLM query pipeline (the rewriter's own: one model in memory), or None."""
        if not self.settings.generator_configured:
            return None
        pipeline = self._search().query_pipeline
        if "rewriter" not in pipeline.graph.nodes:
            return None
        return getattr(pipeline.get_component("rewriter"), "chat_generator", None)

    def rewrite(
        self, question: Any, mode: Any = "dictionary", repo: Any = None, package: Any = None
    ) -> RewriteResponse:
        """
        The rewrite `ask` uses for this question: the same pipeline run, so the same hints reach the rewriter (the
        first keyword search's definitions, the nearest symbol cards) and both answers name the same symbols;
        narrowed to `repo` / `package` as `ask` narrows its rewrite, and of one generation of the index (the
        answer's `generation`).
        """
        request = parse_request(RewriteRequest, {"question": question, "mode": mode, "repo": repo, "package": package})
        text, chosen, repo, package = request.text, self._require_mode(request.mode), request.repo, request.package
        search = self._search()
        if repo is not None or package is not None:
            try:  # the names as the index spells them; an unknown one is the client's mistake (422)
                repo, package = search.check_filters(repo, package)
            except ValueError as error:
                raise bad_request(str(error)) from None
        with self._slot(), self._backend_errors("rewrite"):
            answer = search.ask(text, top_k=1, mode=chosen if search.llm else None, repo=repo, package=package)
        rewrite = answer.rewrite
        meta = dict(rewrite.get("meta") or {})
        if search.llm:  # the LLM pipeline's faithfulness filter: what it dropped
            meta["dropped"] = list(rewrite.get("dropped") or [])
        return plain(
            {
                "rewritten": rewrite.get("rewritten") or text,
                "symbols": list(rewrite.get("symbols") or []),
                "packages": list(rewrite.get("packages") or []),
                "intent": rewrite.get("intent"),
                "hints": list(rewrite.get("hints") or []),
                "meta": meta,
                "generation": answer.generation,
            }
        )

    def autocomplete(self, prefix: Any, limit: Any = 10) -> AutocompleteResponse:
        """Dictionary names that start with `prefix`, then fuzzy matches; no model, no LLM."""
        request = parse_request(CompleteRequest, {"prefix": prefix, "limit": limit})
        text, count = request.text, request.limit
        handle = DictionaryHandle.for_path(self.settings.index_dir / DICTIONARY_FILE)
        try:
            hints = handle.hints
            dictionary = handle.dictionary
            version = dictionary.version
        except (DictionaryError, FileNotFoundError) as error:
            raise self._missing_index(error) from error
        # A wider pool than asked for, so public names can come before constants and tests (`order_completions`).
        completions = []
        for hint in hints.complete(text, limit=min(count * 3, LIMIT_RANGE[1] * 3)):
            item = hint.to_dict()
            entries = [e for name in hint.qualified_names[:1] for e in dictionary.symbols_named(name)]
            item["symbol_kind"] = entries[0].kind if entries else ("package" if hint.kind == "package" else None)
            item["line"] = entries[0].start_line if entries else None
            completions.append(item)
        return plain(
            {
                "prefix": text,
                "dictionary_version": version,
                "completions": order_completions(completions, text)[:count],
            }
        )

    def _vectors(self) -> dict[str, Any] | None:
        """How far the chunk vectors of a progressive index are (`vector_fill.vector_status`); None off embedded."""
        if self.settings.backend != "embedded":
            return None

        try:
            return vector_status(self.settings.index_dir)
        except Exception as problem:  # a status report must answer even when the index does not
            return {"vectors": None, "text": f"{type(problem).__name__}: {problem}", "fill": None}

    def status(self) -> StatusResponse:
        """Whether the index is loaded, what it holds, and what this server is configured with."""
        error: str | None = None
        dictionary: DictionaryStatus | None = None
        documents: int | None = None
        cache: dict[str, Any] | None = None
        try:
            search = self._search()
            loaded = DictionaryHandle.for_path(self.settings.index_dir / DICTIONARY_FILE).dictionary
            dictionary = {
                "version": loaded.version,
                "root": loaded.root,
                "symbols": len(loaded.symbols),
                "packages": len(loaded.packages),
                "files": loaded.file_count(),
            }
            retriever: Any = search.query_pipeline.get_component("bm25_retriever")
            documents = int(retriever.document_store.count_documents())
            if "llm" in self.modes:
                rewriter: Any = self._search().query_pipeline.get_component("rewriter")
                cache = rewriter.cache_stats()
        except HTTPException as problem:
            error = str(problem.detail)
        except Exception as problem:  # a status report must answer even when the backend does not
            error = str(bad_request(f"{type(problem).__name__}: {problem}").detail)
        return plain(
            {
                "ready": error is None,
                "error": error,
                "index_dir": str(self.settings.index_dir),
                "backend": self.settings.backend,
                "dictionary": dictionary,
                "documents": documents,
                "vectors": self._vectors(),
                "repositories": dict(read_repositories(self.settings.index_dir)),
                "modes": list(self.modes),
                "generator": self.settings.generator_status(),
                "rewrite_cache": cache,
                "limits": {
                    "max_question_chars": MAX_QUESTION_CHARS,
                    "max_prefix_chars": MAX_PREFIX_CHARS,
                    "top_k": list(TOP_K_RANGE),
                    "limit": list(LIMIT_RANGE),
                    "max_concurrent_asks": self.settings.max_concurrent_asks,
                },
                "torch_threads": self._torch_threads,
                "uptime_seconds": round(time.monotonic() - self.started, 3),
            }
        )


def _backend_cause(error: BaseException) -> BaseException | None:
    """The backend failure in `error`'s cause chain (a store error, a refused connection, an I/O error), or None."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, (DocumentStoreError, ConnectionError, TimeoutError, OSError)):
            return current
        if type(current).__module__.split(".")[0] in ("elastic_transport", "elasticsearch"):
            return current
        current = current.__cause__ or current.__context__
    return None


_SERVICES: dict[ServiceSettings, CodeAliasService] = {}
_SERVICES_LOCK = threading.Lock()


def get_service(settings: ServiceSettings | None = None) -> CodeAliasService:
    """
    The process's service for `settings` (default: from the environment), created and warmed up once.

    Every wrapper's `setup()` calls this; Hayhooks may run them in parallel, and the first one loads the index
    while the others wait for it.
    """
    chosen = settings or ServiceSettings.from_env()
    with _SERVICES_LOCK:
        service = _SERVICES.get(chosen)
        if service is None:
            service = _SERVICES[chosen] = CodeAliasService(chosen)
            service.warm_up()
    return service
