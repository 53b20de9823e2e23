"""Index settings and mappings made for code.

The `code_identifier` analyzer mirrors `core.identifiers.code_tokenize` (the embedded BM25's notion of words):
every identifier is indexed whole (lower-cased) and split into its words at case changes, digits,
underscores, dots, dashes and slashes, and the split words drop `STOP_WORDS`. So `withStripeBackoff` is
indexed as `withstripebackoff`, `stripe`, `backoff`; `MAX_RETRY_COUNT` as `max_retry_count`, `maxretrycount`,
`max`, `retry`, `count`; `parseHTTPResponse` as `parsehttpresponse`, `parse`, `http`, `response`.

Lucene's word_delimiter_graph never splits an upper->lower transition (`HTTPResponse` stays one word), so a
char filter first marks the acronym boundary (`HTTP_Response`); the delimiter filter then splits there.
The filter produces a token graph (the original and the catenated word sit over the parts), which indexing
cannot store, hence `flatten_graph` after it, as the Elasticsearch reference prescribes.

Known differences from `code_tokenize`: one-character tokens are dropped, digits included (the embedded
tokenizer keeps single digits), and a snake_case identifier is indexed with its underscores as well as
catenated.

Haystack's Elasticsearch store flattens `Document.meta` into the top level of the indexed document, so the
chunk fields (`meta.symbol`, `meta.file_path`, ...) are top-level fields here; Haystack filters on
`meta.file_path` address the keyword field `file_path`.
"""

from __future__ import annotations

import copy
from typing import Any, Literal

from ..core.identifiers import STOP_WORDS

__all__ = [
    "ANALYZER",
    "DEFAULT_EMBEDDING_DIM",
    "MAPPING_VERSION",
    "PATH_ANALYZER",
    "SPLIT_FIELDS",
    "code_index_mappings",
    "code_index_settings",
    "mapping_embedding_dim",
    "mapping_problems",
]

MAPPING_VERSION = 1
DEFAULT_EMBEDDING_DIM = 384  # all-MiniLM-L6-v2
ANALYZER = "code_identifier"
PATH_ANALYZER = "code_path"

# Keyword fields of a chunk that also get an analysed `.split` sub-field (identifier words).
SPLIT_FIELDS: tuple[str, ...] = ("symbol", "qualified_name", "package", "file_path")

Similarity = Literal["cosine", "dot_product", "l2_norm", "max_inner_product"]


