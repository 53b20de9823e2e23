"""Near-duplicate copies in a ranking: a file that repeats a better-ranked file tells the reader nothing new.

Code bases ship copies: `index.d.ts` and its CommonJS twin `index.d.cts`, `generic_alias_related.py` and
`generic_alias_related_py39.py`, two documentation examples that differ in their docstring style. In a top five
such a copy takes the place of the next distinct answer. `demote_near_duplicates` keeps the order of the distinct
items and moves each copy after them, so nothing is lost; an item is a copy when the identifiers and words of what
was retrieved of it (its chunks in the ranking) overlap those of a better-ranked item by at least `threshold`
(Jaccard). Items with fewer than `min_tokens` distinct tokens are never judged: a two-line remainder matches too much.

Framework-free: no Haystack import.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TypeVar

Item = TypeVar("Item")
_TOKEN = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
#: Jaccard overlap of two token sets from which the lower-ranked one counts as a copy.
DEFAULT_THRESHOLD = 0.8
#: Fewest distinct tokens an item needs to be compared at all.
MIN_TOKENS = 20


def token_set(text: str) -> frozenset[str]:
    """The distinct identifiers and words of `text`, case kept (`AxiosHeaders` and `axiosHeaders` differ)."""
    return frozenset(_TOKEN.findall(text))


def jaccard(first: frozenset[str], second: frozenset[str]) -> float:
    """|A & B| / |A | B|; 0.0 for two empty sets."""
    shared = len(first & second)
    union = len(first) + len(second) - shared  # without building the union set
    return shared / union if union else 0.0


def _may_reach(first: frozenset[str], second: frozenset[str], threshold: float) -> bool:
    """Whether `jaccard(first, second)` can reach `threshold`: it is at most the smaller size over the larger."""
    small, large = sorted((len(first), len(second)))
    return large > 0 and small / large >= threshold


def near_duplicate_positions(
    items: Sequence[Item],
    tokens_of: Callable[[Item], frozenset[str]],
    *,
    threshold: float = DEFAULT_THRESHOLD,
    min_tokens: int = MIN_TOKENS,
) -> set[int]:
    """
    The positions of the items that copy a better-ranked distinct item.

    :param items: Ranked items, best first.
    :param tokens_of: An item's token set (`token_set` of what was retrieved of it).
    :param threshold: Jaccard overlap with a better-ranked distinct item that makes an item a copy.
    :param min_tokens: Items with fewer distinct tokens are never judged (and never judge others).
    :raises ValueError: `threshold` outside (0, 1].
    """
    if not 0.0 < threshold <= 1.0:
        raise ValueError(f"threshold must be in (0, 1], got {threshold}")
    judged: list[frozenset[str]] = []
    copies: set[int] = set()
    for position, item in enumerate(items):
        tokens = tokens_of(item)
        if len(tokens) < min_tokens:
            continue
        if any(_may_reach(tokens, other, threshold) and jaccard(tokens, other) >= threshold for other in judged):
            copies.add(position)
        else:
            judged.append(tokens)
    return copies


def demote_near_duplicates(
    items: Sequence[Item],
    tokens_of: Callable[[Item], frozenset[str]],
    *,
    threshold: float = DEFAULT_THRESHOLD,
    min_tokens: int = MIN_TOKENS,
) -> list[Item]:
    """`items` with every copy (`near_duplicate_positions`) moved after the distinct ones, both in their order."""
    copies = near_duplicate_positions(items, tokens_of, threshold=threshold, min_tokens=min_tokens)
    return [item for i, item in enumerate(items) if i not in copies] + [items[i] for i in sorted(copies)]
