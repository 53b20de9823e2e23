"""The writing side of `CodeSearch`: index a repository, fill the vectors of a progressive index, remove one.

Every write holds the index folder's lock, runs the indexing pipelines (`pipelines/indexing*.yml`) on a private copy
of the chunks, and makes the new dictionary and documents current together.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from haystack import Pipeline
from haystack.core.serialization import component_from_dict, import_class_by_name

from ..core.repositories import without_repository
from ..errors import CodeAliasError
from ..indexing import index_delta, index_files, index_mode, index_repair, repositories, vector_fill
from ..indexing.card_vectors import card_embedder, refresh_card_vectors
from ..indexing.store import CodeIndexDocumentStore
from ..indexing.vector_fill import vector_count
from ..paths import (
    DEFAULT_MODEL,
)
from ..retrieval.bm25 import CodeBM25Retriever
from .pipelines import IndexMissingError, PipelineLoading, _writer_store, bind_to_index, pipeline_file

logger = logging.getLogger(__name__)


def _say_waiting(folder: Path) -> Callable[[str], None]:
    def say(holder: str) -> None:
        logger.warning("code-alias: waiting for the index lock of %s, held by %s", folder, holder)

    return say


def _say_filling(folder: Path) -> Callable[[str], None]:
    def say(holder: str) -> None:
        logger.warning("code-alias: waiting for the vector fill of %s, run by %s", folder, holder)

    return say


class IndexBuilding(PipelineLoading):
    """Index a code tree into the folder (`index`), fill its vectors (`fill_vectors`), remove a repository."""

    _card_embed: Callable[[list[str]], Any] | None
    _query: Pipeline | None

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
