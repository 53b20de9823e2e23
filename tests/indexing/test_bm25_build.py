"""`bm25_build`: the numpy-built bm25s model scores as bm25s's own index does, and a rebuild reuses chunk terms."""

from __future__ import annotations

import random

import bm25s
import numpy as np
from bm25s.tokenization import Tokenized

from haystack_integrations.components.code_alias.indexing.bm25_build import TermCache, build_model

WORDS = [f"w{i}" for i in range(60)]


def corpus(seed: int, size: int) -> list[list[str]]:
    rng = random.Random(seed)
    return [[rng.choice(WORDS) for _ in range(rng.randint(0, 40))] for _ in range(size)]


def reference(texts: list[list[str]], k1: float, b: float) -> tuple[bm25s.BM25, dict[str, int]]:
    vocabulary: dict[str, int] = {}
    ids = [[vocabulary.setdefault(t, len(vocabulary)) for t in tokens or ["\x00"]] for tokens in texts]
    model = bm25s.BM25(k1=k1, b=b)
    model.index(Tokenized(ids=ids, vocab=vocabulary), show_progress=False)
    return model, vocabulary


def test_scores_equal_bm25s_own_index() -> None:
    texts = corpus(1, 300)
    cache = TermCache()
    terms, vocabulary = cache.terms([(str(i),) for i in range(len(texts))], lambda i: texts[i])
    ours = build_model(terms, vocabulary, 1.2, 0.75)
    theirs, their_vocabulary = reference(texts, 1.2, 0.75)
    rng = random.Random(2)
    for _ in range(50):
        query = rng.sample(WORDS, 3)
        expected = np.asarray(theirs.get_scores([t for t in query if t in their_vocabulary]), dtype=np.float32)
        got = np.asarray(ours.get_scores([t for t in query if t in ours.vocab_dict]), dtype=np.float32)
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
        assert list(np.argsort(-got, kind="stable")[:10]) == list(np.argsort(-expected, kind="stable")[:10])


def test_a_rebuild_tokenises_only_new_chunks() -> None:
    texts = corpus(3, 50)
    cache = TermCache()
    calls: list[int] = []

    def tokens_of(i: int) -> list[str]:
        calls.append(i)
        return texts[i]

    cache.terms([(str(i),) for i in range(50)], tokens_of)
    assert len(calls) == 50
    calls.clear()
    texts.append(["w1", "w2", "w999"])
    terms, vocabulary = cache.terms([(str(i),) for i in range(51)], tokens_of)
    assert calls == [50]
    model = build_model(terms, vocabulary, 1.2, 0.75)
    scores = model.get_scores(["w999"])
    assert scores[50] > 0 and np.count_nonzero(scores) == 1


def test_the_cache_is_bounded() -> None:
    cache = TermCache(max_chunks=10)
    cache.terms([(str(i),) for i in range(25)], lambda i: ["a", str(i)])
    assert len(cache._terms) == 10
