"""A warm, incremental sync for a server: the pushed paths are re-read, nothing else is.

`code-alias index` (`CodeSearch.index`) loads its pipeline and the index from disk, walks the tree, reads and hashes
every file, and the server's queries then read the new build back and rebuild its BM25 index: seconds on a large
repository. `WarmIndexer` keeps what a server's syncs share between them, and does only what a push needs:

- the indexing pipeline's components (`indexing_lexical.yml`) and its writer store stay loaded between syncs (the
  store picks up a build another process saved: `CodeIndexDocumentStore.reload`); the dictionary the last sync
  saved is reused without reading it back (`DictionaryHandle.loaded`);
- with the paths a push names (`serving.live.parse_push`, queued on `refresh.Syncer`), only those files are read;
  the dictionary is refreshed from them alone when they are files the last build read
  (`DictionaryBuilder.refresh_paths`, else it walks), and files the last build did not know are admitted only if
  a walk of the tree lists them (ignored, vendored or generated files stay out, as in a full build); a path that
  resolves outside the root (a symlink leading out) is refused, and what the index held for it is removed.
  Without paths (a push that lists none, `code-alias sync` from cron), or with a `.gitignore`, nickname file or
  package manifest among them (they decide which other files belong), the tree is walked and compared by
  content, as `code-alias index` does;
- the new build is saved with the documents file's unchanged chunks not serialised again, and handed to the
  queries of the same process in one step (`store.serve_documents`), with the BM25 index (and the other values
  derived from the chunks) and the dictionary's hint index built before the swap, so the first question after
  it pays for none of them.

The guarantees of `CodeSearch.index` hold: the index lock is taken (a sync from cron or a person queues), what a
killed run left is repaired first, the dictionary and the documents become current together (one manifest
replace), a failure leaves the previous build serving (the warm state is dropped and reloaded next time), and a
rename keeps the old name as an alias (the builder's own history). A hybrid index on the embedded default gets
the changed chunks' vectors afterwards (`vector_fill`, the progressive indexing of `code-alias index`): the new
chunks answer lexically from the swap on, and `ask` fuses the vectors that exist.
"""

from __future__ import annotations

import gc
import logging
import os
import threading
import time
from pathlib import Path
from typing import Any

from haystack import Document, Pipeline

from ..core.builder import DEFAULT_NICKNAME_FILES
from ..core.manifests import MANIFEST_NAMES
from ..core.model import AliasDictionary, Skipped
from ..core.walker import (
    DEFAULT_EXCLUDED_DIRS,
    UnsafePathError,
    WalkConfig,
    read_text_file,
    resolve_inside,
    walk_repository,
)
from ..indexing import index_files, index_mode, index_repair, repositories
from ..indexing.dictionary_handle import DictionaryHandle
from ..indexing.index_delta import compaction_due, load_dictionary
from ..indexing.reader import is_source_path, source_document
from ..indexing.store import (
    CodeIndexDocumentStore,
    holding_served,
    restamp_serving,
    serve_documents,
)
from ..paths import DICTIONARY_FILE
from ..rewriting.hints import HintIndex
from .search import CodeSearch

logger = logging.getLogger(__name__)

# Chunks without a vector that `WarmIndexer.fill_vectors` embeds in one go; more go to the resumable filler.
WARM_FILL_LIMIT = 2_000
# Syncs between two full collections of what `WarmIndexer.settle` froze.
UNFREEZE_EVERY = 50


