"""The three components with other people's splitters and embedders: chunk -> definitions, cards from any embedder.

Stock chunks here are made by Haystack's own `DocumentSplitter` (word, 150 / 50, as its tutorial) from files read by
`TextFileToDocument`; the embedders in the unit tests are small deterministic stand-ins (a bag of hashed words), and
the recipes' tests (test_stock_recipes.py) run the real sentence-transformers ones.
"""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from haystack import Document, component
from haystack.components.converters import TextFileToDocument
from haystack.components.preprocessors import DocumentSplitter

from haystack_integrations.components.code_alias import AliasDictionaryBuilder, ConstrainedQueryRewriter
from haystack_integrations.components.code_alias.core.builder import DictionaryBuilder
from haystack_integrations.components.code_alias.core.cards import CardsError, SymbolCards
from haystack_integrations.components.code_alias.core.model import AliasDictionary
from haystack_integrations.components.code_alias.indexing.card_vectors import (
    EmbedderMismatchError,
    embedder_identity,
    load_cards,
)
from haystack_integrations.components.code_alias.rewriting.chunk_definitions import DefinitionLocator
from haystack_integrations.components.code_alias.rewriting.rewriter import stock_queries

DIMENSIONS = 64


def _vector(text: str) -> list[float]:
    """A bag of hashed words: texts sharing words get near vectors (deterministic, no model)."""
    vector = np.zeros(DIMENSIONS, dtype=np.float32)
    for word in text.lower().replace("(", " ").replace(")", " ").replace(".", " ").split():
        vector[int(hashlib.sha1(word.encode()).hexdigest(), 16) % DIMENSIONS] += 1.0
    return vector.tolist()


@component
class WordDocumentEmbedder:
    """A stand-in document embedder with a `model`, as Haystack's embedders have."""

    def __init__(self, model: str = "words-64") -> None:
        self.model = model
        self.calls = 0

    @component.output_types(documents=list[Document])
    def run(self, documents: list[Document]) -> dict[str, Any]:
        self.calls += 1
        return {"documents": [Document(content=d.content, embedding=_vector(d.content or "")) for d in documents]}


@component
class WordTextEmbedder:
    """The matching text embedder."""

    def __init__(self, model: str = "words-64") -> None:
        self.model = model

    @component.output_types(embedding=list[float])
    def run(self, text: str) -> dict[str, Any]:
        return {"embedding": _vector(text)}


def stock_chunks(root: Path, *, full_path: bool = False) -> list[Document]:
    """Haystack's tutorial chunks of every source file under `root`."""
    files = sorted(p for p in root.rglob("*") if p.suffix in {".py", ".ts", ".jsx", ".go", ".rs"} and p.is_file())
    documents = TextFileToDocument(store_full_path=full_path).run(sources=files)["documents"]
    return DocumentSplitter(split_by="word", split_length=150, split_overlap=50).run(documents=documents)["documents"]


@pytest.fixture
def dictionary(acme_repo: Path) -> AliasDictionary:
    built, _ = DictionaryBuilder().refresh(acme_repo, None)
    return built


# ---- DefinitionLocator ---------------------------------------------------------------------------------------------
def test_a_stock_chunk_with_a_bare_file_name_is_mapped_through_its_offset(
    acme_repo: Path, dictionary: AliasDictionary
) -> None:
    chunks = [c for c in stock_chunks(acme_repo) if c.meta["file_path"] == "retry.ts"]
    assert chunks and "/" not in chunks[0].meta["file_path"]  # TextFileToDocument's default: the name alone
    located = DefinitionLocator(dictionary).locate(chunks[0].meta, chunks[0].content)
    assert located.how == "offsets"
    assert located.file_path == "packages/payments-core/src/retry.ts"
    assert located.names[:2] == ["withStripeBackoff", "MAX_STRIPE_ATTEMPTS"]


def test_an_absolute_path_matches_the_dictionary_path_by_its_tail(acme_repo: Path, dictionary: AliasDictionary) -> None:
    locator = DefinitionLocator(dictionary)
    absolute = str(acme_repo / "services/auth/acme_auth/tokens.py")
    assert locator.files_for(absolute) == ["services/auth/acme_auth/tokens.py"]
    assert locator.files_for("file://" + absolute) == ["services/auth/acme_auth/tokens.py"]
    assert locator.files_for("./services/auth/acme_auth/tokens.py") == ["services/auth/acme_auth/tokens.py"]
    assert locator.files_for("nowhere/else.py") == []


def test_a_line_range_in_meta_wins_and_a_chunk_inside_a_body_shows_its_definition(dictionary: AliasDictionary) -> None:
    locator = DefinitionLocator(dictionary)
    entry = next(e for e in dictionary.symbols if e.name == "withStripeBackoff")
    inside = locator.locate(
        {"file_path": entry.file_path, "start_line": entry.start_line + 2, "end_line": entry.start_line + 3}, "x"
    )
    assert (inside.how, inside.names) == ("lines", ["withStripeBackoff"])
    custom = DefinitionLocator(dictionary, file_path_field="source", line_fields=("from", "to"))
    located = custom.locate({"source": entry.file_path, "from": entry.start_line, "to": entry.end_line}, "")
    assert located.names == ["withStripeBackoff"]


