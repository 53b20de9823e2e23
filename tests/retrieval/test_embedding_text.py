"""The short embedding text (`embedding_text`) and the chunk embedder's `text` mode."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
import yaml
from haystack import Document

from haystack_integrations.components.code_alias.evaluation import embed_cost
from haystack_integrations.components.code_alias.retrieval.embedders import CodeDocumentEmbedder
from haystack_integrations.components.code_alias.retrieval.embedding_text import (
    docstring,
    identifier_words,
    signature,
    summary_text,
)

PY_METHOD = '''    @property
    def fetch_user_by_id(
        self, user_id: int, *, retries: int = 3
    ) -> "User":
        """Load one user from the HTTPBackend.

        Retries on timeouts.
        """
        row = self.backend.lookupRow(user_id)  # cache miss goes to the HTTPBackend
        return User.from_row(row)
'''

TS_FUNCTION = """/**
 * Waits, then calls the function again.
 */
export async function withStripeBackoff(fn: () => Promise<void>, maxTries = 5) {
  const delayMs = computeDelay(maxTries);
  return retryLater(fn, delayMs);
}
"""


def test_signature_spans_lines_and_skips_decorators() -> None:
    assert signature(PY_METHOD) == 'def fetch_user_by_id( self, user_id: int, *, retries: int = 3 ) -> "User":'
    assert signature(TS_FUNCTION) == "export async function withStripeBackoff(fn: () => Promise<void>, maxTries = 5)"
    assert signature("x = 1\ny = 2\n") == ""


def test_docstring_python_jsdoc_and_line_comments() -> None:
    assert docstring(PY_METHOD) == "Load one user from the HTTPBackend. Retries on timeouts."
    assert docstring(TS_FUNCTION) == "Waits, then calls the function again."
    assert docstring("# Reads the config.\n# Twice.\ndef read():\n    pass\n") == "Reads the config. Twice."
    assert docstring("def f():\n    return 1\n") == ""


def test_identifier_words_are_unique_ordered_and_drop_keywords() -> None:
    words = identifier_words("def fetchRow(self):\n    return self.fetch_row_cache or None\n")
    assert words == ["fetch", "row", "cache"]


def test_summary_text_orders_parts_and_leaves_docstring_words_out_of_the_word_list() -> None:
    text = summary_text(PY_METHOD, {"file_path": "app/users.py", "qualified_name": "app.users.Repo.fetch_user_by_id"})
    lines = text.split("\n")
    assert lines[0] == "app/users.py"
    assert lines[1] == "app.users.Repo.fetch_user_by_id"
    assert lines[2].startswith("def fetch_user_by_id(")
    assert lines[3].startswith("Load one user")
    words = lines[4].split()
    assert {"fetch", "user", "lookup", "row", "backend", "retries"} <= set(words)
    assert "timeouts" not in words  # only in the docstring, which is already there
    assert "self" not in words and "return" not in words
    assert len(text) < len(PY_METHOD) + 40


def test_summary_text_without_meta_or_definition() -> None:
    assert summary_text("", {}) == ""
    assert summary_text("MAX_RETRIES = 5\n", {"file_path": "c.py"}) == "c.py\nmax retries"


def test_chunk_mode_keeps_its_cache_keys_and_summary_mode_gets_its_own() -> None:
    document = Document(content="def f():\n    return 1\n", meta={"file_path": "a.py", "qualified_name": "a.f"})
    chunk = CodeDocumentEmbedder(cache_dir="")
    old_blob = "\x1f".join(["all-MiniLM-L6-v2", "256", "a.py", "a.f", document.content or ""])
    assert chunk.cache_key(document) == hashlib.sha1(old_blob.encode()).hexdigest()
    summary = CodeDocumentEmbedder(cache_dir="", text="summary")
    short = CodeDocumentEmbedder(cache_dir="", max_seq_length=128)
    assert len({chunk.cache_key(document), summary.cache_key(document), short.cache_key(document)}) == 3
    assert chunk.text_to_embed(document) == "a.py\na.f\ndef f():\n    return 1\n"
    assert summary.text_to_embed(document) == "a.py\na.f\ndef f():"


def test_text_mode_round_trips_and_is_validated() -> None:
    embedder = CodeDocumentEmbedder(cache_dir="", text="summary", max_seq_length=128)
    data = embedder.to_dict()
    assert data["init_parameters"]["text"] == "summary"
    again = CodeDocumentEmbedder.from_dict(data)
    assert (again.text, again.max_seq_length) == ("summary", 128)
    with pytest.raises(ValueError, match="text must be one of"):
        CodeDocumentEmbedder(text="signature")


def test_embed_cost_variant_pipelines_set_both_sides(tmp_path: Path) -> None:
    folder = embed_cost.variant_pipelines("summary-128", tmp_path / "p")
    indexing = yaml.safe_load((folder / "indexing.yml").read_text())["components"]["embedder"]["init_parameters"]
    query = yaml.safe_load((folder / "query.yml").read_text())["components"]
    text_side = [c for c in query.values() if c["type"].endswith("CodeTextEmbedder")]
    assert (indexing["text"], indexing["max_seq_length"]) == ("summary", 128)
    assert text_side and all(c["init_parameters"]["max_seq_length"] == 128 for c in text_side)
    with pytest.raises(ValueError, match="expected"):
        embed_cost.parse_variant("whole-256")
