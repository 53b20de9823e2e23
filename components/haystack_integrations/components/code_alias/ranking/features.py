"""Features of each candidate of a pool: what the fitted ranking model weighs.

One row per candidate (`CandidatePool.candidates`), one column per name in `FEATURES`; a missing value (a list
that does not hold the chunk, a chunk no hint names) is NaN, which the model treats as its own case. Everything
the hand-written rules of earlier versions looked at is here as a feature instead: each retriever's rank and
score, the hint behind a definition (its confidence, every kind of evidence, its card's similarity, its place
among the hints and among the rewrite's symbols), namesakes (another definition of the same name that the
question's own lists ranked higher), test files and whether the question is about tests, near-duplicate copies,
declaration files and their implementations, the package the rewrite chose, and what the candidate's file holds
of the pool. The model (`ranking.model`) decides how much each counts.

Framework-free: numpy only.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..core.hint_evidence import HintEvidence, SymbolEvidence
from ..core.identifiers import find_identifiers, split_identifier, text_words
from ..core.reexports import declaration_stem
from ..core.testfiles import is_test_file
from .candidates import Candidate, CandidatePool, FileKey

#: Evidence kinds of a hint that become features of their own (`rewriting.hints.weights.EvidenceKind`).
EVIDENCE_FEATURES: tuple[str, ...] = (
    "exact",
    "fuzzy",
    "nickname",
    "alias",
    "all-words",
    "words",
    "doc",
    "retrieved",
    "semantic",
)
#: Evidence kinds that are labels (their value is 0): present or not.
EVIDENCE_LABELS: tuple[str, ...] = ("described", "abbreviation")

FEATURES: tuple[str, ...] = (
    # the question's own lists
    "bm25_log_rank",
    "bm25_relative_score",
    "embedding_log_rank",
    "embedding_score",
    "embedding_gap",
    "definitions_log_rank",
    "question_rrf",
    "definition_rrf",
    "fused_rrf",
    # the hint that names the candidate's symbol
    "hint_log_rank",
    "hint_confidence",
    *(f"evidence_{kind}" for kind in EVIDENCE_FEATURES),
    *(f"label_{kind}" for kind in EVIDENCE_LABELS),
    "hint_similarity",
    "card_similarity",
    "card_gap",
    "card_log_rank",
    "hint_files",
    "chosen_rank",
    "enclosing_hint_confidence",
    "namesake",
    "name_share_in_question",
    "name_written",
    # what the candidate is
    "defines",
    "kind_class",
    "kind_function",
    "kind_method",
    "log_lines",
    "path_depth",
    "package_module",
    "test_file",
    "asks_about_tests",
    "copy",
    "declaration",
    "declaration_with_implementation",
    "implementation_of_declaration",
    # the rewrite's packages
    "package_chosen",
    "package_confidence",
    "package_sure",
    # the candidate's file in the pool
    "file_candidates",
    "file_best_bm25_log_rank",
    "file_best_embedding_log_rank",
    "file_hint_confidence",
    "file_hints",
    "file_question_rrf",
    "file_rrf_sum",
    "file_card_similarity",
    "log_rank_in_file",
    # the question
    "question_log_words",
    "question_identifiers",
    "long_question",
    "asks_a_question",
    "term_coverage",
    "hybrid",
    "rewritten",
)
INDEX = {name: position for position, name in enumerate(FEATURES)}

# A short question that says "test" asks about tests; a long issue text mentions them in passing.
_TEST_WORDS = re.compile(r"\b(tests?|testing|unit ?tests?|test ?cases?|conftest|fixtures?|specs?)\b", re.IGNORECASE)
#: Reciprocal rank fusion's constant (Cormack et al. 2009): the unsupervised fusion scores are features too.
RRF_K = 60.0
#: Confidence a chosen symbol that is not among the hints counts with in `definition_rrf` (an LLM's own choice).
UNHINTED_CONFIDENCE = 0.3
#: Characters from which a question is a long text (an issue body, a traceback) rather than a question.
LONG_QUESTION = 300
_PACKAGE_MODULES = frozenset({"__init__.py", "index.js", "index.ts", "index.mjs", "index.cjs", "mod.rs", "lib.rs"})
_IMPLEMENTATION_SUFFIXES = (".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts")


def asks_about_tests(question: str | None) -> bool:
    """
    Whether a question is about tests: a short question that says "test", or writes out a test by name
    (`TestRequests`, `test_encoding_preserved`).
    """
    if not question or len(question) > LONG_QUESTION:
        return False
    return bool(_TEST_WORDS.search(question)) or any(_names_a_test(token) for token in find_identifiers(question))


_INTERROGATIVE = re.compile(r"^\W*(what|how|why|where|which|who|when|whose|does|do|is|are|can|should)\b", re.I)


def asks_a_question(question: str) -> bool:
    """Whether the text is phrased as a question (an interrogative first word, or a question mark at its end) rather
    than a title or report: how people ask changes what the best evidence is."""
    return bool(_INTERROGATIVE.match(question)) or question.rstrip().endswith("?")


def _names_a_test(identifier: str) -> bool:
    words = split_identifier(identifier.rsplit(".", 1)[-1])
    return len(words) > 1 and words[0] in ("test", "tests")


def _log_rank(rank: int | None) -> float:
    return math.log2(rank) if rank else math.nan


def short_name(candidate: Candidate) -> str:
    return str(candidate.symbol or candidate.qualified_name or "").rsplit(".", 1)[-1]


def hint_for(candidate: Candidate, hints: Mapping[str, HintEvidence]) -> HintEvidence | None:
    """The hint that names a candidate's symbol: by symbol, qualified name, or its last part."""
    for name in (candidate.symbol, candidate.qualified_name, short_name(candidate)):
        if name and name in hints:
            return hints[name]
    return None


