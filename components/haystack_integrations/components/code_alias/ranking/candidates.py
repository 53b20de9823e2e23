"""The candidate pool of one question: every chunk a retriever or the rewrite brought, with what each knows of it.

The ranking stage scores candidates, not lists: a chunk's place in the BM25 list, in the embedding list and among
the definitions of the rewrite's hints are facts about it (`Candidate.ranks`), and so are its file, its symbol, and
the hint that names it. `CandidatePool` is built once per question from the retrievers' Documents
(`CandidatePool.from_documents`) and turns into plain records and back (`to_record` / `from_record`), so a fitting
run can store the pools of a benchmark and score them again with another model without retrieving anything.

Framework-light: Haystack `Document`s are read here, and nothing else of Haystack.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from haystack import Document

from ..core.hint_evidence import HintEvidence, SymbolEvidence
from .near_duplicates import DEFAULT_THRESHOLD, near_duplicate_positions, token_set

#: The lists a candidate can come from, in the order ties are broken.
LISTS: tuple[str, ...] = ("bm25", "embedding", "definitions")

FileKey = tuple[str | None, str]


@dataclass(frozen=True)
class Candidate:
    """
    One retrieved chunk: where it is, what it defines, and its place in each list that holds it.

    :param ranks: List name (`LISTS`) -> 1-based rank in that list.
    :param scores: List name -> the retriever's own score (BM25 score, cosine similarity).
    :param copy: Its file repeats a file the question's own lists ranked higher (`ranking.near_duplicates`).
    :param card_similarity: Its symbol's card's similarity to the question (`core.hint_evidence.CardSimilarity`); None
        without cards, a question vector or a card for it.
    """

    id: str
    file_path: str
    repo: str | None = None
    qualified_name: str | None = None
    symbol: str | None = None
    kind: str | None = None
    package: str | None = None
    start_line: int | None = None
    end_line: int | None = None
    ranks: Mapping[str, int] = field(default_factory=dict)
    scores: Mapping[str, float] = field(default_factory=dict)
    copy: bool = False
    card_similarity: float | None = None

    @property
    def file(self) -> FileKey:
        return self.repo, self.file_path

    @property
    def name(self) -> str | None:
        """The definition's name in the answer: its qualified name, else its symbol; None for a module remainder."""
        return self.qualified_name or self.symbol or None

    def to_record(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "file_path": self.file_path,
            "repo": self.repo,
            "qualified_name": self.qualified_name,
            "symbol": self.symbol,
            "kind": self.kind,
            "package": self.package,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "ranks": dict(self.ranks),
            "scores": {name: round(value, 6) for name, value in self.scores.items()},
            "copy": self.copy,
            "card_similarity": None if self.card_similarity is None else round(self.card_similarity, 5),
        }

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Candidate:
        return cls(
            id=str(record["id"]),
            file_path=str(record["file_path"]),
            repo=record.get("repo"),
            qualified_name=record.get("qualified_name"),
            symbol=record.get("symbol"),
            kind=record.get("kind"),
            package=record.get("package"),
            start_line=record.get("start_line"),
            end_line=record.get("end_line"),
            ranks={str(k): int(v) for k, v in (record.get("ranks") or {}).items()},
            scores={str(k): float(v) for k, v in (record.get("scores") or {}).items()},
            copy=bool(record.get("copy", False)),
            card_similarity=record.get("card_similarity"),
        )

    @classmethod
    def from_document(cls, document: Document, **known: Any) -> Candidate:
        """The candidate of a retrieved chunk (its meta), with what the pool knows of it (`known`: ranks, scores...)."""
        meta = document.meta

        def number(key: str) -> int | None:
            value = meta.get(key)
            return int(value) if isinstance(value, int | float) else None

        return cls(
            id=document.id,
            file_path=str(meta.get("file_path") or ""),
            repo=_text(meta, "repo"),
            qualified_name=_text(meta, "qualified_name"),
            symbol=_text(meta, "symbol"),
            kind=_text(meta, "kind"),
            package=_text(meta, "package"),
            start_line=number("start_line"),
            end_line=number("end_line"),
            **known,
        )


def _text(meta: Mapping[str, Any], key: str) -> str | None:
    value = meta.get(key)
    return str(value) if value not in (None, "") else None