class WarmIndexer:
    """
    Refreshes one index folder on the embedded default, keeping its indexing components loaded between syncs.

    ### Usage example

    ```python
    from haystack_integrations.components.code_alias.app.push_sync import WarmIndexer

    indexer = WarmIndexer(".code-alias")
    stats = indexer.sync("path/to/repo", paths=["pkg/payments.py"])   # a push that changed one file
    print(stats["files_changed"], stats["seconds"])
    indexer.close()
    ```

    :param index_dir: The index folder (built by `code-alias index`).
    :param lexical: As `CodeSearch`; None follows the index.
    """

    def __init__(self, index_dir: str | os.PathLike[str], *, lexical: bool | None = None) -> None:

        self.search = CodeSearch(index_dir, backend="embedded", lexical=lexical)
        self.index_dir = self.search.index_dir
        self._pipeline: Pipeline | None = None
        self._embedder: Any = None
        self._settled = 0
        self._lock = threading.Lock()

    # ---- the warm components ---------------------------------------------------------------------------------
    def _components(self) -> Pipeline:

        if self._pipeline is None:
            self._pipeline = self.search.load_pipeline(  # its chunks unseen by queries until saved
                "indexing_lexical", writer=f"warm-{index_files.new_build_id()}"
            )
        return self._pipeline

    def fill_vectors(self, *, lock_timeout: float | None = None) -> dict[str, Any] | None:
        """
        Give the chunks of a hybrid index that lack a vector theirs (after a sync: the changed chunks), with the
        chunk embedder kept loaded, and hand the result to this process's queries as `sync` does. A backlog over
        `WARM_FILL_LIMIT` chunks (an index built with `--background`) goes to the resumable `CodeSearch.fill_vectors`.

        :returns: `{"embedded", "seconds"}`, or None for a lexical index.
        """

        if index_mode.recorded_retrieval(self.index_dir) != "hybrid":
            return None
        started = time.perf_counter()
        with self._lock:
            if self._embedder is None:
                self._embedder = self.search.chunk_embedder()
            writer: Any = self._components().get_component("writer")
            store = writer.document_store
            with index_files.index_lock(self.index_dir, timeout=lock_timeout):
                store.reload()
                pending = [d for d in store.storage.values() if d.embedding is None]
            if len(pending) > WARM_FILL_LIMIT:
                return self.search.fill_vectors(lock_timeout=lock_timeout, embedder=self._embedder)
            if not pending:
                return {"embedded": 0, "seconds": round(time.perf_counter() - started, 3)}
            out = self._embedder.run(documents=pending)["documents"]
            vectors = {d.id: list(v.embedding) for d, v in zip(pending, out, strict=True) if v.embedding is not None}
            try:
                with index_files.index_lock(self.index_dir, timeout=lock_timeout):
                    store.reload()  # a build another process saved meanwhile: its chunks, with these vectors
                    store.set_embeddings(vectors)
                    prepared = self.search.code_index.prepare_served(store.storage.values())
                    with holding_served(self.index_dir):
                        store.persist()
                        serve_documents(store, prepared)
            except Exception:
                self.close()
                raise
        return {"embedded": len(vectors), "seconds": round(time.perf_counter() - started, 3)}

    def compact(self, *, lock_timeout: float | None = None, force: bool = False) -> dict[str, Any] | None:
        """
        Fold the chains of deltas the syncs appended to the dictionary and the documents (`index_delta`) into
        whole files, when they have grown past the soft limit (`index_delta.compaction_due`) or with `force`.

        The content does not change, so this process's queries keep what they serve (the served build and the
        dictionary handle take the new files' stamp, nothing is reloaded or rebuilt); other processes read the
        same content from fewer files. Runs under the index lock like a sync; a failure leaves the chains as they
        were (the manifest is replaced last), and the next sync or compaction tries again.

        :returns: `{"deltas", "seconds"}` (how many deltas were folded), or None when nothing was due.
        """

        started = time.perf_counter()
        with self._lock, index_files.index_lock(self.index_dir, timeout=lock_timeout):
            manifest = index_files.current_manifest(self.index_dir)
            if manifest is None or manifest.legacy or not (force or compaction_due(manifest)):
                return None
            folded = sum(len(a.deltas) for a in (manifest.dictionary, manifest.documents) if a is not None)
            writer: Any = self._components().get_component("writer")
            store = writer.document_store
            try:
                store.reload()
                before = store.loaded_stamp
                handle = DictionaryHandle.for_path(self.index_dir / DICTIONARY_FILE)
                dictionary = handle.loaded()  # what the queries hold: it keeps its hint index
                if dictionary is None and manifest.dictionary is not None:
                    dictionary = load_dictionary(self.index_dir, manifest.dictionary)
                with holding_served(self.index_dir), handle.holding():
                    store.persist(dictionary=dictionary, compact=True)
                    with self.search.code_index.lock:  # the chunks' and the dictionary's new stamps in one step
                        restamp_serving(store, before)
                        if dictionary is not None:
                            handle.install(dictionary)
            except Exception:
                self.close()
                raise
        return {"deltas": folded, "seconds": round(time.perf_counter() - started, 3)}

    def idle(self, *, lock_timeout: float | None = None) -> None:
        """
        What a server does between syncs, off their path: save the BM25 index the last sync built, for other
        processes (`StoreCaches.save_deferred`), and compact the chains of deltas when due (`compact`).
        """

        self.search.code_index.derived.save_deferred()
        self.compact(lock_timeout=lock_timeout)

    def settle(self) -> None:
        """
        After a sync has been recorded: move what the process holds now (the served build, the warm components,
        their caches) out of the garbage collector's sight (`gc.freeze`), so the full collections that the next
        sync's allocations trigger scan only new objects (0.2-0.5 s of pauses per sync on Django 3.0 before, about
        0.05 s after). Chunks, symbols and caches are freed by reference counting when replaced, frozen or not;
        every `UNFREEZE_EVERY` syncs everything is unfrozen and collected once, for what only the cycle
        collector frees.
        """
        self._settled += 1
        if self._settled % UNFREEZE_EVERY == 0:
            gc.unfreeze()
            gc.collect()
        gc.freeze()

    def close(self) -> None:
        """Let the warm writer store go (its documents leave memory); the next sync loads them again."""

        pipeline, self._pipeline = self._pipeline, None
        if pipeline is None:
            return
        for _, instance in pipeline.walk():
            store = getattr(instance, "document_store", None)
            if isinstance(store, CodeIndexDocumentStore):
                store.discard()

    # ---- one sync ------------------------------------------------------------------------------------------
    def sync(
        self,
        root: str | os.PathLike[str],
        *,
        repo: str | None = None,
        paths: list[str] | tuple[str, ...] | None = None,
        lock_timeout: float | None = None,
    ) -> dict[str, Any]:
        """
        Refresh the index of `root` (repository `repo`) and make the new build serve this process's queries.

        :param paths: The files a push says were added, modified or removed (relative to `root`); None = walk the
            tree and compare every file.
        :param lock_timeout: Seconds to wait for another writer of the index; None waits.
        :returns: Statistics as `CodeSearch.index` gives them, plus `paths` (None after a walk) and `refused`.
        :raises index_files.IndexLockedError: The lock is still held after `lock_timeout`.
        """
        folder = Path(root)
        if not folder.is_dir():
            raise FileNotFoundError(f"{root}: not a folder")
        started = time.perf_counter()
        with self._lock, index_files.index_lock(self.index_dir, timeout=lock_timeout):
            repaired = index_repair.prepare_for_indexing(self.index_dir)
            if repaired:
                self.close()
            name = repositories.repository_for_root(self.index_dir, folder, repo)
            retrieval = self.search._retrieval_for_build()
            index_mode.record_retrieval(self.index_dir, retrieval)
            if paths is not None and any(_changes_the_walk(path) for path in paths):
                paths = None  # which files belong may have changed anywhere: compare the whole tree
            try:
                output = self._run(folder, name, None if paths is None else list(paths))
            except Exception as error:
                self.close()  # the writer store may hold half a sync: load the saved build next time
                first_line = (str(error).splitlines() or [""])[0][:300]
                repositories.record_repository(
                    self.index_dir, name, root=str(folder.resolve()), last_error=f"{type(error).__name__}: {first_line}"
                )
                raise
        builder, planner, persisted = output["dictionary_builder"], output["planner"], output["persister"]
        repositories.record_repository(
            self.index_dir,
            name,
            root=str(folder.resolve()),
            documents=output["documents"],
            symbols=builder["stats"].get("symbols"),
            dictionary_version=builder["stats"].get("version"),
        )
        cards = None
        if index_mode.recorded_semantic_hints(self.index_dir):  # only the cards whose text changed are embedded
            cards = self.search.refresh_cards()
        return {
            "cards": cards,
            "repo": name,
            "root": str(folder.resolve()),
            "index_dir": str(self.index_dir),
            "dictionary": builder["stats"],
            "files": output["files"],
            "files_changed": len(planner["changed"]),
            "files_removed": len(planner["removed_files"]),
            "skipped": output["skipped"],
            "refused": output["refused"],
            "paths": output["paths"],
            "sync": persisted["stats"],
            "repaired": repaired,
            "retrieval": retrieval,
            "served": output["served"],
            "phases": output["phases"],
            "seconds": round(time.perf_counter() - started, 3),
        }

    def _run(self, folder: Path, name: str, paths: list[str] | None) -> dict[str, Any]:
        """The indexing pipeline's components in its graph's order, on the pushed paths or on the whole tree."""

        pipeline = self._components()
        builder: Any = pipeline.get_component("dictionary_builder")
        reader: Any = pipeline.get_component("reader")
        planner: Any = pipeline.get_component("planner")
        splitter: Any = pipeline.get_component("splitter")
        writer: Any = pipeline.get_component("writer")
        persister: Any = pipeline.get_component("persister")
        store = writer.document_store
        phases: dict[str, float] = {}
        clock = time.perf_counter()

        def lap(phase: str) -> None:
            nonlocal clock
            now = time.perf_counter()
            phases[phase] = round(now - clock, 3)
            clock = now

        store.reload()  # another process may have saved a build since the last sync
        lap("reload")
        built = builder.run(root=str(folder), repo=name, paths=paths)
        lap("dictionary")
        dictionary: AliasDictionary = built["dictionary"]
        refused: list[dict[str, str]] = []
        if paths is None:
            read = reader.run(root=str(folder), dictionary=dictionary, repo=name)
            documents, skipped = read["documents"], read["skipped"]
        else:
            known = set(dictionary.repositories[name].files if dictionary.repositories else dictionary.files)
            known.update(d.meta.get("file_path") for d in store.storage.values() if d.meta.get("repo", name) == name)
            documents, skipped, refused = read_pushed(reader, folder, paths, known, dictionary, name)
        lap("read")
        plan = planner.run(documents=documents, repo=name, paths=paths)
        chunks = splitter.run(documents=plan["changed"], dictionary=dictionary)["documents"] if plan["changed"] else []
        written = writer.run(
            documents=chunks, removed_files=plan["removed_files"], changed_files=plan["changed_files"], repo=name
        )
        lap("plan_split_write")
        # What the queries derive from the chunks (BM25 index...) and the hint index, built before the swap.
        prepared = self.search.code_index.prepare_served(store.storage.values())
        lap("prepare")
        handle = DictionaryHandle.for_path(self.index_dir / DICTIONARY_FILE)
        hints = None
        if handle.serving:
            served_dictionary, served_hints = handle.held()
            if served_dictionary is not None and served_hints is not None:
                hints = served_hints.updated(served_dictionary, dictionary)  # only the names the push changed
            if hints is None:
                hints = HintIndex(dictionary)
        lap("hints")
        # The queries of this process keep the old build until the handover instead of reading the new files back.
        with holding_served(self.index_dir), handle.holding():
            persisted = persister.run(stats=written["stats"], dictionary=dictionary)
            lap("persist")
            # One step for the questions: the new chunks and the new dictionary together (a question takes both
            # under this lock, `CodeIndex.current_generation`), never one without the other.
            with self.search.code_index.lock:
                served = serve_documents(store, prepared)
                handle.install(dictionary, hints)
        lap("handover")
        return {
            "dictionary_builder": built,
            "planner": plan,
            "persister": persisted,
            "documents": repositories.count_repository_documents(store, name),
            "files": len(documents),
            "skipped": skipped + [s for s in built["skipped"] if s not in skipped],
            "refused": refused,
            "paths": None if paths is None else len(paths),
            "served": served,
            "phases": phases,
        }


