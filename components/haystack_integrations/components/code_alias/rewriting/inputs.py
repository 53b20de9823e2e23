"""What a rewrite's optional inputs give it: the symbols a first pass's documents show, and the question's vector.

Both come from components the user chose: documents from any splitter and store (mapped to the dictionary's
definitions by `chunk_definitions.DefinitionLocator`) and a vector from any embedder (checked against the model
that embedded the symbol cards). Each says in the rewrite's `meta` what it gave, and warns once when it gave nothing.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

import numpy as np
from haystack import Document

from ..core.cards import SymbolCards, check_question_vector
from ..core.model import AliasDictionary
from ..indexing.card_vectors import check_same_model
from ..indexing.dictionary_handle import DictionaryHandle
from .chunk_definitions import HOW, DefinitionLocator

logger = logging.getLogger(__name__)


class RewriteInputs:
    """
    The rewriter's handling of `retrieved_documents` and `question_vector` (and of its `text_embedder`).

    :param file_path_field: The documents' meta field naming the source file (None: the usual names).
    :param text_embedder: Embeds the question when no vector is given.
    """

    def __init__(self, *, file_path_field: str | None = None, text_embedder: Any | None = None) -> None:
        self.file_path_field = file_path_field
        self.text_embedder = text_embedder
        self._lock = threading.Lock()
        self._held: tuple[AliasDictionary, DefinitionLocator] | None = None
        self._checked_cards: SymbolCards | None = None
        self._warned: set[str] = set()

    def retrieved_names(
        self, dictionary: AliasDictionary, documents: list[Document] | None
    ) -> tuple[list[str], dict[str, Any] | None]:
        """
        The symbols a first pass's documents show, best first, and a report: how many documents, how many were
        mapped to definitions and how (`symbol`, `lines`, `offsets`, `content`). Our splitter's chunks name their
        symbol; any other chunk goes through `DefinitionLocator` (module docstring of `rewriting.chunk_definitions`).
        """
        if not documents:
            return [], None
        names: list[str] = []
        by = dict.fromkeys(HOW, 0)
        mapped = 0
        locator: DefinitionLocator | None = None
        for document in documents:
            meta = document.meta or {}
            if "symbol" in meta or "chunker" in meta:  # our own chunk: its symbol (a module remainder has none)
                name = meta.get("symbol")
                if isinstance(name, str) and name:
                    mapped += 1
                    by["symbol"] += 1
                    names.append(name)
                continue
            locator = locator or self._locator(dictionary)
            located = locator.locate(meta, document.content)
            if located.how is not None:
                mapped += 1
                by[located.how] += 1
                names.extend(located.names)
        report: dict[str, Any] = {
            "documents": len(documents),
            "mapped": mapped,
            "by": {how: count for how, count in by.items() if count},
        }
        if mapped == 0 and locator is not None:
            report["warning"] = (
                f"none of the {len(documents)} retrieved documents could be mapped to the dictionary's definitions: "
                "their meta names no file the dictionary knows (set `file_path_field` to the field that does) and "
                "their text defines none of its names"
            )
            self._warn_once("retrieved", report["warning"])
        return list(dict.fromkeys(names)), report

    def _locator(self, dictionary: AliasDictionary) -> DefinitionLocator:
        """The locator of `dictionary`, made again when the dictionary changed (a re-index)."""
        with self._lock:
            held = self._held
            if held is None or held[0] is not dictionary:
                held = (dictionary, DefinitionLocator(dictionary, file_path_field=self.file_path_field))
                self._held = held
            return held[1]

    def question_vector(
        self, handle: DictionaryHandle, question: str, vector: list[float] | np.ndarray | None
    ) -> tuple[np.ndarray | None, dict[str, Any]]:
        """
        The question's vector checked against the dictionary's symbol cards (or embedded with `text_embedder`), and
        a report for `meta["semantic"]`.

        :raises CardsError: The vector's size is not the cards' (another model's vector).
        :raises EmbedderMismatchError: `text_embedder` is not the model that embedded the cards.
        """
        if vector is None and self.text_embedder is None:
            return None, {"used": False, "reason": "no question vector"}
        cards = handle.cards()
        if cards is None or len(cards) == 0:
            given = "a question vector was" if vector is not None else "a text embedder is"
            message = (
                f"{given} given but the dictionary has no symbol cards, so there are no semantic hints: "
                "build them with AliasDictionaryBuilder(embedder=...) (or `code-alias index`)"
            )
            self._warn_once("cards", message)
            return None, {"used": False, "reason": "no symbol cards"}
        source = "question_vector"
        embedder = self.text_embedder
        if vector is None and embedder is not None:
            if self._checked_cards is not cards:
                check_same_model(cards, embedder)
                self._checked_cards = cards
            vector = embedder.run(text=question)["embedding"]
            source = "text_embedder"
        if vector is None:
            return None, {"used": False, "reason": "no question vector"}
        checked = check_question_vector(cards, vector)
        return checked, {"used": True, "source": source, "cards": len(cards)}

    def _warn_once(self, key: str, message: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            logger.warning("%s", message)
