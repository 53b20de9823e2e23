"""Identifier-aware BM25 over the embedded store, on bm25s.

Haystack's in-memory BM25 lower-cases before tokenising, so `withStripeBackoff` can only ever match
`withstripebackoff`. This retriever indexes every identifier both whole and split into its words
(`core.identifiers.code_tokenize`), indexes each chunk's file path and qualified name with its code, and
scores the rewrite's symbols and packages as separate, boosted sub-queries.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import json
import logging
import os
import shutil
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import bm25s
import numpy as np
from haystack import Document, component
from haystack.document_stores.in_memory import InMemoryDocumentStore
from rapidfuzz import fuzz, process

from ..core.identifiers import code_tokenize, split_identifier
from ..errors import CodeAliasError
from ..indexing.bm25_build import TermCache, build_model
from ..indexing.store_cache import Building, Derived, best_first
from ..paths import user_cache_dir
from ..serialization import SerializedByInitParameters
from .question_text import clean_question_text


def document_head_text(document: Document) -> str:
    """A chunk's identity: its path, qualified name, symbol and package."""
    meta = document.meta
    return " ".join(str(meta.get(key) or "") for key in ("file_path", "qualified_name", "symbol", "package"))


def document_search_text(document: Document) -> str:
    """What BM25 sees of a chunk: its head (written out twice: strong evidence) and its code."""
    head = document_head_text(document)
    return f"{head}\n{head}\n{document.content or ''}"


# Bump when what is indexed changes, so saved indexes of the old shape are rebuilt.
INDEX_FORMAT = 2
# Saved BM25 indexes kept in the user cache (least recently used ones are deleted beyond this).
CACHE_ENTRIES = 16
_SIZES_FILE = "sizes.json"
logger = logging.getLogger(__name__)
T = TypeVar("T")


def bm25_cache_dir() -> Path:
    """Where saved BM25 indexes live: `<user cache dir>/bm25` (see `paths.user_cache_dir`)."""
    return user_cache_dir() / "bm25"


def _prune(cache: Path, *, keep: Path, entries: int = CACHE_ENTRIES) -> None:
    """Delete the least recently used saved indexes beyond `entries` (never `keep`)."""
    try:
        saved = sorted(
            (p for p in cache.glob("bm25-*") if p.is_dir() and p != keep), key=lambda p: p.stat().st_mtime, reverse=True
        )
    except OSError:
        return
    for stale in saved[max(0, entries - 1) :]:
        shutil.rmtree(stale, ignore_errors=True)


class Bm25IndexError(RuntimeError, CodeAliasError):
    """A saved BM25 index that cannot answer (damaged or written by another version)."""


