"""`ConstrainedQueryRewriter`: question -> {rewritten, symbols, packages, intent}, using only known identifiers."""

from __future__ import annotations

import time
from typing import Any

from haystack import component, default_from_dict, default_to_dict

from .core.model import AliasDictionary
from .core.rewrite import Rewrite, dictionary_rewrite
from .dictionary_handle import DictionaryHandle, StaticDictionaryHandle, dictionary_file

REWRITE_OUTPUTS = {
    "rewritten": str,
    "symbols": list[str],
    "packages": list[str],
    "intent": str,
    "hints": list[dict[str, Any]],
    "meta": dict[str, Any],
}


@component
class ConstrainedQueryRewriter:
    """
    Rewrites an informal code question into `{rewritten, symbols, packages, intent}` whose identifiers all exist.

    Dictionary-only mode (the default, no LLM): ranked hints from the alias dictionary (exact identifiers,
    word splits, docstring words, nicknames, fuzzy matches for typos) become the symbols and packages, the
    rewritten text is the question plus those identifiers and their word splits, and the intent comes from
    rules. Deterministic and a few milliseconds.

    ### Usage example

    ```python
    from haystack_integrations.components.code_alias import ConstrainedQueryRewriter

    rewriter = ConstrainedQueryRewriter(index_dir=".code-alias")   # reads .code-alias/dictionary.json
    rewriter.warm_up()
    result = rewriter.run(question="where's the payments retry helper?")
    print(result["symbols"], result["packages"], result["intent"])
    # ['withStripeBackoff'] ['@acme/payments-core'] locate_symbol
    ```

    :param dictionary_path: The dictionary file; None = `<index dir>/dictionary.json`.
    :param index_dir: The index folder; None = `$CODE_ALIAS_INDEX_DIR` or `./.code-alias`.
    :param max_hints: Most candidate hints considered (and offered to an LLM).
    :param max_symbols: Most symbols put into a dictionary-only rewrite.
    :param max_packages: Most packages put into a dictionary-only rewrite.
    :param min_relative_score: Hints below this fraction of the best hint's score are left out.
    """

    def __init__(
        self,
        *,
        dictionary_path: str | None = None,
        index_dir: str | None = None,
        max_hints: int = 40,
        max_symbols: int = 6,
        max_packages: int = 3,
        min_relative_score: float = 0.35,
    ) -> None:
        if max_hints <= 0:
            raise ValueError(f"max_hints must be > 0, got {max_hints}")
        self.dictionary_path = dictionary_path
        self.index_dir = index_dir
        self.max_hints = max_hints
        self.max_symbols = max_symbols
        self.max_packages = max_packages
        self.min_relative_score = min_relative_score
        self._handle: DictionaryHandle | None = None

    @classmethod
    def from_dictionary(cls, dictionary: AliasDictionary, **kwargs: Any) -> ConstrainedQueryRewriter:
        """A rewriter over a dictionary object (no file), e.g. in a notebook or a test."""
        rewriter = cls(**kwargs)
        rewriter._handle = StaticDictionaryHandle(dictionary)
        return rewriter

    @property
    def handle(self) -> DictionaryHandle:
        if self._handle is None:
            self._handle = DictionaryHandle.for_path(dictionary_file(self.dictionary_path, self.index_dir))
        return self._handle

    def warm_up(self) -> None:
        """Load the dictionary and build its hint index (once; a changed file is reloaded on use)."""
        _ = self.handle.hints

    def dictionary_rewrite(self, question: str) -> tuple[Rewrite, list[dict[str, Any]]]:
        """The deterministic rewrite and the hints it came from."""
        hints = self.handle.hints.lookup(question, limit=self.max_hints)
        rewrite = dictionary_rewrite(
            question,
            hints,
            max_symbols=self.max_symbols,
            max_packages=self.max_packages,
            min_relative_score=self.min_relative_score,
        )
        return rewrite, [h.to_dict() for h in hints]

    @component.output_types(**REWRITE_OUTPUTS)
    def run(self, question: str) -> dict[str, Any]:
        """
        Rewrite a question.

        :param question: The user's question.
        :returns: `rewritten`, `symbols`, `packages`, `intent`, the `hints` considered, and `meta`
            (mode, dictionary version, latency in ms).
        """
        if not question or not question.strip():
            raise ValueError("question must be a non-empty string")
        started = time.perf_counter()
        rewrite, hints = self.dictionary_rewrite(question)
        meta = {
            "mode": "dictionary",
            "dictionary_version": self.handle.dictionary.version,
            "latency_ms": round((time.perf_counter() - started) * 1000, 3),
        }
        return {**rewrite.model_dump(), "hints": hints, "meta": meta}

    @component.output_types(**REWRITE_OUTPUTS)
    async def run_async(self, question: str) -> dict[str, Any]:
        return self.run(question=question)

    def to_dict(self) -> dict[str, Any]:
        return default_to_dict(
            self,
            dictionary_path=self.dictionary_path,
            index_dir=self.index_dir,
            max_hints=self.max_hints,
            max_symbols=self.max_symbols,
            max_packages=self.max_packages,
            min_relative_score=self.min_relative_score,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ConstrainedQueryRewriter:
        return default_from_dict(cls, data)
