"""`CodeSearch`: index a repository and ask questions through the YAML pipelines.

The CLI, the benchmark, the Hayhooks wrappers and the notebooks all go through this class, which only loads
and runs the pipelines under `pipelines/`; there is no second implementation of indexing or retrieval. The class is
in three parts: `pipelines.PipelineLoading` (the folder and its pipelines), `building.IndexBuilding` (writing the
index) and `CodeSearch` here (asking it).
"""

from __future__ import annotations

import functools
import os
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Literal, TypeVar, cast

from haystack import Pipeline
from haystack.core.errors import DeserializationError

from ..core.cards import newest_cards_file
from ..core.identifiers import code_tokenize
from ..core.model import DictionaryError
from ..errors import CodeAliasError
from ..indexing import index_mode, repositories
from ..indexing.code_index import CodeIndex
from ..indexing.generation import IndexGeneration
from ..indexing.store import CodeIndexDocumentStore
from ..indexing.vector_fill import vector_count
from ..paths import (
    EMBEDDING_CACHE_DIR,
    EMBEDDING_CACHE_ENV,
    resolve_index_dir,
)
from ..ranking.candidates import QuestionContext
from ..ranking.ranker import CodeRanker
from ..retrieval.repository_evidence import repository_terms
from ..retrieval.repository_selection import VOTE_DEPTH, select_repository
from ..rewriting.hints import SymbolEvidence
from .answer import AskResult
from .building import IndexBuilding
from .pipelines import Backend, _index_cause
from .requests import AskRequest, lexical_with_llm

_Ask = TypeVar("_Ask", bound=Callable[..., AskResult])


def _one_generation(ask: _Ask) -> _Ask:
    """`CodeSearch.ask` computed from one generation of the index, which the answer reports (`AskResult.generation`)."""

    @functools.wraps(ask)
    def pinned(self: CodeSearch, *args: Any, **kwargs: Any) -> AskResult:
        with self.pinned_generation() as generation:
            answer = ask(self, *args, **kwargs)
        answer.generation = generation.to_dict()
        return answer

    return cast(_Ask, pinned)


