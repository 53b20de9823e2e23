"""Scored candidates -> the answer: ranked symbols (each definition once) and ranked files.

A file ranks by its best candidate, a symbol by its best chunk (long definitions are split into several); module
remainders (chunks that define nothing) count for their file but are not symbols. Ties keep the pool's order (the
question's own lists first), so the answer is deterministic. `evidence_ranked` records, from the candidate's own
record, what put it there: its place in each list, and the hint that named it (`Evidence`); `why` is that record in
the short strings JSON readers have always had (`why_strings`), and the page, the chat and the terminal say it in
words from the record itself (`presentation.why_in_words`), never from the strings.

Framework-free: no Haystack import.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from typing_extensions import NotRequired, TypedDict  # pydantic (Hayhooks' schemas) needs this one before 3.12

from ..core.hint_evidence import HintEvidence
from .candidates import Candidate, CandidatePool
from .features import hint_for


class Hit(TypedDict):
    """Where one retrieved chunk is: its definition, lines and score."""

    symbol: str | None
    qualified_name: str | None
    kind: str | None
    start_line: int | None
    end_line: int | None
    score: float | None


class RewriteEvidence(TypedDict):
    """The hint of the question's rewrite that names a symbol: its name, its reasons and how sure it is."""

    symbol: str
    #: The hint's evidence (`core.hints`): a kind ("exact", "words", ...), or "kind:detail" ("nickname:the bouncer").
    reasons: list[str]
    confidence: float | None


class Evidence(TypedDict):
    """Why a symbol is where it is, as a record: the one source of its `why` strings and of its words."""

    #: Its place (1 = first) in each retriever's list: "bm25", "embedding".
    ranks: dict[str, int]
    rewrite: RewriteEvidence | None
    #: Reasons already in words (a follow-up's: "its code names retry").
    notes: list[str]


class RankedSymbol(TypedDict):
    """One definition in the answer: where it is, and why it ranks where it does."""

    rank: int
    qualified_name: str
    symbol: str | None
    kind: str | None
    file_path: str
    start_line: int | None
    end_line: int | None
    package: str | None
    score: float | None
    why: list[str]
    evidence: Evidence  # the record `why` is written from (`why_strings`)
    repo: NotRequired[str]  # in an index of several repositories: the one the definition is in


def order(scores: np.ndarray) -> list[int]:
    """Positions by score, best first; ties in the pool's order."""
    return sorted(range(len(scores)), key=lambda i: (-float(scores[i]), i))


def evidence_record(
    ranks: Mapping[str, int],
    symbol: str | None,
    reasons: Sequence[str],
    confidence: float | None,
    notes: Sequence[str] = (),
) -> Evidence:
    """The `Evidence` of a place: the ranks in each list (not the definitions', which ranks nothing), the hint."""
    sure = float(confidence) if isinstance(confidence, int | float) else None
    return {
        "ranks": {str(name): int(rank) for name, rank in ranks.items() if name != "definitions"},
        "rewrite": {"symbol": symbol, "reasons": [str(r) for r in reasons], "confidence": sure} if symbol else None,
        "notes": list(notes),
    }


def why_strings(evidence: Evidence) -> list[str]:
    """The record as `why`'s strings: "bm25 #2", "rewrite: name (words, doc, confidence 0.50)", then the notes."""
    why = [f"{name} #{rank}" for name, rank in evidence["ranks"].items()]
    rewrite = evidence["rewrite"]
    if rewrite is not None:
        reasons, confidence = ", ".join(rewrite["reasons"]), rewrite["confidence"]
        sure = f", confidence {confidence:.2f}" if confidence is not None else ""
        why.append(
            f"rewrite: {rewrite['symbol']} ({reasons}{sure})" if reasons else f"rewrite: {rewrite['symbol']}{sure}"
        )
    return why + list(evidence["notes"])


