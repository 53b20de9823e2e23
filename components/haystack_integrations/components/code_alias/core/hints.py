"""Question -> ranked candidate hints (symbols and packages) from the alias dictionary.

Deterministic, dictionary-only, and fast enough for autocomplete: everything is precomputed into inverted
indexes when the `HintIndex` is built, and a lookup only touches the postings of the question's words.

Evidence, strongest first: an identifier written in the question (exactly or with a typo), a nickname,
all words of a symbol's name split (`with stripe backoff`), some of them, words of its docstring, words reached
through the abbreviation table, *retrieved*: defined in the chunks a first retrieval pass ranks highest
for the raw question, and *semantic*: among the symbol cards nearest to the question's vector (`core.cards`),
which bridges a vocabulary gap no word overlap can ("payments retry helper" -> `withStripeBackoff`). Rare words
weigh more than common ones (IDF over the dictionary's symbols).

Each hint carries two numbers:

- ``score`` orders the hint list: the sum of the evidence weights below (name words weighted by IDF). It is
  relative: comparable between the hints of one question, not across questions.
- ``confidence`` (0..1) says how sure the hint is on an absolute scale (the rewrite chooses by it, and the fitted
  ranking stage, `ranking/`, reads it with every kind's own value as features): each kind of evidence has a
  confidence of its own
  (:data:`EVIDENCE_CONFIDENCE`, scaled down for names defined in many places and for partial word matches),
  and independent kinds combine by noisy-OR, ``1 - prod(1 - c)``. Two weak signals that agree (the name's
  words *and* a retrieval pass that found its definition) thus beat either alone.
"""

from __future__ import annotations

import bisect
import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

import numpy as np
from rapidfuzz import fuzz, process

from .calibration import HintCalibration
from .cards import SymbolCards
from .hint_places import POOL_DEPTH, RANK_CAP, PlacePool, card_ranks, place_matrix
from .hint_scope import HintScope
from .identifiers import STOP_WORDS, find_identifiers, normalise, split_identifier, text_words, unique
from .model import AliasDictionary, SymbolEntry
from .testfiles import is_test_file

HintKind = Literal["symbol", "package"]

