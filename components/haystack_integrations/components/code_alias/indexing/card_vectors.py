"""The index's symbol-card vectors: built after the dictionary, before the chunk vectors (they are cheap).

`refresh_card_vectors` writes `<index dir>/cards-<dictionary version>.npz` (atomically) for the current dictionary,
embedding only the cards whose text is new: the previous cards file and the embedding cache both hold the rest, so
a sync that renamed one function embeds one card, and a removed file's names simply leave. The dictionary of an
Elasticsearch index lives in the same local folder, so both backends get cards.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from haystack import Document

from ..core.cards import (
    CardsError,
    SymbolCards,
    build_cards,
    cards_file,
    dictionary_cards,
    newest_cards_file,
    remove_other_cards,
)
from ..core.model import AliasDictionary

Embed = Callable[[list[str]], Sequence[Sequence[float]]]
#: Word pieces a card is cut at: a card is ~40 (kind, name words, package, 24 doc words).
CARD_MAX_SEQ_LENGTH = 96


def card_embedder(*, model: str, cache_dir: str | None, progress_bar: bool = False) -> Embed:
    """
    An `Embed` over the index's sentence-transformers model (`CodeDocumentEmbedder`, so the vectors share the
    content-hash cache with the chunks'), reading each card's text alone.
    """
    from ..retrieval.embedders import CodeDocumentEmbedder  # sentence-transformers: only where cards are embedded

    embedder = CodeDocumentEmbedder(
        model=model,
        meta_fields_to_embed=[],
        max_seq_length=CARD_MAX_SEQ_LENGTH,
        batch_size=64,
        cache_dir=cache_dir,
        progress_bar=progress_bar,
    )

    def embed(texts: list[str]) -> list[list[float]]:
        out = embedder.run(documents=[Document(content=text) for text in texts])["documents"]
        return [list(document.embedding or []) for document in out]

    return embed


def load_cards(folder: Path, version: str | None = None) -> SymbolCards | None:
    """The cards of `version` (else the newest) in `folder`, or None when there are none or they are unreadable."""
    path = newest_cards_file(folder, version)
    if path is None:
        return None
    try:
        return SymbolCards.load(path)
    except (CardsError, FileNotFoundError):
        return None


def refresh_card_vectors(folder: Path, dictionary: AliasDictionary, embed: Embed) -> dict[str, Any]:
    """
    Make the cards of `dictionary` current in `folder`, embedding only new card texts.

    :returns: Statistics: cards, embedded, reused, seconds, file, bytes.
    """
    started = time.perf_counter()
    target = cards_file(folder, dictionary.version)
    previous = load_cards(folder, dictionary.version)
    cards = dictionary_cards(dictionary)
    if previous is not None and previous.version == dictionary.version and previous.keys == [c.key for c in cards]:
        embedded = 0
        result = previous
    else:
        result, embedded = build_cards(cards, embed, version=dictionary.version, previous=previous)
        result.save(target)
    remove_other_cards(folder, target)
    return {
        "cards": len(result),
        "embedded": embedded,
        "reused": len(result) - embedded,
        "seconds": round(time.perf_counter() - started, 3),
        "file": target.name,
        "bytes": target.stat().st_size,
    }