@dataclass(frozen=True)
class QuestionContext:
    """
    What the ranking knows of the question and its rewrite (the same for every candidate of the pool).

    :param hints: The rewrite's symbol hints (`core.hint_evidence.SymbolEvidence`); empty without a rewrite.
    :param symbols: The symbols the rewrite chose, best first.
    :param packages: The packages the rewrite chose.
    :param term_coverage: The share of the question's terms (IDF-weighted) the keyword index holds, None unknown.
    :param embedding: Whether an embedding list was part of the retrieval (hybrid), even if it came back empty.
    """

    question: str
    hints: SymbolEvidence = field(default_factory=SymbolEvidence)
    symbols: tuple[str, ...] = ()
    packages: tuple[str, ...] = ()
    term_coverage: float | None = None
    embedding: bool = False

    def to_record(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "hints": [
                {"name": name, **hint._asdict(), "evidence": dict(hint.evidence)} for name, hint in self.hints.items()
            ],
            "package_hints": dict(self.hints.packages),
            "symbols": list(self.symbols),
            "packages": list(self.packages),
            "term_coverage": self.term_coverage,
            "embedding": self.embedding,
        }

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> QuestionContext:
        hints = {
            str(h["name"]): HintEvidence(
                confidence=float(h["confidence"]),
                reasons=tuple(h.get("reasons") or ()),
                evidence=tuple(sorted((str(k), float(v)) for k, v in (h.get("evidence") or {}).items())),
                similarity=h.get("similarity"),
                rank=int(h.get("rank") or 0),
                package=h.get("package"),
                files=int(h.get("files") or 0),
            )
            for h in record.get("hints") or []
        }
        return cls(
            question=str(record["question"]),
            hints=SymbolEvidence(hints, packages=record.get("package_hints") or {}),
            symbols=tuple(record.get("symbols") or ()),
            packages=tuple(record.get("packages") or ()),
            term_coverage=record.get("term_coverage"),
            embedding=bool(record.get("embedding", False)),
        )


@dataclass(frozen=True)
class CandidatePool:
    """The candidates of one question, in a stable order (the question's own lists first), and its context."""

    candidates: tuple[Candidate, ...]
    context: QuestionContext

    def to_record(self) -> dict[str, Any]:
        return {"context": self.context.to_record(), "candidates": [c.to_record() for c in self.candidates]}

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> CandidatePool:
        return cls(
            candidates=tuple(Candidate.from_record(c) for c in record.get("candidates") or []),
            context=QuestionContext.from_record(record["context"]),
        )

    @classmethod
    def from_documents(
        cls,
        context: QuestionContext,
        *,
        bm25: Sequence[Document] | None = None,
        embedding: Sequence[Document] | None = None,
        definitions: Sequence[Document] | None = None,
        near_duplicate_threshold: float | None = DEFAULT_THRESHOLD,
        token_sets: MutableMapping[str, frozenset[str]] | None = None,
    ) -> tuple[CandidatePool, dict[str, Document]]:
        """
        The pool of the retrievers' lists, and each candidate's Document by id (the first copy seen).

        :param near_duplicate_threshold: Token overlap (Jaccard) of what the question's own lists retrieved of two
            files from which the lower-ranked file is a copy; None: no file is.
        :param token_sets: Each chunk text's token set, kept by the caller between calls (the same chunks come back
            question after question, and their tokens are the costliest part of the copy test).
        """
        named = {"bm25": list(bm25 or []), "embedding": list(embedding or []), "definitions": list(definitions or [])}
        documents: dict[str, Document] = {}
        ranks: dict[str, dict[str, int]] = {}
        scores: dict[str, dict[str, float]] = {}
        for name in LISTS:
            for rank, document in enumerate(named[name], 1):
                documents.setdefault(document.id, document)
                own = ranks.setdefault(document.id, {})
                if name not in own:
                    own[name] = rank
                    if name != "definitions" and document.score is not None:
                        scores.setdefault(document.id, {})[name] = float(document.score)
        copies = _copy_files(_question_order(named), near_duplicate_threshold, {} if token_sets is None else token_sets)
        cards = context.hints.cards
        candidates = []
        for item, document in documents.items():
            meta = document.meta
            name = _text(meta, "symbol") or (_text(meta, "qualified_name") or "").rsplit(".", 1)[-1]
            candidates.append(
                Candidate.from_document(
                    document,
                    ranks=ranks[item],
                    scores=scores.get(item, {}),
                    copy=(_text(meta, "repo"), str(meta.get("file_path") or "")) in copies,
                    card_similarity=cards.get(name) if cards is not None else None,
                )
            )
        return cls(candidates=tuple(candidates), context=context), documents


def _question_order(named: Mapping[str, list[Document]]) -> list[Document]:
    """The chunks of the question's own lists (BM25, embedding) interleaved by rank: the order copies are judged in."""
    order: list[Document] = []
    seen: set[str] = set()
    own = [named["bm25"], named["embedding"]]
    for position in range(max((len(items) for items in own), default=0)):
        for items in own:
            if position < len(items) and items[position].id not in seen:
                seen.add(items[position].id)
                order.append(items[position])
    return order


def _copy_files(
    documents: Iterable[Document], threshold: float | None, token_sets: MutableMapping[str, frozenset[str]]
) -> set[FileKey]:
    """The files whose retrieved chunks repeat a better-ranked file's (`ranking.near_duplicates`)."""
    if threshold is None:
        return set()
    tokens: dict[FileKey, set[str]] = {}
    for document in documents:
        path = document.meta.get("file_path")
        if path:
            key = (document.meta.get("repo"), str(path))
            text = document.content or ""
            found = token_sets.get(text)
            if found is None:
                found = token_sets[text] = token_set(text)
            tokens.setdefault(key, set()).update(found)
    files = list(tokens)
    copies = near_duplicate_positions(files, lambda key: frozenset(tokens[key]), threshold=threshold)
    return {files[i] for i in copies}
