"""Elasticsearch backend: a code-aware index mapping, identifier-aware BM25, kNN, and clear errors.

Needs the `elasticsearch` extra (`pip install "code-alias-haystack[elasticsearch]"`). Nothing here connects
when constructed; the first search or write does, so pipelines load and serialise without a server.
"""

from .errors import CodeAliasBackendError, translate_errors
from .finalizer import ElasticsearchIndexFinalizer
from .mapping import code_index_mappings, code_index_settings
from .query import QueryWeights, build_bm25_body, build_bm25_query, convert_filters
from .retriever import CodeElasticsearchBM25Retriever, CodeElasticsearchEmbeddingRetriever
from .store import CodeElasticsearchDocumentStore

__all__ = [
    "CodeAliasBackendError",
    "CodeElasticsearchBM25Retriever",
    "CodeElasticsearchDocumentStore",
    "CodeElasticsearchEmbeddingRetriever",
    "ElasticsearchIndexFinalizer",
    "QueryWeights",
    "build_bm25_body",
    "build_bm25_query",
    "code_index_mappings",
    "code_index_settings",
    "convert_filters",
    "translate_errors",
]
