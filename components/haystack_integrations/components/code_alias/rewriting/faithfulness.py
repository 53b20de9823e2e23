"""`SymbolFaithfulnessFilter`: nothing the rewriter names reaches retrieval unless the dictionary knows it.

Every `symbols[]` and `packages[]` entry is checked against the alias dictionary: an exact name is kept, a
unique case-insensitive match is kept in its canonical spelling, a name retired by a rename becomes the new name,
a package listed as a symbol (or the reverse) moves to its list, and everything else is dropped with a reason.
Dropped names leave the rewritten text too, as do identifier-looking words the rewritten text carries that the
dictionary does not know. The check itself (`check_rewrite`) is framework-free; the rewriter uses it for its log.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from haystack import component

from ..core.identifiers import find_identifiers
from ..core.model import AliasDictionary
from ..indexing.dictionary_handle import DictionaryHandle, UsesDictionary
from ..serialization import SerializedByInitParameters
from .hints.scope import HintScope, scope_from_filters
from .llm_output import clean_name

# Mixed-case words of ordinary tech prose that are not code identifiers; never scrubbed from the text.
PROSE_WORDS: frozenset[str] = frozenset(
    [
        "javascript",
        "typescript",
        "github",
        "gitlab",
        "bitbucket",
        "postgresql",
        "mysql",
        "mongodb",
        "graphql",
        "websocket",
        "websockets",
        "oauth",
        "ios",
        "macos",
        "ipados",
        "tvos",
        "watchos",
        "youtube",
        "pypi",
        "numpy",
        "scipy",
        "pytorch",
        "tensorflow",
        "linkedin",
        "wordpress",
        "devops",
        "nodejs",
        "mariadb",
        "sqlite",
        "dynamodb",
        "openai",
        "chatgpt",
        "jupyter",
        "powershell",
        "iphone",
        "ipad",
        "ebay",
        "paypal",
        "sharepoint",
        "onedrive",
        "dockerhub",
    ]
)
_CAMEL_RE = re.compile(r"[a-z0-9][A-Z]")


@dataclass
class Dropped:
    """An identifier the check removed, and why."""

    name: str
    kind: str  # "symbol", "package" or "text"
    reason: str

    def to_dict(self) -> dict[str, str]:
        return {"name": self.name, "kind": self.kind, "reason": self.reason}


@dataclass
class FaithfulRewrite:
    """The rewrite with only known identifiers, what was dropped, and counts."""

    rewritten: str
    symbols: list[str]
    packages: list[str]
    dropped: list[Dropped] = field(default_factory=list)
    canonicalised: dict[str, str] = field(default_factory=dict)
    moved: list[str] = field(default_factory=list)
    proposed_symbols: int = 0
    proposed_packages: int = 0

    @property
    def counts(self) -> dict[str, int]:
        return {
            "proposed_symbols": self.proposed_symbols,
            "proposed_packages": self.proposed_packages,
            "kept_symbols": len(self.symbols),
            "kept_packages": len(self.packages),
            "dropped_symbols": sum(1 for d in self.dropped if d.kind == "symbol"),
            "dropped_packages": sum(1 for d in self.dropped if d.kind == "package"),
            "dropped_text": sum(1 for d in self.dropped if d.kind == "text"),
            "canonicalised": len(self.canonicalised),
            "moved": len(self.moved),
        }


def _identifier_like(token: str) -> bool:
    """A word of the rewritten text that reads as code: snake_case, camelCase/PascalCase humps, `$`."""
    if "_" in token or "$" in token:
        return True
    return any(_CAMEL_RE.search(part) and part.lower() not in PROSE_WORDS for part in token.split("."))


def _token_pattern(name: str) -> re.Pattern[str]:
    """`name` as a whole word, with optional backticks and a call's `()` around it."""
    return re.compile(r"(?<![\w$.\-/@])`?" + re.escape(name) + r"(?:\(\))?`?(?![\w$\-/])")


def _tidy(text: str) -> str:
    text = re.sub(r"\(\s*\)|``", "", text)
    text = re.sub(r"\s+([,;:.?!)])", r"\1", text)
    text = re.sub(r"([,;:|])(\s*[,;:|])+", r"\1", text)
    text = re.sub(r"\(\s*", "(", text)
    return " ".join(text.split()).strip(" ,;:|")


def _ambiguous(dictionary: AliasDictionary, name: str) -> int:
    """How many distinct symbol names match `name` case-insensitively."""
    keys: dict[str, list[str]] | None = getattr(dictionary, "_lower_symbol_keys", None)  # the model's own index
    if keys is not None:
        return len(keys.get(name.lower(), []))
    folded = name.lower()
    return len({s.name for s in dictionary.symbols if s.name.lower() == folded or s.qualified_name.lower() == folded})


