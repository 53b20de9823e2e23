"""`AskResult`: one answer of `CodeSearch.ask`, from one run of the query pipeline."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from haystack import Document

from ..ranking.answer import RankedSymbol
from ..ranking.candidates import QuestionContext
from ..ranking.ranker import CodeRanker

#: The best definitions a file of the answer lists.
HITS_PER_FILE = 5


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

    def to_dict(self, *, mode: str = "dictionary") -> dict[str, Any]:
        """
        The answer as JSON, the one form every client gets (`code_alias_ask`'s REST and MCP answer, `code-alias ask
        --json` whether a server or this process answered): symbols first (what the question asks for, renumbered as
        returned), then the files (each with its best definitions), the rewrite used, how sure the ranking is.

        :param mode: The rewrite mode the question was asked with ("dictionary" or "llm").
        """
        rewrite = self.rewrite
        files: list[dict[str, Any]] = []
        for rank, item in enumerate(self.files, 1):
            ranked = {
                "rank": rank,
                "file_path": item["file_path"],
                "score": float(item.get("score") or 0.0),
                "hits": list(item.get("hits", [])[:HITS_PER_FILE]),
            }
            if item.get("repo") is not None:  # an index of several repositories says whose file it is
                ranked["repo"] = str(item["repo"])
            files.append(ranked)
        return {
            "question": self.question,
            # Each definition once, tests after code, with *why* and its record (`ranking.answer`).
            "symbols": [{**item, "rank": rank} for rank, item in enumerate(self.symbols[: self.top_k], 1)],
            "files": files,
            "mode": mode,
            "rewrite": {
                "rewritten": rewrite.get("rewritten") or self.question,
                "symbols": list(rewrite.get("symbols") or []),
                "packages": list(rewrite.get("packages") or []),
                "intent": rewrite.get("intent"),
                "dropped": list(rewrite.get("dropped") or []),
                "meta": {**dict(rewrite.get("meta") or {}), "used": bool(rewrite.get("used", True))},
            },
            "seconds": round(self.seconds, 4),
            "confidence": None if self.confidence is None else float(self.confidence),
            "abstained": bool(self.abstained),
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
