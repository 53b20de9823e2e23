"""Symbol cards: a short text per dictionary name, and their vectors, for semantic hint candidates.

Word overlap cannot bridge a vocabulary gap ("payments retry helper" vs `withStripeBackoff`); a sentence
embedding of a few words about each symbol can. A card is what a person would read in a symbol list: its kind,
the words of its qualified name, its package and the first words of its docstring. Cards are one per *name* (the
hint index merges a name's definitions), a few tokens each, so they embed several times faster than chunks.

Framework-free: the vectors come from any callable that embeds texts (`indexing.card_vectors` uses the index's own
sentence-transformers model); `SymbolCards` holds them as one normalised float32 matrix and answers "which names
are nearest to this question vector" with one matrix-vector product.
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import zipfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import CodeAliasError
from .identifiers import split_identifier
from .model import AliasDictionary, SymbolEntry, atomic_write_bytes
from .testfiles import is_test_file

#: Doc words a card keeps: the study of card texts (issue 28) found the first ~160 characters of a docstring
#: as good as more, and shorter cards embed faster.
CARD_DOC_WORDS = 24
#: A file of the index folder per dictionary version: `cards-<version>.npz`.
CARDS_PREFIX = "cards-"
CARDS_SUFFIX = ".npz"


@dataclass(frozen=True)
class Card:
    """The text embedded for one dictionary name."""

    name: str
    text: str

    @property
    def key(self) -> str:
        """Content hash of the text: unchanged text, unchanged vector (a rename or removal changes only its own)."""
        return hashlib.sha1(self.text.encode("utf-8", "surrogatepass")).hexdigest()


def _words(qualified_name: str) -> list[str]:
    words: list[str] = []
    for part in qualified_name.replace("/", ".").split("."):
        for word in split_identifier(part):
            if not words or words[-1] != word:
                words.append(word)
    return words


def card_doc_words(entries: Sequence[SymbolEntry], count: int = CARD_DOC_WORDS) -> list[str]:
    """The first `count` distinct doc words of a name's definitions, in order (the first definition's first)."""
    doc: list[str] = []
    for entry in entries:
        for word in entry.doc_words:
            if word not in doc:
                doc.append(word)
        if len(doc) >= count:
            break
    return doc[:count]


def card_text(entries: Sequence[SymbolEntry]) -> str:
    """
    The card of one name from its definitions (the first is the one shown): kind, qualified-name words, package,
    doc words, e.g. ``function: payments core stripe with stripe backoff (package @acme/payments-core)``.
    """
    first = entries[0]
    words = _words(first.qualified_name)
    text = f"{first.kind}: {' '.join(words)}"
    if first.package:
        text += f" (package {first.package})"
    doc = card_doc_words(entries)
    if doc:
        text += ". " + " ".join(doc)
    return text


def _is_card_worthy(entries: Sequence[SymbolEntry]) -> bool:
    """Test-only names and dunders are never what an informal question means; they get no card."""
    name = entries[0].name
    if name.startswith("__") or name.lower().startswith("test") or len(name) < 2:
        return False
    return not all(is_test_file(entry.file_path) for entry in entries)


def dictionary_cards(dictionary: AliasDictionary) -> list[Card]:
    """One card per symbol name of the dictionary (test-only names and dunders left out), in a stable order."""
    by_name: dict[str, list[SymbolEntry]] = {}
    for entry in dictionary.symbols:
        by_name.setdefault(entry.name, []).append(entry)
    cards = []
    for name in sorted(by_name):
        entries = sorted(by_name[name], key=lambda e: (is_test_file(e.file_path), not e.exported, e.file_path))
        if _is_card_worthy(entries):
            cards.append(Card(name=name, text=card_text(entries)))
    return cards


class SymbolCards:
    """
    Names and their card vectors (rows normalised to unit length, so a dot product is the cosine similarity).

    :param names: The names, one per row.
    :param vectors: A (names, dimensions) array.
    :param keys: The cards' content hashes (`Card.key`), one per row: what a refresh reuses.
    :param version: The dictionary version the cards were made for.
    :param embedder: Which embedder made the vectors (`embedder_identity`: its type and model); None = the index's
        own model (cards written before this was recorded, or by `code-alias index`).
    """

    def __init__(
        self,
        names: Sequence[str],
        vectors: np.ndarray,
        keys: Sequence[str],
        *,
        version: str,
        embedder: Mapping[str, Any] | None = None,
    ) -> None:
        matrix = np.asarray(vectors, dtype=np.float32)
        if matrix.ndim != 2 or matrix.shape[0] != len(names) or len(keys) != len(names):
            raise ValueError(f"card vectors of shape {matrix.shape} do not match {len(names)} names")
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        self.matrix = matrix / np.maximum(norms, 1e-12)
        self.names = list(names)
        self.keys = list(keys)
        self.version = version
        self.embedder = dict(embedder) if embedder else None

    def __len__(self) -> int:
        return len(self.names)

    @functools.cached_property
    def rows(self) -> dict[str, int]:
        """Name -> its row."""
        return {name: row for row, name in enumerate(self.names)}

    @property
    def dimensions(self) -> int:
        return int(self.matrix.shape[1])

    def similarities(self, vector: Sequence[float] | np.ndarray) -> np.ndarray:
        """Cosine similarity of every card to `vector` (row order), or an empty array when the sizes differ."""
        query = np.asarray(vector, dtype=np.float32).reshape(-1)
        if len(self) == 0 or query.shape[0] != self.dimensions:
            return np.zeros(0, dtype=np.float32)
        norm = float(np.linalg.norm(query))
        if norm == 0.0 or not np.isfinite(norm):
            return np.zeros(0, dtype=np.float32)
        # einsum, not `@`: OpenBLAS's threaded gemv took 16 ms for 11k cards on these loaded 2 cores, einsum 0.9 ms.
        return np.einsum("ij,j->i", self.matrix, query / norm)

    def nearest(self, vector: Sequence[float] | np.ndarray, k: int) -> list[tuple[str, float]]:
        """The `k` names nearest to `vector`, best first, with their similarity."""
        scores = self.similarities(vector)
        if scores.size == 0 or k <= 0:
            return []
        k = min(k, scores.size)
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.lexsort((top, -scores[top]))]
        return [(self.names[i], float(scores[i])) for i in top]

    # ---- persistence -------------------------------------------------------------------------------------------
    def save(self, path: Path) -> None:
        """Write the cards atomically (a reader sees the old file or the whole new one)."""
        buffer = io.BytesIO()
        np.savez(
            buffer,
            matrix=self.matrix.astype(np.float32),
            names=np.asarray(self.names, dtype=str),  # unicode arrays: loading needs no pickle
            keys=np.asarray(self.keys, dtype=str),
            version=np.asarray(self.version),
            embedder=np.asarray(json.dumps(self.embedder or {}, sort_keys=True)),
        )
        atomic_write_bytes(path, buffer.getvalue())

    @classmethod
    def load(cls, path: Path) -> SymbolCards:
        """
        :raises CardsError: The file is unreadable or not a cards file (named, with the fix).
        """
        try:
            with np.load(path, allow_pickle=False) as data:
                embedder = json.loads(str(data["embedder"])) if "embedder" in data.files else None
                return cls(
                    [str(n) for n in data["names"]],
                    data["matrix"],
                    [str(k) for k in data["keys"]],
                    version=str(data["version"]),
                    embedder=embedder if isinstance(embedder, dict) else None,
                )
        except FileNotFoundError:
            raise
        except (OSError, KeyError, ValueError, TypeError, zipfile.BadZipFile, EOFError) as error:
            raise CardsError(
                f"{path}: not a readable symbol-cards file ({error}); index again to rebuild it"
            ) from error


class CardsError(ValueError, CodeAliasError):
    """A symbol-cards file that cannot be read, or a question vector that does not fit the cards."""


def check_question_vector(cards: SymbolCards, vector: Sequence[float] | np.ndarray) -> np.ndarray:
    """
    The question's vector as a float32 array, when it can be compared with `cards`.

    :raises CardsError: Its size is not the cards' (it comes from another model than the one that embedded them).
    """
    query = np.asarray(vector, dtype=np.float32).reshape(-1)
    if len(cards) and query.shape[0] != cards.dimensions:
        made_by = describe_embedder(cards.embedder)
        raise CardsError(
            f"the question vector has {query.shape[0]} dimensions but the symbol cards have {cards.dimensions} "
            f"(embedded by {made_by}): embed the question with the model that embedded the cards"
        )
    return query


def describe_embedder(identity: Mapping[str, Any] | None) -> str:
    """`identity` in words: "SentenceTransformersDocumentEmbedder, model all-MiniLM-L6-v2" (or the index's model)."""
    if not identity:
        return "the index's own model"
    kind = str(identity.get("type", "")).rsplit(".", 1)[-1] or "an embedder"
    model = identity.get("model")
    return f"{kind}, model {model}" if model else kind


def cards_file(folder: Path, version: str, prefix: str = CARDS_PREFIX) -> Path:
    return folder / f"{prefix}{version}{CARDS_SUFFIX}"


def build_cards(
    cards: Sequence[Card],
    embed: Callable[[list[str]], Sequence[Sequence[float]]],
    *,
    version: str,
    previous: SymbolCards | None = None,
    embedder: Mapping[str, Any] | None = None,
) -> tuple[SymbolCards, int]:
    """
    Vectors for `cards`: reused from `previous` where a card's text is unchanged, embedded (`embed`) otherwise.

    :param embedder: The identity of the embedder behind `embed` (recorded in the cards); `previous` cards of
        another embedder are not reused.
    :returns: The cards and how many texts were embedded.
    """
    reuse: dict[str, np.ndarray] = {}
    if previous is not None and (previous.embedder or None) != (dict(embedder) if embedder else None):
        previous = None  # another model's vectors: nothing to reuse
    if previous is not None:
        reuse = {key: previous.matrix[row] for row, key in enumerate(previous.keys)}
    missing = [card for card in cards if card.key not in reuse]
    fresh: dict[str, np.ndarray] = {}
    if missing:
        vectors = embed([card.text for card in missing])
        fresh = {card.key: np.asarray(v, dtype=np.float32) for card, v in zip(missing, vectors, strict=True)}
    rows = [reuse[card.key] if card.key in reuse else fresh[card.key] for card in cards]
    dimensions = previous.dimensions if previous is not None and len(previous) else (len(rows[0]) if rows else 0)
    matrix = np.vstack(rows) if rows else np.zeros((0, dimensions), dtype=np.float32)
    built = SymbolCards([c.name for c in cards], matrix, [c.key for c in cards], version=version, embedder=embedder)
    return built, len(missing)


def newest_cards_file(folder: Path, preferred_version: str | None = None, prefix: str = CARDS_PREFIX) -> Path | None:
    """The cards file of `preferred_version` when there is one, else the most recently written one (or None)."""
    if preferred_version is not None:
        exact = cards_file(folder, preferred_version, prefix)
        if exact.is_file():
            return exact
    found = sorted(_cards_files(folder, prefix), key=lambda p: p.stat().st_mtime_ns, reverse=True)
    return found[0] if found else None


def _cards_files(folder: Path, prefix: str = CARDS_PREFIX) -> Iterable[Path]:
    try:
        return [p for p in folder.glob(f"{prefix}*{CARDS_SUFFIX}") if p.is_file()]
    except OSError:
        return []


def cards_prefix(dictionary_file: Path) -> str:
    """
    The cards' file prefix beside a dictionary file: `cards-` in an index folder (`dictionary.json`), else
    `<dictionary file's stem>.cards-`, so two dictionaries in one folder keep their own cards.
    """
    return CARDS_PREFIX if dictionary_file.name == "dictionary.json" else f"{dictionary_file.stem}.{CARDS_PREFIX}"


def remove_other_cards(folder: Path, keep: Path, prefix: str = CARDS_PREFIX) -> None:
    """Delete the cards files of other dictionary versions (after `keep` was written)."""
    for path in _cards_files(folder, prefix):
        if path != keep:
            path.unlink(missing_ok=True)
