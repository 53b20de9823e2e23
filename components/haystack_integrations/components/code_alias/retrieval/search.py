# long: `CodeSearch`, the application object: indexing, asking and the index's upkeep
"""`CodeSearch`: index a repository and ask questions through the YAML pipelines.

The CLI, the benchmark, the Hayhooks wrappers and the notebooks all go through this class, which only loads
and runs the pipelines under `pipelines/`; there is no second implementation of indexing or retrieval.
"""

from __future__ import annotations

import functools
import inspect
import logging
import os
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, TypeVar, cast

import yaml
from haystack import Document, Pipeline
from haystack.core.errors import DeserializationError
from haystack.core.serialization import DeserializationCallbacks, component_from_dict, import_class_by_name

from ..core.cards import newest_cards_file
from ..core.identifiers import code_tokenize
from ..core.model import DictionaryError
from ..core.repositories import without_repository
from ..errors import CodeAliasError
from ..indexing import index_delta, index_files, index_mode, index_repair, repositories, vector_fill
from ..indexing.card_vectors import card_embedder, refresh_card_vectors
from ..indexing.code_index import CodeIndex
from ..indexing.generation import IndexGeneration
from ..indexing.store import CodeIndexDocumentStore
from ..indexing.vector_fill import vector_count
from ..paths import (
    DEFAULT_MODEL,
    EMBEDDING_CACHE_DIR,
    EMBEDDING_CACHE_ENV,
    resolve_index_dir,
)
from ..ranking.answer import RankedSymbol
from ..ranking.candidates import QuestionContext
from ..ranking.ranker import CodeRanker
from ..rewriting.hints import SymbolEvidence
from .bm25 import CodeBM25Retriever
from .repository_evidence import repository_terms
from .repository_selection import VOTE_DEPTH, select_repository

Backend = Literal["embedded", "elasticsearch"]
PIPELINE_FILES: dict[tuple[Backend, str], str] = {
    ("embedded", "indexing"): "indexing.yml",
    ("embedded", "query"): "query.yml",
    ("embedded", "query_llm"): "query_llm.yml",
    ("embedded", "indexing_lexical"): "indexing_lexical.yml",
    ("embedded", "query_lexical"): "query_lexical.yml",
    ("embedded", "query_lexical_semantic"): "query_lexical_semantic.yml",
    ("elasticsearch", "indexing"): "elasticsearch_indexing.yml",
    ("elasticsearch", "query"): "elasticsearch_query.yml",
    ("elasticsearch", "query_llm"): "elasticsearch_query_llm.yml",
    ("elasticsearch", "indexing_lexical"): "elasticsearch_indexing_lexical.yml",
    ("elasticsearch", "query_lexical"): "elasticsearch_query_lexical.yml",
    ("elasticsearch", "query_lexical_semantic"): "elasticsearch_query_lexical_semantic.yml",
}
logger = logging.getLogger(__name__)


def _accepts(cls: type, name: str) -> bool:
    try:
        return name in inspect.signature(cls.__init__).parameters  # type: ignore[misc]  # the class's own, not the component wrapper's
    except (TypeError, ValueError):
        return False


def _is_embedder(cls: type) -> bool:
    """One of our embedders (their `cache_dir` is the vector cache)."""
    return cls.__module__.endswith(".retrieval.embedders")


def _writer_store(pipeline: Pipeline) -> Any:
    """The document store the indexing pipeline's writer wrote to (None when it has no `writer`)."""
    if "writer" not in pipeline.graph.nodes:
        return None
    return getattr(pipeline.get_component("writer"), "document_store", None)


class IndexMissingError(FileNotFoundError, CodeAliasError):
    """`ask` before `index`."""


class EmptyIndexError(IndexMissingError):
    """An index that holds no chunks (nothing indexed yet, or an empty repository)."""


def pipelines_dir() -> Path:
    """The folder of YAML pipelines: inside the installed package, or the repository's `pipelines/`."""
    packaged = Path(__file__).parents[1] / "pipelines"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[5] / "pipelines"