def evidence_ranked(candidate: Candidate, hint: HintEvidence | None) -> Evidence:
    """The evidence behind a candidate's place: its rank in each retriever's list, and the hint naming it."""
    if hint is None:
        return evidence_record(candidate.ranks, None, (), None)
    return evidence_record(candidate.ranks, candidate.symbol or candidate.qualified_name, hint.reasons, hint.confidence)


def why_ranked(candidate: Candidate, hint: HintEvidence | None) -> list[str]:
    """`evidence_ranked` as `why`'s strings."""
    return why_strings(evidence_ranked(candidate, hint))


def hit(candidate: Candidate, score: float) -> Hit:
    return {
        "symbol": candidate.symbol,
        "qualified_name": candidate.qualified_name,
        "kind": candidate.kind,
        "start_line": candidate.start_line,
        "end_line": candidate.end_line,
        "score": score,
    }


def rank_pool(
    pool: CandidatePool, scores: np.ndarray, top_k: int | None = None, *, symbol_scores: np.ndarray | None = None
) -> tuple[list[RankedSymbol], list[dict[str, Any]]]:
    """
    The answer's symbols and files from the candidates' scores.

    :param pool: The candidates.
    :param scores: One score per candidate (the ranking model's), higher is better: the files' order.
    :param top_k: Most symbols and most files; None: all.
    :param symbol_scores: The symbols' order, when a model of its own scores them (default: `scores`).
    :returns: (symbols, files): symbols as `RankedSymbol`; files as `{file_path, score, rank, hits[, repo]}` with
        the file's candidates best first as `Hit`s.
    """
    candidates = pool.candidates
    hints = pool.context.hints
    files: dict[tuple[str | None, str], dict[str, Any]] = {}
    for position in order(scores):
        candidate = candidates[position]
        score = float(scores[position])
        if not candidate.file_path:
            continue
        entry = files.get(candidate.file)
        if entry is None:
            entry = {"file_path": candidate.file_path, "score": score, "rank": len(files) + 1, "hits": []}
            if candidate.repo is not None:
                entry["repo"] = candidate.repo
            files[candidate.file] = entry
        entry["hits"].append(hit(candidate, score))
    symbols: list[RankedSymbol] = []
    seen: set[tuple[str | None, str, str]] = set()
    by_symbol = scores if symbol_scores is None else symbol_scores
    for position in order(by_symbol):
        candidate = candidates[position]
        score = float(by_symbol[position])
        name = candidate.name
        if not candidate.file_path:
            continue
        if name is None or (candidate.repo, candidate.file_path, name) in seen:
            continue
        seen.add((candidate.repo, candidate.file_path, name))
        evidence = evidence_ranked(candidate, hint_for(candidate, hints))
        symbol: RankedSymbol = {
            "rank": len(symbols) + 1,
            "qualified_name": name,
            "symbol": candidate.symbol,
            "kind": candidate.kind,
            "file_path": candidate.file_path,
            "start_line": candidate.start_line,
            "end_line": candidate.end_line,
            "package": candidate.package,
            "score": score,
            "why": why_strings(evidence),
            "evidence": evidence,
        }
        if candidate.repo is not None:
            symbol["repo"] = candidate.repo
        symbols.append(symbol)
    ranked_files = list(files.values())
    if top_k:
        return symbols[:top_k], ranked_files[:top_k]
    return symbols, ranked_files


def document_evidence(document: Any, notes: Sequence[str] = ()) -> Evidence:
    """`evidence_ranked` of a ranked Document (`CodeRanker`'s `documents`), from its `meta["ranking"]`, and `notes`."""
    provenance = document.meta.get("ranking")
    if not isinstance(provenance, dict):
        return evidence_record({}, None, (), None, notes)
    confidence = provenance.get("confidence")
    return evidence_record(
        provenance.get("ranks") or {},
        provenance.get("symbol"),
        provenance.get("evidence") or (),
        float(confidence) if isinstance(confidence, int | float) else None,
        notes,
    )


def document_why(document: Any) -> list[str]:
    """`document_evidence` as `why`'s strings."""
    return why_strings(document_evidence(document))
