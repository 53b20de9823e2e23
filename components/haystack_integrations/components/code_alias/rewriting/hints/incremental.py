"""An incremental update of a `HintIndex` (`HintIndex.updated`): only the symbol names whose entries changed are
taken out of the postings and put back; what derives from the postings is recomputed for the words touched."""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

import numpy as np

from ...core.identifiers import normalise
from ...core.model import AliasDictionary, SymbolEntry
from .targets import Target, content_words, groups, project_words

if TYPE_CHECKING:
    from .index import HintIndex


def updated(
    hints: HintIndex, before: AliasDictionary, after: AliasDictionary, *, max_names: int = 2000
) -> HintIndex | None:
    """
    The hint index of `after`, built from `hints` (the index of `before`) by redoing only the symbol names
    whose entries changed: a sync that changed a few files re-indexes a few names instead of every symbol.
    `hints` is left as it is (it may be serving).

    The result answers every lookup as `HintIndex(after)` does: the same targets with the same postings, IDF
    and weights; only the targets' internal numbering differs (a name that went leaves an empty slot that no
    posting names, a new name is added last).

    :returns: The new index, or None when a full build is needed: this index is not of `before`, or what
        every target depends on changed (packages, nicknames, abbreviations, the project's own words), or more
        than `max_names` names changed.
    """
    if hints.version != before.version:
        return None
    if (
        before.packages != after.packages
        or before.nicknames != after.nicknames
        or before.abbreviations != after.abbreviations
    ):
        return None
    package_words = {w for p in after.packages for w in p.words} | project_words(after)
    if package_words != hints._package_words:
        return None
    old_groups, new_groups = groups(before), groups(after)
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
    clone = clone_index(hints)
    for name in sorted(affected):
        keys = unindex(clone, name) | index_name(clone, name, entries[name])
        if keys & nicknamed:
            return None
    clone.version = after.version
    finish(clone)
    return clone


def clone_index(hints: HintIndex) -> HintIndex:
    clone = type(hints).__new__(type(hints))
    clone.__dict__.update(hints.__dict__)
    clone.targets = list(hints.targets)
    clone.by_exact = defaultdict(list, hints.by_exact)  # lists are replaced, never changed in place
    clone.by_name_word = defaultdict(list, hints.by_name_word)
    clone.by_doc_word = defaultdict(list, hints.by_doc_word)
    clone.by_nickname = defaultdict(list, hints.by_nickname)
    clone._name_index = dict(hints._name_index)
    clone._doc_words = defaultdict(set, hints._doc_words)
    clone._aliases = defaultdict(set, hints._aliases)
    clone._touched_words = set()
    clone._card_targets = None  # the targets' numbering changes: map the cards again
    return clone


def contributions(hints: HintIndex, index: int) -> tuple[set[str], set[str], set[str], set[str]]:
    """(exact keys, name words, doc words, nickname keys) that target `index` is posted under."""
    target = hints.targets[index]
    aliases = hints._aliases.get(index, set())
    exact = {q.lower() for q in target.qualified_names} | {a.lower() for a in aliases}
    if target.qualified_names:
        exact.add(target.name.lower())
    nicknames = {normalise(a) for a in aliases}
    return exact, set(target.content_words), set(hints._doc_words.get(index, ())), nicknames


def unindex(hints: HintIndex, name: str) -> set[str]:
    """Take the symbol target `name` out of every posting; returns the exact keys it was under."""
    index = hints._name_index.get(name)
    if index is None:
        return set()
    exact, name_words, doc_words, nicknames = contributions(hints, index)
    for table, keys in (
        (hints.by_exact, exact),
        (hints.by_name_word, name_words),
        (hints.by_doc_word, doc_words),
        (hints.by_nickname, nicknames),
    ):
        for key in keys:
            left = [i for i in table.get(key, ()) if i != index]
            if left:
                table[key] = left
            else:
                table.pop(key, None)
    hints._touched_words |= name_words | doc_words
    hints._doc_words.pop(index, None)
    hints._aliases.pop(index, None)
    hints.targets[index] = Target("symbol", name, (), frozenset(), [], [], None, False)  # an empty slot
    del hints._name_index[name]
    hints._live -= 1
    return exact


def index_name(hints: HintIndex, name: str, entries: list[SymbolEntry]) -> set[str]:
    """Add the symbol target `name` of `entries` (in the dictionary's order), as `_build` does."""
    if not entries:
        return set()
    first = entries[0]
    words = first.words
    target = Target(
        kind="symbol",
        name=name,
        words=words,
        content_words=content_words(words, hints._package_words),
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
    index = len(hints.targets)
    hints.targets.append(target)
    hints._name_index[name] = index
    hints._live += 1
    if doc_words:
        hints._doc_words[index] = doc_words
    if aliases:
        hints._aliases[index] = aliases
    exact, name_words, doc_keys, nicknames = contributions(hints, index)
    # `_build` posts a target once per qualified name (and once per alias) under the exact keys.
    counts: dict[str, int] = defaultdict(int)
    for qualified in target.qualified_names:
        counts[qualified.lower()] += 1
    counts[name.lower()] += 1
    for alias in aliases:
        counts[alias.lower()] += 1
    for key, times in counts.items():
        hints.by_exact[key] = [*hints.by_exact.get(key, ()), *([index] * times)]
    for table, keys in ((hints.by_name_word, name_words), (hints.by_doc_word, doc_keys)):
        for key in keys:
            table[key] = [*table.get(key, ()), index]
    for key in nicknames:
        table_list = hints.by_nickname.get(key, [])
        if index not in table_list:
            hints.by_nickname[key] = [*table_list, index]
    hints._touched_words |= name_words | doc_keys
    return exact


def finish(hints: HintIndex) -> None:
    """Recompute what derives from the postings, for the words a change touched (all IDF when N changed)."""
    touched = hints._touched_words
    count = max(1, hints._live)
    if count != hints._symbol_count:
        hints._symbol_count = count
        hints.idf_name = {w: hints.idf(len(p)) for w, p in hints.by_name_word.items()}
        hints.idf_doc = {w: hints.idf(len(p)) for w, p in hints.by_doc_word.items()}
    else:
        hints.idf_name, hints.idf_doc = dict(hints.idf_name), dict(hints.idf_doc)
    hints.name_postings, hints.doc_postings = dict(hints.name_postings), dict(hints.doc_postings)
    for table, idf, postings in (
        (hints.by_name_word, hints.idf_name, hints.name_postings),
        (hints.by_doc_word, hints.idf_doc, hints.doc_postings),
    ):
        for word in touched:
            if word in table:
                idf[word] = hints.idf(len(table[word]))
                postings[word] = np.asarray(table[word], dtype=np.int32)
            else:
                idf.pop(word, None)
                postings.pop(word, None)
    hints.derive_per_target()
    del hints._touched_words
