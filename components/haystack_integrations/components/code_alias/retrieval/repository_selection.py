"""Which repository of a mixed index a question is about, from evidence the index already holds (issue 11).

Federated search's collection selection, with each repository of an index as one collection. Two independent
kinds of evidence are multiplied and normalised into a posterior over the repositories:

- **term statistics** (CORI, Callan et al. 1995): for each word of the question, how many of a repository's
  chunks contain it, against how many repositories contain it at all. A word found in one repository only
  says more than a word found in all of them. Size is the repository's number of chunks (CORI's word count).
- **the ranking** (as ReDDE estimates the relevant documents per collection from a central sample): where the
  repository's files rank in the unfiltered answer, each file counting ``1 / rank`` over the first
  `VOTE_DEPTH` files.

A posterior of at least `FILTER_POSTERIOR` narrows the answer to that repository (`CodeSearch.ask(
select_repository=True)`); a weaker one is only recorded (the ranking stage has no mixed-index data to weigh it
with). Constants are CORI's published ones and reciprocal rank fusion's ``k = 60``; the filter threshold is the
one setting.

Framework-free: no Haystack import.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, TypeVar

__all__ = [
    "FILTER_POSTERIOR",
    "RRF_K",
    "VOTE_DEPTH",
    "RepositorySelection",
    "cori_evidence",
    "ranking_votes",
    "select_repository",
]

#: A repository whose posterior reaches this narrows the answer to it (a filter); below, it only boosts.
FILTER_POSTERIOR = 0.9
#: Files of the unfiltered answer whose repositories vote.
VOTE_DEPTH = 20
#: Reciprocal rank fusion's constant (Cormack et al. 2009).
RRF_K = 60
# CORI's constants (Callan, Lu and Croft 1995): term frequency saturation in a collection.
_CORI_DF_BASE = 50.0
_CORI_DF_SIZE = 150.0

T = TypeVar("T")
Action = Literal["filter", "boost"]


@dataclass(frozen=True)
class RepositorySelection:
    """
    The repositories a question is likely about.

    :param posterior: Repository -> probability (sums to 1), highest first.
    :param repo: The most likely repository.
    :param confidence: Its probability.
    :param action: "filter" (narrow to `repo`) when `confidence` >= the threshold, else "boost".
    :param terms: The question's words that some repository holds (the term evidence's basis).
    """

    posterior: dict[str, float]
    repo: str
    confidence: float
    action: Action
    terms: int = 0
    evidence: dict[str, dict[str, float]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        """What the answer's rewrite records (`rewrite["inferred_repository"]`): the top three, rounded."""
        top = dict(list(self.posterior.items())[:3])
        return {
            "repo": self.repo,
            "confidence": round(self.confidence, 4),
            "action": self.action,
            "posterior": {name: round(p, 4) for name, p in top.items()},
            "terms": self.terms,
        }


def cori_evidence(
    terms: Iterable[str], term_documents: Mapping[str, Mapping[str, int]], documents: Mapping[str, int]
) -> dict[str, float]:
    """
    CORI's belief per repository, less its default belief: the mean over the question's known words of
    ``T * I`` (``T = df / (df + 50 + 150 * size / mean size)``, ``I = log((C + 0.5) / cf) / log(C + 1)``).

    :param terms: The question's words (repeats count once).
    :param term_documents: Word -> repository -> chunks of that repository containing it.
    :param documents: Repository -> chunks (every repository of the index, including those without the word).
    :returns: Repository -> evidence >= 0 (all zero when no word is known).
    """
    names = list(documents)
    collections = len(names)
    scores = dict.fromkeys(names, 0.0)
    if collections == 0:
        return scores
    mean_size = sum(documents.values()) / collections or 1.0
    known = 0
    for term in dict.fromkeys(terms):
        counts = term_documents.get(term)
        holders = sum(1 for name in names if counts and counts.get(name, 0) > 0)
        if not counts or holders == 0:
            continue
        known += 1
        rarity = math.log((collections + 0.5) / holders) / math.log(collections + 1.0)
        for name in names:
            df = float(counts.get(name, 0))
            saturation = df / (df + _CORI_DF_BASE + _CORI_DF_SIZE * documents[name] / mean_size)
            scores[name] += saturation * rarity
    return {name: score / known for name, score in scores.items()} if known else scores


def ranking_votes(ranked_repos: Sequence[str | None], depth: int = VOTE_DEPTH) -> dict[str, float]:
    """
    Each repository's share of the unfiltered file ranking: ``sum(1 / rank)`` of its files among the first `depth`.

    :param ranked_repos: The repository of each ranked file, best first (None: a file of no named repository).
    """
    votes: dict[str, float] = {}
    for rank, name in enumerate(ranked_repos[:depth], 1):
        if name is not None:
            votes[name] = votes.get(name, 0.0) + 1.0 / rank
    return votes


def select_repository(
    terms: Iterable[str],
    term_documents: Mapping[str, Mapping[str, int]],
    documents: Mapping[str, int],
    ranked_repos: Sequence[str | None],
    *,
    filter_posterior: float = FILTER_POSTERIOR,
) -> RepositorySelection | None:
    """
    The posterior over an index's repositories: term evidence (`cori_evidence`) times ranking evidence
    (`ranking_votes`), normalised.

    :param terms: The question's words (`code_tokenize`d, as BM25 indexes them).
    :param term_documents: Word -> repository -> chunks containing it (only the question's words are needed).
    :param documents: Repository -> chunks, for every repository of the index.
    :param ranked_repos: The repository of each file of the unfiltered answer, best first.
    :param filter_posterior: The least posterior that narrows to one repository.
    :returns: The selection, or None when the index holds fewer than two repositories or either kind of evidence
        is empty (no word of the question in the index, or an empty answer).
    :raises ValueError: `filter_posterior` outside (0, 1].
    """
    if not 0.0 < filter_posterior <= 1.0:
        raise ValueError(f"filter_posterior must be in (0, 1], got {filter_posterior}")
    if sum(1 for count in documents.values() if count > 0) < 2:
        return None
    words = list(dict.fromkeys(terms))
    cori = cori_evidence(words, term_documents, documents)
    votes = ranking_votes(ranked_repos)
    joint = {name: cori.get(name, 0.0) * votes.get(name, 0.0) for name in documents}
    total = sum(joint.values())
    if total <= 0.0:
        return None
    posterior = dict(sorted(((name, value / total) for name, value in joint.items()), key=lambda item: -item[1]))
    repo, confidence = next(iter(posterior.items()))
    return RepositorySelection(
        posterior=posterior,
        repo=repo,
        confidence=confidence,
        action="filter" if confidence >= filter_posterior else "boost",
        terms=sum(1 for word in words if term_documents.get(word)),
        evidence={"cori": cori, "votes": votes},
    )
