"""The vector search leaves out one-line definition chunks (copies of a line of their parent's chunk)."""

from __future__ import annotations

from pathlib import Path

import pytest
from haystack import Document

from haystack_integrations.components.code_alias.core.chunking import chunk_file
from haystack_integrations.components.code_alias.core.symbols import extract_symbols
from haystack_integrations.components.code_alias.indexing.store import CodeIndexDocumentStore
from haystack_integrations.components.code_alias.retrieval.embedding_retriever import (
    CodeEmbeddingRetriever,
    searched_by_vector,
)

DECLARATIONS = """\
export interface Options {
  /** Attach a hook that is invoked after a vnode has rendered. */
  diffed?(vnode: VNode): void;
  unmount?(vnode: VNode): void;
}

export type Ref<T> = (instance: T | null) => void;

export function setProperty(dom: Element, name: string, value: unknown): void {
  if (value == null) {
    dom.removeAttribute(name);
  } else {
    dom.setAttribute(name, String(value));
  }
}
"""


def _store(tmp_path: Path, documents: list[Document]) -> CodeIndexDocumentStore:
    store = CodeIndexDocumentStore(index_dir=str(tmp_path))
    store.write_documents(documents)
    return store


def test_a_one_line_definition_repeats_a_line_of_another_chunk() -> None:
    """The premise of the rule: what the vector search leaves out is still in a chunk it searches."""
    symbols = extract_symbols(DECLARATIONS, "typescript", "src/index.d.ts")
    chunks = chunk_file(DECLARATIONS, symbols)
    one_line = [c for c in chunks if c.kind != "module" and "\n" not in c.content.strip()]
    assert {c.symbol for c in one_line} >= {"diffed", "unmount", "Ref"}
    longer = [c for c in chunks if c not in one_line]
    for chunk in one_line:
        assert any(chunk.content.strip() in other.content for other in longer), chunk.qualified_name


def test_one_line_definitions_are_not_searched_by_vector(tmp_path: Path) -> None:
    symbols = extract_symbols(DECLARATIONS, "typescript", "src/index.d.ts")
    documents = [
        Document(
            content=chunk.content,
            meta={"file_path": "src/index.d.ts", "kind": chunk.kind, "qualified_name": chunk.qualified_name},
            embedding=[1.0, float(i)],
        )
        for i, chunk in enumerate(chunk_file(DECLARATIONS, symbols))
    ]
    store = _store(tmp_path, documents)
    found = CodeEmbeddingRetriever(document_store=store, top_k=50).run(query_embedding=[1.0, 0.0])["documents"]
    names = {d.meta["qualified_name"] for d in found}
    assert names and not any(str(n).endswith((".diffed", ".unmount", ".Ref")) for n in names)
    assert any(str(n).endswith(".setProperty") for n in names)
    assert any(str(n).endswith(".Options") for n in names)  # the parent that holds the members' lines
    everything = CodeEmbeddingRetriever(document_store=store, top_k=50, min_definition_lines=1)
    assert len(everything.run(query_embedding=[1.0, 0.0])["documents"]) == len(documents)


def test_module_chunks_and_chunks_without_a_kind_are_always_searched() -> None:
    vector = [1.0, 0.0]
    assert searched_by_vector(Document(content="export * from './a'", meta={"kind": "module"}, embedding=vector))
    assert searched_by_vector(Document(content="a", meta={}, embedding=vector))
    assert not searched_by_vector(Document(content="diffed?(): void;", meta={"kind": "method"}, embedding=vector))
    assert searched_by_vector(Document(content="def f():\n    pass\n", meta={"kind": "function"}, embedding=vector))
    assert not searched_by_vector(Document(content="def f():\n    pass", meta={"kind": "function"}))  # no vector


def test_two_settings_on_one_store_keep_their_own_matrix(tmp_path: Path) -> None:
    store = _store(
        tmp_path,
        [
            Document(content="x: int;", meta={"file_path": "a.ts", "kind": "type"}, embedding=[1.0, 0.0]),
            Document(content="f() {\n}", meta={"file_path": "b.ts", "kind": "function"}, embedding=[0.9, 0.1]),
        ],
    )
    strict = CodeEmbeddingRetriever(document_store=store, min_definition_lines=2)
    loose = CodeEmbeddingRetriever(document_store=store, min_definition_lines=1)
    assert [d.meta["file_path"] for d in strict.run(query_embedding=[1.0, 0.0])["documents"]] == ["b.ts"]
    assert [d.meta["file_path"] for d in loose.run(query_embedding=[1.0, 0.0])["documents"]] == ["a.ts", "b.ts"]
    assert [d.meta["file_path"] for d in strict.run(query_embedding=[1.0, 0.0])["documents"]] == ["b.ts"]


def test_the_setting_round_trips_and_is_checked(tmp_path: Path) -> None:
    store = CodeIndexDocumentStore(index_dir=str(tmp_path))
    retriever = CodeEmbeddingRetriever(document_store=store, top_k=5, min_definition_lines=3)
    again = CodeEmbeddingRetriever.from_dict(retriever.to_dict())
    assert again.min_definition_lines == 3 and again.top_k == 5
    with pytest.raises(ValueError, match="min_definition_lines"):
        CodeEmbeddingRetriever(document_store=store, min_definition_lines=0)
