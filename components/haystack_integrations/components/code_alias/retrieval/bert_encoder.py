"""
The question side of a BERT sentence-transformers model (the packaged all-MiniLM-L6-v2) in numpy.

Why not sentence-transformers for questions too: importing it (with transformers and torch) costs 9-11 s on this
project's two cores, the largest part of every cold hybrid `ask` and of a warm server's start, while embedding one
question through a 6-layer encoder is a few milliseconds of matrix products. The chunks and symbol cards are still
embedded by sentence-transformers (batches, at index time); this encoder reads the same folder (`model.safetensors`,
`tokenizer.json`, `modules.json`) and computes the same function: word-piece tokens (Hugging Face `tokenizers`,
the model's own `tokenizer.json`, truncated to `max_seq_length`), BERT's encoder (absolute positions, exact GELU),
mean pooling over the tokens, L2 normalisation. `tests/retrieval/test_bert_encoder.py` checks its vectors against
sentence-transformers' on questions, code and over-long text (cosine > 0.99999).

Only that architecture is accepted: `BertSentenceEncoder.supports(folder)` says whether a folder is one (a model
of another kind keeps sentence-transformers).
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from threadpoolctl import ThreadpoolController

from ..errors import CodeAliasError

__all__ = ["BertSentenceEncoder", "UnsupportedModelError"]

_TRANSFORMER = "sentence_transformers.models.Transformer"
_POOLING = "sentence_transformers.models.Pooling"
_NORMALIZE = "sentence_transformers.models.Normalize"
_WEIGHTS = "model.safetensors"
_TOKENIZER = "tokenizer.json"


class UnsupportedModelError(ValueError, CodeAliasError):
    """The model folder is not a BERT encoder with mean pooling and normalisation (or lacks a file this needs)."""


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise UnsupportedModelError(f"{path}: {error}") from error


def _check_architecture(folder: Path) -> dict[str, Any]:
    """The model's `config.json` when the folder is Transformer(BERT) -> mean Pooling -> Normalize; else raises."""
    modules = _read_json(folder / "modules.json")
    kinds = [module.get("type") for module in modules] if isinstance(modules, list) else None
    if kinds != [_TRANSFORMER, _POOLING, _NORMALIZE] or modules[0].get("path", "") != "":
        raise UnsupportedModelError(f"{folder / 'modules.json'}: not Transformer -> Pooling -> Normalize ({kinds})")
    pooling = _read_json(folder / modules[1]["path"] / "config.json")
    modes = {key for key, on in pooling.items() if key.startswith("pooling_mode") and on}
    if modes != {"pooling_mode_mean_tokens"}:
        raise UnsupportedModelError(f"{folder / modules[1]['path']}: pooling {sorted(modes)}, not mean tokens")
    config = _read_json(folder / "config.json")
    wanted = {"model_type": "bert", "hidden_act": "gelu", "position_embedding_type": "absolute"}
    different = {key: config.get(key, "absolute" if key == "position_embedding_type" else None) for key in wanted}
    if different != wanted:
        raise UnsupportedModelError(f"{folder / 'config.json'}: {different}, this encoder computes {wanted}")
    for name in (_WEIGHTS, _TOKENIZER):
        if not (folder / name).is_file():
            raise UnsupportedModelError(f"{folder / name}: missing")
    return dict(config)


def _erf(values: np.ndarray) -> np.ndarray:
    """
    The error function, elementwise, to within 1.5e-7 (Abramowitz & Stegun 7.1.26): numpy has none, `math.erf`
    per element is slow, and scipy's costs a second to import.
    """
    sign = np.sign(values)
    x = np.abs(values)
    t = 1.0 / (1.0 + 0.3275911 * x)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return np.asarray(sign * (1.0 - poly * np.exp(-x * x)), dtype=np.float32)