def pipeline_file(backend: Backend, kind: str, directory: Path | None = None) -> Path:
    try:
        name = PIPELINE_FILES[(backend, kind)]
    except KeyError:
        raise ValueError(f"no {kind!r} pipeline for backend {backend!r}") from None
    return (directory or pipelines_dir()) / name


def _say_waiting(folder: Path) -> Callable[[str], None]:
    def say(holder: str) -> None:
        logger.warning("code-alias: waiting for the index lock of %s, held by %s", folder, holder)

    return say


def _say_filling(folder: Path) -> Callable[[str], None]:
    def say(holder: str) -> None:
        logger.warning("code-alias: waiting for the vector fill of %s, run by %s", folder, holder)

    return say


def _index_cause(error: BaseException) -> BaseException | None:
    """The index problem (damaged file, missing index) behind a pipeline's deserialisation error, if any."""
    cause = error.__cause__ or error.__context__
    while cause is not None:
        if isinstance(cause, index_files.IndexDamagedError | FileNotFoundError | OSError):
            return cause
        cause = cause.__cause__ or cause.__context__
    return None


def bind_to_index(data: dict[str, Any], index_dir: Path, *, writer: str | None = None) -> dict[str, Any]:
    """
    Point a pipeline's components (and the document stores inside them) that name no index folder, at
    `index_dir`: every `index_dir: null` of the YAML. `writer` binds its in-memory stores to that writer's
    private copy of the chunks (`CodeIndexDocumentStore(writer=...)`). Changes and returns `data`.
    """

    def bind(params: dict[str, Any]) -> None:
        if "index_dir" in params and params["index_dir"] is None:
            params["index_dir"] = str(index_dir)
        for value in params.values():
            if isinstance(value, dict) and isinstance(value.get("init_parameters"), dict):
                nested = value["init_parameters"]
                bind(nested)
                if writer is not None and str(value.get("type", "")).endswith(".CodeIndexDocumentStore"):
                    nested["writer"] = writer

    for spec in (data.get("components") or {}).values():
        if isinstance(spec, dict):
            bind(spec.setdefault("init_parameters", {}) or {})
    return data


@dataclass
class AskResult:
    """
    One answer: ranked symbols and files, the chunks, the rewrite, each retriever's own list, and how sure the
    ranking is that its first file is right.

    Every field comes from one run of the query pipeline; `ranked_symbols` / `ranked_files` for another retrieval
    mode than the pipeline's (one retriever's list alone, for benchmarks) ask the pipeline's own ranker again.
    """

    question: str
    files: list[dict[str, Any]]
    documents: list[Document]
    rewrite: dict[str, Any]
    symbols: list[RankedSymbol] = field(default_factory=list)
    bm25_documents: list[Document] = field(default_factory=list)
    embedding_documents: list[Document] = field(default_factory=list)
    definition_documents: list[Document] = field(default_factory=list)
    seconds: float = 0.0
    #: The probability (0-1) that the first file is right (`ranking.model`); None: the model has no confidence.
    confidence: float | None = None
    #: The confidence is too low to trust: the answer shows the closest places as such.
    abstained: bool = False
    #: What the ranker knew of the question (to rank one retriever's list alone); None outside a pipeline run.
    context: QuestionContext | None = None
    ranker: CodeRanker | None = None
    #: The retrieval the pipeline's own ranking used: "hybrid" or "bm25".
    retrieval: str = "hybrid"
    top_k: int = 10
    #: The one generation of the index every part of this answer was computed from (`IndexGeneration.to_dict`).
    generation: dict[str, Any] | None = None
    _rankings: dict[str, dict[str, Any]] = field(default_factory=dict, repr=False)

    def to_dict(self) -> dict[str, Any]:
        """The answer as JSON: symbols first (what the question asks for), then files, then the rewrite."""
        return {
            "question": self.question,
            "symbols": self.symbols,
            "files": self.files,
            "confidence": self.confidence,
            "abstained": self.abstained,
            "rewrite": {key: value for key, value in self.rewrite.items() if key != "hints"},
            "seconds": round(self.seconds, 4),
            "generation": self.generation,
        }

    def _ranked(self, retrieval: str) -> dict[str, Any]:
        if retrieval not in ("hybrid", "bm25", "embedding"):
            raise ValueError(f"unknown retrieval {retrieval!r}; expected hybrid, bm25 or embedding")
        if retrieval == self.retrieval or self.ranker is None or self.context is None:
            return {"symbols": self.symbols, "files": self.files, "documents": self.documents}
        if retrieval not in self._rankings:
            bm25 = self.bm25_documents if retrieval != "embedding" else None
            embedding = self.embedding_documents if retrieval != "bm25" else None
            context = replace(self.context, embedding=embedding is not None)
            self._rankings[retrieval] = self.ranker.rank(
                context, bm25=bm25, embedding=embedding, definitions=self.definition_documents, top_k=self.top_k
            )
        return self._rankings[retrieval]

    def ranking(self, retrieval: str) -> list[Document]:
        """
        The chunk ranking of one retrieval mode: "hybrid", "bm25" or "embedding": the pipeline's own, or one
        retriever's list with the rewrite's definitions, ranked by the pipeline's own ranker.
        """
        return list(self._ranked(retrieval)["documents"])

    def ranked_symbols(self, retrieval: str = "hybrid", top_k: int | None = None) -> list[RankedSymbol]:
        """The symbols of one retrieval mode's ranking."""
        symbols: list[RankedSymbol] = self._ranked(retrieval)["symbols"]
        return symbols[:top_k] if top_k else symbols

    def ranked_files(self, retrieval: str = "hybrid", top_k: int | None = None) -> list[dict[str, Any]]:
        """The files of one retrieval mode's ranking."""
        files: list[dict[str, Any]] = self._ranked(retrieval)["files"]
        return files[:top_k] if top_k else files


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