def _resolve_symbol(dictionary: AliasDictionary, name: str) -> tuple[str | None, str]:
    """(canonical name or None, how it was resolved or why not)."""
    resolved = dictionary.resolve_symbol(name)
    if resolved is not None:
        if resolved == name:
            return resolved, "exact"
        return resolved, "renamed" if name in dictionary.renamed else "case"
    if "." in name.strip("."):
        tail = name.rsplit(".", 1)[-1]
        resolved = dictionary.resolve_symbol(tail)
        if resolved is not None:
            return resolved, "qualified suffix"
    matches = _ambiguous(dictionary, name)
    if matches > 1:
        return None, f"ambiguous: {matches} names match case-insensitively"
    return None, "not in the dictionary"


def _proposed_names(proposed: list[str] | None, kind: str, dropped: list[Dropped]) -> Iterator[tuple[str, str]]:
    """`(raw, cleaned)` for each proposed name; what is not a name is recorded in `dropped`."""
    for raw in proposed or []:
        if not isinstance(raw, str) or not clean_name(raw):
            dropped.append(Dropped(str(raw), kind, "not a name"))
            continue
        yield raw, clean_name(raw)


# long: the filter's checks, in the order they apply to one rewrite
def check_rewrite(
    dictionary: AliasDictionary,
    *,
    rewritten: str,
    symbols: list[str] | None,
    packages: list[str] | None,
    question: str | None = None,
    scrub_text: bool = True,
) -> FaithfulRewrite:
    """
    Keep only identifiers the dictionary knows, in their canonical spelling.

    :param dictionary: The alias dictionary.
    :param rewritten: The rewritten question.
    :param symbols: Proposed symbol names.
    :param packages: Proposed package names.
    :param question: The raw question: identifiers the user wrote there are not scrubbed from the text (the raw
        question reaches BM25 anyway), unless they were proposed as symbols/packages and dropped; and the
        rewritten text when nothing is left of it.
    :param scrub_text: Also remove identifier-looking words of the rewritten text that the dictionary lacks.
    """
    result = FaithfulRewrite(
        rewritten="",
        symbols=[],
        packages=[],
        proposed_symbols=len(symbols or []),
        proposed_packages=len(packages or []),
    )
    removed: list[str] = []

    def keep(target: list[str], raw: str, found: str) -> None:
        """`found` (the dictionary's spelling of `raw`) into `target`, once; a respelling is recorded."""
        if found not in target:
            target.append(found)
        if found != raw:
            result.canonicalised[raw] = found

    for raw, name in _proposed_names(symbols, "symbol", result.dropped):
        canonical, how = _resolve_symbol(dictionary, name)
        if canonical is not None:
            keep(result.symbols, raw, canonical)
            continue
        package = dictionary.resolve_package(name)
        if package is not None:
            keep(result.packages, raw, package)
            result.moved.append(name)
            continue
        result.dropped.append(Dropped(name, "symbol", how))
        removed.append(name)

    for raw, name in _proposed_names(packages, "package", result.dropped):
        package = dictionary.resolve_package(name)
        if package is not None:
            keep(result.packages, raw, package)
            continue
        canonical, _ = _resolve_symbol(dictionary, name)
        if canonical is not None:
            keep(result.symbols, raw, canonical)
            result.moved.append(name)
            continue
        result.dropped.append(Dropped(name, "package", "not in the dictionary"))
        removed.append(name)

    text = rewritten if isinstance(rewritten, str) else ""
    for name in sorted(set(removed), key=len, reverse=True):
        text = _token_pattern(name).sub(" ", text)
    for raw, canonical in result.canonicalised.items():
        name = clean_name(raw)
        if name != canonical and name:
            text = _token_pattern(name).sub(canonical.replace("\\", "\\\\"), text)
    if scrub_text:
        known = set(result.symbols) | set(result.packages) | (set(find_identifiers(question)) if question else set())
        known -= set(removed)
        for token in dict.fromkeys(find_identifiers(text)):
            if token in known or not _identifier_like(token):
                continue
            parts = [p for p in token.split(".") if p]
            if (
                dictionary.resolve_symbol(token)
                or dictionary.resolve_package(token)
                or all(
                    not _identifier_like(p) or dictionary.resolve_symbol(p) or dictionary.resolve_package(p)
                    for p in parts
                )
            ):
                continue
            text = _token_pattern(token).sub(" ", text)
            result.dropped.append(Dropped(token, "text", "identifier in the rewritten text is not in the dictionary"))
    text = _tidy(text)
    if not text:
        text = " ".join(result.symbols + result.packages) or (question or "").strip()
    result.rewritten = text
    return result