class CodeSearch(IndexBuilding):
    """
    Index a code tree and ask it questions, on the embedded default or on Elasticsearch.

    ### Usage example

    ```python
    from haystack_integrations.components.code_alias import CodeSearch

    search = CodeSearch(index_dir=".code-alias")
    search.index("path/to/repo")
    answer = search.ask("where's the payments retry helper?")
    print(answer.rewrite["symbols"], [f["file_path"] for f in answer.files])
    ```

    :param index_dir: The index folder (dictionary, documents, caches).
    :param backend: "embedded" (default, no server) or "elasticsearch".
    :param llm: Use the LLM query pipeline (`query_llm.yml`) instead of the dictionary-only one.
    :param lexical: True: BM25 only, no embedding model (`indexing_lexical.yml` / `query_lexical.yml`): much
        faster to index, for machines without the model budget and for lexical baselines; nothing imports torch.
        None (default): as the index was built (`index_mode.py`; hybrid for a new index). False: hybrid, which a
        lexical index refuses with the fix.
    :param pipelines: Folder of YAML pipelines; None = the packaged ones.
    :param chat_generator: A serialised ChatGenerator (`{"type": ..., "init_parameters": ...}`, e.g. from
        `generators.chat_generator_spec`) that replaces the rewriter's generator in the LLM pipeline.
    :param rewriter_params: Init parameters of the LLM pipeline's rewriter to override (e.g. `timeout`).
    :param semantic_hints: Symbol cards with vectors (`core.cards`) so the rewrite's hints include the names whose
        cards are nearest to the question: True / False as asked; None (default) = as the index was built, which
        is on for a hybrid index and off for a lexical one (`code-alias index --lexical --semantic-hints` turns
        them on there: BM25 retrieval, one small model call per question for the hints).
    :param embedding_cache: The folder of cached chunk and card vectors; None =
        `$CODE_ALIAS_EMBEDDING_CACHE`, else the index folder's own (benchmarks share one across corpora).
    """

    def __init__(
        self,
        index_dir: str | os.PathLike[str] | None = None,
        *,
        backend: Backend = "embedded",
        llm: bool = False,
        lexical: bool | None = None,
        pipelines: str | os.PathLike[str] | None = None,
        chat_generator: dict[str, Any] | None = None,
        rewriter_params: dict[str, Any] | None = None,
        semantic_hints: bool | None = None,
        embedding_cache: str | os.PathLike[str] | None = None,
    ) -> None:
        lexical_with_llm(lexical, llm)
        self.index_dir = resolve_index_dir(index_dir).resolve()
        # The folder's live state (chunks, dictionary): the stores of every pipeline loaded here share it.
        self.code_index = CodeIndex.open(self.index_dir)
        self.embedding_cache = Path(
            embedding_cache or os.environ.get(EMBEDDING_CACHE_ENV) or self.index_dir / EMBEDDING_CACHE_DIR
        )
        self.backend = backend
        self.llm = llm
        self.lexical = lexical
        self.pipelines = Path(pipelines) if pipelines else None
        self.chat_generator = chat_generator
        self.rewriter_params = rewriter_params
        self.semantic_hints = semantic_hints
        self._card_embed: Callable[[list[str]], Any] | None = None
        self._query: Pipeline | None = None
        self._vectorless = False  # a hybrid index with no chunk vector yet, answered lexically until one arrives
        self._lock = threading.Lock()

    # ---- asking --------------------------------------------------------------------------------------------
    @property
    def query_pipeline(self) -> Pipeline:
        with self._lock:
            if self._query is None:
                self.check_index()
                lexical = self.retrieval == "lexical"  # checks the index can answer this way
                self._vectorless = not lexical and not self.llm and self._no_vectors_yet()
                kind = "query_llm" if self.llm else "query_lexical" if lexical or self._vectorless else "query"
                if kind == "query_lexical" and self._semantic_hints_ready():
                    kind = "query_lexical_semantic"
                try:
                    pipeline = self.load_pipeline(kind)
                except DeserializationError as error:  # say what was wrong with the index, not the component
                    raise _index_cause(error) or error from error
                pipeline.warm_up()
                self._query = pipeline
            return self._query

    def _semantic_hints_ready(self) -> bool:
        """Semantic hints asked for (or recorded by the build) and symbol cards present in the folder."""
        wanted = self.semantic_hints
        if wanted is None:
            wanted = bool(index_mode.recorded_semantic_hints(self.index_dir))
        return wanted and newest_cards_file(self.index_dir) is not None

    def vectors(self) -> Any:
        """How many chunks of the served build have a vector (`vector_fill.VectorCount`), or None (no documents)."""

        return vector_count(self.index_dir) if self.backend == "embedded" else None

    def _no_vectors_yet(self) -> bool:
        count = self.vectors()
        return count is not None and count.total > 0 and count.embedded == 0

    @property
    def answering_with(self) -> index_mode.Retrieval:
        """The retrieval the last loaded query pipeline answers with (lexical on a hybrid index without vectors)."""
        return "lexical" if self._vectorless else self.retrieval

    def warm_up(self) -> None:
        """Load the index, the dictionary and the models now instead of on the first question."""
        _ = self.query_pipeline

    def close(self) -> None:
        """
        Let go of the loaded query pipeline and free its in-memory index (documents, BM25 index, vectors); the
        saved index stays on disk and the next question loads it again. For processes that visit many indexes.
        """

        with self._lock:
            pipeline, self._query = self._query, None
        if pipeline is None:
            return
        stores = {
            store.index: store
            for _, instance in pipeline.walk()
            if isinstance(store := getattr(instance, "document_store", None), CodeIndexDocumentStore)
        }
        for index, store in stores.items():
            store.release()
            store.derived.forget(index)

    def check_filters(
        self, repo: str | list[str] | None = None, package: str | list[str] | None = None
    ) -> tuple[str | list[str] | None, str | list[str] | None]:
        """
        The `repo` / `package` filters of a question with each name as this index spells it (`ask` calls it; so may
        a caller that wants the error before anything else runs). A filter naming nothing the index holds would
        answer with nothing while the rewrite still named other repositories' symbols; it is an error instead.

        :returns: (repo, package), names resolved (`repositories.resolve_filter_names`).
        :raises repositories.UnknownFilterError: A name the index does not hold (the message lists those it holds).
        :raises ValueError: An empty, too long or non-string name, or too many.
        """
        if repo is None and package is None:
            return None, None
        try:
            dictionary = self.code_index.dictionary.dictionary
        except (DictionaryError, OSError):  # no index (yet): asking says so, with how to build it
            repositories.repository_filters(repo, package)
            return repo, package
        return (
            repositories.resolve_filter_names(repo, "repo", list(dictionary.repositories)),
            repositories.resolve_filter_names(
                package,
                "package",
                sorted({p.name for p in dictionary.packages}),
                {p.name: (*p.aliases, *p.import_names) for p in dictionary.packages},
            ),
        )

    def _ask_narrowed(self, question: str, **options: Any) -> AskResult:
        """`ask`, then again narrowed to the packages its rewrite names with strong evidence (see `ask`)."""
        first = self.ask(question, **options)
        narrowed = repositories.inferred_packages(first.rewrite.get("packages") or [], first.rewrite.get("hints") or [])
        if not narrowed:
            first.rewrite["inferred_filter"] = None
            return first
        second = self.ask(question, **options, package=narrowed)
        if second.documents:
            second.rewrite["inferred_filter"] = {"package": narrowed, "used": True}
            return second
        first.rewrite["inferred_filter"] = {"package": narrowed, "used": False}
        return first

    # long: the question's path through rewrite, retrieval and ranking under one generation
    @_one_generation
    def ask(
        self,
        question: str,
        *,
        top_k: int = 10,
        use_rewrite: bool = True,
        candidates: int | None = None,
        mode: Literal["dictionary", "llm"] | None = None,
        repo: str | list[str] | None = None,
        package: str | list[str] | None = None,
        infer_filters: bool = False,
        select_repository: bool = False,
    ) -> AskResult:
        """
        Answer a question with ranked files and chunks.

        :param question: The question.
        :param top_k: Files to return.
        :param use_rewrite: False sends the raw question to both retrievers (the ablation baseline).
        :param candidates: Chunks each retriever returns before fusion (default: the pipeline's setting).
        :param mode: The rewrite for this question on an LLM search ("dictionary" or "llm"); None = the
            rewriter's own setting. One LLM pipeline thus serves both, with one copy of the models.
        :param repo: Only chunks of this repository (or of any of these), in an index of several.
        :param package: Only chunks of this package (or of any of these).
        :param infer_filters: When no `package` is given and the rewrite names packages with strong evidence
            (`repositories.inferred_packages`), ask again narrowed to them; the narrowed answer is kept only when
            it found something (else the first one is, so narrowing never answers with nothing). The answer's
            `rewrite["inferred_filter"]` says what was inferred and whether it was used.
        :param select_repository: On an index of several repositories, when no `repo` or `package` is given: infer
            which repository the question is about (`core.repository_selection`: the question's words per
            repository, and where each repository's files rank) and narrow to it when the posterior is at least
            `FILTER_POSTERIOR` (kept only when that found something). Off by default. A weaker posterior is only
            recorded: the ranking stage has no mixed-index data to fit a repository prior on, so it does not boost.
            The answer's `rewrite["inferred_repository"]` records it (None when nothing was inferred).
        :raises repositories.UnknownFilterError: `repo` or `package` names nothing the index holds (the message
            lists what it holds).
        :raises ValueError: A question, `top_k`, `mode` or `use_rewrite` that breaks a request's rule
            (`app.requests.RequestError`, a `ValueError`), `mode="llm"` on a search built without `llm=True`, or a
            bad `repo`/`package` value.
        """
        # The requests' rules (`app.requests`), without a server's limits: this process is the caller.
        values = {"question": question, "top_k": top_k, "use_rewrite": use_rewrite, "mode": mode or "dictionary"}
        AskRequest.parse(values, trusted=True)
        if mode == "llm" and not self.llm:
            raise ValueError("mode='llm' needs CodeSearch(llm=True)")
        repo, package = self.check_filters(repo, package)
        filters = repositories.repository_filters(repo, package)
        if infer_filters and package is None:
            return self._ask_narrowed(
                question, top_k=top_k, use_rewrite=use_rewrite, candidates=candidates, mode=mode, repo=repo
            )
        if self._vectorless and not self._no_vectors_yet():  # the first vectors arrived: fuse them from now on
            with self._lock:
                self._query = None
        pipeline = self.query_pipeline
        data: dict[str, dict[str, Any]] = {
            name: {"question": question} for name, sockets in pipeline.inputs().items() if "question" in sockets
        }
        data.setdefault("composer", {})["use_rewrite"] = use_rewrite
        if filters is not None:  # every retriever whose filters are the caller's (the composer's go on)
            for name, sockets in pipeline.inputs().items():
                if "filters" in sockets:
                    data.setdefault(name, {})["filters"] = filters
        if mode is not None and self.llm:
            data.setdefault("rewriter", {})["mode"] = mode
        if candidates:
            for name in ("bm25_retriever", "embedding_retriever"):
                if name in pipeline.graph.nodes:
                    data.setdefault(name, {})["top_k"] = candidates
        if "ranker" in pipeline.graph.nodes:
            data.setdefault("ranker", {})["top_k"] = top_k
        started = time.perf_counter()
        # `_one_generation` holds one build of the dictionary, its hints, the chunks and the vectors for all of this
        if self.backend == "embedded":
            self.check_index()
        output = pipeline.run(
            data,
            include_outputs_from={
                "rewriter",
                "composer",
                "bm25_retriever",
                "embedding_retriever",
                "definitions",
                "ranker",
                "faithfulness",
            },
        )
        seconds = time.perf_counter() - started
        answer = self._answer(question, output, pipeline, use_rewrite=use_rewrite, top_k=top_k, seconds=seconds)
        if not select_repository or filters is not None:
            return answer
        options = {"top_k": top_k, "use_rewrite": use_rewrite, "candidates": candidates, "mode": mode}
        return self._select_repository(answer, pipeline, options)

    @staticmethod
    def _answer(
        question: str, output: dict[str, Any], pipeline: Pipeline, *, use_rewrite: bool, top_k: int, seconds: float
    ) -> AskResult:
        """The answer of one pipeline run: the ranker's output, the rewrite, and each retriever's list."""
        rewriter = output.get("rewriter", {})
        faithful = output.get("faithfulness", {})
        composer = output.get("composer", {})
        rewrite = {
            "rewritten": faithful.get("rewritten", rewriter.get("rewritten")),
            "symbols": faithful.get("symbols", rewriter.get("symbols", [])),
            "packages": faithful.get("packages", rewriter.get("packages", [])),
            "intent": rewriter.get("intent"),
            "dropped": faithful.get("dropped", []),
            "meta": rewriter.get("meta", {}),
            "used": use_rewrite,
            "hints": rewriter.get("hints", []) if use_rewrite else [],
            "inferred_repository": None,
        }
        ranked = output.get("ranker", {})
        ranker = pipeline.get_component("ranker") if "ranker" in pipeline.graph.nodes else None
        if not isinstance(ranker, CodeRanker):
            raise CodeAliasError("the query pipeline has no `ranker` (CodeRanker): every query pipeline ends in one")
        bm25 = output.get("bm25_retriever", {})
        hybrid = "embedding_retriever" in pipeline.graph.nodes
        context = QuestionContext(
            question=question,
            hints=composer.get("symbol_evidence") or SymbolEvidence(),
            symbols=tuple(composer.get("symbols") or ()),
            packages=tuple(composer.get("packages") or ()),
            term_coverage=bm25.get("term_coverage"),
            embedding=hybrid,
        )
        return AskResult(
            question=question,
            files=ranked.get("files", []),
            symbols=ranked.get("symbols", []),
            documents=ranked.get("documents", []),
            confidence=ranked.get("confidence"),
            abstained=bool(ranked.get("abstained", False)),
            rewrite=rewrite,
            bm25_documents=bm25.get("documents", []),
            embedding_documents=output.get("embedding_retriever", {}).get("documents", []),
            definition_documents=output.get("definitions", {}).get("documents", []),
            seconds=seconds,
            context=context,
            ranker=ranker,
            retrieval="hybrid" if hybrid else "bm25",
            top_k=top_k,
        )

    def pinned_generation(self) -> AbstractContextManager[IndexGeneration]:
        """
        For a block, this thread's reads of the index are of one generation (`CodeIndex.pinned`): the manifest, the
        dictionary and its hints, and on the embedded default the chunks and their vectors. `ask` holds it for the
        whole question (a question asked again narrowed included); a sync or re-index meanwhile serves the questions
        that start after it.
        """
        return self.code_index.pinned(documents=self.backend == "embedded")

    def _select_repository(self, answer: AskResult, pipeline: Pipeline, options: dict[str, Any]) -> AskResult:
        """`answer` narrowed to the repository its question is about when the selection is sure (see `ask`)."""

        started = time.perf_counter()
        terms = code_tokenize(answer.question)
        statistics = repository_terms(pipeline, terms)
        if statistics is None:  # one repository, or a backend without the term statistics
            return answer
        selection = select_repository(
            terms, statistics.term_documents, statistics.documents, [f.get("repo") for f in answer.files[:VOTE_DEPTH]]
        )
        if selection is None:
            return answer
        record: dict[str, Any] = selection.to_dict()
        if selection.action == "filter":
            narrowed = self.ask(answer.question, **options, repo=selection.repo, select_repository=False)
            if narrowed.documents:
                narrowed.rewrite["inferred_repository"] = {**record, "used": "filter"}
                narrowed.seconds += answer.seconds + time.perf_counter() - started
                return narrowed
        answer.rewrite["inferred_repository"] = {**record, "used": None}
        answer.seconds += time.perf_counter() - started
        return answer
