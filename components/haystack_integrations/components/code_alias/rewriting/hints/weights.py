"""The hand-set weights of the hint lookup, as one object (`HintWeights`); the fitted ones are in `calibration`.

``score`` (the order of a question's hints) sums the evidence weights; ``confidence`` (0..1, absolute) starts from
each kind's own value in `EVIDENCE_CONFIDENCE` (`hints` package docstring). A benchmark that tries another depth or
threshold builds a `HintIndex` with `dataclasses.replace(DEFAULT_WEIGHTS, ...)`; nothing is patched in a module.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

EvidenceKind = Literal[
    "exact",
    "fuzzy",
    "nickname",
    "alias",
    "package",
    "all-words",
    "described",
    "words",
    "doc",
    "abbreviation",
    "retrieved",
    "semantic",
]

#: Confidence one kind of evidence gives on its own (before the per-hint scaling described in `HintIndex.lookup`).
EVIDENCE_CONFIDENCE = MappingProxyType(
    {
        "exact": 0.95,  # an identifier written out; / spread (1 + log2 of its definitions) / sqrt(names written)
        "nickname": 0.9,  # the team's own nickname file
        "alias": 0.8,  # a retired name (rename) or a package alias
        "fuzzy": 0.6,  # a typo of an identifier; x similarity, / spread
        "retrieved": 0.45,  # defined in the first pass's top chunk; decays linearly to 0 past the last one looked at
        "all-words": 0.55,  # every content word of a name of three or more words; 0.3 for two words
        "package": 0.5,  # x the share of the package name's words in the question
        "words": 0.15,  # x the share of the name's content words in the question
        "doc": 0.1,  # docstring words
        "abbreviation": 0.0,  # a label: words reached through the abbreviation table (their weight is in "words")
        "described": 0.0,  # a label: "all-words" in a short question (its weight is in "all-words"); see below
        # "semantic": not a constant: `HintCalibration.semantic_confidence` (similarity and rank, fitted on dev sets)
    }
)


@dataclass(frozen=True)
class HintWeights:
    """
    Every hand-set number of the lookup. Score weights order the hints of one question; confidences are absolute.

    :param exact: Score of an identifier written in the question (a nickname or an identifier is near-certain).
    :param nickname: Score of a nickname or alias written in the question.
    :param fuzzy: Score of a typo of an identifier (x its similarity).
    :param all_words_bonus: Score per content word of a name whose every content word is in the question.
    :param name_word: Score of a name word (x its IDF and the word's weight in the question).
    :param doc_word: Score of a docstring word (likewise).
    :param package_word: Score of a package name's word (likewise).
    :param retrieved: Score of a name defined in the first pass's top chunk (decays with rank).
    :param fuzzy_cutoff: Least rapidfuzz ratio of a typo (identifiers and question words).
    :param semantic: Score of semantic evidence per unit of its (calibrated) confidence: a near card orders like a
        retrieved name.
    :param semantic_depth: How many of the nearest cards lend "semantic" evidence; they always get a place among
        the hints (issue 28: the 40 word-overlap hints plus the 20 nearest cards held a gold symbol for 85.7 % of
        informal questions, either alone for 77-78 %).
    :param semantic_min_similarity: Cards less similar than this lend nothing (MiniLM gives unrelated short texts
        ~0.1-0.2).
    :param places_nearest_kept: With a fitted places model (`places`), how many of the nearest cards keep a place
        regardless.
    :param all_words_two_confidence: The "all-words" confidence of a name of two content words.
    :param described_max_words: A question of at most this many words that uses every word of a name *describes*
        that name ("where is the code that writes the captured output" -> `write_captured_output`); in a longer
        text (a bug report, a traceback) the same words turn up by chance. A label the ranking stage reads
        (`label_described`).
    :param retrieved_depth: How many of the first pass's chunks lend "retrieved" evidence.
    """

    exact: float = 12.0
    nickname: float = 10.0
    fuzzy: float = 7.0
    all_words_bonus: float = 3.0
    name_word: float = 1.0
    doc_word: float = 0.35
    package_word: float = 1.2
    retrieved: float = 4.0
    fuzzy_cutoff: float = 86.0
    semantic: float = 8.0
    semantic_depth: int = 20
    semantic_min_similarity: float = 0.25
    places_nearest_kept: int = 5
    all_words_two_confidence: float = 0.3
    described_max_words: int = 40
    retrieved_depth: int = 10


DEFAULT_WEIGHTS = HintWeights()
# The defaults under the names tests and reports quote.
SEMANTIC_DEPTH = DEFAULT_WEIGHTS.semantic_depth
RETRIEVED_DEPTH = DEFAULT_WEIGHTS.retrieved_depth
