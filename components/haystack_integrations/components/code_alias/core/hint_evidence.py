"""The records a hint lookup hands on: `Hint` (what the rewrite offers), and what the ranking stage reads of it,
`HintEvidence` per symbol in a `SymbolEvidence` map, with every card's `CardSimilarity` to the question."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

import numpy as np

from .cards import SymbolCards

HintKind = Literal["symbol", "package"]


class HintEvidence(NamedTuple):
    """What the ranking stage reads of one symbol hint (read-only; the first two fields are its confidence and
    reasons, as before)."""

    confidence: float
    reasons: tuple[str, ...]
    #: Evidence kind -> its confidence (`Hint.evidence`), as sorted pairs.
    evidence: tuple[tuple[str, float], ...] = ()
    #: Cosine similarity of the symbol's card to the question; None without a card or a question vector.
    similarity: float | None = None
    #: 1-based place among the question's symbol hints.
    rank: int = 0
    package: str | None = None
    #: How many files define the name (at most the three the hint lists).
    files: int = 0

    def value(self, kind: str) -> float:
        """The confidence of one evidence kind (0.0 when absent)."""
        return next((value for name, value in self.evidence if name == kind), 0.0)


class CardSimilarity:
    """Each card name's cosine similarity to one question (read-only): the semantic side's view of *every* symbol,
    not only the nearest cards that became hints."""

    def __init__(self, rows: Mapping[str, int], scores: np.ndarray) -> None:
        self._rows = rows
        self._scores = scores

    @classmethod
    def of(cls, cards: SymbolCards, vector: Sequence[float] | np.ndarray) -> CardSimilarity | None:
        """The similarities of `cards` to `vector`; None when the vector does not fit them."""
        scores = cards.similarities(vector)
        return cls(cards.rows, scores) if scores.size else None

    def get(self, name: str | None) -> float | None:
        row = self._rows.get(name) if name else None
        return None if row is None else float(self._scores[row])


class SymbolEvidence(Mapping[str, HintEvidence]):
    """
    Symbol name -> `HintEvidence`: what the ranking needs of the hints, read-only.

    Haystack pipelines deep-copy every component input; the full hint dicts cost ~13 ms per copy on a 40-hint
    question, this immutable map nothing (a copy is the same object).
    """

    def __init__(
        self,
        items: Mapping[str, HintEvidence] | None = None,
        *,
        packages: Mapping[str, float] | None = None,
        cards: CardSimilarity | None = None,
    ) -> None:
        self._items = dict(items or {})
        #: Package hint name -> its confidence.
        self.packages: Mapping[str, float] = dict(packages or {})
        #: Every card's similarity to the question (None: no cards or no question vector).
        self.cards = cards

    @classmethod
    def from_hints(cls, hints: Iterable[Mapping[str, Any]], *, cards: CardSimilarity | None = None) -> SymbolEvidence:
        """From hint dicts (`Hint.to_dict`): symbol hints only, the first of each name (package hints' confidence in
        `packages`), and the question's similarity to every card."""
        items: dict[str, HintEvidence] = {}
        packages: dict[str, float] = {}
        for hint in hints:
            name = hint.get("name")
            if hint.get("kind") == "package" and isinstance(name, str):
                packages.setdefault(name, float(hint.get("confidence") or 0.0))
            if hint.get("kind", "symbol") != "symbol" or not isinstance(name, str) or name in items:
                continue
            evidence = hint.get("evidence") or {}
            similarity = hint.get("similarity")
            items[name] = HintEvidence(
                confidence=float(hint.get("confidence") or 0.0),
                reasons=tuple(str(r) for r in hint.get("reasons", [])),
                evidence=tuple(sorted((str(k), float(v)) for k, v in evidence.items())),
                similarity=None if similarity is None else float(similarity),
                rank=len(items) + 1,
                package=hint.get("package") if isinstance(hint.get("package"), str) else None,
                files=len(hint.get("files") or []),
            )
        return cls(items, packages=packages, cards=cards)

    def __getitem__(self, name: str) -> HintEvidence:
        return self._items[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"SymbolEvidence({self._items!r}, packages={dict(self.packages)!r})"

    def __deepcopy__(self, memo: dict[int, Any]) -> SymbolEvidence:
        return self  # immutable

    def __copy__(self) -> SymbolEvidence:
        return self


def combine_confidence(values: Iterable[float]) -> float:
    """Noisy-OR of independent pieces of evidence: ``1 - prod(1 - c)``, in [0, 1]."""
    remaining = 1.0
    for value in values:
        remaining *= 1.0 - min(1.0, max(0.0, value))
    return 1.0 - remaining


@dataclass
class Hint:
    """A candidate identifier for the rewrite, with the evidence that put it there."""

    kind: HintKind
    name: str
    score: float
    qualified_names: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    package: str | None = None
    reasons: list[str] = field(default_factory=list)
    in_tests: bool = False
    name_words: int = 0
    evidence: dict[str, float] = field(default_factory=dict)
    confidence: float = 0.0
    retrieved_score: float = 0.0
    semantic_score: float = 0.0
    similarity: float | None = None  # cosine similarity of its card to the question (None: no card or no vector)

    @property
    def lexical_score(self) -> float:
        """The part of `score` that comes from the question's own words (everything but "retrieved" and
        "semantic")."""
        return self.score - self.retrieved_score - self.semantic_score

    def to_dict(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "name": self.name,
            "score": round(self.score, 4),
            "confidence": round(self.confidence, 4),
            "evidence": {kind: round(value, 4) for kind, value in self.evidence.items()},
            "qualified_names": self.qualified_names[:3],
            "files": self.files[:3],
            "package": self.package,
            "reasons": self.reasons,
            "in_tests": self.in_tests,
            "similarity": None if self.similarity is None else round(self.similarity, 4),
        }


#: The order `Hint.reasons` lists evidence in (the strongest kinds first).
_REASON_ORDER = (
    "exact",
    "fuzzy",
    "nickname",
    "alias",
    "retrieved",
    "semantic",
    "package",
    "words",
    "abbreviation",
    "doc",
    "all-words",
    "described",
)


def evidence_kinds(reasons: Iterable[str]) -> set[str]:
    """The evidence kinds of a hint's reasons (`nickname:the bouncer` -> `nickname`), the inverse of `reasons_of`."""
    return {reason.split(":", 1)[0] for reason in reasons}


def reasons_of(evidence: dict[str, float], details: dict[str, str]) -> list[str]:
    """Evidence kinds, strongest first, with their detail where there is one (`nickname:the bouncer`)."""
    order = {kind: position for position, kind in enumerate(_REASON_ORDER)}
    kinds = sorted(evidence, key=lambda kind: (order.get(kind, len(order)), kind))
    return [f"{kind}:{details[kind]}" if kind in details else kind for kind in kinds]