def drop_outside(
    dictionary: AliasDictionary, scope: HintScope, result: FaithfulRewrite, question: str | None = None
) -> None:
    """
    Drop from `result` the symbols with no definition inside `scope` and the packages outside it (a question
    narrowed to `acme/web` must not be rewritten with `acme/payments`' names), from the lists and the text.
    """
    outside: list[str] = []
    for name in list(result.symbols):
        if not any(scope.admits(entry.repo, entry.package) for entry in dictionary.symbols_named(name)):
            result.symbols.remove(name)
            outside.append(name)
            result.dropped.append(Dropped(name, "symbol", "outside the repositories / packages asked about"))
    declared = {(package.name, package.repo) for package in dictionary.packages}
    for name in list(result.packages):
        if not any(scope.admits(repo, name) for declared_name, repo in declared if declared_name == name):
            result.packages.remove(name)
            outside.append(name)
            result.dropped.append(Dropped(name, "package", "outside the repositories / packages asked about"))
    text = result.rewritten
    for name in sorted(outside, key=len, reverse=True):
        text = _token_pattern(name).sub(" ", text)
    result.rewritten = _tidy(text) or " ".join(result.symbols + result.packages) or (question or "").strip()


@component
class SymbolFaithfulnessFilter(SerializedByInitParameters, UsesDictionary):
    """
    Drops every symbol and package of a rewrite that the alias dictionary does not know.

    Put it right after `ConstrainedQueryRewriter` (the LLM query pipeline always has it): exact names are kept,
    a unique case-insensitive match is canonicalised (`accessgate` -> `AccessGate`), a retired name becomes its new
    name, and the rest is dropped with a reason, from the lists and from the rewritten text. Identifier-looking
    words of the rewritten text that the dictionary lacks are removed too, except those the user wrote in the
    question (given as `question`) and did not get proposed as a symbol or package.

    ### Usage example

    ```python
    from haystack_integrations.components.code_alias import SymbolFaithfulnessFilter

    check = SymbolFaithfulnessFilter(index_dir=".code-alias")
    out = check.run(rewritten="withStripeBackoff or retryPaymentsHelper", symbols=["withStripeBackoff",
                    "retryPaymentsHelper"], packages=["payments-core"])
    print(out["symbols"], out["packages"], out["dropped"])
    # ['withStripeBackoff'] ['@acme/payments-core'] [{'name': 'retryPaymentsHelper', 'kind': 'symbol', ...}]
    ```

    :param dictionary_path: The dictionary file (as `AliasDictionaryBuilder` saved it); None = the index folder's
        current dictionary (`<index dir>/dictionary.json` names it; the folder holds `dictionary-<build>.json`).
    :param index_dir: The index folder; None = `$CODE_ALIAS_INDEX_DIR`, else the `.code-alias` folder of the
        current folder or its nearest parent that has one (as git finds its repository), else `./.code-alias`.
    :param scrub_text: Also remove identifier-looking words of the rewritten text that the dictionary lacks.
    """

    def __init__(
        self, *, dictionary_path: str | None = None, index_dir: str | None = None, scrub_text: bool = True
    ) -> None:
        self.dictionary_path = dictionary_path
        self.index_dir = index_dir
        self.scrub_text = scrub_text
        self._handle: DictionaryHandle | None = None

    def warm_up(self) -> None:
        """Load the dictionary now (a changed file is reloaded on use)."""
        _ = self.handle.dictionary

    @component.output_types(
        rewritten=str, symbols=list[str], packages=list[str], dropped=list[dict[str, str]], counts=dict[str, int]
    )
    def run(
        self,
        rewritten: str,
        symbols: list[str] | None = None,
        packages: list[str] | None = None,
        question: str | None = None,
        filters: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """
        Check a rewrite against the dictionary.

        :param rewritten: The rewritten question.
        :param symbols: Proposed symbol names.
        :param packages: Proposed package names.
        :param question: The raw question: identifiers written there survive the text scrub (not the lists), and
            it stands in for the rewritten text when nothing is left of that.
        :param filters: The question's retrieval filters (Haystack syntax): a name with no definition in the
            repositories and packages they narrow to is dropped too (`rewriting.hints.scope`).
        :returns: `rewritten`, `symbols`, `packages` (known identifiers only, canonical spelling), `dropped`
            (`{name, kind, reason}` per removed identifier) and `counts`.
        """
        dictionary = self.handle.dictionary
        result = check_rewrite(
            dictionary,
            rewritten=rewritten,
            symbols=symbols,
            packages=packages,
            question=question,
            scrub_text=self.scrub_text,
        )
        scope = scope_from_filters(filters)
        if scope is not None:
            drop_outside(dictionary, scope, result, question)
        return {
            "rewritten": result.rewritten,
            "symbols": result.symbols,
            "packages": result.packages,
            "dropped": [d.to_dict() for d in result.dropped],
            "counts": result.counts,
        }
