"""
Check the two evaluation-only question sets without asking any question.

Always: ``informal.jsonl`` loads with the harness's own loader (``load_golden``), ids / repos / meta are
consistent, every gold symbol lies in a gold file, ``meta.names_symbol`` agrees with its rule, each library
has at least 11 questions; ``nonsense.jsonl`` rows have an id, a question and a category, no gold.

With ``--root OUT_DIR`` (the folder ``fetch_informal.sh`` filled): every item is covered by its library's
tree the way ``bench run --corpus local`` sees it (gold files that the index reads), and every gold symbol
is a definition of its file as the harness's extractor names it (``path::Scope.name``).

With ``--index-root DIR`` as well: each library is indexed lexically into ``DIR/<library>`` (unless an
index is already there) and every gold symbol must be an entry of that index's dictionary, in its file.
Nothing is searched and no ranking is produced.

Usage::

    python benchmarks/sets/check_sets.py --root /tmp/informal-libs --index-root /tmp/informal-index
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from haystack_integrations.components.code_alias.evaluation.corpus import CorpusCache, coverage_of
from haystack_integrations.components.code_alias.evaluation.golden import GoldenItem, load_golden
from haystack_integrations.components.code_alias.evaluation.metrics import local_name
from haystack_integrations.components.code_alias.evaluation.runner import default_extract
from haystack_integrations.components.code_alias.indexing.index_delta import load_index_dictionary
from haystack_integrations.components.code_alias.paths import DICTIONARY_FILE

HERE = Path(__file__).resolve().parent
MIN_PER_LIBRARY = 11
INTENTS = {"locate", "explain", "debug"}
META_KEYS = {"library", "version", "language", "intent", "names_symbol", "written_before_asking", "why"}


def names_symbol(question: str, local_names: list[str]) -> bool:
    """The rule `meta.names_symbol` follows: the last part of a gold symbol is a whole word of the question."""
    words = {word.lower() for word in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", question)}
    return any(name.rsplit(".", 1)[-1].lower() in words for name in local_names)


def split_symbol(symbol: str) -> tuple[str, str]:
    path, _, name = symbol.partition("::")
    return path, name


def check_informal_rows(items: list[GoldenItem]) -> list[str]:
    problems: list[str] = []
    repos: dict[str, set[str]] = {}
    for item in items:
        meta = item.meta
        library = str(meta.get("library", ""))
        where = f"informal {item.id}"
        if set(meta) != META_KEYS:
            problems.append(f"{where}: meta keys {sorted(meta)}, expected {sorted(META_KEYS)}")
            continue
        if not re.fullmatch(rf"informal-{re.escape(library)}-\d{{3}}", item.id):
            problems.append(f"{where}: id does not read informal-{library}-NNN")
        if meta["intent"] not in INTENTS:
            problems.append(f"{where}: intent {meta['intent']!r} not one of {sorted(INTENTS)}")
        if meta["written_before_asking"] is not True:
            problems.append(f"{where}: written_before_asking is not true")
        if not item.gold_files or not item.gold_symbols:
            problems.append(f"{where}: needs gold files and gold symbols")
        repos.setdefault(library, set()).add(str(item.repo))
        names = []
        for symbol in item.gold_symbols:
            path, name = split_symbol(symbol)
            names.append(name)
            if not name or path not in item.gold_files:
                problems.append(f"{where}: gold symbol {symbol!r} is not 'gold_file::Scope.name'")
        if meta["names_symbol"] != names_symbol(item.question, names):
            problems.append(f"{where}: names_symbol is {meta['names_symbol']}, the rule says the opposite")
    for library, seen in repos.items():
        if len(seen) != 1:
            problems.append(f"informal: library {library} has several repo names {sorted(seen)}")
    for library, count in Counter(str(item.meta.get("library")) for item in items).items():
        if count < MIN_PER_LIBRARY:
            problems.append(f"informal: library {library} has {count} questions, fewer than {MIN_PER_LIBRARY}")
    ids = Counter(item.id for item in items)
    problems += [f"informal: id {i} appears {n} times" for i, n in ids.items() if n > 1]
    questions = Counter(item.question for item in items)
    problems += [f"informal: question asked twice: {q!r}" for q, n in questions.items() if n > 1]
    return problems


def check_nonsense(path: Path) -> tuple[int, list[str]]:
    problems: list[str] = []
    ids: Counter[str] = Counter()
    questions: Counter[str] = Counter()
    rows = 0
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        rows += 1
        where = f"{path.name}:{number}"
        try:
            row: Any = json.loads(line)
        except json.JSONDecodeError as error:
            problems.append(f"{where}: not JSON: {error.msg}")
            continue
        if not isinstance(row, dict) or set(row) != {"id", "question", "meta"}:
            problems.append(f"{where}: expected exactly id, question, meta")
            continue
        if not re.fullmatch(r"nonsense-\d{3}", str(row["id"])):
            problems.append(f"{where}: id {row['id']!r} does not read nonsense-NNN")
        if not isinstance(row["question"], str) or not row["question"]:
            problems.append(f"{where}: empty question")
        if not isinstance(row["meta"], dict) or not row["meta"].get("category"):
            problems.append(f"{where}: meta.category missing")
        ids[str(row["id"])] += 1
        questions[str(row["question"])] += 1
    problems += [f"{path.name}: id {i} appears {n} times" for i, n in ids.items() if n > 1]
    problems += [f"{path.name}: question {q!r} appears {n} times" for q, n in questions.items() if n > 1]
    return rows, problems


def check_against_tree(items: list[GoldenItem], root: Path) -> list[str]:
    problems: list[str] = []
    cache = CorpusCache(root / ".unused-cache")
    for library in sorted({str(item.meta["library"]) for item in items}):
        tree = root / library
        if not tree.is_dir():
            problems.append(f"{tree}: missing; run benchmarks/sets/fetch_informal.sh {root}")
            continue
        corpus = cache.local(tree)
        definitions: dict[str, set[str]] = {}
        for item in (item for item in items if item.meta["library"] == library):
            coverage = coverage_of(item, corpus)
            if not coverage.covered:
                problems.append(f"informal {item.id}: not covered by {tree}: {coverage.error}")
                continue
            for symbol in item.gold_symbols:
                path, name = split_symbol(symbol)
                if path not in definitions:
                    found = corpus.read(path)
                    assert found is not None  # covered above
                    corpus_path, text = found
                    definitions[path] = {
                        local_name(corpus_path, d.qualified_name) for d in default_extract(text, corpus_path)
                    }
                if name not in definitions[path]:
                    problems.append(f"informal {item.id}: {symbol} is no definition of {path}")
    return problems


def check_against_index(items: list[GoldenItem], root: Path, index_root: Path) -> list[str]:
    problems: list[str] = []
    for library in sorted({str(item.meta["library"]) for item in items}):
        index_dir = index_root / library
        if not (index_dir / "manifest.json").is_file():
            print(f"indexing {root / library} -> {index_dir} (lexical)", file=sys.stderr)
            command = ["code-alias", "index", str(root / library), "--lexical", "--no-progress"]
            subprocess.run([*command, "--index-dir", str(index_dir)], check=True)
        dictionary = load_index_dictionary(index_dir / DICTIONARY_FILE)
        entries = {(s.file_path, local_name(s.file_path, s.qualified_name)) for s in dictionary.symbols}
        for item in (item for item in items if item.meta["library"] == library):
            for symbol in item.gold_symbols:
                if split_symbol(symbol) not in entries:
                    problems.append(f"informal {item.id}: {symbol} is not in the dictionary of {index_dir}")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--informal", type=Path, default=HERE / "informal.jsonl")
    parser.add_argument("--nonsense", type=Path, default=HERE / "nonsense.jsonl")
    parser.add_argument("--root", type=Path, help="the folder fetch_informal.sh filled (OUT_DIR)")
    parser.add_argument("--index-root", type=Path, help="with --root: lexical indexes go to INDEX_ROOT/<library>")
    args = parser.parse_args(argv)

    items = load_golden(args.informal)
    problems = check_informal_rows(items)
    nonsense_rows, nonsense_problems = check_nonsense(args.nonsense)
    problems += nonsense_problems
    if args.root is not None:
        problems += check_against_tree(items, args.root.resolve())
        if args.index_root is not None:
            problems += check_against_index(items, args.root.resolve(), args.index_root.resolve())
    elif args.index_root is not None:
        parser.error("--index-root needs --root")

    per_library = Counter(str(item.meta["library"]) for item in items)
    symbols = sum(len(item.gold_symbols) for item in items)
    print(f"informal: {len(items)} questions {dict(sorted(per_library.items()))}, {symbols} gold symbols")
    print(f"nonsense: {nonsense_rows} questions")
    checked = "format" + (", tree" if args.root else "") + (", index" if args.index_root else "")
    if problems:
        print(f"{len(problems)} problem(s) ({checked}):")
        for problem in problems:
            print(f"  {problem}")
        return 1
    print(f"ok ({checked})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
