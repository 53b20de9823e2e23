"""code-alias-haystack: constrained query rewriting and hybrid retrieval for code search, as Haystack components.

The modules live in folders named after the pipeline's stages: `indexing/` (reading, splitting, the dictionary,
the index files and stores), `rewriting/` (the hint lookup, the rewriter, the faithfulness filter, the composer),
`retrieval/` (the retrievers and embedders), `ranking/` (the fitted ranking stage: candidates, features, the model,
the answer) and `evaluation/` (the benchmark harness); `app/` is the application on top of them (`CodeSearch`, the
requests, the answer, re-indexing on demand), `serving/` its transports (the server, Hayhooks wrappers, the
webhook); `core/` holds what several stages share and `elasticsearch/` the backend. See docs/architecture.md.
Old module paths keep working (`_legacy.py`).

Imports are lazy so that light entry points (autocomplete, `code-alias dict`, BM25-only pipelines) do not load torch:
not even through `import haystack` (see `deferred_torch`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._legacy import install as _legacy_paths
from .deferred_torch import install as _defer_torch

_defer_torch()  # `import haystack` stops importing torch; a model's first use imports it (deferred_torch.py)
_legacy_paths()  # old module paths (`code_alias.bm25`, ...) import the moved modules (_legacy.py)

_EXPORTS = {
    "AliasDictionaryBuilder": "indexing.dictionary_builder",
    "ConstrainedQueryRewriter": "rewriting.rewriter",
    "SymbolFaithfulnessFilter": "rewriting.faithfulness",
    "CodeFileReader": "indexing.reader",
    "CodeSplitter": "indexing.splitter",
    "QueryComposer": "rewriting.composer",
    "CodeBM25Retriever": "retrieval.bm25",
    "SymbolDefinitionRetriever": "retrieval.definitions",
    "CodeEmbeddingRetriever": "retrieval.embedding_retriever",
    "CodeDocumentEmbedder": "retrieval.embedders",
    "CodeTextEmbedder": "retrieval.embedders",
    "CodeIndex": "indexing.code_index",
    "CodeIndexDocumentStore": "indexing.store",
    "CodeSearch": "app.search",
    "DocumentStorePersister": "indexing.store",
    "CodeRanker": "ranking.ranker",
    "IndexSyncPlanner": "indexing.sync",
    "IndexSyncWriter": "indexing.sync",
    "AliasDictionary": "core.model",
    "HintIndex": "rewriting.hints",
    "CodeAliasError": "errors",
}

__all__ = [
    "AliasDictionary",
    "AliasDictionaryBuilder",
    "CodeAliasError",
    "CodeBM25Retriever",
    "CodeDocumentEmbedder",
    "CodeEmbeddingRetriever",
    "CodeFileReader",
    "CodeIndex",
    "CodeIndexDocumentStore",
    "CodeRanker",
    "CodeSearch",
    "CodeSplitter",
    "CodeTextEmbedder",
    "ConstrainedQueryRewriter",
    "DocumentStorePersister",
    "HintIndex",
    "IndexSyncPlanner",
    "IndexSyncWriter",
    "QueryComposer",
    "SymbolDefinitionRetriever",
    "SymbolFaithfulnessFilter",
]

if TYPE_CHECKING:
    from .app.search import CodeSearch
    from .core.model import AliasDictionary
    from .errors import CodeAliasError
    from .indexing.code_index import CodeIndex
    from .indexing.dictionary_builder import AliasDictionaryBuilder
    from .indexing.reader import CodeFileReader
    from .indexing.splitter import CodeSplitter
    from .indexing.store import CodeIndexDocumentStore, DocumentStorePersister
    from .indexing.sync import IndexSyncPlanner, IndexSyncWriter
    from .ranking.ranker import CodeRanker
    from .retrieval.bm25 import CodeBM25Retriever
    from .retrieval.definitions import SymbolDefinitionRetriever
    from .retrieval.embedders import CodeDocumentEmbedder, CodeTextEmbedder
    from .retrieval.embedding_retriever import CodeEmbeddingRetriever
    from .rewriting.composer import QueryComposer
    from .rewriting.faithfulness import SymbolFaithfulnessFilter
    from .rewriting.hints import HintIndex
    from .rewriting.rewriter import ConstrainedQueryRewriter


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