class _Bm25Index:
    """Two BM25 models over the same chunks: the full text, and the head alone (where symbols are defined)."""

    def __init__(
        self,
        documents: list[Document],
        models: tuple[bm25s.BM25, bm25s.BM25],
        vocabularies: tuple[dict[str, int], dict[str, int]],
    ) -> None:
        self.documents = documents
        self.model, self.head_model = models
        self.vocabulary, self.head_vocabulary = vocabularies
        # What other modules compute once per index (`repository_evidence`'s chunk -> repository map), by the
        # function that makes it: it goes with the index, so it never outlives it or describes another one.
        self._memo: dict[Callable[[_Bm25Index], Any], Any] = {}
        self._memo_lock = threading.Lock()

    def memo(self, make: Callable[[_Bm25Index], T]) -> T:
        """`make(self)`, computed once for this index (thread-safe; two first callers may both compute it)."""
        with self._memo_lock:
            if make in self._memo:
                return self._memo[make]
        value = make(self)
        with self._memo_lock:
            return self._memo.setdefault(make, value)

    @staticmethod
    def _model(texts: list[list[str]], k1: float, b: float) -> tuple[bm25s.BM25, dict[str, int]]:
        model = bm25s.BM25(k1=k1, b=b)
        vocabulary: dict[str, int] = {}
        ids = [[vocabulary.setdefault(token, len(vocabulary)) for token in tokens or ["\x00"]] for tokens in texts]
        model.index(bm25s.tokenization.Tokenized(ids=ids, vocab=vocabulary), show_progress=False)
        return model, vocabulary

    @classmethod
    def build(cls, documents: list[Document], k1: float, b: float, terms_cache: TermCache) -> _Bm25Index:
        # Terms of chunks seen before (the unchanged ones, after a sync) come from `terms_cache`; see `bm25_build`.
        models = []
        for kind, text_of in (("full", document_search_text), ("head", document_head_text)):
            keys = [(kind, d.id, str(hash(d.content or ""))) for d in documents]

            def tokens_of(i: int, text_of: Callable[[Document], str] = text_of) -> list[str]:
                return code_tokenize(text_of(documents[i]))

            terms, vocabulary = terms_cache.terms(keys, tokens_of)
            model = build_model(terms, vocabulary, k1, b)
            models.append((model, model.vocab_dict))
        return cls(documents, (models[0][0], models[1][0]), (models[0][1], models[1][1]))

    def save(self, folder: Path) -> None:
        """
        Save atomically: into a temporary sibling folder, then one rename. The sizes of every file are recorded
        last, so `load` can tell a complete save from a damaged one. A failure (full disk, read-only cache) only
        costs the next process a rebuild.
        """
        try:
            folder.parent.mkdir(parents=True, exist_ok=True)
            partial = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
        except OSError as error:
            logger.debug("BM25 cache not saved (%s)", error)
            return
        try:
            for name, model, vocabulary in (
                ("full", self.model, self.vocabulary),
                ("head", self.head_model, self.head_vocabulary),
            ):
                model.save(str(partial / name), show_progress=False)
                (partial / name / "vocabulary.json").write_text(json.dumps(vocabulary), encoding="utf-8")
            (partial / "document_ids.json").write_text(json.dumps([d.id for d in self.documents]), encoding="utf-8")
            sizes = {str(f.relative_to(partial)): f.stat().st_size for f in sorted(partial.rglob("*")) if f.is_file()}
            (partial / _SIZES_FILE).write_text(json.dumps(sizes), encoding="utf-8")
            partial.rename(folder)
        except OSError as error:  # another process won the race, or the disk is full
            logger.debug("BM25 cache not saved (%s)", error)
            shutil.rmtree(partial, ignore_errors=True)

    @classmethod
    def load(cls, folder: Path, documents: list[Document]) -> _Bm25Index | None:
        """The saved index, or None when it is missing, damaged, or of other documents (then it is rebuilt)."""
        try:
            sizes = json.loads((folder / _SIZES_FILE).read_text(encoding="utf-8"))
            if any((folder / name).stat().st_size != size for name, size in sizes.items()):
                raise ValueError("a file's size differs from the one recorded when it was saved")
            ids = json.loads((folder / "document_ids.json").read_text(encoding="utf-8"))
            if ids != [d.id for d in documents]:
                return None
            loaded = []
            for name in ("full", "head"):
                vocabulary = json.loads((folder / name / "vocabulary.json").read_text(encoding="utf-8"))
                loaded.append((bm25s.BM25.load(str(folder / name), show_progress=False), vocabulary))
        except FileNotFoundError:
            return None
        except Exception as error:  # damaged: any reader error means "rebuild", never a failed question
            logger.warning("BM25 cache %s is damaged (%s: %s); rebuilding it", folder, type(error).__name__, error)
            shutil.rmtree(folder, ignore_errors=True)
            return None
        with contextlib.suppress(OSError):
            os.utime(folder)  # recently used: kept by `_prune`
        return cls(documents, (loaded[0][0], loaded[1][0]), (loaded[0][1], loaded[1][1]))

    def head_scores(self, tokens: list[str]) -> np.ndarray:
        return self._scores(self.head_model, self.head_vocabulary, tokens)

    def scores(self, tokens: list[str]) -> np.ndarray:
        return self._scores(self.model, self.vocabulary, tokens)

    def _scores(self, model: bm25s.BM25, vocabulary: dict[str, int], tokens: list[str]) -> np.ndarray:
        # bm25s adds an empty token to the vocabulary it is given; it is not a term of any document.
        known = [t for t in tokens if t and t in vocabulary]
        if not known or not self.documents:
            return np.zeros(len(self.documents), dtype=np.float32)
        try:
            return np.asarray(model.get_scores(known), dtype=np.float32)
        except ValueError as error:  # a saved index that does not match its vocabulary: say so, don't guess
            raise Bm25IndexError(f"the saved BM25 index does not match its vocabulary ({error}); re-index") from error