def _changes_the_walk(path: str) -> bool:
    """A pushed file that decides which other files are read (ignore rules, nicknames, package manifests)."""
    name = path.rsplit("/", 1)[-1]
    return name == ".gitignore" or name in DEFAULT_NICKNAME_FILES or name in MANIFEST_NAMES


def read_pushed(
    reader: Any,
    root: Path,
    paths: list[str],
    known: set[str],
    dictionary: AliasDictionary | None,
    repo: str | None,
) -> tuple[list[Document], list[dict[str, str]], list[dict[str, str]]]:
    """
    The file Documents of the pushed `paths` that belong in the index, as `CodeFileReader` would make them.

    A path the index already knows (`known`) is read again; one it does not know is admitted only when a walk of
    the tree (with the reader's settings) lists it, so ignored, vendored and generated files stay out. A path that
    does not exist, is not readable text, or resolves outside `root` yields no Document: the planner then removes
    what the index held of it.

    :returns: (documents, skipped, refused), the last two as `{"path", "reason"}`.
    """
    documents: list[Document] = []
    skipped: list[dict[str, str]] = []
    refused: list[dict[str, str]] = []
    unknown: list[str] = []
    for rel_path in dict.fromkeys(paths):
        if not is_source_path(rel_path):
            continue
        try:
            real = resolve_inside(root, rel_path)
        except UnsafePathError as error:
            refused.append({"path": rel_path, "reason": str(error)})
            continue
        if rel_path not in known:
            if real.exists():
                unknown.append(rel_path)
            continue
        read = read_text_file(real, max_bytes=reader.max_file_bytes)
        if isinstance(read, Skipped):
            if real.exists():
                skipped.append({"path": rel_path, "reason": read.reason})
            continue
        documents.append(source_document(rel_path, read[0], read[1], dictionary, repo))
    if unknown:
        wanted = set(unknown)
        config = WalkConfig(
            exclude_dirs=frozenset(reader.exclude_dirs) if reader.exclude_dirs is not None else DEFAULT_EXCLUDED_DIRS,
            max_file_bytes=reader.max_file_bytes,
            respect_gitignore=reader.respect_gitignore,
        )
        walk = walk_repository(root, config, wanted=lambda rel_path: rel_path in wanted)
        skipped.extend({"path": s.path, "reason": s.reason} for s in walk.skipped if s.path in wanted)
        for entry in walk.files:
            read = read_text_file(entry, max_bytes=reader.max_file_bytes)
            if isinstance(read, Skipped):
                skipped.append({"path": read.path, "reason": read.reason})
                continue
            documents.append(source_document(entry.rel_path, read[0], read[1], dictionary, repo))
    if refused:
        logger.warning("code-alias: %d pushed path(s) refused: %s", len(refused), refused[0]["reason"])
    return documents, skipped, refused