def test_a_changed_file_is_not_read_and_the_chunk_text_says_what_it_defines(
    acme_repo: Path, dictionary: AliasDictionary
) -> None:
    chunk = next(c for c in stock_chunks(acme_repo) if c.meta["file_path"] == "tokens.py")
    target = acme_repo / "services/auth/acme_auth/tokens.py"
    target.write_text("# edited since the dictionary was built\n" + target.read_text())
    located = DefinitionLocator(dictionary).locate(chunk.meta, chunk.content)
    assert located.how == "content"  # the file's hash no longer matches: its lines are not the dictionary's
    assert set(located.names) <= {e.name for e in dictionary.symbols if e.file_path.endswith("tokens.py")}
    assert located.names


def test_the_content_fallback_reads_definitions_in_several_languages(dictionary: AliasDictionary) -> None:
    locator = DefinitionLocator(dictionary, read_files=False)
    text = (
        "export async function withStripeBackoff<T>(call: () => Promise<T>) {\n  return call()\n}\n"
        "func PostJournal(entry Entry) error {\n"
        "    const x = withStripeBackoff(y)\n"
    )
    located = locator.locate({}, text)
    assert located.how == "content"
    assert located.names == ["withStripeBackoff", "PostJournal"]  # a call of a name is not its definition
    assert locator.locate({"file_path": "unknown.txt"}, "plain words, no code").how is None


# ---- the rewriter with stock chunks --------------------------------------------------------------------------------
def test_the_rewriter_takes_retrieved_hints_from_stock_chunks(acme_repo: Path, dictionary: AliasDictionary) -> None:
    chunks = stock_chunks(acme_repo, full_path=True)
    first = [c for c in chunks if c.meta["file_path"].endswith("retry.ts")] + chunks[:3]
    rewriter = ConstrainedQueryRewriter.from_dictionary(dictionary)
    out = rewriter.run(question="how are failed calls attempted again?", retrieved_documents=first)
    report = out["meta"]["retrieved"]
    assert report["documents"] == len(first) and report["mapped"] >= 1 and report["by"].get("offsets", 0) >= 1
    retrieved = [h["name"] for h in out["hints"] if any(r.startswith("retrieved") for r in h["reasons"])]
    assert "withStripeBackoff" in retrieved
    before = rewriter.run(question="how are failed calls attempted again?")
    assert "retrieved" not in before["meta"] and not any(
        any(r.startswith("retrieved") for r in h["reasons"]) for h in before["hints"]
    )


def test_unmappable_documents_are_reported_once(dictionary: AliasDictionary, caplog: pytest.LogCaptureFixture) -> None:
    rewriter = ConstrainedQueryRewriter.from_dictionary(dictionary)
    documents = [Document(content="an answer from the wiki", meta={"url": "https://wiki/page"})]
    with caplog.at_level(logging.WARNING):
        first = rewriter.run(question="retry helper", retrieved_documents=documents)
        rewriter.run(question="retry helper", retrieved_documents=documents)
    assert first["meta"]["retrieved"]["mapped"] == 0
    assert "file_path_field" in first["meta"]["retrieved"]["warning"]
    assert sum("could be mapped" in r.getMessage() for r in caplog.records) == 1


def test_our_own_chunks_keep_their_symbol(dictionary: AliasDictionary) -> None:
    ours = [
        Document(content="x", meta={"symbol": "withStripeBackoff", "file_path": "x.ts", "chunker": 1}),
        Document(content="def PostJournal(): pass", meta={"symbol": None, "chunker": 1}),  # a module remainder
    ]
    names, report = ConstrainedQueryRewriter.from_dictionary(dictionary).retrieved_names(ours)
    assert names == ["withStripeBackoff"] and report == {"documents": 2, "mapped": 1, "by": {"symbol": 1}}


def test_stock_queries_carry_the_identifiers_and_their_words() -> None:
    queries = stock_queries("payments retry helper?", "payments retry helper? | w", ["withStripeBackoff"], ["@acme/x"])
    assert queries["lexical_query"].startswith("payments retry helper? withStripeBackoff with stripe backoff")
    assert "@acme/x" in queries["lexical_query"]
    assert queries["embedding_query"] == "payments retry helper? | w"


# ---- cards from any embedder --------------------------------------------------------------------------------------
def test_the_builder_embeds_cards_with_the_given_embedder_and_records_it(acme_repo: Path, tmp_path: Path) -> None:
    embedder = WordDocumentEmbedder()
    builder = AliasDictionaryBuilder(index_dir=str(tmp_path / "idx"), embedder=embedder)
    out = builder.run(root=str(acme_repo))
    assert out["cards"]["cards"] > 10 and out["cards"]["embedded"] == out["cards"]["cards"]
    cards = load_cards(tmp_path / "idx", out["dictionary"].version)
    assert isinstance(cards, SymbolCards) and cards.embedder == embedder_identity(embedder)
    assert cards.embedder is not None and cards.embedder["model"] == "words-64"
    again = builder.run(root=str(acme_repo))
    assert again["cards"]["embedded"] == 0  # unchanged cards are not embedded again
    other = AliasDictionaryBuilder(index_dir=str(tmp_path / "idx"), embedder=WordDocumentEmbedder("other-model"))
    assert other.run(root=str(acme_repo))["cards"]["embedded"] == out["cards"]["cards"]  # another model: all anew