@dataclass(frozen=True)
class _QuestionFacts:
    words: frozenset[str]
    identifiers: frozenset[str]
    row: dict[str, float]


def _question_facts(pool: CandidatePool) -> _QuestionFacts:
    context = pool.context
    question = context.question
    words = text_words(question)
    identifiers = find_identifiers(question)
    return _QuestionFacts(
        words=frozenset(words),
        identifiers=frozenset(identifiers),
        row={
            "question_log_words": math.log2(1 + len(words)),
            "question_identifiers": float(sum(1 for i in identifiers if len(split_identifier(i)) > 1)),
            "long_question": float(len(question) > LONG_QUESTION),
            "asks_a_question": float(asks_a_question(question)),
            "term_coverage": math.nan if context.term_coverage is None else float(context.term_coverage),
            "hybrid": float(context.embedding),
            "rewritten": float(bool(context.hints) or bool(context.symbols)),
            "asks_about_tests": float(asks_about_tests(question)),
        },
    )


def feature_matrix(pool: CandidatePool) -> np.ndarray:
    """The features (`FEATURES`) of every candidate of `pool`, one row each, in the pool's order."""
    candidates = pool.candidates
    matrix = np.full((len(candidates), len(FEATURES)), np.nan, dtype=np.float64)
    if not candidates:
        return matrix
    context = pool.context
    facts = _question_facts(pool)
    hints = context.hints
    chosen = {name: position for position, name in enumerate(context.symbols, 1)}
    bm25_top = max((c.scores.get("bm25", 0.0) for c in candidates), default=0.0)
    embedding_top = max((c.scores["embedding"] for c in candidates if "embedding" in c.scores), default=math.nan)
    cards = [c.card_similarity for c in candidates if c.card_similarity is not None]
    best_card = max(cards) if cards else math.nan
    card_place: dict[float, int] = {}
    for place, value in enumerate(sorted(cards, reverse=True)):
        card_place.setdefault(value, place)  # ties share the first place, as list.index gives
    namesakes = _namesakes(candidates, hints)
    declarations = _declaration_links(candidates)
    found = [hint_for(candidate, hints) for candidate in candidates]
    files = _file_facts(candidates, found)
    home, sure = _sure_package(context.symbols, context.packages, hints)
    in_file = _rank_in_file(candidates)
    tests: dict[str, float] = {}
    for row, (candidate, hint) in enumerate(zip(candidates, found, strict=True)):
        values = dict(facts.row)
        values.update(_list_features(candidate, bm25_top, embedding_top))
        values.update(_hint_features(candidate, hint, chosen))
        values["definition_rrf"] = _definition_rrf(candidate, hint, chosen)
        # the unsupervised fusion (the question's lists and the chosen definitions, by confidence) as one number
        values["fused_rrf"] = values["question_rrf"] + values["definition_rrf"]
        if candidate.card_similarity is not None:
            values["card_similarity"] = candidate.card_similarity
            values["card_gap"] = best_card - candidate.card_similarity
            values["card_log_rank"] = math.log2(1 + card_place[candidate.card_similarity])
        values["enclosing_hint_confidence"] = _enclosing_hint_confidence(candidate, hints)
        values["namesake"] = float(candidate.id in namesakes)
        name = short_name(candidate)
        name_words = set(split_identifier(name)) if name else set()
        values["name_share_in_question"] = len(name_words & facts.words) / len(name_words) if name_words else math.nan
        values["name_written"] = float(bool(name) and name in facts.identifiers)
        values.update(_what_it_is(candidate, tests))
        values["copy"] = float(candidate.copy)
        link = declarations.get(candidate.file, "")
        values["declaration"] = float(declaration_stem(candidate.file_path) is not None)
        values["declaration_with_implementation"] = float(link == "declaration")
        values["implementation_of_declaration"] = float(link == "implementation")
        values["package_chosen"] = float(bool(candidate.package) and candidate.package in context.packages)
        values["package_confidence"] = float(hints.packages.get(candidate.package, 0.0)) if candidate.package else 0.0
        values["package_sure"] = sure if home is not None and candidate.package == home else 0.0
        values.update(files[candidate.file])
        values["log_rank_in_file"] = math.log2(in_file[candidate.id])
        line = matrix[row]
        for name, value in values.items():
            if name in INDEX:
                line[INDEX[name]] = value
    return matrix


