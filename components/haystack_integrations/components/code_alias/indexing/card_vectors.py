"""The index's symbol-card vectors: built after the dictionary, before the chunk vectors (they are cheap).

`refresh_card_vectors` writes `<index dir>/cards-<dictionary version>.npz` (atomically) for the current dictionary,
embedding only the cards whose text is new: the previous cards file and the embedding cache both hold the rest, so
a sync that renamed one function embeds one card, and a removed file's names simply leave. The dictionary of an
Elasticsearch index lives in the same local folder, so both backends get cards.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from haystack import Document

from ..core.cards import (
    CARDS_PREFIX,
    CardsError,
    SymbolCards,
    build_cards,
    cards_file,
    describe_embedder,
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


#: Attributes that name an embedder's model, across Haystack's embedders and its integrations'.
_MODEL_ATTRIBUTES = ("model", "model_name", "model_id", "model_name_or_path", "embedding_model")
#: Attributes that fix an embedder's output size where the model allows several.
_SIZE_ATTRIBUTES = ("dimensions", "truncate_dim", "output_dimensionality")


class EmbedderMismatchError(CardsError):
    """The question would be embedded by another model than the one that embedded the symbol cards."""


def embedder_identity(embedder: Any) -> dict[str, Any]:
    """
    What identifies the vectors a Haystack embedder makes: its class and model (and a fixed output size where it
    has one). A document embedder and the text embedder of the same model compare equal with `same_model`.
    """
    kind = type(embedder)
    identity: dict[str, Any] = {"type": f"{kind.__module__}.{kind.__qualname__}"}
    for name in _MODEL_ATTRIBUTES:
        value = getattr(embedder, name, None)
        if isinstance(value, str) and value:
            identity["model"] = value.rstrip("/")
            break
    for name in _SIZE_ATTRIBUTES:
        value = getattr(embedder, name, None)
        if isinstance(value, int) and not isinstance(value, bool):
            identity["dimensions"] = value
            break
    return identity


def same_model(cards: dict[str, Any] | None, embedder: dict[str, Any]) -> bool:
    """
    Whether an embedder of identity `embedder` makes vectors comparable with cards made by `cards`: the same model
    name (and output size where either fixes one). Cards of the index's own model (`cards` None) and embedders that
    name no model can only be checked by the vectors' size, at the first question.
    """
    if not cards or "model" not in cards or "model" not in embedder:
        return True
    if cards.get("dimensions") != embedder.get("dimensions"):
        return False
    return bool(cards["model"] == embedder["model"])


def check_same_model(cards: SymbolCards, embedder: Any) -> None:
    """
    :raises EmbedderMismatchError: `embedder` is not the model that embedded `cards` (both named in the message).
    """
    identity = embedder_identity(embedder)
    if not same_model(cards.embedder, identity):
        raise EmbedderMismatchError(
            f"the symbol cards were embedded by {describe_embedder(cards.embedder)}, but the question embedder is "
            f"{describe_embedder(identity)}: give the rewriter a text embedder of the cards' model, or rebuild the "
            "cards with AliasDictionaryBuilder(embedder=...) of the model you query with"
        )


def component_embedder(embedder: Any) -> Embed:
    """
    An `Embed` over any Haystack embedder: a document embedder (`run(documents=...)`, one call per batch of cards)
    or a text embedder (`run(text=...)`, one call per card). It is warmed up first when it has `warm_up`.
    """
    if hasattr(embedder, "warm_up"):
        embedder.warm_up()
    takes_documents = _accepts(embedder, "documents")

    def embed(texts: list[str]) -> list[list[float]]:
        if takes_documents:
            out = embedder.run(documents=[Document(content=text) for text in texts])["documents"]
            vectors = [list(document.embedding or []) for document in out]
        else:
            vectors = [list(embedder.run(text=text)["embedding"]) for text in texts]
        if any(not vector for vector in vectors):
            raise CardsError(f"{type(embedder).__name__} returned a document without an embedding")
        return vectors

    return embed


def _accepts(embedder: Any, name: str) -> bool:
    try:
        return name in inspect.signature(embedder.run).parameters
    except (TypeError, ValueError):
        return False


def load_cards(folder: Path, version: str | None = None, prefix: str = CARDS_PREFIX) -> SymbolCards | None:
    """The cards of `version` (else the newest) in `folder`, or None when there are none or they are unreadable."""
    path = newest_cards_file(folder, version, prefix)
    if path is None:
        return None
    try:
        return SymbolCards.load(path)
    except (CardsError, FileNotFoundError):
        return None


def refresh_card_vectors(
    folder: Path,
    dictionary: AliasDictionary,
    embed: Embed,
    *,
    embedder: dict[str, Any] | None = None,
    prefix: str = CARDS_PREFIX,
) -> dict[str, Any]:
    """
    Make the cards of `dictionary` current in `folder`, embedding only new card texts.

    :param embedder: The identity (`embedder_identity`) of the embedder behind `embed`, recorded with the vectors;
        None = the index's own model.
    :param prefix: The cards files' name prefix (`core.cards.cards_prefix`).
    :returns: Statistics: cards, embedded, reused, seconds, file, bytes.
    """
    started = time.perf_counter()
    target = cards_file(folder, dictionary.version, prefix)
    previous = load_cards(folder, dictionary.version, prefix)
    cards = dictionary_cards(dictionary)
    if (
        previous is not None
        and previous.version == dictionary.version
        and previous.keys == [c.key for c in cards]
        and (previous.embedder or None) == (embedder or None)
    ):
        embedded = 0
        result = previous
    else:
        result, embedded = build_cards(cards, embed, version=dictionary.version, previous=previous, embedder=embedder)
        result.save(target)
    remove_other_cards(folder, target, prefix)
    return {
        "cards": len(result),
        "embedded": embedded,
        "reused": len(result) - embedded,
        "seconds": round(time.perf_counter() - started, 3),
        "file": target.name,
        "bytes": target.stat().st_size,
    }
