"""What the hint index ranks: `Target`, one symbol name (its definitions merged) or one package."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ...core.hint_evidence import HintKind
from ...core.identifiers import STOP_WORDS, split_identifier
from ...core.model import AliasDictionary, SymbolEntry
from ...core.testfiles import is_test_file


@dataclass
class Target:
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


def content_words(words: tuple[str, ...], package_words: set[str]) -> frozenset[str]:
    """A name's words that say something: not stop words, nor the project's or a package's own words (unless that
    leaves none)."""
    return frozenset(w for w in words if w not in STOP_WORDS and w not in package_words) or frozenset(
        w for w in words if w not in STOP_WORDS
    )


def groups(dictionary: AliasDictionary) -> dict[tuple[str | None, str], list[SymbolEntry]]:
    """The dictionary's symbol entries by (repository, file), in its order."""
    groups: dict[tuple[str | None, str], list[SymbolEntry]] = {}
    for entry in dictionary.symbols:
        groups.setdefault((entry.repo, entry.file_path), []).append(entry)
    return groups


def project_words(dictionary: AliasDictionary, share: float = 0.2) -> set[str]:
    """
    Words of the top-level module that holds at least `share` of the symbols (`django`, `sympy`): the project's
    own name, known even for a tree without manifests (an unpacked wheel).
    """
    roots = Counter(entry.qualified_name.split(".", 1)[0] for entry in dictionary.symbols)
    total = max(1, len(dictionary.symbols))
    return {w for root, count in roots.items() if count >= share * total for w in split_identifier(root)}