def code_index_settings(*, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """
    The index settings: the `code_identifier` and `code_path` analyzers.

    :param extra: More index settings (shards, replicas, refresh_interval...), merged over the defaults.
    :returns: The `settings` body for `indices.create`.
    """
    settings: dict[str, Any] = {
        "analysis": {
            "char_filter": {
                # HTTPResponse -> HTTP_Response, so the delimiter filter can split the acronym off.
                "code_acronym_boundary": {
                    "type": "pattern_replace",
                    "pattern": r"(\p{Lu})(\p{Lu}\p{Ll})",
                    "replacement": "$1_$2",
                }
            },
            "tokenizer": {
                # Identifier characters stay together; `_` and `$` belong to identifiers, like in code_tokenize.
                "code_identifier_tokenizer": {"type": "pattern", "pattern": r"[^\p{L}\p{N}_$]+"}
            },
            "filter": {
                "code_word_parts": {
                    "type": "word_delimiter_graph",
                    "generate_word_parts": True,
                    "generate_number_parts": True,
                    "split_on_case_change": True,
                    "split_on_numerics": True,
                    "preserve_original": True,
                    "catenate_words": True,
                    "stem_english_possessive": False,
                    # The char filter changes token lengths; keep the filter from re-deriving offsets.
                    "adjust_offsets": False,
                },
                "code_stop_words": {"type": "stop", "stopwords": sorted(STOP_WORDS), "ignore_case": True},
                "code_min_length": {"type": "length", "min": 2},
            },
            "analyzer": {
                ANALYZER: {
                    "type": "custom",
                    "char_filter": ["code_acronym_boundary"],
                    "tokenizer": "code_identifier_tokenizer",
                    "filter": [
                        "code_word_parts",
                        "flatten_graph",
                        "lowercase",
                        "code_stop_words",
                        "code_min_length",
                        "remove_duplicates",
                    ],
                },
                # pkg/pay/retry.py -> pkg, pkg/pay, pkg/pay/retry.py: a term query on it is a directory prefix.
                PATH_ANALYZER: {"type": "custom", "tokenizer": "path_hierarchy"},
            },
        }
    }
    if extra:
        settings = _deep_merge(settings, extra)
    return settings


def code_index_mappings(
    *, embedding_dim: int = DEFAULT_EMBEDDING_DIM, similarity: Similarity = "cosine"
) -> dict[str, Any]:
    """
    The index mappings for chunk Documents.

    :param embedding_dim: Size of the embedding vectors (384 for all-MiniLM-L6-v2).
    :param similarity: Vector similarity for kNN; cosine suits MiniLM.
    :returns: The `mappings` body for `indices.create`.
    """
    if embedding_dim <= 0:
        raise ValueError(f"embedding_dim must be > 0, got {embedding_dim}")

    def keyword_with_split(*extra_fields: tuple[str, dict[str, Any]]) -> dict[str, Any]:
        fields: dict[str, Any] = {"split": {"type": "text", "analyzer": ANALYZER}}
        fields.update(dict(extra_fields))
        return {"type": "keyword", "ignore_above": 1024, "fields": fields}

    return {
        "_meta": {"code_alias": {"mapping_version": MAPPING_VERSION, "embedding_dim": embedding_dim}},
        "properties": {
            "id": {"type": "keyword"},
            "content": {"type": "text", "analyzer": ANALYZER},
            "embedding": {"type": "dense_vector", "dims": embedding_dim, "index": True, "similarity": similarity},
            "symbol": keyword_with_split(),
            "qualified_name": keyword_with_split(),
            "package": keyword_with_split(),
            "file_path": keyword_with_split(
                ("tree", {"type": "text", "analyzer": PATH_ANALYZER, "search_analyzer": "keyword"})
            ),
            "language": {"type": "keyword"},
            "kind": {"type": "keyword"},
            "repo": {"type": "keyword"},  # the repository of the chunk, in an index of several
            "file_sha256": {"type": "keyword"},
            "file_chunk_count": {"type": "integer"},
            "chunker": {"type": "integer"},  # the chunker version (an index sync re-splits older chunks)
            "start_line": {"type": "integer"},
            "end_line": {"type": "integer"},
        },
        # Any other string metadata stays filterable by exact value, as in the integration's default mapping.
        "dynamic_templates": [
            {"strings": {"path_match": "*", "match_mapping_type": "string", "mapping": {"type": "keyword"}}}
        ],
    }


def mapping_problems(existing: dict[str, Any], *, embedding_dim: int) -> list[str]:
    """
    What makes an existing index's mapping unusable by this package (empty when it is fine).

    Checks the fields whose type or analyzer decides retrieval: `content` analysed by `code_identifier`, the
    keyword fields with their `.split` sub-fields, and `embedding` as a dense_vector (its size is checked
    separately, see `mapping_embedding_dim`).

    :param existing: The index's mapping as `indices.get_mapping` returns it for one index (with "properties").
    :param embedding_dim: The embedder's vector size.
    """
    properties = existing.get("properties", {})
    problems: list[str] = []
    content = properties.get("content", {})
    if content.get("analyzer") != ANALYZER:
        problems.append(
            f"field 'content' is analyzed by '{content.get('analyzer', 'standard')}', expected '{ANALYZER}'"
        )
    for name in SPLIT_FIELDS:
        field = properties.get(name)
        if field is None:
            continue  # not written yet; created on the first write only if the index was made elsewhere
        if field.get("type") != "keyword" or "split" not in field.get("fields", {}):
            problems.append(f"field '{name}' is not a keyword with a '{name}.split' sub-field")
    embedding = properties.get("embedding")
    if embedding is not None and embedding.get("type") != "dense_vector":
        problems.append(f"field 'embedding' is of type '{embedding.get('type')}', expected 'dense_vector'")
    del embedding_dim  # the size is reported as a dimension mismatch, not a mapping conflict
    return problems


def mapping_embedding_dim(existing: dict[str, Any]) -> int | None:
    """The `dims` of an existing index's embedding field, or None when not (yet) fixed."""
    dims = existing.get("properties", {}).get("embedding", {}).get("dims")
    return int(dims) if dims is not None else None


def _deep_merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    merged = copy.deepcopy(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged
