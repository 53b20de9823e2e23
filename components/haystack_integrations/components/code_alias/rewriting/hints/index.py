"""`HintIndex`: inverted indexes over an `AliasDictionary`, and the lookup that ranks a question's hints.

A lookup gathers each kind of evidence (`kinds`), ranks the names by the sum of its scores, gives the capped list's
places (`places`) and turns each name into a `Hint` with its confidence (`evidence`, `calibration`).
"""

from __future__ import annotations

import bisect
import math
from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from rapidfuzz import fuzz, process

from ...core.cards import SymbolCards
from ...core.hint_evidence import Hint, combine_confidence, reasons_of
from ...core.identifiers import normalise
from ...core.model import AliasDictionary, PackageEntry, SymbolEntry
from .calibration import HintCalibration
from .incremental import updated
from .kinds import (
    WORD_ONLY,
    Credits,
    LookupEvidence,
    SemanticEvidence,
    credit_identifiers,
    credit_nicknames,
    credit_retrieved,
    credit_semantic,
    hint_evidence,
    is_dunder,
    unique_ints,
    word_evidence,
)
from .places import fitted_places, pool_of, reserved_places
from .scope import HintScope
from .targets import Target, content_words, project_words
from .weights import DEFAULT_WEIGHTS, HintWeights

if TYPE_CHECKING:
    from .places import PlacePool


