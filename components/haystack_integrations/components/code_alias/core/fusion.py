"""Weighted reciprocal rank fusion over named ranked lists, and how much the rewrite's list may weigh.

Framework-free: lists are item ids, best first. `RankFusion` (the Haystack component) wraps it for Documents.

Plain reciprocal rank fusion scores an item ``sum_i w_i / (k + rank_i)`` over the lists that hold it. With
``k = 60`` the curve is flat: an item at rank 20 of one list and rank 1 of another beats the first item of a
single list. That is what let a weak rewrite guess take rank 1: the definitions of a word-overlap symbol needed
only to appear *anywhere* in the question's own ranking to outrank its best hit. So the rewrite's list here is
weighted per item by how sure the rewrite is of the symbol behind it (`definition_weight`):

- a symbol at least ``strong_confidence`` sure (an identifier written out, a nickname, every word of a long
  name, or its words *and* a first retrieval pass that found its definition) weighs its full confidence;
- a weaker symbol weighs ``weak_factor`` times its confidence, and only where the question's own retrievers
  also found that chunk in their first ``corroboration_depth`` places: a guess can reorder what the question
  already supports, never bring in something it does not.

Even a small weight reorders the flat top of an RRF list, so the first place is guarded separately
(`protect_question_top`): it stays with the question's own best item unless a confident definition beats it.

Weights are keyed by list *name*, so the result does not depend on the order the lists arrive in, and ties
are broken by the fixed order of the names, then by id: deterministic.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

#: The RRF constant of Cormack et al. (and Haystack's joiner, which uses 61 with 0-based ranks: the same).
RRF_K = 60.0


@dataclass
class Fused:
    """One item of a fused ranking: its score and its rank in each list that holds it (1-based)."""

    item: str
    score: float
    ranks: dict[str, int] = field(default_factory=dict)
    contributions: dict[str, float] = field(default_factory=dict)


def reciprocal_rank_fusion(
    lists: Mapping[str, Sequence[str]],
    *,
    weights: Mapping[str, float] | None = None,
    item_weights: Mapping[str, Mapping[str, float]] | None = None,
    k: float = RRF_K,
) -> list[Fused]:
    """
    Fuse named rankings: ``score(d) = sum over lists L holding d of weights[L] * item_weights[L][d] / (k + rank)``.

    :param lists: List name -> item ids, best first (a repeated id keeps its first rank).
    :param weights: List name -> weight (default 1.0 each). Names, not positions: order independent.
    :param item_weights: List name -> item -> a multiplier (default 1.0); 0 removes the item's contribution.
    :param k: The RRF constant.
    :returns: Items with a positive score, best first; ties by the sorted list names' first appearance, then id.
    """
    if k <= 0:
        raise ValueError(f"k must be > 0, got {k}")
    weights = weights or {}
    item_weights = item_weights or {}
    fused: dict[str, Fused] = {}
    first_seen: dict[str, tuple[int, int]] = {}
    for list_position, name in enumerate(sorted(lists)):
        weight = float(weights.get(name, 1.0))
        per_item = item_weights.get(name, {})
        seen: set[str] = set()
        for rank, item in enumerate(lists[name], start=1):
            if item in seen:
                continue
            seen.add(item)
            amount = weight * float(per_item.get(item, 1.0)) / (k + rank)
            entry = fused.get(item)
            if entry is None:  # not setdefault: that builds a Fused (and its dicts) for every item of every list
                entry = fused[item] = Fused(item=item, score=0.0)
            entry.ranks[name] = rank
            if amount > 0:
                entry.score += amount
                entry.contributions[name] = amount
            first_seen.setdefault(item, (rank, list_position))
    ranked = [entry for entry in fused.values() if entry.score > 0]
    ranked.sort(key=lambda e: (-e.score, first_seen[e.item], e.item))
    return ranked


def definition_weight(
    confidence: float,
    *,
    corroborated: bool,
    strong_confidence: float = 0.5,
    weak_factor: float = 0.5,
    uncorroborated_factor: float = 0.0,
) -> float:
    """
    How much one chunk of the rewrite's definitions list may weigh (module docstring).

    :param confidence: The rewrite's confidence in the symbol the chunk defines (0..1).
    :param corroborated: Whether the question's own retrievers found the chunk in their first places.
    :param strong_confidence: From this confidence on, the symbol weighs its confidence anywhere.
    :param weak_factor: A weaker symbol's confidence is scaled by this when corroborated...
    :param uncorroborated_factor: ...and by this when not (0: a weak guess brings in nothing new).
    """
    confidence = min(1.0, max(0.0, confidence))
    if confidence >= strong_confidence:
        return confidence
    return confidence * (weak_factor if corroborated else uncorroborated_factor)


def protect_question_top(
    fused: list[Fused],
    question: list[Fused],
    confident: set[str] | Callable[[str, str], bool],
    *,
    among: set[str] | None = None,
) -> list[Fused]:
    """
    Keep the question's own best item first unless the fused first is backed by a confident rewrite symbol.

    `question` is the fusion of the question's own lists (every list but the rewrite's). When the fused ranking
    puts something else first and that item may not displace the question's best (`confident`), the question's
    best moves up to take its place; the rest keeps its fused order. With `among`, "first" means first among
    those items (e.g. the chunks that define a symbol, so the first *symbol* of the answer is guarded too).

    :param fused: The fused ranking (`reciprocal_rank_fusion` over every list).
    :param question: The ranking of the question's own lists alone.
    :param confident: Items whose rewrite evidence is strong enough to take the first place, or a function
        ``(item, question's best item) -> bool`` saying whether `item` may displace it.
    :param among: Only items in this set compete for the guarded place (None: all).
    """
    eligible = next((entry for entry in fused if among is None or entry.item in among), None)
    best = next((entry.item for entry in question if among is None or entry.item in among), None)
    if eligible is None or best is None or eligible.item == best:
        return fused
    may_displace = confident if callable(confident) else (lambda item, _best: item in confident)
    if may_displace(eligible.item, best):
        return fused
    moved = next(entry for entry in fused if entry.item == best)
    moved.score = eligible.score * (1.0 + 1e-9)  # scores stay monotonic for consumers that sort by them
    reordered: list[Fused] = []
    for entry in fused:
        if entry is eligible:
            reordered.append(moved)
        if entry is not moved:
            reordered.append(entry)
    return reordered