def question_rrf(candidate: Candidate) -> float:
    """Plain reciprocal rank fusion of the question's own lists (BM25, embedding)."""
    return sum(1.0 / (RRF_K + rank) for name, rank in candidate.ranks.items() if name != "definitions")


def _definition_rrf(candidate: Candidate, hint: HintEvidence | None, chosen: Mapping[str, int]) -> float:
    """The definitions list's reciprocal rank, weighed by the confidence of a symbol the rewrite chose (else 0)."""
    rank = candidate.ranks.get("definitions")
    names = (candidate.symbol, candidate.qualified_name, short_name(candidate))
    if not rank or not any(name in chosen for name in names if name):
        return 0.0
    return (hint.confidence if hint is not None else UNHINTED_CONFIDENCE) / (RRF_K + rank)


def _list_features(candidate: Candidate, bm25_top: float, embedding_top: float) -> dict[str, float]:
    ranks, scores = candidate.ranks, candidate.scores
    values = {
        "question_rrf": question_rrf(candidate),
        "bm25_log_rank": _log_rank(ranks.get("bm25")),
        "bm25_relative_score": scores["bm25"] / bm25_top if "bm25" in scores and bm25_top > 0 else 0.0,
        "embedding_log_rank": _log_rank(ranks.get("embedding")),
        "definitions_log_rank": _log_rank(ranks.get("definitions")),
    }
    if "embedding" in scores:
        values["embedding_score"] = scores["embedding"]
        values["embedding_gap"] = embedding_top - scores["embedding"]
    return values


def _hint_features(candidate: Candidate, hint: HintEvidence | None, chosen: Mapping[str, int]) -> dict[str, float]:
    if hint is None:
        return {}
    values = {
        "hint_log_rank": _log_rank(hint.rank),
        "hint_confidence": hint.confidence,
        "hint_similarity": math.nan if hint.similarity is None else float(hint.similarity),
        "hint_files": float(hint.files),
    }
    for kind in EVIDENCE_FEATURES:
        values[f"evidence_{kind}"] = hint.value(kind)
    kinds = {reason.split(":", 1)[0] for reason in hint.reasons}
    for kind in EVIDENCE_LABELS:
        values[f"label_{kind}"] = float(kind in kinds)
    names = (candidate.symbol, short_name(candidate))
    position = next((chosen[name] for name in names if name and name in chosen), None)
    values["chosen_rank"] = _log_rank(position)
    return values


def _sure_package(symbols: Sequence[str], packages: Sequence[str], hints: SymbolEvidence) -> tuple[str | None, float]:
    """The package the rewrite is sure of: one it chose in which its first symbol is defined (its two answers
    agree), with the package hint's confidence; (None, 0.0) when there is none."""
    first = hints.get(symbols[0]) if symbols else None
    home = first.package if first is not None else None
    if not home or home not in packages:
        return None, 0.0
    return home, float(hints.packages.get(home, 0.0))


def _enclosing_hint_confidence(candidate: Candidate, hints: Mapping[str, HintEvidence]) -> float:
    """The best confidence of a hint naming a class the candidate sits in (`Client` for `Client.send`)."""
    parts = str(candidate.qualified_name or "").split(".")[:-1]
    found = [hints[part].confidence for part in parts if part in hints]
    return max(found) if found else math.nan


