"""code-alias-haystack: constrained query rewriting and hybrid retrieval for code search, as Haystack components.

Imports are lazy so that light entry points (autocomplete, `code-alias dict`, BM25-only pipelines) do not load torch:
not even through `import haystack` (see `deferred_torch`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .deferred_torch import install as _defer_torch

_defer_torch()  # `import haystack` stops importing torch; a model's first use imports it (deferred_torch.py)

_EXPORTS = {
    "AliasDictionaryBuilder": "dictionary_builder",
    "ConstrainedQueryRewriter": "rewriter",
    "SymbolFaithfulnessFilter": "faithfulness",
    "CodeFileReader": "reader",
    "CodeSplitter": "splitter",
    "QueryComposer": "composer",
    "CodeBM25Retriever": "bm25",
    "SymbolDefinitionRetriever": "definitions",
    "CodeEmbeddingRetriever": "embedding_retriever",
    "CodeDocumentEmbedder": "embedders",
    "CodeTextEmbedder": "embedders",
    "CodeIndexDocumentStore": "store",
    "DocumentStorePersister": "store",
    "FileRanker": "results",
    "RankFusion": "fusion",
    "IndexSyncPlanner": "sync",
    "IndexSyncWriter": "sync",
    "AliasDictionary": "core.model",
    "HintIndex": "core.hints",
}

__all__ = [
    "AliasDictionary",
    "AliasDictionaryBuilder",
    "CodeBM25Retriever",
    "CodeDocumentEmbedder",
    "CodeEmbeddingRetriever",
    "CodeFileReader",
    "CodeIndexDocumentStore",
    "CodeSplitter",
    "CodeTextEmbedder",
    "ConstrainedQueryRewriter",
    "DocumentStorePersister",
    "FileRanker",
    "HintIndex",
    "IndexSyncPlanner",
    "IndexSyncWriter",
    "QueryComposer",
    "RankFusion",
    "SymbolDefinitionRetriever",
    "SymbolFaithfulnessFilter",
]

if TYPE_CHECKING:
    from .bm25 import CodeBM25Retriever
    from .composer import QueryComposer
    from .core.hints import HintIndex
    from .core.model import AliasDictionary
    from .definitions import SymbolDefinitionRetriever
    from .dictionary_builder import AliasDictionaryBuilder
    from .embedders import CodeDocumentEmbedder, CodeTextEmbedder
    from .embedding_retriever import CodeEmbeddingRetriever
    from .faithfulness import SymbolFaithfulnessFilter
    from .fusion import RankFusion
    from .reader import CodeFileReader
    from .results import FileRanker
    from .rewriter import ConstrainedQueryRewriter
    from .splitter import CodeSplitter
    from .store import CodeIndexDocumentStore, DocumentStorePersister
    from .sync import IndexSyncPlanner, IndexSyncWriter


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
