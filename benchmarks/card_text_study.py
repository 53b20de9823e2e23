"""Which card text finds the gold symbols: alternative card texts embedded and ranked against the questions.

For each repository of a golden file (its bench-cache index folder: dictionary), every card is written in each
variant, embedded with the index's model (the shared content-hash cache, so a rerun embeds nothing), and each
question's gold names are looked up among the nearest cards. Reported per variant: the share of questions with a
gold name among the nearest 10 / 20 / 40 cards, and the median best rank. Questions about tests see test cards,
the others not.

    python benchmarks/card_text_study.py --golden ../shared/bench/swe_qa_dev_primary.jsonl \
        --cache-dir /work/bench-cache --variants current,no_module,doc12 [--repos pallets/flask,psf/requests]
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from haystack_integrations.components.code_alias.core import cards as cards_module
from haystack_integrations.components.code_alias.core.cards import _is_card_worthy, _words, card_doc_words
from haystack_integrations.components.code_alias.core.identifiers import text_words
from haystack_integrations.components.code_alias.core.model import SymbolEntry
from haystack_integrations.components.code_alias.core.testfiles import is_test_file
from haystack_integrations.components.code_alias.evaluation.metrics import _function_key, _gold_keys, _matches
from haystack_integrations.components.code_alias.indexing.card_vectors import card_embedder
from haystack_integrations.components.code_alias.indexing.dictionary_handle import DictionaryHandle
from haystack_integrations.components.code_alias.paths import DICTIONARY_FILE


def _text(kind: str, words: list[str], package: str | None, doc: list[str]) -> str:
    text = f"{kind}: {' '.join(words)}"
    if package:
        text += f" (package {package})"
    return text + (". " + " ".join(doc) if doc else "")


def _local_words(entry: SymbolEntry) -> list[str]:
    """The words of the name inside its module (`Class.method`), without the module path."""
    module = entry.file_path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    parts = entry.qualified_name.split(".")
    if module in parts:
        parts = parts[len(parts) - parts[::-1].index(module) :]
    return _words(".".join(parts[-2:]))


VARIANTS: dict[str, Callable[[Sequence[SymbolEntry]], str]] = {
    "current": cards_module.card_text,
    "no_module": lambda e: _text(e[0].kind, _local_words(e[0]), e[0].package, card_doc_words(e, 24)),
    "doc12": lambda e: _text(e[0].kind, _words(e[0].qualified_name), e[0].package, card_doc_words(e, 12)),
    "doc40": lambda e: _text(e[0].kind, _words(e[0].qualified_name), e[0].package, card_doc_words(e, 40)),
    "name_first": lambda e: (
        f"{e[0].kind} {' '.join(_local_words(e[0]))}: {' '.join(card_doc_words(e, 24))} "
        f"(in {' '.join(_words(e[0].qualified_name.rsplit('.', 1)[0]))})"
    ),
}


def asks_about_tests(question: str) -> bool:
    """A question about tests (one of its words is test, tests, testing or tested)."""
    return bool({"test", "tests", "testing", "tested"} & set(text_words(question, drop_stop_words=False)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--golden", type=Path, required=True)
    parser.add_argument("--cache-dir", type=Path, default=Path(".bench-cache"))
    parser.add_argument("--variants", default="current,no_module")
    parser.add_argument("--repos", default="", help="only these repositories (owner/name, comma-separated)")
    args = parser.parse_args()
    wanted_repos = {r for r in args.repos.split(",") if r}
    items = [json.loads(line) for line in args.golden.open(encoding="utf-8")]
    by_repo: dict[str, list[dict]] = defaultdict(list)
    for item in items:
        if not wanted_repos or item["repo"] in wanted_repos:
            by_repo[item["repo"]].append(item)
    embed = card_embedder(model="all-MiniLM-L6-v2", cache_dir=str(args.cache_dir / "embedding-cache"))
    from haystack_integrations.components.code_alias.retrieval.embedders import CodeQuestionEmbedder

    question_embedder = CodeQuestionEmbedder()
    question_embedder.warm_up()
    variants = [v for v in args.variants.split(",") if v]
    ranks: dict[str, list[int]] = defaultdict(list)
    for repo, questions in sorted(by_repo.items()):
        key = repo.replace("/", "__")
        folders = sorted((args.cache_dir / "indexes" / "lexical").glob(f"git-{key}-*"))
        if not folders:
            continue
        dictionary = DictionaryHandle.for_path(folders[0] / DICTIONARY_FILE).dictionary
        grouped: dict[str, list[SymbolEntry]] = defaultdict(list)
        for entry in dictionary.symbols:
            grouped[entry.name].append(entry)
        names, groups = [], []
        for name in sorted(grouped):
            entries = sorted(grouped[name], key=lambda e: (is_test_file(e.file_path), not e.exported, e.file_path))
            if _is_card_worthy(entries):
                names.append(name)
                groups.append(entries)
        test_only = np.asarray(
            [
                all(is_test_file(e.file_path) for e in g) or n.lower().startswith("test")
                for n, g in zip(names, groups, strict=True)
            ]
        )
        vectors = {q["id"]: np.asarray(question_embedder.run(question=q["question"])["vector"]) for q in questions}
        for variant in variants:
            matrix = np.asarray(embed([VARIANTS[variant](g) for g in groups]), dtype=np.float32)
            matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
            for question in questions:
                gold = _gold_keys([tuple(s.split("::", 1)) for s in question.get("gold_symbols", [])])
                if not gold:
                    continue
                gold_rows = [
                    row
                    for row, group in enumerate(groups)
                    if any(_matches(g, _function_key(e.file_path, e.qualified_name)) for g in gold for e in group)
                ]
                vector = vectors[question["id"]]
                scores = matrix @ (vector / np.linalg.norm(vector))
                if not asks_about_tests(question["question"]):
                    scores = np.where(test_only, -np.inf, scores)
                order = np.argsort(-scores, kind="stable")
                position = np.empty(len(order), dtype=np.int64)
                position[order] = np.arange(len(order))
                best = min((int(position[r]) for r in gold_rows if np.isfinite(scores[r])), default=10**6)
                ranks[variant].append(best)
        print(repo, {v: len(ranks[v]) for v in variants}, flush=True)
    for variant in variants:
        values = np.asarray(ranks[variant])
        print(
            json.dumps(
                {
                    "variant": variant,
                    "questions": int(values.size),
                    **{f"top{k}": round(100 * float(np.mean(values < k)), 1) for k in (10, 20, 40, 100)},
                    "median rank": float(np.median(values)),
                }
            )
        )


if __name__ == "__main__":
    main()