class HintIndex:
    """
    Inverted indexes over an `AliasDictionary` for hint lookup.

    Symbols are merged by name: the hint is the identifier (what goes into `symbols[]`); its definitions'
    qualified names and files ride along for display.

    :param dictionary: The alias dictionary.
    :param calibration: How semantic evidence counts (`calibration`); None = the packaged fit.
    :param weights: The hand-set weights (`weights`); None = `DEFAULT_WEIGHTS`.
    """

    def __init__(
        self,
        dictionary: AliasDictionary,
        *,
        calibration: HintCalibration | None = None,
        weights: HintWeights | None = None,
    ) -> None:
        self.version = dictionary.version
        self.calibration = calibration or HintCalibration.load()
        self.weights = weights or DEFAULT_WEIGHTS
        self.targets: list[Target] = []
        self.by_exact: dict[str, list[int]] = defaultdict(list)
        self.by_name_word: dict[str, list[int]] = defaultdict(list)
        self.by_doc_word: dict[str, list[int]] = defaultdict(list)
        self.by_nickname: dict[str, list[int]] = defaultdict(list)
        self.abbreviations: dict[str, list[str]] = defaultdict(list)
        self._build(dictionary)

    def _build(self, dictionary: AliasDictionary) -> None:
        # Inside one project its own name is in every question and many identifiers (`django_table_names`):
        # package words say nothing about which symbol is meant, so symbol names are matched without them.
        # Kept for `updated`: which target each symbol name is, and what each target added to the indexes.
        self._package_words = {w for p in dictionary.packages for w in p.words} | project_words(dictionary)
        self._touched_words: set[str] = set()
        self._name_index: dict[str, int] = {}
        self._doc_words: dict[int, set[str]] = defaultdict(set)
        self._aliases: dict[int, set[str]] = defaultdict(set)
        for entry in dictionary.symbols:
            self._add_symbol(entry)
        for package in dictionary.packages:
            self._add_package(package)
        for index, target in enumerate(self.targets):
            self.by_exact[target.name.lower()].append(index)
            for word in target.content_words:
                self.by_name_word[word].append(index)
            for word in self._doc_words.get(index, ()):
                self.by_doc_word[word].append(index)
        self._add_nicknames(dictionary)
        for short, expansions in dictionary.abbreviations.items():
            for expansion in expansions:
                self.abbreviations[short.lower()].append(expansion.lower())
                self.abbreviations[expansion.lower()].append(short.lower())
        self._live = len(self.targets)
        self._symbol_count = max(1, len(self.targets))
        self.idf_name = {w: self.idf(len(p)) for w, p in self.by_name_word.items()}
        self.idf_doc = {w: self.idf(len(p)) for w, p in self.by_doc_word.items()}
        self.name_postings = {w: np.asarray(p, dtype=np.int32) for w, p in self.by_name_word.items()}
        self.doc_postings = {w: np.asarray(p, dtype=np.int32) for w, p in self.by_doc_word.items()}
        self.derive_per_target()

    def _add_symbol(self, entry: SymbolEntry) -> None:
        """One definition: a new target for a new name, else one more definition of its name's target."""
        index = self._name_index.get(entry.name)
        if index is None:
            index = len(self.targets)
            self._name_index[entry.name] = index
            self.targets.append(
                Target(
                    kind="symbol",
                    name=entry.name,
                    words=entry.words,
                    content_words=content_words(entry.words, self._package_words),
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
        self._doc_words[index].update(entry.doc_words)
        self._aliases[index].update(entry.aliases)
        self.by_exact[entry.qualified_name.lower()].append(index)

    def _add_package(self, package: PackageEntry) -> None:
        index = len(self.targets)
        self.targets.append(
            Target(
                kind="package",
                name=package.name,
                words=package.words,
                content_words=content_words(package.words, set()),
                qualified_names=[package.name],
                files=[package.manifest],
                package=package.name,
                exported=True,
                scopes=[(package.repo, package.name, package.manifest)],
            )
        )
        for alias in (package.name, *package.aliases, *package.import_names):
            self.by_exact[alias.lower()].append(index)
        self._aliases[index].update(package.aliases)

    def _add_nicknames(self, dictionary: AliasDictionary) -> None:
        """The team's nicknames, then the aliases (retired names, package aliases), by their normalised text."""
        self.user_nicknames = {normalise(n) for n in dictionary.nicknames}
        for nickname, names in dictionary.nicknames.items():
            for name in names:
                for index in self.lookup_exact(name):
                    self.by_nickname[normalise(nickname)].append(index)
        for index, alias_names in self._aliases.items():
            for alias in alias_names:
                key = normalise(alias)
                if index not in self.by_nickname[key]:
                    self.by_nickname[key].append(index)
                self.by_exact.setdefault(alias.lower(), []).append(index)

    def updated(self, before: AliasDictionary, after: AliasDictionary, *, max_names: int = 2000) -> HintIndex | None:
        """The index of `after` from this one, the index of `before`, redoing only the names that changed; None
        when a full build is needed (`incremental.updated`)."""
        return updated(self, before, after, max_names=max_names)

    def derive_per_target(self) -> None:
        """What derives from the targets and the postings as a whole: built once, and again after an update."""
        self.spread = [1.0 + math.log2(max(1, len(t.qualified_names))) for t in self.targets]
        self.content_counts = np.asarray([len(t.content_words) for t in self.targets], dtype=np.int32)
        # The tie-breaks of every ranking here (exported first, then by name), as arrays for `np.lexsort`.
        self._not_exported = np.asarray([not t.exported for t in self.targets], dtype=bool)
        by_name = sorted(range(len(self.targets)), key=lambda i: self.targets[i].name)
        self._name_order = np.empty(len(self.targets), dtype=np.int64)
        self._name_order[by_name] = np.arange(len(by_name))
        self.kind_weight = np.asarray(
            [self.weights.package_word if t.kind == "package" else self.weights.name_word for t in self.targets]
        )
        self._card_targets: tuple[SymbolCards, np.ndarray] | None = None
        self.symbol_mask = np.asarray([t.kind == "symbol" for t in self.targets], dtype=bool)
        self.name_vocabulary = sorted(self.by_exact)
        self.word_vocabulary = sorted(set(self.by_name_word) | set(self.by_doc_word))
        # Targets by the (repository, package) of their definitions, and the masks of the scopes asked for so far:
        # made on the first narrowed question (`scope_mask`).
        self._by_pair: dict[tuple[str | None, str | None], np.ndarray] | None = None
        self._scope_masks: dict[HintScope, np.ndarray] = {}

    def scope_mask(self, scope: HintScope) -> np.ndarray:
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

    def idf(self, postings: int) -> float:
        return math.log(1.0 + self._symbol_count / postings)

    def lookup_exact(self, name: str) -> list[int]:
        return self.by_exact.get(name.lower(), [])

    # ---- lookup --------------------------------------------------------------------------------------------
    def _target_similarity(self, cards: SymbolCards, vector: Sequence[float] | np.ndarray) -> np.ndarray | None:
        """Each target's card similarity to `vector` (NaN: no card), or None when the vector does not fit the cards."""
        mapped = self._card_targets
        if mapped is None or mapped[0] is not cards:
            rows = np.asarray(
                [index if (index := self._name_index.get(name)) is not None else -1 for name in cards.names],
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
        Ranked hints for a question, each with its evidence and a confidence (package docstring).

        :param question: Free text, possibly with identifiers, typos and abbreviations.
        :param limit: Most hints to return.
        :param retrieved: Symbol names defined by the chunks a first retrieval pass ranked highest for the raw
            question, best first (the pipeline passes its BM25 list through `retrieved_symbols`). The first
            `retrieved_depth` distinct names lend "retrieved" evidence, decaying with rank.
        :param question_vector: The question's embedding, with `cards` (the same model's card vectors): the
            `semantic_depth` nearest cards lend "semantic" evidence (confidence from `calibration`) and keep a
            place among the hints; a hint backed only by shared words loses confidence when its card is far.
        :param cards: The symbol cards of this dictionary (names not in it are ignored).
        :param calibration: The fitted semantic models; None = the packaged `config/hint_calibration.json`.
        :param scope: The repositories and packages the question is narrowed to: only names defined there are
            hints (and each hint lists only its definitions there). None: every name.
        :returns: Hints, best first; ties broken by name so the order is deterministic.
        """
        found = self.evidence(question, retrieved, question_vector, cards, calibration, scope)
        if found is None:
            return []
        ranked = self.best(found.total, found.total > 0, limit)
        fitted = found.calibration.places if found.calibration is not None else None
        if found.card_scores is not None and fitted is not None:
            ranked = fitted_places(self, ranked, found.semantic.nearest, pool_of(self, found), fitted, limit, found)
        elif found.semantic.nearest:
            ranked = reserved_places(self, ranked, found.semantic.nearest, limit, found.total)
        return [self._lookup_hint(index, found, scope) for index in ranked]

    def evidence(
        self,
        question: str,
        retrieved: Sequence[str] | None,
        question_vector: Sequence[float] | np.ndarray | None,
        cards: SymbolCards | None,
        calibration: HintCalibration | None,
        scope: HintScope | None,
    ) -> LookupEvidence | None:
        """Every kind of evidence the question lends every target (`lookup`'s arguments); None: no targets."""
        if not self.targets:
            return None
        allowed = self.scope_mask(scope) if scope is not None else None
        card_scores = (
            self._target_similarity(cards, question_vector)
            if cards is not None and question_vector is not None
            else None
        )
        if card_scores is not None and allowed is not None:
            card_scores = np.where(allowed, card_scores, np.nan)  # a card outside the scope is no candidate
        if card_scores is not None and calibration is None:
            calibration = self.calibration
        credits = Credits(allowed)
        credit_identifiers(self, question, credits)
        credit_nicknames(self, question, credits)
        retrieved_scores = credit_retrieved(self, retrieved or (), credits)
        semantic = (
            credit_semantic(self, card_scores, calibration, credits)
            if card_scores is not None and calibration is not None
            else SemanticEvidence()
        )
        words = word_evidence(self, question)
        total = words.total.copy() if allowed is None else np.where(allowed, words.total, 0.0)
        words_only = total.copy() if card_scores is not None else None
        for index, amount in credits.score.items():
            total[index] += amount
        return LookupEvidence(credits, words, card_scores, calibration, retrieved_scores, semantic, total, words_only)

    def best(self, scores: np.ndarray, eligible: np.ndarray, limit: int) -> list[int]:
        """The `limit` eligible targets of highest score, best first (exported first, then by name, on ties)."""
        candidates = np.flatnonzero(eligible)
        if len(candidates) > limit:
            # Everything tied with the limit-th score stays in, so the final order is deterministic. A sort, not
            # np.partition: word scores repeat (one common word gives hundreds of names the same score), and
            # partition slows down 20-fold when most values equal the one it looks for (2.5 ms on 23k names).
            kth = np.sort(scores[candidates], kind="stable")[len(candidates) - limit]
            candidates = candidates[scores[candidates] >= kth]
        return self.ordered(candidates, scores)[:limit]

    def ordered(self, indexes: np.ndarray, scores: np.ndarray) -> list[int]:
        """`indexes` by score, best first; ties: exported first, then by name (as a sort on those keys would)."""
        if len(indexes) == 0:
            return []
        order = np.lexsort((self._name_order[indexes], self._not_exported[indexes], -scores[indexes]))
        return [int(i) for i in indexes[order]]

    def _lookup_hint(self, index: int, found: LookupEvidence, scope: HintScope | None) -> Hint:
        """The hint of target `index` of a lookup: its evidence, and its confidence fitted where there are cards."""
        evidence = hint_evidence(self, index, found.credits.evidence.get(index, {}), found.words)
        card_scores, calibration = found.card_scores, found.calibration
        card_similarity = None
        fitted: float | None = None
        if card_scores is not None and not math.isnan(float(card_scores[index])):
            card_similarity = float(card_scores[index])
        if card_scores is not None and calibration is not None and self.targets[index].kind == "symbol":
            # Where there are cards, the fitted model weighs every piece of evidence together (a word hint
            # whose card is far from the question loses confidence there); else the noisy-OR of `_hint`.
            fitted = calibration.hint_confidence(evidence, found.semantic.ranks.get(index), card_similarity)
            if fitted is None and card_similarity is not None and set(evidence) <= WORD_ONLY:
                factor = calibration.word_factor(card_similarity)
                evidence = {kind: value * factor for kind, value in evidence.items()}
        hint = self._hint(index, float(found.total[index]), evidence, found.credits.details.get(index), scope)
        if fitted is not None:
            hint.confidence = fitted
        hint.retrieved_score = found.retrieved.get(index, 0.0)
        hint.semantic_score = found.semantic.scores.get(index, 0.0)
        hint.similarity = card_similarity
        return hint

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
            reasons=reasons_of(found, details or {}),
            in_tests=target.in_tests,
            name_words=len(target.content_words),
            evidence=found,
            confidence=combine_confidence(found.values()),
        )

    def complete(self, prefix: str, *, limit: int = 10) -> list[Hint]:
        """
        Autocomplete: names starting with `prefix` (case-insensitive), then fuzzy matches.

        :param prefix: What the user has typed so far.
        :param limit: Most completions to return.
        """
        needle = prefix.strip().lower()
        if not needle:
            return []

        start = bisect.bisect_left(self.name_vocabulary, needle)
        found: list[int] = []
        for key in self.name_vocabulary[start:]:
            if not key.startswith(needle) or len(found) >= limit * 4:
                break
            found.extend(self.by_exact[key])
        hints = [self._hint(i, 1.0, {"prefix": 0.0}) for i in unique_ints(found)]
        if len(hints) < limit:
            # One-letter names and dunders (`T`, `__init__`) match almost anything fuzzily: only when typed.
            choices = [k for k in self.name_vocabulary if len(k) > 1 and (needle[0] == "_" or not is_dunder(k))]
            for match, score, _ in process.extract(
                needle, choices, scorer=fuzz.WRatio, score_cutoff=70, limit=limit * 2
            ):
                for index in self.by_exact[match]:
                    if all(h.name != self.targets[index].name for h in hints):
                        hints.append(self._hint(index, score / 100.0, {"fuzzy": 0.0}))
        hints.sort(key=lambda h: (-h.score, len(h.name), h.name))
        return hints[:limit]


def place_pool(
    index: HintIndex,
    question: str,
    *,
    retrieved: Sequence[str] | None = None,
    question_vector: Sequence[float] | np.ndarray | None = None,
    cards: SymbolCards | None = None,
    calibration: HintCalibration | None = None,
) -> PlacePool | None:
    """
    The candidates that compete for the symbol places of `index.lookup` with the same arguments, and their features
    (`places`); None without cards or a question vector. What the places model is fitted on
    (`benchmarks/fit_hint_places.py`); the lookup itself builds a pool only when a fitted model fills the places.
    """
    found = index.evidence(question, retrieved, question_vector, cards, calibration, None)
    if found is None or found.card_scores is None:
        return None
    return pool_of(index, found)