def _layer_norm(hidden: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = hidden.mean(axis=-1, keepdims=True)
    variance = ((hidden - mean) ** 2).mean(axis=-1, keepdims=True)
    return (hidden - mean) / np.sqrt(variance + eps) * weight + bias


def _linear(hidden: np.ndarray, projection: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """`hidden @ weight + bias` over the last axis as one 2-D product (numpy's stacked matmul was 4x slower)."""
    weight, bias = projection
    flat = hidden.reshape(-1, hidden.shape[-1]) @ weight + bias
    return flat.reshape(*hidden.shape[:-1], weight.shape[1])


@dataclass(frozen=True)
class _Layer:
    query: tuple[np.ndarray, np.ndarray]
    key: tuple[np.ndarray, np.ndarray]
    value: tuple[np.ndarray, np.ndarray]
    attention_out: tuple[np.ndarray, np.ndarray]
    attention_norm: tuple[np.ndarray, np.ndarray]
    intermediate: tuple[np.ndarray, np.ndarray]
    output: tuple[np.ndarray, np.ndarray]
    output_norm: tuple[np.ndarray, np.ndarray]


class BertSentenceEncoder:
    """
    Sentence vectors of a BERT sentence-transformers folder, computed with numpy (see the module's docstring).

    Read-only after loading, so one instance serves every thread.

    ### Usage example

    ```python
    from haystack_integrations.components.code_alias.retrieval.bert_encoder import BertSentenceEncoder
    from haystack_integrations.components.code_alias.retrieval.embedders import resolve_model

    encoder = BertSentenceEncoder.load(resolve_model("all-MiniLM-L6-v2")[0], max_seq_length=256)
    print(encoder.encode(["where is the retry helper?"]).shape)   # (1, 384)
    ```
    """

    def __init__(self, weights: dict[str, np.ndarray], config: dict[str, Any], tokenizer: Any) -> None:
        self._tokenizer = tokenizer
        self._threads = ThreadpoolController()
        self._lock = threading.Lock()  # the BLAS limit below is process-wide: one encode changes it at a time
        self._heads = int(config["num_attention_heads"])
        self._eps = float(config.get("layer_norm_eps", 1e-12))

        def pair(prefix: str) -> tuple[np.ndarray, np.ndarray]:
            # Linear layers are stored (out, in); kept transposed for `hidden @ weight`.
            weight = weights[f"{prefix}.weight"]
            return (np.ascontiguousarray(weight.T) if weight.ndim == 2 else weight), weights[f"{prefix}.bias"]

        self._words = weights["embeddings.word_embeddings.weight"]
        self._positions = weights["embeddings.position_embeddings.weight"]
        self._token_types = weights["embeddings.token_type_embeddings.weight"]
        self._embedding_norm = pair("embeddings.LayerNorm")
        self._layers = [
            _Layer(
                query=pair(f"encoder.layer.{n}.attention.self.query"),
                key=pair(f"encoder.layer.{n}.attention.self.key"),
                value=pair(f"encoder.layer.{n}.attention.self.value"),
                attention_out=pair(f"encoder.layer.{n}.attention.output.dense"),
                attention_norm=pair(f"encoder.layer.{n}.attention.output.LayerNorm"),
                intermediate=pair(f"encoder.layer.{n}.intermediate.dense"),
                output=pair(f"encoder.layer.{n}.output.dense"),
                output_norm=pair(f"encoder.layer.{n}.output.LayerNorm"),
            )
            for n in range(int(config["num_hidden_layers"]))
        ]

    @staticmethod
    def supports(folder: str | Path) -> bool:
        """Whether `folder` holds a model this encoder computes exactly (else: use sentence-transformers)."""
        try:
            _check_architecture(Path(folder))
        except UnsupportedModelError:
            return False
        return True

    @classmethod
    def load(cls, folder: str | Path, *, max_seq_length: int) -> BertSentenceEncoder:
        """
        :param folder: A sentence-transformers model folder (Transformer -> mean Pooling -> Normalize, BERT).
        :param max_seq_length: Word pieces read per text, [CLS] and [SEP] included (sentence-transformers'
            `max_seq_length`).
        :raises UnsupportedModelError: Another architecture, or a file missing or unreadable.
        """
        from safetensors.numpy import load_file  # here: a process that embeds no question loads no model module
        from tokenizers import Tokenizer

        path = Path(folder)
        config = _check_architecture(path)
        limit = min(max_seq_length, int(config.get("max_position_embeddings", 512)))
        file = path / _TOKENIZER
        try:  # a damaged file: the caller falls back to sentence-transformers (whose error may say more)
            tokenizer = Tokenizer.from_file(str(file))
            file = path / _WEIGHTS
            weights = load_file(str(file))
        except Exception as error:
            raise UnsupportedModelError(f"{file}: {type(error).__name__}: {error}") from error
        tokenizer.enable_truncation(max_length=limit)
        tokenizer.no_padding()  # padded here, per batch, to its longest text (as sentence-transformers does)
        weights = {name.removeprefix("bert."): value for name, value in weights.items()}
        try:
            return cls(weights, config, tokenizer)
        except KeyError as error:
            raise UnsupportedModelError(f"{path / _WEIGHTS}: no tensor {error}") from error

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """
        :param texts: The texts (each truncated to `max_seq_length` word pieces).
        :returns: One unit-length float32 row per text.
        """
        if not texts:
            return np.zeros((0, self._words.shape[1]), dtype=np.float32)
        encodings = self._tokenizer.encode_batch(list(texts))
        length = max(len(encoding.ids) for encoding in encodings)
        ids = np.zeros((len(texts), length), dtype=np.int64)
        mask = np.zeros((len(texts), length), dtype=np.float32)
        for row, encoding in enumerate(encodings):
            ids[row, : len(encoding.ids)] = encoding.ids
            mask[row, : len(encoding.ids)] = 1.0
        hidden = self._words[ids] + self._positions[:length] + self._token_types[0]
        hidden = _layer_norm(hidden, *self._embedding_norm, self._eps)
        blocked = (1.0 - mask)[:, None, None, :] * np.float32(np.finfo(np.float32).min)
        # One BLAS thread: a question's products are small, and a second thread's hand-off made them 3-6x slower
        # on the busy two cores (20 ms vs 60-80 ms for a short question, 130 ms vs 0.7-0.8 s for 200 word pieces).
        with self._lock, self._threads.limit(limits=1, user_api="blas"):
            for layer in self._layers:
                hidden = self._layer(hidden, layer, blocked)
        pooled = (hidden * mask[:, :, None]).sum(axis=1) / np.maximum(mask.sum(axis=1, keepdims=True), 1e-9)
        norms = np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        return np.asarray(pooled / norms, dtype=np.float32)

    def _layer(self, hidden: np.ndarray, layer: _Layer, blocked: np.ndarray) -> np.ndarray:
        batch, length, width = hidden.shape
        size = width // self._heads

        def heads(projection: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
            projected = _linear(hidden, projection)
            return projected.reshape(batch, length, self._heads, size).transpose(0, 2, 1, 3)

        query, key, value = heads(layer.query), heads(layer.key), heads(layer.value)
        scores = query @ key.transpose(0, 1, 3, 2) / np.float32(math.sqrt(size)) + blocked
        scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
        context = (scores / scores.sum(axis=-1, keepdims=True)) @ value
        context = context.transpose(0, 2, 1, 3).reshape(batch, length, width)
        attended = _layer_norm(_linear(context, layer.attention_out) + hidden, *layer.attention_norm, self._eps)
        inner = _linear(attended, layer.intermediate)
        inner = inner * 0.5 * (1.0 + _erf(inner / np.float32(math.sqrt(2.0))))
        return _layer_norm(_linear(inner, layer.output) + attended, *layer.output_norm, self._eps)