# Weights of each kind of evidence; a nickname or an identifier the user typed is near-certain.
EXACT_WEIGHT = 12.0
NICKNAME_WEIGHT = 10.0
FUZZY_WEIGHT = 7.0
ALL_WORDS_BONUS = 3.0
NAME_WORD_WEIGHT = 1.0
DOC_WORD_WEIGHT = 0.35
PACKAGE_WORD_WEIGHT = 1.2
RETRIEVED_WEIGHT = 4.0
FUZZY_CUTOFF = 86.0
#: Score of semantic evidence per unit of its (calibrated) confidence: a near card orders like a retrieved name.
SEMANTIC_WEIGHT = 8.0
#: How many of the nearest cards lend "semantic" evidence; they always get a place among the hints (issue 28:
#: the 40 word-overlap hints plus the 20 nearest cards held a gold symbol for 85.7 % of informal questions,
#: either alone for 77-78 %).
SEMANTIC_DEPTH = 20
#: Cards less similar than this lend nothing (MiniLM gives unrelated short texts ~0.1-0.2).
SEMANTIC_MIN_SIMILARITY = 0.25
#: With a fitted places model (`core.hint_places`), how many of the nearest cards keep a place regardless.
PLACES_NEAREST_KEPT = 5

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
EVIDENCE_CONFIDENCE: dict[str, float] = {
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
ALL_WORDS_TWO_CONFIDENCE = 0.3
#: A question of at most this many words that uses every word of a name *describes* that name ("where is the
#: code that writes the captured output" -> `write_captured_output`); in a longer text (a bug report, a
#: traceback) the same words turn up by chance. A label the ranking stage reads (`label_described`).
DESCRIBED_MAX_WORDS = 40
#: How many of the first pass's chunks lend "retrieved" evidence.
RETRIEVED_DEPTH = 10


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


@dataclass
class _Target:
    kind: HintKind
    name: str
    words: tuple[str, ...]
    content_words: frozenset[str]
    qualified_names: list[str]
    files: list[str]
    package: str | None
    exported: bool
    # (repository, package, file) of each definition, aligned with `qualified_names`: what a `HintScope` checks.
    scopes: list[tuple[str | None, str | None, str]] = field(default_factory=list)

    @property
    def in_tests(self) -> bool:
        """Defined only in test code: rarely what a question is after."""
        return self.kind == "symbol" and (
            self.name.lower().startswith("test") or all(is_test_file(path) for path in self.files)
        )


class HintIndex:
    """
    Inverted indexes over an `AliasDictionary` for hint lookup.

    Symbols are merged by name: the hint is the identifier (what goes into `symbols[]`); its definitions'
    qualified names and files ride along for display.

    :param dictionary: The alias dictionary.
    :param calibration: How semantic evidence counts (`core.calibration`); None = the packaged fit.
    """

    def __init__(self, dictionary: AliasDictionary, *, calibration: HintCalibration | None = None) -> None:
        self.version = dictionary.version
        self.calibration = calibration or HintCalibration.load()
        self.targets: list[_Target] = []
        self._by_exact: dict[str, list[int]] = defaultdict(list)
        self._by_name_word: dict[str, list[int]] = defaultdict(list)
        self._by_doc_word: dict[str, list[int]] = defaultdict(list)
        self._by_nickname: dict[str, list[int]] = defaultdict(list)
        self._abbreviations: dict[str, list[str]] = defaultdict(list)
        self._build(dictionary)

    def _build(self, dictionary: AliasDictionary) -> None:
        by_name: dict[str, int] = {}
        doc_words: dict[int, set[str]] = defaultdict(set)
        aliases: dict[int, set[str]] = defaultdict(set)
        # Inside one project its own name is in every question and many identifiers (`django_table_names`):
        # package words say nothing about which symbol is meant, so symbol names are matched without them.
        package_words = {w for p in dictionary.packages for w in p.words} | _project_words(dictionary)
        # Kept for `updated`: which target each symbol name is, and what each target added to the indexes.
        self._package_words = package_words
        self._touched_words: set[str] = set()
        self._name_index = by_name
        self._doc_words = doc_words
        self._aliases = aliases
        for entry in dictionary.symbols:
            index = by_name.get(entry.name)
            if index is None:
                index = len(self.targets)
                by_name[entry.name] = index
                words = entry.words
                self.targets.append(
                    _Target(
                        kind="symbol",
                        name=entry.name,
                        words=words,
                        content_words=frozenset(w for w in words if w not in STOP_WORDS and w not in package_words)
                        or frozenset(w for w in words if w not in STOP_WORDS),
                        qualified_names=[],
                        files=[],
                        package=entry.package,
                        exported=entry.exported,
                    )
                )
            target = self.targets[index]
            target.qualified_names.append(entry.qualified_name)
            target.scopes.append((entry.repo, entry.package, entry.file_path))
            if entry.file_path not in target.files:
                target.files.append(entry.file_path)
            target.exported = target.exported or entry.exported
            doc_words[index].update(entry.doc_words)
            aliases[index].update(entry.aliases)
            self._by_exact[entry.qualified_name.lower()].append(index)
        for package in dictionary.packages:
            index = len(self.targets)
            self.targets.append(
                _Target(
                    kind="package",
                    name=package.name,
                    words=package.words,
                    content_words=frozenset(w for w in package.words if w not in STOP_WORDS),
                    qualified_names=[package.name],
                    files=[package.manifest],
                    package=package.name,
                    exported=True,
                    scopes=[(package.repo, package.name, package.manifest)],
                )
            )
            for alias in (package.name, *package.aliases, *package.import_names):
                self._by_exact[alias.lower()].append(index)
            aliases[index].update(package.aliases)
        for index, target in enumerate(self.targets):
            self._by_exact[target.name.lower()].append(index)
            for word in target.content_words:
                self._by_name_word[word].append(index)
            for word in doc_words.get(index, ()):
                self._by_doc_word[word].append(index)
        self._user_nicknames = {normalise(n) for n in dictionary.nicknames}
        for nickname, names in dictionary.nicknames.items():
            for name in names:
                for index in self._lookup_exact(name):
                    self._by_nickname[normalise(nickname)].append(index)
        for index, alias_names in aliases.items():
            for alias in alias_names:
                key = normalise(alias)
                if index not in self._by_nickname[key]:
                    self._by_nickname[key].append(index)
                self._by_exact.setdefault(alias.lower(), []).append(index)
        for short, expansions in dictionary.abbreviations.items():
            for expansion in expansions:
                self._abbreviations[short.lower()].append(expansion.lower())
                self._abbreviations[expansion.lower()].append(short.lower())
        self._live = len(self.targets)
        self._symbol_count = max(1, len(self.targets))
        self._idf_name = {w: self._idf(len(p)) for w, p in self._by_name_word.items()}
        self._idf_doc = {w: self._idf(len(p)) for w, p in self._by_doc_word.items()}
        self._name_postings = {w: np.asarray(p, dtype=np.int32) for w, p in self._by_name_word.items()}
        self._doc_postings = {w: np.asarray(p, dtype=np.int32) for w, p in self._by_doc_word.items()}
        self._derive_per_target()

    # ---- an incremental update ----------------------------------------------------------------------------------
    def updated(self, before: AliasDictionary, after: AliasDictionary, *, max_names: int = 2000) -> HintIndex | None:
        """
        The hint index of `after`, built from this one (the index of `before`) by redoing only the symbol names
        whose entries changed: a sync that changed a few files re-indexes a few names instead of every symbol.
        This index is left as it is (it may be serving).

        The result answers every lookup as `HintIndex(after)` does: the same targets with the same postings, IDF
        and weights; only the targets' internal numbering differs (a name that went leaves an empty slot that no
        posting names, a new name is added last).

        :returns: The new index, or None when a full build is needed: this index is not of `before`, or what
            every target depends on changed (packages, nicknames, abbreviations, the project's own words), or more
            than `max_names` names changed.
        """
        if self.version != before.version:
            return None
        if (
            before.packages != after.packages
            or before.nicknames != after.nicknames
            or before.abbreviations != after.abbreviations
        ):
            return None
        package_words = {w for p in after.packages for w in p.words} | _project_words(after)
        if package_words != self._package_words:
            return None
        old_groups, new_groups = _groups(before), _groups(after)
        affected: set[str] = set()
        for key in old_groups.keys() | new_groups.keys():
            old, new = old_groups.get(key, []), new_groups.get(key, [])
            if len(old) != len(new) or any(a is not b and a != b for a, b in zip(old, new, strict=True)):
                affected.update(e.name for e in (*old, *new))
        if len(affected) > max_names:
            return None
        entries: dict[str, list[SymbolEntry]] = {name: [] for name in affected}
        for entry in after.symbols:
            if entry.name in entries:
                entries[entry.name].append(entry)
        # Nicknames point at names through the exact index: a nickname naming a changed name needs a full build.
        nicknamed = {name.lower() for names in after.nicknames.values() for name in names}
        clone = self._clone()
        for name in sorted(affected):
            keys = clone._unindex(name) | clone._index(name, entries[name])
            if keys & nicknamed:
                return None
        clone.version = after.version
        clone._finish()
        return clone

    def _clone(self) -> HintIndex:
        clone = HintIndex.__new__(HintIndex)
        clone.__dict__.update(self.__dict__)
        clone.targets = list(self.targets)
        clone._by_exact = defaultdict(list, self._by_exact)  # lists are replaced, never changed in place
        clone._by_name_word = defaultdict(list, self._by_name_word)
        clone._by_doc_word = defaultdict(list, self._by_doc_word)
        clone._by_nickname = defaultdict(list, self._by_nickname)
        clone._name_index = dict(self._name_index)
        clone._doc_words = defaultdict(set, self._doc_words)
        clone._aliases = defaultdict(set, self._aliases)
        clone._touched_words = set()
        clone._card_targets = None  # the targets' numbering changes: map the cards again
        return clone

    def _contributions(self, index: int) -> tuple[set[str], set[str], set[str], set[str]]:
        """(exact keys, name words, doc words, nickname keys) that target `index` is posted under."""
        target = self.targets[index]
        aliases = self._aliases.get(index, set())
        exact = {q.lower() for q in target.qualified_names} | {a.lower() for a in aliases}
        if target.qualified_names:
            exact.add(target.name.lower())
        nicknames = {normalise(a) for a in aliases}
        return exact, set(target.content_words), set(self._doc_words.get(index, ())), nicknames

    def _unindex(self, name: str) -> set[str]:
        """Take the symbol target `name` out of every posting; returns the exact keys it was under."""
        index = self._name_index.get(name)
        if index is None:
            return set()
        exact, name_words, doc_words, nicknames = self._contributions(index)
        for table, keys in (
            (self._by_exact, exact),
            (self._by_name_word, name_words),
            (self._by_doc_word, doc_words),
            (self._by_nickname, nicknames),
        ):
            for key in keys:
                left = [i for i in table.get(key, ()) if i != index]
                if left:
                    table[key] = left
                else:
                    table.pop(key, None)
        self._touched_words |= name_words | doc_words
        self._doc_words.pop(index, None)
        self._aliases.pop(index, None)
        self.targets[index] = _Target("symbol", name, (), frozenset(), [], [], None, False)  # an empty slot
        del self._name_index[name]
        self._live -= 1
        return exact

    def _index(self, name: str, entries: list[SymbolEntry]) -> set[str]:
        """Add the symbol target `name` of `entries` (in the dictionary's order), as `_build` does."""
        if not entries:
            return set()
        first = entries[0]
        words = first.words
        target = _Target(
            kind="symbol",
            name=name,
            words=words,
            content_words=frozenset(w for w in words if w not in STOP_WORDS and w not in self._package_words)
            or frozenset(w for w in words if w not in STOP_WORDS),
            qualified_names=[],
            files=[],
            package=first.package,
            exported=False,
        )
        doc_words: set[str] = set()
        aliases: set[str] = set()
        for entry in entries:
            target.qualified_names.append(entry.qualified_name)
            target.scopes.append((entry.repo, entry.package, entry.file_path))
            if entry.file_path not in target.files:
                target.files.append(entry.file_path)
            target.exported = target.exported or entry.exported
            doc_words.update(entry.doc_words)
            aliases.update(entry.aliases)
        index = len(self.targets)
        self.targets.append(target)
        self._name_index[name] = index
        self._live += 1
        if doc_words:
            self._doc_words[index] = doc_words
        if aliases:
            self._aliases[index] = aliases
        exact, name_words, doc_keys, nicknames = self._contributions(index)
        # `_build` posts a target once per qualified name (and once per alias) under the exact keys.
        counts: dict[str, int] = defaultdict(int)
        for qualified in target.qualified_names:
            counts[qualified.lower()] += 1
        counts[name.lower()] += 1
        for alias in aliases:
            counts[alias.lower()] += 1
        for key, times in counts.items():
            self._by_exact[key] = [*self._by_exact.get(key, ()), *([index] * times)]
        for table, keys in ((self._by_name_word, name_words), (self._by_doc_word, doc_keys)):
            for key in keys:
                table[key] = [*table.get(key, ()), index]
        for key in nicknames:
            table_list = self._by_nickname.get(key, [])
            if index not in table_list:
                self._by_nickname[key] = [*table_list, index]
        self._touched_words |= name_words | doc_keys
        return exact

    def _finish(self) -> None:
        """Recompute what derives from the postings, for the words a change touched (all IDF when N changed)."""
        touched = self._touched_words
        count = max(1, self._live)
        if count != self._symbol_count:
            self._symbol_count = count
            self._idf_name = {w: self._idf(len(p)) for w, p in self._by_name_word.items()}
            self._idf_doc = {w: self._idf(len(p)) for w, p in self._by_doc_word.items()}
        else:
            self._idf_name, self._idf_doc = dict(self._idf_name), dict(self._idf_doc)
        self._name_postings, self._doc_postings = dict(self._name_postings), dict(self._doc_postings)
        for table, idf, postings in (
            (self._by_name_word, self._idf_name, self._name_postings),
            (self._by_doc_word, self._idf_doc, self._doc_postings),
        ):
            for word in touched:
                if word in table:
                    idf[word] = self._idf(len(table[word]))
                    postings[word] = np.asarray(table[word], dtype=np.int32)
                else:
                    idf.pop(word, None)
                    postings.pop(word, None)
        self._derive_per_target()
        del self._touched_words

    def _derive_per_target(self) -> None:
        """What derives from the targets and the postings as a whole: built once, and again after an update."""
        self._spread = [1.0 + math.log2(max(1, len(t.qualified_names))) for t in self.targets]
        self._content_counts = np.asarray([len(t.content_words) for t in self.targets], dtype=np.int32)
        # The tie-breaks of every ranking here (exported first, then by name), as arrays for `np.lexsort`.
        self._not_exported = np.asarray([not t.exported for t in self.targets], dtype=bool)
        by_name = sorted(range(len(self.targets)), key=lambda i: self.targets[i].name)
        self._name_order = np.empty(len(self.targets), dtype=np.int64)
        self._name_order[by_name] = np.arange(len(by_name))
        self._kind_weight = np.asarray(
            [PACKAGE_WORD_WEIGHT if t.kind == "package" else NAME_WORD_WEIGHT for t in self.targets]
        )
        self._card_targets: tuple[SymbolCards, np.ndarray] | None = None
        self._symbol_mask = np.asarray([t.kind == "symbol" for t in self.targets], dtype=bool)
        self._name_vocabulary = sorted(self._by_exact)
        self._word_vocabulary = sorted(set(self._by_name_word) | set(self._by_doc_word))
        # Targets by the (repository, package) of their definitions, and the masks of the scopes asked for so far:
        # made on the first narrowed question (`_scope_mask`).
        self._by_pair: dict[tuple[str | None, str | None], np.ndarray] | None = None
        self._scope_masks: dict[HintScope, np.ndarray] = {}

    def _scope_mask(self, scope: HintScope) -> np.ndarray:
        """Which targets have a definition inside `scope` (a package: its own repository and name)."""
        mask = self._scope_masks.get(scope)
        if mask is not None:
            return mask
        pairs = self._by_pair
        if pairs is None:
            grouped: dict[tuple[str | None, str | None], list[int]] = defaultdict(list)
            for index, target in enumerate(self.targets):
                for pair in {(repo, package) for repo, package, _ in target.scopes}:
                    grouped[pair].append(index)
            pairs = self._by_pair = {pair: np.asarray(found, dtype=np.int64) for pair, found in grouped.items()}
        mask = np.zeros(len(self.targets), dtype=bool)
        for (repo, package), indexes in pairs.items():
            if scope.admits(repo, package):
                mask[indexes] = True
        if len(self._scope_masks) >= 64:  # a bounded memo: scopes are few (a server's repositories and packages)
            self._scope_masks.clear()
        self._scope_masks[scope] = mask
        return mask

    def _idf(self, postings: int) -> float:
        return math.log(1.0 + self._symbol_count / postings)

    def _lookup_exact(self, name: str) -> list[int]:
        return self._by_exact.get(name.lower(), [])

    # ---- lookup --------------------------------------------------------------------------------------------
    def _target_similarity(self, cards: SymbolCards, vector: Sequence[float] | np.ndarray) -> np.ndarray | None:
        """Each target's card similarity to `vector` (NaN: no card), or None when the vector does not fit the cards."""
        mapped = self._card_targets
        if mapped is None or mapped[0] is not cards:
            rows = np.asarray(
                [
                    index if (index := self._name_index.get(name)) is not None else -1
                    for name in cards.names
                ],
                dtype=np.int64,
            )
            mapped = self._card_targets = (cards, rows)
        scores = cards.similarities(vector)
        if scores.size == 0:
            return None
        rows = mapped[1]
        similarity = np.full(len(self.targets), np.nan, dtype=np.float32)
        known = rows >= 0
        similarity[rows[known]] = scores[known]
        return similarity

    def lookup(
        self,
        question: str,
        *,
        limit: int = 40,
        retrieved: Sequence[str] | None = None,
        question_vector: Sequence[float] | np.ndarray | None = None,
        cards: SymbolCards | None = None,
        calibration: HintCalibration | None = None,
        scope: HintScope | None = None,
    ) -> list[Hint]:
        """
        Ranked hints for a question, each with its evidence and a confidence (module docstring).

        :param question: Free text, possibly with identifiers, typos and abbreviations.
        :param limit: Most hints to return.
        :param retrieved: Symbol names defined by the chunks a first retrieval pass ranked highest for the raw
            question, best first (the pipeline passes its BM25 list through `retrieved_symbols`). The first
            `RETRIEVED_DEPTH` distinct names lend "retrieved" evidence, decaying with rank.
        :param question_vector: The question's embedding, with `cards` (the same model's card vectors): the
            `SEMANTIC_DEPTH` nearest cards lend "semantic" evidence (confidence from `calibration`) and keep a
            place among the hints; a hint backed only by shared words loses confidence when its card is far.
        :param cards: The symbol cards of this dictionary (names not in it are ignored).
        :param calibration: The fitted semantic models; None = the packaged `config/hint_calibration.json`.
        :param scope: The repositories and packages the question is narrowed to: only names defined there are
            hints (and each hint lists only its definitions there). None: every name.
        :returns: Hints, best first; ties broken by name so the order is deterministic.
        """
        return self._lookup(
            question,
            limit=limit,
            retrieved=retrieved,
            question_vector=question_vector,
            cards=cards,
            calibration=calibration,
            scope=scope,
        )[0]

    def place_pool(
        self,
        question: str,
        *,
        limit: int = 40,
        retrieved: Sequence[str] | None = None,
        question_vector: Sequence[float] | np.ndarray | None = None,
        cards: SymbolCards | None = None,
        calibration: HintCalibration | None = None,
    ) -> PlacePool | None:
        """
        The candidates that compete for the symbol places of `lookup` with the same arguments, and their features
        (`core.hint_places`); None without cards or a question vector. What `benchmarks/fit_hint_places.py` fits on.
        """
        return self._lookup(
            question,
            limit=limit,
            retrieved=retrieved,
            question_vector=question_vector,
            cards=cards,
            calibration=calibration,
            want_pool=True,
        )[1]

    def _lookup(
        self,
        question: str,
        *,
        limit: int,
        retrieved: Sequence[str] | None,
        question_vector: Sequence[float] | np.ndarray | None,
        cards: SymbolCards | None,
        calibration: HintCalibration | None,
        want_pool: bool = False,
        scope: HintScope | None = None,
    ) -> tuple[list[Hint], PlacePool | None]:
        count = len(self.targets)
        if count == 0:
            return [], None
        allowed = self._scope_mask(scope) if scope is not None else None
        card_scores = (
            self._target_similarity(cards, question_vector)
            if cards is not None and question_vector is not None
            else None
        )
        if card_scores is not None and allowed is not None:
            card_scores = np.where(allowed, card_scores, np.nan)  # a card outside the scope is no candidate
        if card_scores is not None and calibration is None:
            calibration = self.calibration
        # Sparse evidence (exact, fuzzy, nickname, retrieved) is rare and kept in dicts; word evidence touches
        # many targets and is summed in arrays.
        sparse: dict[int, float] = defaultdict(float)
        evidence: dict[int, dict[str, float]] = defaultdict(dict)
        details: dict[int, dict[str, str]] = defaultdict(dict)

        lexical_sparse: dict[int, float] = defaultdict(float)  # the same without "semantic": the word ranking

        def credit(index: int, amount: float, kind: str, confidence: float, detail: str = "") -> None:
            if allowed is not None and not allowed[index]:
                return  # a name outside the repositories / packages the question is narrowed to
            sparse[index] += amount
            if kind != "semantic":
                lexical_sparse[index] += amount
            if confidence > evidence[index].get(kind, -1.0):
                evidence[index][kind] = confidence
                if detail:
                    details[index][kind] = detail

        identifiers = [token for token in find_identifiers(question) if _looks_like_identifier(token)]
        exact_hits = {
            token: self._lookup_exact(token) or self._lookup_exact(token.split(".")[-1]) for token in identifiers
        }
        # One name written in a question is what it asks about; one of the fifteen names of a bug report's
        # traceback is mostly context: the more names written, the less each one says.
        written = max(1, len({token for token, hits in exact_hits.items() if hits}))
        for token in identifiers:
            hits = exact_hits[token]
            for index in hits:
                # A name defined in many places (`write`, `__init__`) says little about where to look.
                spread = self._spread[index]
                credit(
                    index, EXACT_WEIGHT / spread, "exact", EVIDENCE_CONFIDENCE["exact"] / spread / math.sqrt(written)
                )
            if not hits and len(token) >= 5:
                for match, score, _ in process.extract(
                    token.lower(), self._name_vocabulary, scorer=fuzz.ratio, score_cutoff=FUZZY_CUTOFF, limit=3
                ):
                    for index in self._by_exact[match]:
                        spread = self._spread[index]
                        similarity = score / 100.0
                        credit(
                            index,
                            FUZZY_WEIGHT * similarity / spread,
                            "fuzzy",
                            EVIDENCE_CONFIDENCE["fuzzy"] * similarity / spread,
                        )

        lowered = normalise(question)
        for nickname, indexes in self._nickname_hits(lowered):
            label = "nickname" if nickname in self._user_nicknames else "alias"
            for index in indexes:
                credit(index, NICKNAME_WEIGHT, label, EVIDENCE_CONFIDENCE[label], nickname)

        retrieved_credit: dict[int, float] = {}
        for rank, index in enumerate(self._retrieved_targets(retrieved or ())):
            decay = 1.0 - rank / RETRIEVED_DEPTH
            retrieved_credit[index] = max(retrieved_credit.get(index, 0.0), RETRIEVED_WEIGHT * decay)
            credit(
                index, RETRIEVED_WEIGHT * decay, "retrieved", EVIDENCE_CONFIDENCE["retrieved"] * decay, f"#{rank + 1}"
            )

        semantic: list[int] = []
        semantic_credit: dict[int, float] = {}
        semantic_rank: dict[int, tuple[float, int, float]] = {}
        if card_scores is not None and calibration is not None:
            semantic = _nearest_targets(card_scores, SEMANTIC_DEPTH, SEMANTIC_MIN_SIMILARITY)
            best = float(card_scores[semantic[0]]) if semantic else 0.0
            for rank, index in enumerate(semantic):
                value = float(card_scores[index])
                confidence = calibration.semantic_confidence(value, rank, best)
                semantic_credit[index] = SEMANTIC_WEIGHT * confidence
                semantic_rank[index] = (value, rank, best)
                credit(index, SEMANTIC_WEIGHT * confidence, "semantic", confidence, f"{value:.2f}")

        name_score = np.zeros(count)
        doc_score = np.zeros(count)
        matched = np.zeros(count, dtype=np.int32)
        abbreviated = np.zeros(count, dtype=bool)
        words, derived = self._question_words(question)
        short_question = len(question.split()) <= DESCRIBED_MAX_WORDS
        for word, weight in words.items():
            postings = self._name_postings.get(word)
            if postings is not None:
                name_score[postings] += self._kind_weight[postings] * (weight * self._idf_name[word])
                matched[postings] += 1
                if word in derived:
                    abbreviated[postings] = True
            postings = self._doc_postings.get(word)
            if postings is not None:
                doc_score[postings] += DOC_WORD_WEIGHT * weight * self._idf_doc[word]
        content = self._content_counts
        all_words = (matched >= content) & (content > 1)
        # A symbol whose name is mostly words the question did not use is a weaker match.
        share = matched / np.maximum(content, 1)
        partial = np.where(matched > 0, 0.5 + 0.5 * share, 1.0)
        total = name_score * np.where(all_words, 1.0, partial) + all_words * (ALL_WORDS_BONUS * content) + doc_score
        if allowed is not None:
            total = np.where(allowed, total, 0.0)
        words_only = total.copy() if card_scores is not None else None
        for index, amount in sparse.items():
            total[index] += amount

        ranked = self._best(total, total > 0, limit)
        pool: PlacePool | None = None
        if card_scores is not None and (want_pool or (calibration is not None and calibration.places is not None)):
            lexical = words_only if words_only is not None else total.copy()
            for index, amount in lexical_sparse.items():
                lexical[index] += amount
            kinds = _PoolKinds(evidence, name_score, doc_score, all_words, abbreviated, short_question)
            pool = self._place_pool(lexical, card_scores, kinds)
        if pool is not None and calibration is not None and calibration.places is not None:
            # The fitted model fills the symbol places; package hints keep theirs (`core.hint_places`).
            # The very nearest cards keep a place whatever the model says: it is linear in the ranks, and a card
            # far nearer than the rest (a whole vocabulary gap bridged) is the case it rates worst.
            packages = [i for i in ranked if self.targets[i].kind == "package"]
            nearest = [i for i in semantic[:PLACES_NEAREST_KEPT] if i not in packages][: max(0, limit - len(packages))]
            placed = packages + nearest
            placed += pool.choose(calibration.places, limit - len(placed), exclude=set(placed))
            ranked = self._ordered(np.asarray(placed, dtype=np.int64), total)
        elif semantic:
            # The nearest cards keep their places: they are the candidates word overlap cannot produce.
            chosen, near = set(ranked), set(semantic)
            kept = [i for i in ranked if i in near]
            # a limit under twice SEMANTIC_DEPTH must still hold: kept and missing cards together fill at most it
            missing = [i for i in semantic if i not in chosen][: max(0, limit - len(kept))]
            if missing:
                others = [i for i in ranked if i not in near][: max(0, limit - len(kept) - len(missing))]
                ranked = self._ordered(np.asarray([*others, *kept, *missing], dtype=np.int64), total)
        hints = []
        for index in ranked:
            found = dict(evidence.get(index, {}))
            target = self.targets[index]
            if name_score[index] > 0:
                if target.kind == "package":
                    found["package"] = EVIDENCE_CONFIDENCE["package"] * float(min(1.0, share[index]))
                else:
                    found["words"] = EVIDENCE_CONFIDENCE["words"] * float(min(1.0, share[index]))
                if abbreviated[index]:
                    found["abbreviation"] = EVIDENCE_CONFIDENCE["abbreviation"]
            if doc_score[index] > 0:
                found["doc"] = EVIDENCE_CONFIDENCE["doc"]
            if all_words[index] and target.kind == "symbol":
                found["all-words"] = (
                    EVIDENCE_CONFIDENCE["all-words"] if content[index] >= 3 else ALL_WORDS_TWO_CONFIDENCE
                )
                if short_question:
                    found["described"] = EVIDENCE_CONFIDENCE["described"]
            card_similarity = None
            fitted: float | None = None
            if card_scores is not None and not math.isnan(float(card_scores[index])):
                card_similarity = float(card_scores[index])
            if card_scores is not None and calibration is not None and target.kind == "symbol":
                # Where there are cards, the fitted model weighs every piece of evidence together (a word hint
                # whose card is far from the question loses confidence there); else the noisy-OR below.
                fitted = calibration.hint_confidence(found, semantic_rank.get(index), card_similarity)
                if fitted is None and card_similarity is not None and set(found) <= _WORD_ONLY:
                    factor = calibration.word_factor(card_similarity)
                    found = {kind: value * factor for kind, value in found.items()}
            hint = self._hint(index, float(total[index]), found, details.get(index), scope)
            if fitted is not None:
                hint.confidence = fitted
            hint.retrieved_score = retrieved_credit.get(index, 0.0)
            hint.semantic_score = semantic_credit.get(index, 0.0)
            hint.similarity = card_similarity
            hints.append(hint)
        return hints, pool

    def _best(self, scores: np.ndarray, eligible: np.ndarray, limit: int) -> list[int]:
        """The `limit` eligible targets of highest score, best first (exported first, then by name, on ties)."""
        candidates = np.flatnonzero(eligible)
        if len(candidates) > limit:
            # Everything tied with the limit-th score stays in, so the final order is deterministic. A sort, not
            # np.partition: word scores repeat (one common word gives hundreds of names the same score), and
            # partition slows down 20-fold when most values equal the one it looks for (2.5 ms on 23k names).
            kth = np.sort(scores[candidates], kind="stable")[len(candidates) - limit]
            candidates = candidates[scores[candidates] >= kth]
        return self._ordered(candidates, scores)[:limit]

    def _ordered(self, indexes: np.ndarray, scores: np.ndarray) -> list[int]:
        """`indexes` by score, best first; ties: exported first, then by name (as a sort on those keys would)."""
        if len(indexes) == 0:
            return []
        order = np.lexsort((self._name_order[indexes], self._not_exported[indexes], -scores[indexes]))
        return [int(i) for i in indexes[order]]

    def _place_pool(self, lexical: np.ndarray, card_scores: np.ndarray, kinds: _PoolKinds) -> PlacePool:
        """The best `POOL_DEPTH` symbols by word score and by card similarity, with their place features."""
        symbol_scores = np.where(self._symbol_mask, card_scores, np.nan)
        by_words = self._best(lexical, (lexical > 0) & self._symbol_mask, POOL_DEPTH)
        nearest = _nearest_targets(symbol_scores, RANK_CAP, -1.0)  # the card ranks' reference too
        by_cards = nearest[:POOL_DEPTH]
        indexes = unique_ints([*by_words, *by_cards])  # the word list first, in its order
        positions = np.asarray(indexes, dtype=np.int64)
        order = np.arange(len(indexes))
        top = float(lexical[by_words[0]]) if by_words else 0.0
        values = lexical[positions]
        matrix = place_matrix(
            word_rank=np.where(order < len(by_words), order, -1),
            word_share=np.where(values > 0, values / top, 0.0) if top > 0 else np.zeros(len(indexes)),
            card_rank=card_ranks(symbol_scores[nearest], symbol_scores[positions]),
            similarity=card_scores[positions].astype(float),
            best_similarity=float(card_scores[by_cards[0]]) if by_cards else 0.0,
            kinds=kinds.arrays(positions),
        )
        return PlacePool(indexes=indexes, matrix=matrix)

    def _retrieved_targets(self, names: Iterable[str]) -> list[int]:
        """The symbol targets of the first `RETRIEVED_DEPTH` distinct retrieved names, in their order."""
        found: list[int] = []
        seen: set[str] = set()
        for name in names:
            if not name or name in seen:
                continue
            seen.add(name)
            if len(seen) > RETRIEVED_DEPTH:
                break
            short = name.rsplit(".", 1)[-1]
            for index in self._lookup_exact(short):
                target = self.targets[index]
                if target.kind == "symbol" and target.name == short and index not in found:
                    found.append(index)
        return found

    def _hint(
        self,
        index: int,
        score: float,
        evidence: dict[str, float] | None = None,
        details: dict[str, str] | None = None,
        scope: HintScope | None = None,
    ) -> Hint:
        target = self.targets[index]
        found = evidence or {}
        qualified_names, files, package = target.qualified_names, target.files, target.package
        if scope is not None and len(target.scopes) == len(target.qualified_names):
            pairs = zip(target.qualified_names, target.scopes, strict=True)
            inside = [(name, where) for name, where in pairs if scope.admits(where[0], where[1])]
            if inside:  # only its definitions inside the scope: where the narrowed answer can point
                qualified_names = [q for q, _ in inside]
                files = list(dict.fromkeys(where[2] for _, where in inside))
                package = inside[0][1][1]
        return Hint(
            kind=target.kind,
            name=target.name,
            score=score,
            qualified_names=list(qualified_names),
            files=list(files),
            package=package,
            reasons=_reasons(found, details or {}),
            in_tests=target.in_tests,
            name_words=len(target.content_words),
            evidence=found,
            confidence=combine_confidence(found.values()),
        )

    def _nickname_hits(self, lowered_question: str) -> Iterable[tuple[str, list[int]]]:
        padded = f" {' '.join(lowered_question.replace('?', ' ').replace(',', ' ').split())} "
        for nickname, indexes in self._by_nickname.items():
            if nickname and f" {nickname} " in padded:
                yield nickname, indexes

    def _question_words(self, question: str) -> tuple[dict[str, float], set[str]]:
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
            for expansion in self._abbreviations.get(word, ()):
                for part in split_identifier(expansion):
                    if part not in weights:
                        from_abbreviations.add(part)
                    add(part, 0.8)
            for variant in _inflections(word):
                if variant in self._by_name_word or variant in self._by_doc_word:
                    add(variant, 0.9)
            if (
                len(word) >= 5
                and word not in self._by_name_word
                and word not in self._by_doc_word
                and self._word_vocabulary
            ):
                match = process.extractOne(word, self._word_vocabulary, scorer=fuzz.ratio, score_cutoff=FUZZY_CUTOFF)
                if match is not None:
                    add(match[0], 0.7 * match[1] / 100.0)
        return weights, from_abbreviations

    def complete(self, prefix: str, *, limit: int = 10) -> list[Hint]:
        """
        Autocomplete: names starting with `prefix` (case-insensitive), then fuzzy matches.

        :param prefix: What the user has typed so far.
        :param limit: Most completions to return.
        """
        needle = prefix.strip().lower()
        if not needle:
            return []

        start = bisect.bisect_left(self._name_vocabulary, needle)
        found: list[int] = []
        for key in self._name_vocabulary[start:]:
            if not key.startswith(needle) or len(found) >= limit * 4:
                break
            found.extend(self._by_exact[key])
        hints = [self._hint(i, 1.0, {"prefix": 0.0}) for i in unique_ints(found)]
        if len(hints) < limit:
            # One-letter names and dunders (`T`, `__init__`) match almost anything fuzzily: only when typed.
            choices = [k for k in self._name_vocabulary if len(k) > 1 and (needle[0] == "_" or not _is_dunder(k))]
            for match, score, _ in process.extract(
                needle, choices, scorer=fuzz.WRatio, score_cutoff=70, limit=limit * 2
            ):
                for index in self._by_exact[match]:
                    if all(h.name != self.targets[index].name for h in hints):
                        hints.append(self._hint(index, score / 100.0, {"fuzzy": 0.0}))
        hints.sort(key=lambda h: (-h.score, len(h.name), h.name))
        return hints[:limit]


#: Evidence kinds of a hint that only shares words with the question.
_WORD_ONLY = frozenset({"words", "doc", "abbreviation", "all-words", "described"})


@dataclass(frozen=True)
class _PoolKinds:
    """A lookup's evidence, read per target for the place features (the kinds `Hint.evidence` would show)."""

    sparse: Mapping[int, Mapping[str, float]]
    name_score: np.ndarray
    doc_score: np.ndarray
    all_words: np.ndarray
    abbreviated: np.ndarray
    short_question: bool

    def arrays(self, positions: np.ndarray) -> dict[str, np.ndarray]:
        """Evidence kind -> whether each target at `positions` has it (the kinds `Hint.evidence` would show)."""
        found = {
            "words": self.name_score[positions] > 0,
            "doc": self.doc_score[positions] > 0,
            "all-words": self.all_words[positions],
            "described": self.all_words[positions] & self.short_question,
            "abbreviation": self.abbreviated[positions],
        }
        for row, index in enumerate(positions.tolist()):
            for kind in self.sparse.get(index, ()):
                if kind != "semantic":
                    found.setdefault(kind, np.zeros(len(positions), dtype=bool))[row] = True
        return found


def _nearest_targets(similarity: np.ndarray, depth: int, minimum: float) -> list[int]:
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


def _is_dunder(name: str) -> bool:
    """`__init__`, `mod.__call__`: a special name (its last dotted part starts and ends with two underscores)."""
    last = name.rsplit(".", 1)[-1]
    return len(last) > 4 and last.startswith("__") and last.endswith("__")


def _groups(dictionary: AliasDictionary) -> dict[tuple[str | None, str], list[SymbolEntry]]:
    """The dictionary's symbol entries by (repository, file), in its order."""
    groups: dict[tuple[str | None, str], list[SymbolEntry]] = {}
    for entry in dictionary.symbols:
        groups.setdefault((entry.repo, entry.file_path), []).append(entry)
    return groups


def _project_words(dictionary: AliasDictionary, share: float = 0.2) -> set[str]:
    """
    Words of the top-level module that holds at least `share` of the symbols (`django`, `sympy`): the project's
    own name, known even for a tree without manifests (an unpacked wheel).
    """
    roots = Counter(entry.qualified_name.split(".", 1)[0] for entry in dictionary.symbols)
    total = max(1, len(dictionary.symbols))
    return {w for root, count in roots.items() if count >= share * total for w in split_identifier(root)}


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
    """The evidence kinds of a hint's reasons (`nickname:the bouncer` -> `nickname`), the inverse of `_reasons`."""
    return {reason.split(":", 1)[0] for reason in reasons}


def _reasons(evidence: dict[str, float], details: dict[str, str]) -> list[str]:
    """Evidence kinds, strongest first, with their detail where there is one (`nickname:the bouncer`)."""
    order = {kind: position for position, kind in enumerate(_REASON_ORDER)}
    kinds = sorted(evidence, key=lambda kind: (order.get(kind, len(order)), kind))
    return [f"{kind}:{details[kind]}" if kind in details else kind for kind in kinds]


def unique_ints(items: Iterable[int]) -> list[int]:
    return list(dict.fromkeys(items))


def _looks_like_identifier(token: str) -> bool:
    """A question token that is probably code: has case changes, underscores, dots or digits inside."""
    if "_" in token or "." in token.strip(".") or "$" in token:
        return True
    inner = token[1:]
    return any(c.isupper() for c in inner) and any(c.islower() for c in token)


def _inflections(word: str) -> list[str]:
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