def test_cards_beside_a_named_dictionary_file_and_a_text_embedder(acme_repo: Path, tmp_path: Path) -> None:
    path = tmp_path / "dicts" / "acme.json"
    out = AliasDictionaryBuilder(dictionary_path=str(path), embedder=WordTextEmbedder()).run(root=str(acme_repo))
    assert Path(out["cards"]["file"]).name.startswith("acme.cards-")
    rewriter = ConstrainedQueryRewriter(dictionary_path=str(path), text_embedder=WordTextEmbedder())
    result = rewriter.run(question="stripe backoff helper")
    assert result["meta"]["semantic"] == {"used": True, "source": "text_embedder", "cards": out["cards"]["cards"]}
    semantic = [h["name"] for h in result["hints"] if any(r.startswith("semantic") for r in h["reasons"])]
    assert "withStripeBackoff" in semantic


def test_another_models_embedder_or_vector_is_refused(acme_repo: Path, tmp_path: Path) -> None:
    AliasDictionaryBuilder(index_dir=str(tmp_path / "idx"), embedder=WordDocumentEmbedder()).run(root=str(acme_repo))
    wrong = ConstrainedQueryRewriter(index_dir=str(tmp_path / "idx"), text_embedder=WordTextEmbedder("other-model"))
    with pytest.raises(EmbedderMismatchError, match=r"words-64.*other-model"):
        wrong.run(question="retry helper")
    right = ConstrainedQueryRewriter(index_dir=str(tmp_path / "idx"))
    with pytest.raises(CardsError, match="384 dimensions but the symbol cards have 64"):
        right.run(question="retry helper", question_vector=[0.1] * 384)
    assert right.run(question="retry helper", question_vector=_vector("retry helper"))["meta"]["semantic"]["used"]


def test_a_vector_without_cards_is_said_not_ignored_silently(
    acme_repo: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    AliasDictionaryBuilder(index_dir=str(tmp_path / "idx")).run(root=str(acme_repo))
    with caplog.at_level(logging.WARNING):
        out = ConstrainedQueryRewriter(index_dir=str(tmp_path / "idx")).run(question="x y", question_vector=[0.5] * 8)
    assert out["meta"]["semantic"] == {"used": False, "reason": "no symbol cards"}
    assert any("AliasDictionaryBuilder(embedder=...)" in r.getMessage() for r in caplog.records)


def test_builder_and_rewriter_with_embedders_round_trip(tmp_path: Path) -> None:
    from haystack_integrations.components.embedders.sentence_transformers import (
        SentenceTransformersDocumentEmbedder,
        SentenceTransformersTextEmbedder,
    )

    builder = AliasDictionaryBuilder(index_dir=str(tmp_path), embedder=SentenceTransformersDocumentEmbedder(model="m"))
    again = AliasDictionaryBuilder.from_dict(builder.to_dict())
    assert isinstance(again.embedder, SentenceTransformersDocumentEmbedder) and again.embedder.model == "m"
    rewriter = ConstrainedQueryRewriter(
        index_dir=str(tmp_path), text_embedder=SentenceTransformersTextEmbedder(model="m"), file_path_field="source"
    )
    copy = ConstrainedQueryRewriter.from_dict(rewriter.to_dict())
    assert isinstance(copy.text_embedder, SentenceTransformersTextEmbedder) and copy.file_path_field == "source"
    assert copy.to_dict() == rewriter.to_dict()


# ---- where the dictionary goes, and the error when it is missing ----------------------------------------------------
def test_the_builder_saves_into_the_trees_own_folder_and_the_rewriter_finds_it(
    acme_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CODE_ALIAS_INDEX_DIR", raising=False)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    out = AliasDictionaryBuilder().run(root=str(acme_repo))
    assert Path(out["stats"]["path"]) == (acme_repo / ".code-alias" / "dictionary.json").resolve()
    assert not (elsewhere / ".code-alias").exists()
    monkeypatch.chdir(acme_repo / "services" / "auth")  # below the tree: found as git finds its repository
    assert ConstrainedQueryRewriter().run(question="withStripeBackoff")["symbols"] == ["withStripeBackoff"]


def test_a_missing_dictionary_says_how_to_build_one(tmp_path: Path) -> None:
    with pytest.raises(Exception, match=r"AliasDictionaryBuilder\(index_dir=.*code-alias index PATH"):
        ConstrainedQueryRewriter(index_dir=str(tmp_path / "none")).run(question="anything")
