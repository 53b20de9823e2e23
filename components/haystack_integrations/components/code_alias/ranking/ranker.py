"""`CodeRanker`: the retrievers' lists and the rewrite's evidence -> ranked symbols and files, fitted, not hand-set."""

from __future__ import annotations

import dataclasses
import os
import threading
from typing import Any

from haystack import Document, component

from ..core.hint_evidence import SymbolEvidence
from ..serialization import SerializedByInitParameters
from .answer import RankedSymbol, order, rank_pool
from .candidates import CandidatePool, QuestionContext
from .features import feature_matrix, hint_for
from .model import RankingModel, answer_facts
from .near_duplicates import DEFAULT_THRESHOLD

#: Most chunk token sets the ranker keeps between questions.
_MOST_TOKEN_SETS = 50_000


@component
class CodeRanker(SerializedByInitParameters):
    """
    The ranking stage: every chunk the retrievers and the rewrite brought is one candidate, scored by a fitted
    learning-to-rank model, and the answer is its symbols (each definition once) and files, with a calibrated
    confidence that the first file is right and whether that is too low to trust (`abstained`).

    The candidates are the chunks of the BM25 list, of the embedding list (hybrid pipelines) and the definitions
    of the rewrite's hints (`SymbolDefinitionRetriever`). What is known of each (its place in each list, the hint
    naming its symbol with every kind of evidence, its card's similarity, test file or not, near-duplicate copy,
    declaration file, the rewrite's packages, what its file holds of the pool; `ranking.features`) goes to a
    LightGBM LambdaMART model fitted on the dev sets with folds by repository (`benchmarks/fit_ranking.py`; the
    file's provenance says how). No rule reorders the result afterwards.

    ### Usage example

    ```python
    from haystack_integrations.components.code_alias.ranking.ranker import CodeRanker

    ranker = CodeRanker(top_k=5)
    answer = ranker.run(question="where's the payments retry helper?", bm25_documents=bm25_docs,
                        definition_documents=definition_docs, symbol_evidence=rewriter_output["symbol_evidence"])
    for symbol in answer["symbols"]:
        print(symbol["qualified_name"], symbol["file_path"], symbol["start_line"], symbol["why"])
    print(answer["confidence"], answer["abstained"])
    ```

    :param top_k: Most symbols and files in the answer.
    :param model_path: A ranking model file (`ranking.model`); None: the packaged one.
    :param near_duplicate_threshold: Token overlap (Jaccard) from which a file counts as a copy of a better-ranked
        one (a feature, `ranking.near_duplicates`); None: no file is a copy.
    :param documents_top_k: Most chunks in the `documents` output; None: every candidate.
    """

    def __init__(
        self,
        *,
        top_k: int = 10,
        model_path: str | None = None,
        near_duplicate_threshold: float | None = DEFAULT_THRESHOLD,
        documents_top_k: int | None = 50,
    ) -> None:
        if top_k <= 0:
            raise ValueError(f"top_k must be > 0, got {top_k}")
        if near_duplicate_threshold is not None and not 0.0 < near_duplicate_threshold <= 1.0:
            raise ValueError(f"near_duplicate_threshold must be in (0, 1] or None, got {near_duplicate_threshold}")
        if documents_top_k is not None and documents_top_k <= 0:
            raise ValueError(f"documents_top_k must be > 0 or None, got {documents_top_k}")
        self.top_k = top_k
        self.model_path = model_path
        self.near_duplicate_threshold = near_duplicate_threshold
        self.documents_top_k = documents_top_k
        self._model: RankingModel | None = None
        self._lock = threading.Lock()
        # chunk text -> its token set for the copy feature: the same chunks come back question after question
        self._token_sets: dict[str, frozenset[str]] = {}

    def warm_up(self) -> None:
        """Load the model (idempotent)."""
        _ = self.model

    @property
    def model(self) -> RankingModel:
        with self._lock:
            if self._model is None:
                model = RankingModel.load(os.fspath(self.model_path) if self.model_path else None)
                model.warm_up()
                self._model = model
            return self._model

    @component.output_types(
        symbols=list[RankedSymbol],
        files=list[dict[str, Any]],
        documents=list[Document],
        confidence=float | None,
        abstained=bool,
    )
    def run(
        self,
        question: str,
        bm25_documents: list[Document] | None = None,
        embedding_documents: list[Document] | None = None,
        definition_documents: list[Document] | None = None,
        symbol_evidence: SymbolEvidence | None = None,
        symbols: list[str] | None = None,
        packages: list[str] | None = None,
        term_coverage: float | None = None,
        top_k: int | None = None,
    ) -> dict[str, Any]:
        """
        :param question: The question as the user wrote it.
        :param bm25_documents: The keyword list.
        :param embedding_documents: The embedding list (hybrid pipelines; None: a lexical pipeline).
        :param definition_documents: The chunks defining the rewrite's hints.
        :param symbol_evidence: The rewrite's hints (`ConstrainedQueryRewriter.symbol_evidence`, passed on by the
            composer only when the rewrite is used).
        :param symbols: The symbols the rewrite chose.
        :param packages: The packages the rewrite chose.
        :param term_coverage: The share of the question's terms the keyword index holds
            (`CodeBM25Retriever.term_coverage`).
        :param top_k: Overrides the init `top_k`.
        :returns: `symbols` and `files` (best first), `documents` (the candidates best first, each with
            `meta["ranking"]`: its score, ranks and hint), `confidence` (0-1 that the first file is right; None
            without a confidence model) and `abstained` (the confidence is below the model's threshold).
        """
        context = QuestionContext(
            question=question,
            hints=symbol_evidence if symbol_evidence is not None else SymbolEvidence(),
            symbols=tuple(symbols or ()),
            packages=tuple(packages or ()),
            term_coverage=term_coverage,
            embedding=embedding_documents is not None,
        )
        return self.rank(
            context,
            bm25=bm25_documents,
            embedding=embedding_documents,
            definitions=definition_documents,
            top_k=top_k or self.top_k,
        )

    def rank(
        self,
        context: QuestionContext,
        *,
        bm25: list[Document] | None,
        embedding: list[Document] | None,
        definitions: list[Document] | None,
        top_k: int | None,
    ) -> dict[str, Any]:
        """`run` on a prepared context (what `AskResult` uses to rank one retriever's list alone)."""
        pool, documents = CandidatePool.from_documents(
            context,
            bm25=bm25,
            embedding=embedding,
            definitions=definitions,
            near_duplicate_threshold=self.near_duplicate_threshold,
            token_sets=self._token_sets,
        )
        if len(self._token_sets) > _MOST_TOKEN_SETS:  # bounded: a long-running server sees every chunk in time
            self._token_sets.clear()
        model = self.model
        matrix = feature_matrix(pool)
        scores = model.score(matrix, "files")
        symbols, files = rank_pool(pool, scores, top_k, symbol_scores=model.score(matrix, "symbols"))
        ranked = order(scores)
        if ranked:
            confidence = model.answer_confidence(answer_facts(pool, scores, matrix, ranked))
        else:  # nothing at all matched: certainly no confident answer
            confidence = None if model.confidence is None else 0.0
        limit = self.documents_top_k
        out = []
        for position in ranked[:limit] if limit else ranked:
            candidate = pool.candidates[position]
            hint = hint_for(candidate, context.hints)
            provenance: dict[str, Any] = {"score": round(float(scores[position]), 6), "ranks": dict(candidate.ranks)}
            if hint is not None:
                provenance.update(
                    {
                        "symbol": candidate.symbol or candidate.qualified_name,
                        "confidence": hint.confidence,
                        "evidence": list(hint.reasons),
                    }
                )
            document = documents[candidate.id]
            out.append(
                dataclasses.replace(
                    document,
                    score=float(scores[position]),
                    meta={**document.meta, "ranking": provenance},
                    embedding=None,
                )
            )
        return {
            "symbols": symbols,
            "files": files,
            "documents": out,
            "confidence": None if confidence is None else round(confidence, 4),
            "abstained": model.abstains(confidence),
        }
