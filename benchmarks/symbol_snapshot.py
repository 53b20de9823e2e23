"""Every definition the extractor finds in a tree, written as JSON lines; and the difference between two such files.

The dictionary must stay at least as complete when the extraction changes (issue 43: tag queries instead of hand
walkers). Take a snapshot with the code before the change and one after, then diff them:

    PYTHONPATH=/work/main/components python benchmarks/symbol_snapshot.py take TREE --out before.jsonl
    PYTHONPATH=components python benchmarks/symbol_snapshot.py take TREE --out after.jsonl
    python benchmarks/symbol_snapshot.py diff before.jsonl after.jsonl

`take` walks the tree as `code-alias index` does (the dictionary builder's walk: ignored folders, size limit) and
records each definition's file, language, qualified name, kind, lines, export flag, parent, aliases and docstring.
`diff` prints the symbol counts per language before and after, then every definition that appeared, disappeared or
changed (by file + qualified name + kind), with the fields that changed.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

FIELDS = ("start_line", "end_line", "exported", "parent", "aliases", "reexport_from", "docstring")


def take(tree: Path, out: Path) -> int:
    from haystack_integrations.components.code_alias.core.builder import DictionaryBuilder

    dictionary, _ = DictionaryBuilder().build(tree)
    rows = 0
    with out.open("w", encoding="utf-8") as handle:
        for _path, record in sorted(dictionary.files.items()):
            for symbol in record.symbols:
                data = symbol.model_dump(mode="json")
                row = {key: data.get(key) for key in ("file_path", "language", "qualified_name", "kind", *FIELDS)}
                handle.write(json.dumps(row, sort_keys=True) + "\n")
                rows += 1
    print(f"{rows:,} definitions in {len(dictionary.files):,} files -> {out}")
    return 0


def _read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _key(row: dict[str, Any]) -> tuple[str, str, str]:
    return row["file_path"], row["qualified_name"], row["kind"]


def diff(before_path: Path, after_path: Path, *, limit: int) -> int:
    before, after = _read(before_path), _read(after_path)
    counts_before = Counter(row["language"] for row in before)
    counts_after = Counter(row["language"] for row in after)
    print(f"{'language':<12}{'before':>9}{'after':>9}{'diff':>7}")
    for language in sorted(set(counts_before) | set(counts_after)):
        b, a = counts_before[language], counts_after[language]
        print(f"{language:<12}{b:>9,}{a:>9,}{a - b:>+7}")
    print(f"{'all':<12}{len(before):>9,}{len(after):>9,}{len(after) - len(before):>+7}")
    old: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    new: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in before:
        old[_key(row)].append(row)
    for row in after:
        new[_key(row)].append(row)
    gone = [key for key in old if len(new.get(key, ())) < len(old[key])]
    came = [key for key in new if len(old.get(key, ())) < len(new[key])]
    changed: Counter[str] = Counter()
    examples: dict[str, list[str]] = defaultdict(list)
    for key in old.keys() & new.keys():
        for a, b in zip(old[key], new[key], strict=False):
            for field in FIELDS:
                if a.get(field) != b.get(field):
                    changed[field] += 1
                    if len(examples[field]) < limit:
                        examples[field].append(f"{key[0]} {key[1]}: {a.get(field)!r} -> {b.get(field)!r}")
    print(f"\ndisappeared: {len(gone)}")
    for key in gone[:limit]:
        print("  -", *key)
    print(f"appeared: {len(came)}")
    for key in came[:limit]:
        print("  +", *key)
    print(f"changed fields: {dict(changed) or 'none'}")
    for field, lines in examples.items():
        print(f"  {field}:")
        for line in lines:
            print("   ", line[:240])
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    take_parser = commands.add_parser("take", help="snapshot the definitions of a tree")
    take_parser.add_argument("tree", type=Path)
    take_parser.add_argument("--out", type=Path, required=True)
    diff_parser = commands.add_parser("diff", help="compare two snapshots")
    diff_parser.add_argument("before", type=Path)
    diff_parser.add_argument("after", type=Path)
    diff_parser.add_argument("--limit", type=int, default=40, help="examples shown per kind of difference")
    args = parser.parse_args(argv)
    if args.command == "take":
        return take(args.tree, args.out)
    return diff(args.before, args.after, limit=args.limit)


if __name__ == "__main__":
    sys.exit(main())
