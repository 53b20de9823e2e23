"""Candidate pools for fitting the ranking stage: the benchmark harness, recording what the ranker sees.

`PoolRecordingSearcher` is the benchmark's own searcher (`bench_searcher.PipelineSearcher`) that, after each
answer, writes the question's candidate pool (`ranking.candidates.CandidatePool`: every chunk of the BM25 and
embedding lists and of the definitions of every symbol hint, with the rewrite's evidence: what the pipeline's
`CodeRanker` saw) to
`<out>/pools.jsonl`, keyed by corpus, question and rewrite. The harness's own `results.jsonl` in the same folder
holds each question's gold files and symbols, so `ranking.fit` can label the pools and score them again with
any model, out of fold, without retrieving again.

    code-alias bench run ... --searcher \\
        haystack_integrations.components.code_alias.evaluation.ranking_data:make_recording_searcher
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from ..app.answer import AskResult
from ..ranking.candidates import CandidatePool
from .bench_searcher import PipelineSearcher, make_searcher
from .runner import SearchResult

POOLS_FILE = "pools.jsonl"


class PoolRecordingSearcher(PipelineSearcher):
    """`PipelineSearcher` that also records each (question, rewrite)'s candidate pool (module docstring)."""

    def __init__(self, cache_dir: Path, *, out: Path, **options: Any) -> None:
        super().__init__(cache_dir, **options)
        self.out = out
        self._corpus = ""
        self._recorded: set[tuple[str, str, str]] = set()
        path = out / POOLS_FILE
        if path.is_file():
            for line in path.read_text(encoding="utf-8").splitlines():
                record = json.loads(line)
                self._recorded.add((record["corpus"], record["question"], record["rewrite"]))

    def index(self, corpus_root: Path, *, name: str) -> None:
        super().index(corpus_root, name=name)
        self._corpus = name

    def search(self, question: str, *, rewrite: str, retrieval: str, top_k: int) -> SearchResult:
        result = super().search(question, rewrite=rewrite, retrieval=retrieval, top_k=top_k)
        key = (self._corpus, question, rewrite)
        if key not in self._recorded:
            answer = self._answers[(question, rewrite)]
            pool = self._pool(answer)
            with (self.out / POOLS_FILE).open("a", encoding="utf-8") as handle:
                row = {"corpus": self._corpus, "question": question, "rewrite": rewrite, "pool": pool.to_record()}
                handle.write(json.dumps(row) + "\n")
            self._recorded.add(key)
        return result

    def _pool(self, answer: AskResult) -> CandidatePool:
        """What the pipeline's ranker saw: its context and the three lists (the definitions of every hint)."""
        if answer.context is None:
            raise RuntimeError("the answer has no ranking context: was it made by a query pipeline with a ranker?")
        pool, _ = CandidatePool.from_documents(
            answer.context,
            bm25=answer.bm25_documents,
            embedding=answer.embedding_documents if answer.context.embedding else None,
            definitions=answer.definition_documents,
        )
        return pool


def make_recording_searcher(args: argparse.Namespace) -> PoolRecordingSearcher:
    """Factory for `code-alias bench run --searcher ...:make_recording_searcher` (the options of `make_searcher`)."""
    plain = make_searcher(args)
    options = {
        "lexical": plain.lexical,
        "candidates": plain.candidates,
        "chat_generator": plain.chat_generator,
        "rewriter_params": plain.rewriter_params,
        "rewrite_store": plain.rewrite_store,
        "semantic_hints": plain.semantic_hints,
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    return PoolRecordingSearcher(plain.cache_dir, out=out, **options)


def record_off_topic(
    searcher: PoolRecordingSearcher,
    corpora_dir: Path,
    questions: dict[str, list[tuple[str, str]]],
    *,
    per_corpus: int,
    rewrites: tuple[str, ...] = ("none", "dictionary"),
    retrieval: str = "bm25",
) -> int:
    """
    Ask each corpus questions written about *other* repositories, recording their pools (`searcher.out`) and a
    harness-like record whose gold is empty: the first file is never right. What the answer-confidence model learns
    "this code does not speak of that" from (never the nonsense set it is judged on).

    :param corpora_dir: The harness's materialised corpora (`<cache-dir>/corpora/<key>`).
    :param questions: Corpus key -> its own questions, as (id, text); each corpus is asked the others', in turn.
    :param per_corpus: How many foreign questions each corpus is asked.
    :returns: How many records were written.
    """
    keys = sorted(questions)
    written = 0
    with (searcher.out / "results.jsonl").open("a", encoding="utf-8") as results:
        for position, key in enumerate(keys):
            foreign = [item for other in keys[position + 1 :] + keys[:position] for item in questions[other]]
            chosen = foreign[:: max(1, len(foreign) // per_corpus)][:per_corpus]
            searcher.index(corpora_dir / key, name=key)
            for item_id, text in chosen:
                for rewrite in rewrites:
                    searcher.search(text, rewrite=rewrite, retrieval=retrieval, top_k=10)
                    record = {
                        "config": f"title/{rewrite}/{retrieval}",
                        "query": "title",
                        "rewrite": rewrite,
                        "retrieval": retrieval,
                        "id": f"offtopic:{key}:{item_id}",
                        "question": text,
                        "repo": key,
                        "corpus": key,
                        "gold_files": [],
                        "gold_functions": [],
                        "metrics": {"hit@1": 0.0, "acc@1": 0.0},
                    }
                    results.write(json.dumps(record) + "\n")
                    written += 1
    return written