def closest_terms(terms: list[str], vocabulary: dict[str, int], *, per_term: int = 1) -> list[str]:
    """For each term, the vocabulary's most similar terms (rapidfuzz's normalised edit-distance ratio)."""
    words = [word for word in vocabulary if word and len(word) > 1]
    found: list[str] = []
    for term in terms:
        for match, _score, _ in process.extract(term, words, scorer=fuzz.ratio, limit=per_term):
            found.append(match)
    return found


def _save(index: _Bm25Index, folder: Path) -> None:
    index.save(folder)
    _prune(folder.parent, keep=folder)


# The BM25 index of each store's current documents, shared by every retriever instance reading that store; its
# values live with the store's owner (`store_cache.caches_of`: the folder's `CodeIndex`), with the term cache.
_INDEXES: Derived[_Bm25Index] = Derived("BM25 index")


@component
class CodeBM25Retriever(SerializedByInitParameters):
    """
    BM25 over an in-memory document store with a code-aware tokenizer and boosted symbol/package matches.

    Same inputs as the Elasticsearch BM25 retriever of this package, so pipelines swap backends by
    swapping the component.

    ### Usage example

    ```python
    from haystack_integrations.components.code_alias import CodeBM25Retriever, CodeIndexDocumentStore

    retriever = CodeBM25Retriever(document_store=CodeIndexDocumentStore(index_dir=".code-alias"), top_k=10)
    retriever.warm_up()
    result = retriever.run(query="payments retry helper", symbols=["withStripeBackoff"])
    for document in result["documents"]:
        print(document.meta["file_path"], document.meta["symbol"], document.score)
    ```

    :param document_store: An `InMemoryDocumentStore` (e.g. `CodeIndexDocumentStore`).
    :param top_k: Documents to return.
    :param symbol_boost: How far the rewrite's first symbol, matched against where things are defined (path and
        qualified name), can lift a chunk, as a fraction of the question's best BM25 score; the n-th symbol
        lifts 1/n of that.
    :param package_boost: The same for the rewrite's packages.
    :param k1: BM25 term-frequency saturation.
    :param b: BM25 length normalisation.
    :param clean_query: Remove issue-template noise (`retrieval.question_text`: URL payloads, HTML comments,
        "_No response_", task-list boilerplate) from the query before tokenising it. Off by default: neutral on
        SWE-bench Lite full text, on the JS/TS bug reports Acc@5 up and Acc@1 down by one question (BENCHMARKS.md 8).
    """

    def __init__(
        self,
        *,
        document_store: InMemoryDocumentStore,
        top_k: int = 10,
        symbol_boost: float = 0.5,
        package_boost: float = 0.1,
        k1: float = 1.2,
        b: float = 0.75,
        clean_query: bool = False,
        closest_terms: bool = True,
    ) -> None:
        if top_k <= 0:
            raise ValueError(f"top_k must be > 0, got {top_k}")
        self.document_store = document_store
        self.top_k = top_k
        self.symbol_boost = symbol_boost
        self.package_boost = package_boost
        self.k1 = k1
        self.b = b
        self.clean_query = clean_query
        self.closest_terms = closest_terms

    def warm_up(self) -> None:
        """Build (or reuse) the BM25 index of the store's current documents."""
        self._index()

    def _index(self) -> _Bm25Index:
        return _INDEXES.get(self.document_store, self._load_or_build, variant=f"{self.k1}:{self.b}")

    def _load_or_build(self, key: str, documents: list[Document], building: Building) -> _Bm25Index:
        """
        From the user cache when one was saved for these exact documents, else build (and save it there).

        The cache is keyed by the documents' ids (content hashes) and the BM25 parameters, not by where the
        index lives: a copied, moved or read-only index hits the same entry, and nothing a query does writes
        into the index folder. Only persistent stores (with a documents file) are cached on disk.
        """
        terms = building.caches.terms
        if getattr(self.document_store, "documents_path", None) is None:
            return _Bm25Index.build(documents, self.k1, self.b, terms)
        ids = hashlib.sha256("\n".join(d.id for d in documents).encode()).hexdigest()
        digest = hashlib.sha256(f"{ids}:{self.k1}:{self.b}:{INDEX_FORMAT}".encode()).hexdigest()[:24]
        cache = bm25_cache_dir()
        folder = cache / f"bm25-{digest}"
        index = _Bm25Index.load(folder, documents) if folder.is_dir() else None
        if index is None:
            index = _Bm25Index.build(documents, self.k1, self.b, terms)
            # A sync's swap waits for this build: it is saved for other processes once the server is idle
            # (`StoreCaches.save_deferred`), as saving serialises ~6 MB (0.2 s of the interpreter on Django 3.0).
            if building.ahead:
                building.caches.defer(functools.partial(_save, index, folder))
            else:
                _save(index, folder)
        return index

    @component.output_types(documents=list[Document], term_coverage=float)
    def run(
        self,
        query: str,
        symbols: list[str] | None = None,
        packages: list[str] | None = None,
        filters: dict[str, Any] | None = None,
        top_k: int | None = None,
    ) -> dict[str, Any]:
        """
        Retrieve chunks for a query.

        :param query: The BM25 text (question plus expansions).
        :param symbols: Identifiers from the rewrite; matched whole and by their words, boosted.
        :param packages: Package names from the rewrite, boosted less.
        :param filters: Haystack filters on document fields.
        :param top_k: Overrides the init `top_k`.
        :returns: `documents`, best first, with `score`, and `term_coverage`: the share of the query's distinct
            keyword terms that occur in the indexed chunks (0.0 for none or no term), how much of the question this
            code speaks of at all.
        """
        top_k = top_k or self.top_k
        index = self._index()
        text = (clean_question_text(query) or query) if self.clean_query else query
        tokens = code_tokenize(text)
        terms = set(tokens)
        coverage = sum(term in index.vocabulary for term in terms) / len(terms) if terms else 0.0
        if terms and coverage == 0.0 and self.closest_terms:
            # No word of the query is in the code: search with the closest words it does hold, so a question with
            # words never comes back empty (the ranking stage sees the coverage and says nothing matches well).
            tokens = closest_terms(sorted(terms), index.vocabulary)
        scores = index.scores(tokens)
        top = float(scores.max()) if len(scores) else 0.0
        for names, boost in ((symbols or [], self.symbol_boost), (packages or [], self.package_boost)):
            if not boost or top <= 0.0:
                continue
            # Symbol-aware ranking: each identifier of the rewrite is matched against where things are defined
            # (path, qualified name), scaled to the question's own best score so that it re-orders candidates
            # without drowning the user's words; later (weaker) identifiers weigh less.
            for position, name in enumerate(names):
                head = index.head_scores([name.lower().replace("_", ""), *split_identifier(name)])
                best_head = float(head.max())
                if best_head > 0.0:
                    scores = scores + (boost * top / (best_head * (position + 1))) * head
        ranked = best_first(index.documents, scores, top_k=top_k, filters=filters, positive_only=True)
        documents = [dataclasses.replace(document, score=score, embedding=None) for document, score in ranked]
        return {"documents": documents, "term_coverage": coverage}