class CodeSearch:
    """
    Index a code tree and ask it questions, on the embedded default or on Elasticsearch.

    ### Usage example

    ```python
    from haystack_integrations.components.code_alias.retrieval.search import CodeSearch

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
        if llm and lexical:
            raise ValueError("choose either llm or lexical")
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

    def load_pipeline(self, kind: str, *, writer: str | None = None) -> Pipeline:
        """
        Load one of the YAML pipelines on this index folder: every component and store that names no folder gets
        this one, embedders that name no vector cache get `embedding_cache` (nothing goes through the
        environment).

        :param writer: For an indexing run: its stores work on a private copy of the chunks, unseen by queries
            until the run saves it (`CodeIndexDocumentStore(writer=...)`).
        """
        path = pipeline_file(self.backend, kind, self.pipelines)
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        if kind == "query_llm" and (self.chat_generator or self.rewriter_params):
            params = data["components"]["rewriter"].setdefault("init_parameters", {})
            params.update(self.rewriter_params or {})
            if self.chat_generator:
                params["chat_generator"] = self.chat_generator
        return self.pipeline_from_dict(data, writer=writer)

    def pipeline_from_dict(self, data: dict[str, Any], *, writer: str | None = None) -> Pipeline:
        """A pipeline dict (parsed YAML) loaded on this index folder, as `load_pipeline` loads its files."""
        return Pipeline.from_dict(bind_to_index(data, self.index_dir, writer=writer), callbacks=self._callbacks)

    @property
    def _callbacks(self) -> DeserializationCallbacks:
        return DeserializationCallbacks(component_pre_init=self._bind_component)

    def _bind_component(self, name: str, cls: type, init_params: dict[str, Any]) -> None:
        """`bind_to_index` for parameters a YAML leaves out: a component built here sees this folder and cache."""
        if init_params.get("index_dir") is None and _accepts(cls, "index_dir"):
            init_params["index_dir"] = str(self.index_dir)
        if init_params.get("cache_dir") is None and _accepts(cls, "cache_dir") and _is_embedder(cls):
            init_params["cache_dir"] = str(self.embedding_cache)

    # ---- indexing ------------------------------------------------------------------------------------------
    # long: the indexing transaction: lock, repair, build, write and publish, in order
    def index(
        self,
        root: str | os.PathLike[str],
        *,
        lock_timeout: float | None = None,
        vectors: bool = True,
        on_answerable: Callable[[dict[str, Any]], None] | None = None,
        on_progress: Callable[[int, int], None] | None = None,
        repo: str | None = None,
        cards: bool | None = None,
    ) -> dict[str, Any]:
        """
        Build or incrementally refresh the index of `root` (dictionary and documents), as repository `repo`.

        An index folder holds several repositories: indexing another one adds it (its documents, symbols and
        packages carry `repo`), re-indexing one refreshes only its part, `remove_repository` takes one out.

        Holds the index folder's lock (a second writer waits, and is told who holds it), first repairs what a
        killed or failed run left (`index_repair.prepare_for_indexing`), and makes the new dictionary and
        documents current together. A hybrid index on the embedded default is built progressively
        (`vector_fill`): the dictionary and the BM25 index first (questions are answered from then on), then the
        chunk vectors, most-likely-asked code first, saved every few seconds; an interrupted fill resumes.

        :param lock_timeout: Seconds to wait for another writer of the same folder; None waits.
        :param vectors: False: stop once the index answers lexically; `fill_vectors` (`code-alias embed`) adds the
            vectors later. Only for a hybrid index on the embedded default.
        :param cards: Embed the symbol cards of semantic hints here (they need the model: seconds to load, then
            ~100 cards/s on two cores); False leaves them to `fill_vectors(cards=True)`, as `code-alias index
            --background` does, so it returns once questions work. None: as `vectors` (a progressive index), else
            True.
        :param on_answerable: Called with the statistics once questions can be asked (before the vectors).
        :param on_progress: Called with (chunks with a vector, chunks) as the vectors arrive.
        :param repo: The repository's name; None = the name the same folder was indexed under before, else its
            git remote's `owner/name`, else its folder name.
        :returns: Statistics: repository, dictionary build, files skipped, chunks written/deleted, repairs,
            vectors, seconds.
        :raises index_files.IndexLockedError: The lock is still held after `lock_timeout`.
        :raises ValueError: `repo` is not a usable name.
        """
        folder = Path(root)
        if not folder.is_dir():
            raise FileNotFoundError(f"{root}: not a folder")
        started = time.perf_counter()
        # One writer per index folder; the pipeline (whose stores load the index) is built only once it is ours.
        with index_files.index_lock(self.index_dir, timeout=lock_timeout, on_wait=_say_waiting(self.index_dir)):
            repaired = index_repair.prepare_for_indexing(self.index_dir)
            name = repositories.repository_for_root(self.index_dir, folder, repo)
            retrieval = self._retrieval_for_build()
            index_mode.record_retrieval(self.index_dir, retrieval)
            semantic = index_mode.choose_semantic_hints(self.index_dir, retrieval, self.semantic_hints)
            index_mode.record_semantic_hints(self.index_dir, semantic)
            # Progressive: the lexical pipeline writes the chunks, `fill_vectors` their vectors afterwards.
            progressive = retrieval == "hybrid" and self.backend == "embedded"
            lexical_build = retrieval == "lexical" or progressive
            pipeline = self.load_pipeline(  # its chunks unseen by queries until saved
                "indexing_lexical" if lexical_build else "indexing", writer=index_files.new_build_id()
            )
            try:
                output = pipeline.run(
                    {"root": str(folder), "repo": name},
                    include_outputs_from={"dictionary_builder", "reader", "planner"},
                )
                documents = repositories.count_repository_documents(_writer_store(pipeline), name)
            except Exception as error:
                first_line = (str(error).splitlines() or [""])[0][:300]
                repositories.record_repository(
                    self.index_dir, name, root=str(folder.resolve()), last_error=f"{type(error).__name__}: {first_line}"
                )
                raise
            finally:
                for _, instance in pipeline.walk():
                    store = getattr(instance, "document_store", None)
                    if isinstance(store, CodeIndexDocumentStore):
                        store.discard()
        self._query = None  # the next ask reloads the changed index
        builder = output.get("dictionary_builder", {})
        reader = output.get("reader", {})
        planner = output.get("planner", {})
        persisted = output.get("persister", {})
        repositories.record_repository(
            self.index_dir,
            name,
            root=str(folder.resolve()),
            documents=documents,
            symbols=builder.get("stats", {}).get("symbols"),
            dictionary_version=builder.get("stats", {}).get("version"),
        )
        stats = {
            "repo": name,
            "root": str(folder.resolve()),
            "index_dir": str(self.index_dir),
            "dictionary": builder.get("stats", {}),
            "files": len(reader.get("documents", [])),
            "files_changed": len(planner.get("changed", [])),
            "files_removed": len(planner.get("removed_files", [])),
            "skipped": reader.get("skipped", [])
            + [s for s in builder.get("skipped", []) if s not in reader.get("skipped", [])],
            "sync": persisted.get("stats", {}),
            "repaired": repaired,
            "retrieval": retrieval,
            "seconds": round(time.perf_counter() - started, 3),
        }
        if not progressive:
            self._prime_keyword_index()
            if semantic:
                stats["cards"] = self.refresh_cards()
            stats["seconds"] = round(time.perf_counter() - started, 3)
            return stats

        count = vector_count(self.index_dir)
        stats["answerable_seconds"] = stats["seconds"]
        stats["vectors"] = count.to_dict() if count else None
        if on_answerable is not None:
            on_answerable(stats)
        self._prime_keyword_index()
        if semantic and (vectors if cards is None else cards):
            # Questions are answered meanwhile; before the chunk vectors: cards are several times cheaper. Left to
            # the fill when it runs later (`--background`: 60 s of a 68 s return on pytest's 260 files were these).
            stats["cards"] = self.refresh_cards()
        elif semantic:
            stats["cards_deferred"] = True  # for `fill_vectors(cards=True)` (`code-alias embed`)
        if vectors and count is not None and not count.complete:
            stats["vector_fill"] = self.fill_vectors(lock_timeout=lock_timeout, on_progress=on_progress)
            stats["vectors"] = stats["vector_fill"]["vectors"]
        stats["seconds"] = round(time.perf_counter() - started, 3)
        return stats

    def _prime_keyword_index(self) -> None:
        """
        Build the BM25 index of the saved chunks now (it is saved in the user cache, keyed by the chunks), so that
        the first question after indexing finds it instead of building it: about 5 s of a first `ask` on Django 3.0,
        better spent here where the index build already shows its progress. Best effort: a failure is logged and
        the first question builds it as before.
        """
        if self.backend != "embedded":
            return
        try:
            CodeBM25Retriever(document_store=CodeIndexDocumentStore(index_dir=str(self.index_dir))).warm_up()
        except (OSError, CodeAliasError) as error:
            logger.warning("code-alias: the keyword index was not prepared ahead (%s); the first ask builds it", error)

    def refresh_cards(self) -> dict[str, Any]:
        """
        Embed the symbol cards of the current dictionary (only the new card texts; `indexing.card_vectors`) with the
        query pipeline's model, into this index folder.
        """
        if self._card_embed is None:  # kept: a server's syncs refresh cards without loading the model again
            self._card_embed = card_embedder(model=self._question_model(), cache_dir=str(self.embedding_cache))
        embed = self._card_embed
        dictionary = self.code_index.dictionary.dictionary
        return refresh_card_vectors(self.index_dir, dictionary, embed)

    def _question_model(self) -> str:
        """The model the query pipeline embeds questions with (its `question_embedder`), which cards must share."""
        path = pipeline_file(self.backend, "query_lexical_semantic", self.pipelines)
        spec = (yaml.safe_load(path.read_text(encoding="utf-8")).get("components") or {}).get("question_embedder")
        params = spec.get("init_parameters", {}) if isinstance(spec, dict) else {}
        return str(params.get("model") or DEFAULT_MODEL)

    def chunk_embedder(self) -> Any:
        """
        The chunk embedder of this backend's indexing pipeline (`indexing.yml`'s `embedder`), warmed up, with its
        vector cache in this index folder (or the shared cache the environment names).
        """

        path = pipeline_file(self.backend, "indexing", self.pipelines)
        spec = (yaml.safe_load(path.read_text(encoding="utf-8")).get("components") or {}).get("embedder")
        if not isinstance(spec, dict) or "type" not in spec:
            raise ValueError(f"{path}: no 'embedder' component to compute the chunk vectors with")
        bind_to_index({"components": {"embedder": spec}}, self.index_dir)
        embedder: Any = component_from_dict(import_class_by_name(spec["type"]), spec, "embedder", self._callbacks)
        if hasattr(embedder, "progress_bar"):
            embedder.progress_bar = False  # the fill shows one bar over all its rounds
        warm_up = getattr(embedder, "warm_up", None)
        if callable(warm_up):
            warm_up()
        return embedder

    def fill_vectors(
        self,
        *,
        lock_timeout: float | None = None,
        on_progress: Callable[[int, int], None] | None = None,
        checkpoint_seconds: float | None = None,
        embedder: Any = None,
        cards: bool = False,
    ) -> dict[str, Any]:
        """
        Compute the chunk vectors a progressive index still lacks (`vector_fill.VectorFiller`): resumable, saved
        every `checkpoint_seconds`, one fill per index folder at a time (a second one waits for the first).

        :param lock_timeout: Seconds to wait for the index lock at each save; None waits.
        :param on_progress: Called with (chunks with a vector, chunks) after every round.
        :param checkpoint_seconds: Seconds of embedding between two saves (default `vector_fill.CHECKPOINT_SECONDS`).
        :param embedder: The chunk embedder; None = `chunk_embedder()`.
        :param cards: First make the symbol cards of semantic hints current (what `index(cards=False)` left; only
            the new card texts are embedded, nothing when they are current).
        :returns: `{"embedded", "vectors": {embedded, total, percent}, "saves", "seconds"}`, and `cards` (their
            statistics) when they were refreshed.
        :raises ValueError: Not a hybrid index on the embedded default.
        """

        if self.backend != "embedded":
            raise ValueError("vectors are filled progressively only on the embedded default backend")
        self.check_index()
        if index_mode.recorded_retrieval(self.index_dir) == "lexical":
            raise index_mode.RetrievalMismatchError(
                f"the index in {self.index_dir} was built with --lexical (no vectors); build a hybrid index in "
                f"another folder: `code-alias index PATH --index-dir OTHER`"
            )
        with vector_fill.fill_lock(self.index_dir, on_wait=_say_filling(self.index_dir)):
            refreshed = None
            if cards and index_mode.recorded_semantic_hints(self.index_dir):
                refreshed = self.refresh_cards()  # semantic hints from here on, before the longer chunk fill
            filler = vector_fill.VectorFiller(
                self.index_dir,
                embedder=embedder if embedder is not None else self.chunk_embedder(),
                checkpoint_seconds=vector_fill.CHECKPOINT_SECONDS if checkpoint_seconds is None else checkpoint_seconds,
                lock_timeout=lock_timeout,
                on_progress=on_progress,
            )
            result = filler.run()
        if refreshed is not None:
            result["cards"] = refreshed
        return result

    def remove_repository(self, name: str, *, lock_timeout: float | None = None) -> dict[str, Any]:
        """
        Take repository `name` out of the index: its documents, and its symbols, packages and files from the
        dictionary; the other repositories keep answering. Holds the writer lock; the new build becomes current
        as one (dictionary and documents together).

        :param name: The repository's name (as `status` lists it).
        :param lock_timeout: Seconds to wait for another writer; None waits.
        :returns: The repository, the chunks deleted, the repositories left, seconds.
        :raises IndexMissingError: No index in the folder.
        :raises KeyError: The index holds no repository of that name (the message lists those it holds).
        """

        started = time.perf_counter()
        with index_files.index_lock(self.index_dir, timeout=lock_timeout, on_wait=_say_waiting(self.index_dir)):
            index_repair.prepare_for_indexing(self.index_dir)
            manifest = index_files.current_manifest(self.index_dir)
            if manifest is None or manifest.dictionary is None:
                raise IndexMissingError(f"no index at {self.index_dir}")
            dictionary = index_delta.load_dictionary(self.index_dir, manifest.dictionary)
            name = repositories.as_recorded(name, dictionary.repositories)  # any case, as elsewhere
            remaining = without_repository(dictionary, name)
            retrieval = index_mode.recorded_retrieval(self.index_dir) or "hybrid"
            lexical_build = retrieval == "lexical" or self.backend == "embedded"  # no embedder needed to delete
            pipeline = self.load_pipeline(
                "indexing_lexical" if lexical_build else "indexing", writer=index_files.new_build_id()
            )
            try:
                plan = pipeline.get_component("planner").run(documents=[], repo=name)
                removed = pipeline.get_component("writer").run(
                    documents=[], removed_files=plan["removed_files"], repo=name
                )
                pipeline.get_component("persister").run(stats=removed["stats"], dictionary=remaining)
            finally:
                for _, instance in pipeline.walk():
                    store = getattr(instance, "document_store", None)
                    if isinstance(store, CodeIndexDocumentStore):
                        store.discard()
        repositories.forget_repository(self.index_dir, name)
        self._query = None
        return {
            "repo": name,
            "deleted": removed["deleted"],
            "repositories": sorted(remaining.repositories),
            "seconds": round(time.perf_counter() - started, 3),
        }

    def _retrieval_for_build(self) -> index_mode.Retrieval:
        if self.llm:  # the LLM rewrite runs on the hybrid pipelines
            return index_mode.choose_for_build(self.index_dir, False, has_documents=self._has_documents())
        return index_mode.choose_for_build(self.index_dir, self.lexical, has_documents=self._has_documents())

    def _has_documents(self) -> bool:
        if self.backend != "embedded":
            return index_files.index_exists(self.index_dir)
        manifest = index_files.current_manifest(self.index_dir)
        return bool(manifest is not None and manifest.documents is not None and manifest.documents.count != 0)

    @property
    def retrieval(self) -> index_mode.Retrieval:
        """
        The retrieval questions run with: "lexical" or "hybrid" (`lexical=None` follows the index).

        :raises index_mode.RetrievalMismatchError: Hybrid (or the LLM pipeline) asked of a lexical index.
        """
        if self.llm:
            index_mode.choose_for_query(self.index_dir, False)
            return "hybrid"
        return index_mode.choose_for_query(self.index_dir, self.lexical)

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

    def check_index(self) -> None:
        """
        Check the index folder before answering from it (cheap: its manifest and its files' sizes).

        :raises IndexMissingError: No index in the folder.
        :raises EmptyIndexError: An index of no chunks ("nothing indexed under DIR").
        :raises index_files.IndexDamagedError: A damaged or truncated file (named, with the fix).
        """
        folder = self.index_dir
        if self.backend != "embedded":
            if not index_files.index_exists(folder):
                raise IndexMissingError(f"no index at {folder}; {index_files.rebuild_hint(folder)}")
            return
        manifest = index_files.current_manifest(folder)
        if manifest is None or manifest.dictionary is None:
            raise IndexMissingError(f"no index at {folder}; build it with `code-alias index PATH --index-dir {folder}`")
        documents = manifest.documents
        if documents is None or documents.count == 0:
            raise EmptyIndexError(
                f"nothing indexed under {folder}: no source files were found, or indexing did not finish; "
                f"run `code-alias index PATH --index-dir {folder}`"
            )
        if not manifest.legacy:
            for artifact in (manifest.dictionary, documents):
                index_files.check_artifact(folder, artifact)

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
            which repository the question is about (`retrieval.repository_selection`: the question's words per
            repository, and where each repository's files rank) and narrow to it when the posterior is at least
            `FILTER_POSTERIOR` (kept only when that found something). Off by default. A weaker posterior is only
            recorded: the ranking stage has no mixed-index data to fit a repository prior on, so it does not boost.
            The answer's `rewrite["inferred_repository"]` records it (None when nothing was inferred).
        :raises repositories.UnknownFilterError: `repo` or `package` names nothing the index holds (the message
            lists what it holds).
        :raises ValueError: An empty question, `mode="llm"` on a search built without `llm=True`, or a bad
            `repo`/`package` value.
        """
        if not question or not question.strip():
            raise ValueError("question must be a non-empty string")
        if mode not in (None, "dictionary", "llm"):
            raise ValueError(f"mode must be 'dictionary' or 'llm', got {mode!r}")
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
