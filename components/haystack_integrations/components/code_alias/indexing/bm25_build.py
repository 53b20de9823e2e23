"""Build bm25s models fast, and again fast after a few chunks changed.

`bm25s.BM25.index` counts terms document by document in Python (about 0.4 s per model on a 10k-chunk index here,
after tokenising, which costs as much again). A sync that changed one file of a large repository rebuilds the
whole index, so both costs came back on every push. This module keeps, per chunk, its term ids and counts under
one vocabulary of the process (`TermCache`), so a rebuild tokenises only the new chunks, and computes bm25s's
score matrix with numpy over all chunks at once (`build_model`): the numbers, in the layout, that
`bm25s.BM25.index` computes for its default method ("lucene": idf `log(1 + (N - df + 0.5) / (df + 0.5))`,
term part `tf / (k1 * (1 - b + b * dl / avgdl) + tf)`), equal to float32 rounding (`tests/indexing/test_bm25_build.py`
checks them against bm25s).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence

import bm25s
import numpy as np

# Chunks whose terms are kept, over all indexes of the process (the least recently used go first), and the
# vocabulary size at which both are started afresh (it only grows while terms are cached).
MAX_CACHED_CHUNKS = 400_000
MAX_VOCABULARY = 4_000_000
_EMPTY = "\x00"  # the term of a chunk without any (bm25s needs one per document)


class TermCache:
    """Per chunk key: (term ids, counts, length) under one growing vocabulary; thread-safe."""

    def __init__(self, max_chunks: int = MAX_CACHED_CHUNKS, max_vocabulary: int = MAX_VOCABULARY) -> None:
        self.max_chunks = max_chunks
        self.max_vocabulary = max_vocabulary
        self.vocabulary: dict[str, int] = {}
        self._terms: OrderedDict[tuple[str, ...], tuple[np.ndarray, np.ndarray, int]] = OrderedDict()
        self._lock = threading.Lock()

    def terms(
        self, keys: Sequence[tuple[str, ...]], tokens_of: Callable[[int], list[str]]
    ) -> tuple[list[tuple[np.ndarray, np.ndarray, int]], dict[str, int]]:
        """
        The terms of every chunk (`tokens_of(i)` tokenises chunk `i` when its key is not cached), and a copy of
        the vocabulary they are numbered in.
        """
        with self._lock:
            if len(self.vocabulary) > self.max_vocabulary:
                self.vocabulary.clear()
                self._terms.clear()
            vocabulary = self.vocabulary
            missing = [position for position, key in enumerate(keys) if key not in self._terms]
            self._count(keys, missing, tokens_of)
            out: list[tuple[np.ndarray, np.ndarray, int]] = []
            for key in keys:
                self._terms.move_to_end(key)
                out.append(self._terms[key])
            while len(self._terms) > self.max_chunks:
                self._terms.popitem(last=False)
            return out, dict(vocabulary)

    def _count(
        self, keys: Sequence[tuple[str, ...]], missing: list[int], tokens_of: Callable[[int], list[str]]
    ) -> None:
        """Tokenise the chunks at `missing` and count their terms, all of them in one numpy pass."""
        if not missing:
            return
        vocabulary = self.vocabulary
        ids: list[int] = []
        lengths = np.zeros(len(missing), dtype=np.int64)
        for row, position in enumerate(missing):
            tokens = tokens_of(position) or [_EMPTY]
            ids.extend([vocabulary.setdefault(t, len(vocabulary)) for t in tokens])
            lengths[row] = len(tokens)
        rows = np.repeat(np.arange(len(missing), dtype=np.int64), lengths)
        pairs, counts = np.unique(rows * (len(vocabulary) + 1) + np.asarray(ids, dtype=np.int64), return_counts=True)
        pair_rows = pairs // (len(vocabulary) + 1)
        terms = (pairs % (len(vocabulary) + 1)).astype(np.int32)
        bounds = np.searchsorted(pair_rows, np.arange(len(missing) + 1))
        tf = counts.astype(np.float32)
        for row, position in enumerate(missing):
            start, end = bounds[row], bounds[row + 1]
            self._terms[keys[position]] = (terms[start:end], tf[start:end], int(lengths[row]))


def build_model(
    terms: list[tuple[np.ndarray, np.ndarray, int]], vocabulary: dict[str, int], k1: float, b: float
) -> bm25s.BM25:
    """
    A `bm25s.BM25` (method "lucene") over chunks given as (term ids, counts, length), equal to what
    `BM25(k1=k1, b=b).index(Tokenized(ids, vocabulary))` builds from the same chunks.

    :param vocabulary: Term -> id for every id used (ids without a chunk are allowed: they score nothing);
        the empty term "" is added as bm25s does.
    """
    model = bm25s.BM25(k1=k1, b=b)
    n_docs = len(terms)
    n_vocab = len(vocabulary)
    lengths = np.fromiter((length for _, _, length in terms), np.float64, n_docs)
    per_doc = np.fromiter((len(ids) for ids, _, _ in terms), np.int64, n_docs)
    term_ids = np.concatenate([ids for ids, _, _ in terms]) if n_docs else np.zeros(0, np.int32)
    tf = np.concatenate([counts for _, counts, _ in terms]) if n_docs else np.zeros(0, np.float32)
    doc_ids = np.repeat(np.arange(n_docs, dtype=np.int32), per_doc)
    average = lengths.mean() if n_docs else 0.0
    df = np.bincount(term_ids, minlength=n_vocab).astype(np.float64)
    idf = np.zeros(n_vocab, dtype=np.float32)
    present = df > 0
    idf[present] = np.log(1 + (n_docs - df[present] + 0.5) / (df[present] + 0.5)).astype(np.float32)
    # As bm25s: the document's length part in double precision, then everything in float32.
    length_part = (k1 * ((1 - b) + b * lengths / average)).astype(np.float32) if n_docs else np.zeros(0, np.float32)
    scores = idf[term_ids] * (tf / (length_part[doc_ids] + tf))
    order = np.argsort(term_ids, kind="stable")  # column-major (by term), documents ascending within a term
    indptr = np.zeros(n_vocab + 1, dtype=np.int32)
    np.cumsum(np.bincount(term_ids, minlength=n_vocab), out=indptr[1:])
    model.scores = {
        "data": scores[order].astype(np.float32),
        "indices": doc_ids[order].astype(np.int32),
        "indptr": indptr,
        "num_docs": n_docs,
    }
    vocab = dict(vocabulary)
    if "" not in vocab:
        vocab[""] = max(vocab.values(), default=-1) + 1
    model.vocab_dict = vocab
    model.unique_token_ids_set = set(vocab.values())
    model.nonoccurrence_array = None
    return model