def _namesakes(candidates: Sequence[Candidate], hints: Mapping[str, HintEvidence]) -> set[str]:
    """
    Definitions of a hint's name other than the one the question's own lists ranked best, in another file: the
    question already chose among them (`_destroy_test_db` of the sqlite3 backend for a question about SQLite).
    """
    best: dict[str, tuple[int, Candidate]] = {}
    for candidate in candidates:
        own = [rank for name, rank in candidate.ranks.items() if name != "definitions"]
        name = short_name(candidate)
        if own and name and name in hints:
            entry = (min(own), candidate)
            if name not in best or entry[0] < best[name][0]:
                best[name] = entry
    return {
        candidate.id
        for candidate in candidates
        if (name := short_name(candidate)) in best and best[name][1].file != candidate.file
    }


def _declaration_links(candidates: Sequence[Candidate]) -> dict[FileKey, str]:
    """`.d.ts` files whose implementation is in the pool ("declaration") and those implementations."""
    files = {candidate.file for candidate in candidates}
    links: dict[FileKey, str] = {}
    for repo, path in files:
        stem = declaration_stem(path)
        if stem is None:
            continue
        for suffix in _IMPLEMENTATION_SUFFIXES:
            if (repo, stem + suffix) in files:
                links[(repo, path)] = "declaration"
                links[(repo, stem + suffix)] = "implementation"
                break
    return links


def _what_it_is(candidate: Candidate, tests: dict[str, float]) -> dict[str, float]:
    kind = (candidate.kind or "").lower()
    path = candidate.file_path
    # PurePosixPath(path).parts without building one per candidate: "/" is a part of its own, "" and "." are none
    parts = [part for part in path.split("/") if part not in ("", ".")]
    test_file = tests.get(path)
    if test_file is None:
        test_file = tests[path] = float(is_test_file(path))
    lines = (candidate.end_line or 0) - (candidate.start_line or 0) + 1 if candidate.start_line else 1
    return {
        "defines": float(candidate.name is not None),
        "kind_class": float(kind in ("class", "struct", "interface", "trait", "enum", "type")),
        "kind_function": float(kind == "function"),
        "kind_method": float(kind == "method"),
        "log_lines": math.log2(max(1, lines)),
        "path_depth": float(len(parts) + path.startswith("/")),
        "package_module": float((parts[-1] if parts else "") in _PACKAGE_MODULES),
        "test_file": test_file,
    }


def _rank_in_file(candidates: Sequence[Candidate]) -> dict[str, int]:
    """Each candidate's 1-based place among its file's candidates, by the question's own lists (pool order on ties)."""
    by_file: dict[FileKey, list[tuple[float, int, str]]] = {}
    for position, candidate in enumerate(candidates):
        by_file.setdefault(candidate.file, []).append((-question_rrf(candidate), position, candidate.id))
    return {item: place for entries in by_file.values() for place, (_, _, item) in enumerate(sorted(entries), 1)}


def _fmax(current: float, value: float) -> float:
    return value if math.isnan(current) else max(current, value)


def _fmin(current: float, value: float) -> float:
    return value if math.isnan(current) else min(current, value)


def _file_facts(
    candidates: Sequence[Candidate], found: Sequence[HintEvidence | None]
) -> dict[FileKey, dict[str, float]]:
    """What each file holds of the pool: its candidates, their best ranks, the hints (`found`, one per candidate)
    they define."""
    facts: dict[FileKey, dict[str, float]] = {}
    named: dict[FileKey, set[str]] = {}
    for candidate, hint in zip(candidates, found, strict=True):
        entry = facts.setdefault(
            candidate.file,
            {
                "file_candidates": 0.0,
                "file_best_bm25_log_rank": math.nan,
                "file_best_embedding_log_rank": math.nan,
                "file_hint_confidence": 0.0,
                "file_hints": 0.0,
                "file_question_rrf": 0.0,
                "file_rrf_sum": 0.0,
                "file_card_similarity": math.nan,
            },
        )
        entry["file_candidates"] += 1.0
        fused = question_rrf(candidate)
        entry["file_question_rrf"] = max(entry["file_question_rrf"], fused)
        entry["file_rrf_sum"] += fused
        if candidate.card_similarity is not None:
            entry["file_card_similarity"] = _fmax(entry["file_card_similarity"], float(candidate.card_similarity))
        for name, key in (("bm25", "file_best_bm25_log_rank"), ("embedding", "file_best_embedding_log_rank")):
            rank = candidate.ranks.get(name)
            if rank:
                entry[key] = _fmin(entry[key], math.log2(rank))
        if hint is not None:
            entry["file_hint_confidence"] = max(entry["file_hint_confidence"], hint.confidence)
            named.setdefault(candidate.file, set()).add(short_name(candidate))
    for file, names in named.items():
        facts[file]["file_hints"] = float(len(names))
    return facts
