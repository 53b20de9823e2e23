"""Retrieval metrics for one question and over a run, and paired comparison against a baseline.

Framework-free (the optional :func:`haystack_file_metrics` runs Haystack's own evaluators on the same
input, as a cross-check and for users who want their exact definitions).

Definitions (ranked lists are deduplicated first, keeping each item's best rank):

- file ``Acc@k``: 1 when ALL gold files are in the top ``k`` files, else 0 (the SWE-bench localisation
  convention; with one gold file it equals Recall@k).
- file ``Recall@k``: the fraction of gold files in the top ``k``.
- ``MRR``: 1 / rank of the first gold file in the whole ranked list (0 when none is there).
- ``nDCG@10``: binary relevance, ``DCG = sum(1 / log2(rank + 1))`` over gold files in the top 10,
  ``IDCG`` the same for a perfect ranking of ``min(len(gold), 10)`` files.
- function ``Acc@k``: 1 when ALL gold functions are among the top ``k`` DISTINCT retrieved functions.
  A function is identified by ``(file, local name)``, where the local name is its scope path inside the
  file (``Class.method``): the qualified name with the module prefix that the file path implies removed
  (:func:`local_name`), so two tools that spell module paths differently (``src._pytest.python.f`` and
  ``_pytest.python.f``) still agree. A gold function known only by a bare name (no file) matches a
  retrieved function of any file whose local name equals it or ends with ``.<name>``.
- file ``hit@k``: 1 when ANY gold file is in the top ``k`` files (what a user who opens the first ``k``
  files needs; equals ``Acc@k`` with one gold file).
- symbol ``hit@k`` (``sym_hit@k``): 1 when ANY gold function is among the top ``k`` distinct retrieved
  functions, with the same identity and matching rules as function ``Acc@k``; ``sym_mrr``: 1 / rank of the
  first distinct retrieved function that matches a gold one. Questions with no gold function have no symbol
  score (they are left out of its mean, not counted as 0).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import PurePosixPath
from typing import Any

__all__ = [
    "FILE_KS",
    "FUNCTION_KS",
    "SYMBOL_KS",
    "PairedComparison",
    "acc_at_k",
    "dedupe",
    "file_metrics",
    "function_acc_at_k",
    "function_metrics",
    "haystack_file_metrics",
    "hit_at_k",
    "local_name",
    "mean",
    "mrr",
    "ndcg_at_k",
    "paired_comparison",
    "percentile",
    "ranked_for_metrics",
    "recall_at_k",
    "sign_test_p_value",
    "symbol_hit_at_k",
    "symbol_metrics",
    "symbol_mrr",
]

#: The k of file-level Acc@k / Recall@k in reports (curves use 1..10).
FILE_KS: tuple[int, ...] = (1, 3, 5, 10)
#: The k of function-level Acc@k.
FUNCTION_KS: tuple[int, ...] = (5, 10)
#: The k of symbol hit@k in report tables (records carry 1..10, for curves).
SYMBOL_KS: tuple[int, ...] = (1, 3, 5, 10)


def dedupe(items: Iterable[Any]) -> list[Any]:
    """The items in order, each kept at its first (best) rank."""
    seen: set[Any] = set()
    ordered: list[Any] = []
    for item in items:
        if item not in seen:
            seen.add(item)
            ordered.append(item)
    return ordered


def ranked_for_metrics(
    files: Iterable[Any], functions: Iterable[tuple[Any, Any]]
) -> tuple[list[str], list[tuple[str, str]]]:
    """
    An answer's ranked files and (file, qualified name) pairs as the metrics compare them with the gold: without a
    leading slash, names made local to their file (:func:`local_name`), each kept at its first (best) rank.
    """
    ranked_files = dedupe(str(path).lstrip("/") for path in files)
    ranked_functions = dedupe((str(file).lstrip("/"), local_name(str(file), str(name))) for file, name in functions)
    return ranked_files, ranked_functions


def acc_at_k(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    """1.0 when every gold item is in the top ``k`` of ``ranked`` (deduplicated), else 0.0; 0.0 for no gold."""
    wanted = set(gold)
    if not wanted:
        return 0.0
    return 1.0 if wanted <= set(dedupe(ranked)[:k]) else 0.0


def hit_at_k(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    """1.0 when any gold item is in the top ``k`` of ``ranked`` (deduplicated), else 0.0; 0.0 for no gold."""
    wanted = set(gold)
    return 1.0 if wanted & set(dedupe(ranked)[:k]) else 0.0


def recall_at_k(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    """The fraction of gold items in the top ``k`` of ``ranked`` (deduplicated); 0.0 for no gold."""
    wanted = set(gold)
    if not wanted:
        return 0.0
    return len(wanted & set(dedupe(ranked)[:k])) / len(wanted)


def mrr(ranked: Sequence[str], gold: Iterable[str]) -> float:
    """1 / rank (1-based) of the first gold item in ``ranked`` (deduplicated); 0.0 when none is there."""
    wanted = set(gold)
    for rank, item in enumerate(dedupe(ranked), start=1):
        if item in wanted:
            return 1.0 / rank
    return 0.0


def ndcg_at_k(ranked: Sequence[str], gold: Iterable[str], k: int = 10) -> float:
    """Binary-relevance nDCG over the top ``k`` of ``ranked`` (deduplicated); 0.0 for no gold."""
    wanted = set(gold)
    if not wanted:
        return 0.0
    dcg = sum(1.0 / math.log2(rank + 1) for rank, item in enumerate(dedupe(ranked)[:k], start=1) if item in wanted)
    ideal = sum(1.0 / math.log2(rank + 1) for rank in range(1, min(len(wanted), k) + 1))
    return dcg / ideal


def file_metrics(ranked_files: Sequence[str], gold_files: Iterable[str], *, max_k: int = 10) -> dict[str, float]:
    """
    Every file-level metric of one question.

    :returns: ``acc@1..acc@max_k``, ``hit@k`` and ``recall@k`` for :data:`FILE_KS`, ``mrr``, ``ndcg@10``.
    """
    gold = list(gold_files)
    values: dict[str, float] = {f"acc@{k}": acc_at_k(ranked_files, gold, k) for k in range(1, max_k + 1)}
    values.update({f"hit@{k}": hit_at_k(ranked_files, gold, k) for k in FILE_KS})
    values.update({f"recall@{k}": recall_at_k(ranked_files, gold, k) for k in FILE_KS})
    values["mrr"] = mrr(ranked_files, gold)
    values["ndcg@10"] = ndcg_at_k(ranked_files, gold, 10)
    return values


def _module_names(file_path: str) -> list[str]:
    path = PurePosixPath(file_path)
    parts = list(path.parts)
    if not parts:
        return []
    stem = path.stem
    parts = [*parts[:-1]] if stem == "__init__" else [*parts[:-1], stem]
    # every suffix of the dotted module path, longest first: a.b.c, b.c, c
    return [".".join(parts[start:]) for start in range(len(parts)) if parts[start:]]


def local_name(file_path: str, qualified_name: str) -> str:
    """
    A definition's scope path inside its file: ``qualified_name`` minus the module prefix that
    ``file_path`` implies (the longest dotted suffix of the module path that prefixes it).

    ``local_name("src/_pytest/python.py", "_pytest.python.Function.setup")`` -> ``"Function.setup"``.
    A qualified name that carries no module prefix is returned unchanged.
    """
    for module in _module_names(file_path):
        if qualified_name.startswith(module + "."):
            return qualified_name[len(module) + 1 :]
    return qualified_name


def _function_key(file_path: str, qualified_name: str) -> tuple[str, str]:
    return file_path, local_name(file_path, qualified_name)


def _matches(gold: tuple[str, str], retrieved: tuple[str, str]) -> bool:
    gold_file, gold_name = gold
    if gold_file:
        return gold == retrieved
    name = retrieved[1]
    return name == gold_name or name.endswith("." + gold_name)


def function_acc_at_k(
    ranked_functions: Sequence[tuple[str, str]], gold_functions: Iterable[tuple[str, str]], k: int
) -> float:
    """
    1.0 when every gold function is among the top ``k`` distinct retrieved functions (module docstring).

    :param ranked_functions: ``(file, qualified or local name)``, best first.
    :param gold_functions: ``(file, local name)``; file ``""`` for a bare name.
    """
    gold = _gold_keys(gold_functions)
    if not gold:
        return 0.0
    top = dedupe(_function_key(file, name) for file, name in ranked_functions)[:k]
    return 1.0 if all(any(_matches(item, candidate) for candidate in top) for item in gold) else 0.0


def function_metrics(
    ranked_functions: Sequence[tuple[str, str]], gold_functions: Iterable[tuple[str, str]]
) -> dict[str, float]:
    """Function-level ``fn_acc@k`` for :data:`FUNCTION_KS`."""
    gold = list(gold_functions)
    return {f"fn_acc@{k}": function_acc_at_k(ranked_functions, gold, k) for k in FUNCTION_KS}


def _gold_keys(gold_functions: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(file, local_name(file, name) if file else name) for file, name in gold_functions]


def _first_symbol_rank(ranked_functions: Sequence[tuple[str, str]], gold: Sequence[tuple[str, str]]) -> int | None:
    """1-based rank of the first distinct retrieved function matching a gold one; None when none does."""
    if not gold:
        return None
    distinct = dedupe(_function_key(file, name) for file, name in ranked_functions)
    for rank, candidate in enumerate(distinct, start=1):
        if any(_matches(item, candidate) for item in gold):
            return rank
    return None


def symbol_hit_at_k(
    ranked_functions: Sequence[tuple[str, str]], gold_functions: Iterable[tuple[str, str]], k: int
) -> float:
    """
    1.0 when any gold function is among the top ``k`` distinct retrieved functions (module docstring).

    :param ranked_functions: ``(file, qualified or local name)``, best first.
    :param gold_functions: ``(file, local name)``; file ``""`` for a bare name.
    """
    rank = _first_symbol_rank(ranked_functions, _gold_keys(gold_functions))
    return 1.0 if rank is not None and rank <= k else 0.0


def symbol_mrr(ranked_functions: Sequence[tuple[str, str]], gold_functions: Iterable[tuple[str, str]]) -> float:
    """1 / rank of the first distinct retrieved function matching a gold one; 0.0 when none does."""
    rank = _first_symbol_rank(ranked_functions, _gold_keys(gold_functions))
    return 1.0 / rank if rank is not None else 0.0


def symbol_metrics(
    ranked_functions: Sequence[tuple[str, str]], gold_functions: Iterable[tuple[str, str]], *, max_k: int = 10
) -> dict[str, float]:
    """
    Symbol-level ``sym_hit@1..sym_hit@max_k`` and ``sym_mrr`` of one question; ``{}`` when it has no gold
    function (so means over questions leave it out).
    """
    gold = _gold_keys(gold_functions)
    if not gold:
        return {}
    rank = _first_symbol_rank(ranked_functions, gold)
    values = {f"sym_hit@{k}": 1.0 if rank is not None and rank <= k else 0.0 for k in range(1, max_k + 1)}
    values["sym_mrr"] = 1.0 / rank if rank is not None else 0.0
    return values


def hint_recall(
    hint_definitions: Iterable[tuple[str, str]], gold_functions: Iterable[tuple[str, str]]
) -> dict[str, float]:
    """
    ``sym_hint_recall``: 1.0 when any gold function is among the definitions of the hints the rewrite was offered
    (what a rewrite could have named at best); ``{}`` without gold functions.

    :param hint_definitions: ``(file, qualified name)`` of every definition of every hint.
    :param gold_functions: ``(file, local name)``; file ``""`` for a bare name.
    """
    gold = _gold_keys(gold_functions)
    if not gold:
        return {}
    offered = {_function_key(file, name) for file, name in hint_definitions}
    return {"sym_hint_recall": 1.0 if any(_matches(g, c) for g in gold for c in offered) else 0.0}


def mean(values: Iterable[float]) -> float:
    """The arithmetic mean; NaN for no values."""
    items = list(values)
    return sum(items) / len(items) if items else math.nan


def percentile(values: Iterable[float], q: float) -> float:
    """The ``q``-th percentile (0-100) by linear interpolation between closest ranks; NaN for no values."""
    items = sorted(values)
    if not items:
        return math.nan
    if len(items) == 1:
        return float(items[0])
    position = (len(items) - 1) * q / 100.0
    low = math.floor(position)
    high = math.ceil(position)
    return float(items[low] + (items[high] - items[low]) * (position - low))


def sign_test_p_value(wins: int, losses: int) -> float:
    """Two-sided exact sign test (binomial, p = 0.5) on wins vs losses, ties left out; 1.0 when both are 0."""
    n = wins + losses
    if n == 0:
        return 1.0
    tail = min(wins, losses)
    probability = sum(math.comb(n, i) for i in range(tail + 1)) / 2**n
    return min(1.0, 2 * probability)


@dataclass(frozen=True)
class PairedComparison:
    """A config against a baseline on the instances both scored, for one metric."""

    metric: str
    n: int
    wins: int
    losses: int
    ties: int
    delta: float
    """Mean of (config - baseline) over the paired instances."""
    p_value: float

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return asdict(self)


def paired_comparison(
    baseline: Mapping[str, float], candidate: Mapping[str, float], *, metric: str = "acc@5"
) -> PairedComparison:
    """
    Wins / losses / ties of ``candidate`` over ``baseline`` on the instance ids both have.

    :param baseline: Instance id -> metric value.
    :param candidate: Instance id -> metric value.
    :param metric: The metric's name (recorded only).
    """
    shared = sorted(set(baseline) & set(candidate))
    wins = sum(1 for key in shared if candidate[key] > baseline[key])
    losses = sum(1 for key in shared if candidate[key] < baseline[key])
    delta = mean(candidate[key] - baseline[key] for key in shared) if shared else 0.0
    return PairedComparison(
        metric=metric,
        n=len(shared),
        wins=wins,
        losses=losses,
        ties=len(shared) - wins - losses,
        delta=delta,
        p_value=sign_test_p_value(wins, losses),
    )


def haystack_file_metrics(
    ranked_files: Sequence[Sequence[str]], gold_files: Sequence[Sequence[str]], *, k: int = 10
) -> dict[str, list[float]]:
    """
    File-level Recall@k (multi-hit), MRR and nDCG computed by Haystack's evaluators
    (``DocumentRecallEvaluator``, ``DocumentMRREvaluator``, ``DocumentNDCGEvaluator``), one score per question.

    Each file becomes a ``Document`` with ``meta.file_path``; the retrieved lists are deduplicated and cut
    to the top ``k`` (so the MRR here is MRR@k). With at most ``k`` gold files per question, the values
    equal :func:`recall_at_k`, :func:`mrr` (within the top k) and :func:`ndcg_at_k`.

    :returns: ``{"recall": [...], "mrr": [...], "ndcg": [...]}``.
    """
    # Late: the rest of this module is framework-free, and importing Haystack costs about a second.
    from haystack.components.evaluators import DocumentMRREvaluator, DocumentNDCGEvaluator, DocumentRecallEvaluator
    from haystack.dataclasses import Document

    def documents(paths: Iterable[str]) -> list[Document]:
        return [Document(content=path, meta={"file_path": path}) for path in paths]

    truth = [documents(dedupe(gold)) for gold in gold_files]
    retrieved = [documents(dedupe(ranked)[:k]) for ranked in ranked_files]
    field = "meta.file_path"
    recall = DocumentRecallEvaluator(mode="multi_hit", document_comparison_field=field).run(
        ground_truth_documents=truth, retrieved_documents=retrieved
    )
    reciprocal = DocumentMRREvaluator(document_comparison_field=field).run(
        ground_truth_documents=truth, retrieved_documents=retrieved
    )
    ndcg = DocumentNDCGEvaluator(document_comparison_field=field).run(
        ground_truth_documents=truth, retrieved_documents=retrieved
    )
    return {
        "recall": list(recall["individual_scores"]),
        "mrr": list(reciprocal["individual_scores"]),
        "ndcg": list(ndcg["individual_scores"]),
    }
