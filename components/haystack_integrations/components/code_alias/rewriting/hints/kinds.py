"""One function per kind of evidence a question lends a name (`hints` package docstring), and the hint's
evidence dict built from them (`hint_evidence`).

Sparse evidence (an identifier written exactly or with a typo, a nickname or alias, a name the first retrieval pass
found, a near card) is rare and kept in dicts (`Credits`); word evidence (name, docstring and package words, all of a
name's words) touches many targets and is summed in arrays (`WordEvidence`).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from rapidfuzz import fuzz, process

from ...core.identifiers import STOP_WORDS, find_identifiers, normalise, split_identifier, text_words, unique
from .calibration import HintCalibration
from .weights import EVIDENCE_CONFIDENCE

if TYPE_CHECKING:
    from .index import HintIndex

#: Evidence kinds of a hint that only shares words with the question.
WORD_ONLY = frozenset({"words", "doc", "abbreviation", "all-words", "described"})


@dataclass
class Credits:
    """
    The sparse evidence of one lookup: each target's score from it, its evidence kinds' confidences and details.

    :param allowed: Which targets the question is narrowed to (`HintScope`); None: every target.
    """

    allowed: np.ndarray | None
    score: defaultdict[int, float] = field(default_factory=lambda: defaultdict(float))
    #: The same without "semantic": what the word ranking of the places model reads.
    lexical: defaultdict[int, float] = field(default_factory=lambda: defaultdict(float))
    evidence: defaultdict[int, dict[str, float]] = field(default_factory=lambda: defaultdict(dict))
    details: defaultdict[int, dict[str, str]] = field(default_factory=lambda: defaultdict(dict))

    def credit(self, index: int, amount: float, kind: str, confidence: float, detail: str = "") -> None:
        if self.allowed is not None and not self.allowed[index]:
            return  # a name outside the repositories / packages the question is narrowed to
        self.score[index] += amount
        if kind != "semantic":
            self.lexical[index] += amount
        if confidence > self.evidence[index].get(kind, -1.0):
            self.evidence[index][kind] = confidence
            if detail:
                self.details[index][kind] = detail


def credit_identifiers(index: HintIndex, question: str, credits: Credits) -> None:
    """The identifiers written in the question: "exact" where one is a name, else "fuzzy" (a typo of one)."""
    identifiers = [token for token in find_identifiers(question) if looks_like_identifier(token)]
    exact_hits = {token: index.lookup_exact(token) or index.lookup_exact(token.split(".")[-1]) for token in identifiers}
    # One name written in a question is what it asks about; one of the fifteen names of a bug report's
    # traceback is mostly context: the more names written, the less each one says.
    written = max(1, len({token for token, hits in exact_hits.items() if hits}))
    for token in identifiers:
        hits = exact_hits[token]
        credit_exact(index, hits, written, credits)
        if not hits and len(token) >= 5:
            credit_fuzzy(index, token, credits)


def credit_exact(index: HintIndex, hits: Iterable[int], written: int, credits: Credits) -> None:
    """ "exact": an identifier written out; a name defined in many places (`write`, `__init__`) says little about
    where to look, and one of many names written little about what is asked."""
    weights = index.weights
    for target in hits:
        spread = index.spread[target]
        confidence = EVIDENCE_CONFIDENCE["exact"] / spread / math.sqrt(written)
        credits.credit(target, weights.exact / spread, "exact", confidence)


def credit_fuzzy(index: HintIndex, token: str, credits: Credits) -> None:
    """ "fuzzy": the three names nearest to a written identifier no name has (a typo), by rapidfuzz ratio."""
    weights = index.weights
    for match, score, _ in process.extract(
        token.lower(), index.name_vocabulary, scorer=fuzz.ratio, score_cutoff=weights.fuzzy_cutoff, limit=3
    ):
        for target in index.by_exact[match]:
            spread = index.spread[target]
            similarity = score / 100.0
            confidence = EVIDENCE_CONFIDENCE["fuzzy"] * similarity / spread
            credits.credit(target, weights.fuzzy * similarity / spread, "fuzzy", confidence)


def credit_nicknames(index: HintIndex, question: str, credits: Credits) -> None:
    """ "nickname" (the team's nickname file) or "alias" (a retired name, a package alias) written in the question."""
    padded = f" {' '.join(normalise(question).replace('?', ' ').replace(',', ' ').split())} "
    for nickname, targets in index.by_nickname.items():
        if not nickname or f" {nickname} " not in padded:
            continue
        label = "nickname" if nickname in index.user_nicknames else "alias"
        for target in targets:
            credits.credit(target, index.weights.nickname, label, EVIDENCE_CONFIDENCE[label], nickname)


def credit_retrieved(index: HintIndex, retrieved: Iterable[str], credits: Credits) -> dict[int, float]:
    """
    "retrieved": defined in the chunks a first retrieval pass ranked highest, decaying linearly with rank.

    :returns: Target -> its score from this evidence (`Hint.retrieved_score`).
    """
    weights = index.weights
    scores: dict[int, float] = {}
    for rank, target in enumerate(retrieved_targets(index, retrieved)):
        decay = 1.0 - rank / weights.retrieved_depth
        scores[target] = max(scores.get(target, 0.0), weights.retrieved * decay)
        confidence = EVIDENCE_CONFIDENCE["retrieved"] * decay
        credits.credit(target, weights.retrieved * decay, "retrieved", confidence, f"#{rank + 1}")
    return scores


@dataclass
class SemanticEvidence:
    """The nearest cards of one lookup: targets best first, each one's score and (similarity, rank, best)."""

    nearest: list[int] = field(default_factory=list)
    scores: dict[int, float] = field(default_factory=dict)
    ranks: dict[int, tuple[float, int, float]] = field(default_factory=dict)


def credit_semantic(
    index: HintIndex, card_scores: np.ndarray, calibration: HintCalibration, credits: Credits
) -> SemanticEvidence:
    """ "semantic": among the `semantic_depth` cards nearest to the question (confidence from `calibration`)."""
    weights = index.weights
    found = SemanticEvidence(nearest_targets(card_scores, weights.semantic_depth, weights.semantic_min_similarity))
    best = float(card_scores[found.nearest[0]]) if found.nearest else 0.0
    for rank, target in enumerate(found.nearest):
        value = float(card_scores[target])
        confidence = calibration.semantic_confidence(value, rank, best)
        found.scores[target] = weights.semantic * confidence
        found.ranks[target] = (value, rank, best)
        credits.credit(target, weights.semantic * confidence, "semantic", confidence, f"{value:.2f}")
    return found


@dataclass(frozen=True)
class WordEvidence:
    """The question's words against every target's name and docstring words (arrays over the targets)."""

    name_score: np.ndarray
    doc_score: np.ndarray
    #: Whether a name word came only through the abbreviation table ("abbreviation").
    abbreviated: np.ndarray
    #: Every content word of a name of two or more ("all-words").
    all_words: np.ndarray
    #: Matched content words over the name's content words.
    share: np.ndarray
    #: Whether the question is short enough to *describe* a name ("described").
    short_question: bool
    #: The word score of each target (what orders a question without other evidence).
    total: np.ndarray


def word_evidence(index: HintIndex, question: str) -> WordEvidence:
    """ "words", "package", "doc", "all-words", "described", "abbreviation": the question's words, weighted by IDF."""
    weights = index.weights
    count = len(index.targets)
    name_score = np.zeros(count)
    doc_score = np.zeros(count)
    matched = np.zeros(count, dtype=np.int32)
    abbreviated = np.zeros(count, dtype=bool)
    words, derived = question_words(index, question)
    for word, weight in words.items():
        postings = index.name_postings.get(word)
        if postings is not None:
            name_score[postings] += index.kind_weight[postings] * (weight * index.idf_name[word])
            matched[postings] += 1
            if word in derived:
                abbreviated[postings] = True
        postings = index.doc_postings.get(word)
        if postings is not None:
            doc_score[postings] += weights.doc_word * weight * index.idf_doc[word]
    content = index.content_counts
    all_words = (matched >= content) & (content > 1)
    # A symbol whose name is mostly words the question did not use is a weaker match.
    share = matched / np.maximum(content, 1)
    partial = np.where(matched > 0, 0.5 + 0.5 * share, 1.0)
    bonus = all_words * (weights.all_words_bonus * content)
    total = name_score * np.where(all_words, 1.0, partial) + bonus + doc_score
    short_question = len(question.split()) <= weights.described_max_words
    return WordEvidence(name_score, doc_score, abbreviated, all_words, share, short_question, total)


def hint_evidence(index: HintIndex, target: int, sparse: Mapping[str, float], words: WordEvidence) -> dict[str, float]:
    """A hint's evidence kinds and their confidences: its sparse evidence and what its words add."""
    found = dict(sparse)
    kind = index.targets[target].kind
    if words.name_score[target] > 0:
        share = float(min(1.0, words.share[target]))
        if kind == "package":
            found["package"] = EVIDENCE_CONFIDENCE["package"] * share
        else:
            found["words"] = EVIDENCE_CONFIDENCE["words"] * share
        if words.abbreviated[target]:
            found["abbreviation"] = EVIDENCE_CONFIDENCE["abbreviation"]
    if words.doc_score[target] > 0:
        found["doc"] = EVIDENCE_CONFIDENCE["doc"]
    if words.all_words[target] and kind == "symbol":
        many = index.content_counts[target] >= 3
        found["all-words"] = EVIDENCE_CONFIDENCE["all-words"] if many else index.weights.all_words_two_confidence
        if words.short_question:
            found["described"] = EVIDENCE_CONFIDENCE["described"]
    return found


@dataclass(frozen=True)
class LookupEvidence:
    """Everything one question lends every target (`HintIndex.evidence`): what the lookup ranks and turns into
    hints, and what the places model reads (`places.pool_of`)."""

    credits: Credits
    words: WordEvidence
    #: Each target's card similarity to the question (NaN: no card); None: no cards or no question vector.
    card_scores: np.ndarray | None
    calibration: HintCalibration | None
    #: Target -> its score from "retrieved" evidence.
    retrieved: dict[int, float]
    semantic: SemanticEvidence
    #: Each target's score: words and every sparse kind.
    total: np.ndarray
    #: The word scores alone (a copy, with cards only: the places model's word ranking starts from it).
    words_only: np.ndarray | None


def retrieved_targets(index: HintIndex, names: Iterable[str]) -> list[int]:
    """The symbol targets of the first `retrieved_depth` distinct retrieved names, in their order."""
    found: list[int] = []
    seen: set[str] = set()
    for name in names:
        if not name or name in seen:
            continue
        seen.add(name)
        if len(seen) > index.weights.retrieved_depth:
            break
        short = name.rsplit(".", 1)[-1]
        for target in index.lookup_exact(short):
            entry = index.targets[target]
            if entry.kind == "symbol" and entry.name == short and target not in found:
                found.append(target)
    return found


def question_words(index: HintIndex, question: str) -> tuple[dict[str, float], set[str]]:
    """
    Content words of the question with weights (1 for a word written, less for a derived one), and the
    words that came only from the abbreviation table.
    """
    weights: dict[str, float] = {}
    from_abbreviations: set[str] = set()

    def add(word: str, weight: float) -> None:
        if word and word not in STOP_WORDS and weights.get(word, 0.0) < weight:
            weights[word] = weight

    for word in text_words(question):
        add(word, 1.0)
    for word in list(weights):
        for expansion in index.abbreviations.get(word, ()):
            for part in split_identifier(expansion):
                if part not in weights:
                    from_abbreviations.add(part)
                add(part, 0.8)
        for variant in inflections(word):
            if variant in index.by_name_word or variant in index.by_doc_word:
                add(variant, 0.9)
        known = word in index.by_name_word or word in index.by_doc_word
        if len(word) >= 5 and not known and index.word_vocabulary:
            cutoff = index.weights.fuzzy_cutoff
            match = process.extractOne(word, index.word_vocabulary, scorer=fuzz.ratio, score_cutoff=cutoff)
            if match is not None:
                add(match[0], 0.7 * match[1] / 100.0)
    return weights, from_abbreviations


def nearest_targets(similarity: np.ndarray, depth: int, minimum: float) -> list[int]:
    """The `depth` targets with the highest card similarity of at least `minimum`, best first (ties by index)."""
    filled = np.where(np.isnan(similarity), -np.inf, similarity)
    eligible = np.flatnonzero(filled >= minimum)
    if eligible.size == 0 or depth <= 0:
        return []
    if eligible.size > depth:
        # Only what ties with the depth-th similarity or beats it is sorted (a full sort of 20k cards took ms).
        kth = np.partition(filled[eligible], eligible.size - depth)[eligible.size - depth]
        eligible = eligible[filled[eligible] >= kth]
    order = eligible[np.lexsort((eligible, -filled[eligible]))]
    return [int(i) for i in order[:depth]]


def looks_like_identifier(token: str) -> bool:
    """A question token that is probably code: has case changes, underscores, dots or digits inside."""
    if "_" in token or "." in token.strip(".") or "$" in token:
        return True
    inner = token[1:]
    return any(c.isupper() for c in inner) and any(c.islower() for c in token)


def inflections(word: str) -> list[str]:
    """Cheap plural/verb variants so "retries" meets "retry" and "parsing" meets "parse"."""
    variants: list[str] = []
    if word.endswith("ies") and len(word) > 4:
        variants.append(word[:-3] + "y")
    if word.endswith("es") and len(word) > 4:
        variants.append(word[:-2])
    if word.endswith("s") and len(word) > 3:
        variants.append(word[:-1])
    if word.endswith("ing") and len(word) > 5:
        variants.extend([word[:-3], word[:-3] + "e"])
    if word.endswith("ed") and len(word) > 4:
        variants.extend([word[:-2], word[:-1]])
    if not word.endswith("s"):
        variants.append(word + "s")
    return unique(variants)


def is_dunder(name: str) -> bool:
    """`__init__`, `mod.__call__`: a special name (its last dotted part starts and ends with two underscores)."""
    last = name.rsplit(".", 1)[-1]
    return len(last) > 4 and last.startswith("__") and last.endswith("__")


def unique_ints(items: Iterable[int]) -> list[int]:
    return list(dict.fromkeys(items))
