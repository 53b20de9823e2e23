"""The BM25 query for code: the question's words over content and the identifier fields, plus boosted exact matches.

Every clause names its `fields` explicitly: nothing relies on `index.query.default_field` (a `multi_match`
without `fields` searches whatever that setting says, which differs between clusters and test servers).

Scoring mirrors the embedded `CodeBM25Retriever`: the question (already expanded by the query composer)
is matched over the code and the chunk's path, qualified name, symbol and package; each of the rewrite's
`symbols[]` and `packages[]` adds a sub-query weighted by `symbol_boost` / `package_boost`, and an exact
keyword hit on the chunk's own `symbol`, `qualified_name` or `package` weighs most.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from haystack.errors import FilterError
from haystack_integrations.document_stores.elasticsearch.filters import _normalize_filters, _parse_comparison_condition

from ..core.identifiers import split_identifier, unique

__all__ = ["QueryWeights", "build_bm25_body", "build_bm25_query", "convert_filters", "identifier_terms"]

# The question's words: code first, then the chunk's identifying fields.
TEXT_FIELDS: tuple[str, ...] = (
    "content",
    "symbol.split^2",
    "qualified_name.split",
    "file_path.split",
    "package.split^0.5",
)


@dataclass(frozen=True)
class QueryWeights:
    """
    Boosts of the BM25 query's parts.

    :param symbol_boost: Weight of a rewrite symbol's words (same meaning as `CodeBM25Retriever.symbol_boost`).
    :param package_boost: Weight of a rewrite package's words.
    :param exact_symbol_boost: Weight of an exact keyword hit on the chunk's `symbol` or `qualified_name`.
    :param exact_package_boost: Weight of an exact keyword hit on the chunk's `package`.
    :param mention_boost: Weight of the whole identifier appearing in the code (a caller or an import).
    """

    symbol_boost: float = 2.0
    package_boost: float = 0.5
    exact_symbol_boost: float = 10.0
    exact_package_boost: float = 2.0
    mention_boost: float = 1.0


def identifier_terms(name: str) -> list[str]:
    """
    The index terms under which `code_identifier` stores an identifier whole.

    `withStripeBackoff` -> ["withstripebackoff"]; `MAX_RETRY_COUNT` -> ["max_retry_count", "maxretrycount"].
    Used for exact `term` clauses on `content`, which bypass analysis.
    """
    whole = name.strip().lower()
    joined = "".join(split_identifier(name))
    return unique(t for t in (whole, joined) if t)


def convert_filters(filters: dict[str, Any] | None) -> dict[str, Any] | None:
    """
    Haystack filters -> an Elasticsearch filter clause.

    Standard Haystack filter syntax goes through the integration's own `_normalize_filters` (so `meta.x`
    addresses the flattened field `x`). One extension, Elasticsearch only: `{"field": "meta.file_path",
    "operator": "prefix", "value": "pkg/payments/"}` restricts to paths that start with the value (any
    keyword field works).

    :param filters: Haystack filters, or None.
    :returns: An Elasticsearch query clause, or None when there is nothing to filter.
    """
    if not filters:
        return None
    if not _has_prefix(filters):
        return _normalize_filters(filters)
    return _convert(filters)


def _has_prefix(condition: dict[str, Any]) -> bool:
    if "conditions" in condition:
        return any(_has_prefix(c) for c in condition["conditions"])
    return condition.get("operator") == "prefix"


def _convert(condition: dict[str, Any]) -> dict[str, Any]:
    if "field" in condition:
        if condition.get("operator") == "prefix":
            field = condition["field"].removeprefix("meta.")
            value = condition.get("value")
            if not isinstance(value, str):
                raise FilterError(f"'prefix' needs a string value, got {value!r}")
            return {"prefix": {field: value}}
        return _parse_comparison_condition(condition)
    operator = condition.get("operator")
    if "conditions" not in condition or operator not in ("AND", "OR", "NOT"):
        raise FilterError(f"invalid logical condition: {condition}")
    clauses = [_convert(c) for c in condition["conditions"]]
    if operator == "AND":
        return {"bool": {"must": clauses}}
    if operator == "OR":
        return {"bool": {"should": clauses, "minimum_should_match": 1}}
    return {"bool": {"must_not": [{"bool": {"must": clauses}}]}}


def build_bm25_query(
    query: str,
    *,
    symbols: list[str] | None = None,
    packages: list[str] | None = None,
    filters: dict[str, Any] | None = None,
    weights: QueryWeights | None = None,
    fuzziness: str | None = None,
) -> dict[str, Any]:
    """
    The `query` clause of the BM25 search.

    A `bool` whose `should` clauses score (at least one must match) and whose `filter` restricts:

    - the question over `TEXT_FIELDS` (`most_fields`: a chunk matching in its code and its symbol name
      scores both);
    - per symbol: its words over the same fields (x `symbol_boost`), an exact keyword hit on `symbol` /
      `qualified_name` (x `exact_symbol_boost`), the whole identifier in the code (x `mention_boost`);
    - per package: its words over `package.split` and `file_path.split` (x `package_boost`), an exact hit on
      `package` (x `exact_package_boost`).

    :param query: The BM25 text (the question plus the composer's expansions); may be empty when symbols or
        packages are given.
    :param symbols: The rewrite's identifiers.
    :param packages: The rewrite's package names.
    :param filters: Haystack filters (see `convert_filters`).
    :param weights: Boosts; the defaults mirror the embedded retriever.
    :param fuzziness: Elasticsearch fuzziness for the question's words (None: exact terms, right for code).
    :raises ValueError: When there is nothing to search for.
    """
    weights = weights or QueryWeights()
    symbols = unique(s.strip() for s in symbols or [] if s and s.strip())
    packages = unique(p.strip() for p in packages or [] if p and p.strip())
    should: list[dict[str, Any]] = []
    if query and query.strip():
        text: dict[str, Any] = {"query": query, "fields": list(TEXT_FIELDS), "type": "most_fields", "operator": "or"}
        if fuzziness:
            text["fuzziness"] = fuzziness
        should.append({"multi_match": text})
    for symbol in symbols:
        if weights.symbol_boost:
            should.append(
                {
                    "multi_match": {
                        "query": symbol,
                        "fields": list(TEXT_FIELDS),
                        "type": "most_fields",
                        "boost": weights.symbol_boost,
                    }
                }
            )
        if weights.exact_symbol_boost:
            short = symbol.rsplit(".", 1)[-1]
            exact = [{"term": {"symbol": {"value": short}}}, {"term": {"qualified_name": {"value": symbol}}}]
            should.append({"dis_max": {"queries": exact, "boost": weights.exact_symbol_boost}})
        if weights.mention_boost:
            mentions = [{"term": {"content": {"value": term}}} for term in identifier_terms(symbol.rsplit(".", 1)[-1])]
            should.append({"dis_max": {"queries": mentions, "boost": weights.mention_boost}})
    for package in packages:
        if weights.package_boost:
            should.append(
                {
                    "multi_match": {
                        "query": package,
                        "fields": ["package.split", "file_path.split"],
                        "type": "most_fields",
                        "boost": weights.package_boost,
                    }
                }
            )
        if weights.exact_package_boost:
            should.append({"term": {"package": {"value": package, "boost": weights.exact_package_boost}}})
    if not should:
        raise ValueError("BM25 query needs a non-empty query, symbols or packages")
    boolean: dict[str, Any] = {"should": should, "minimum_should_match": 1}
    clause = convert_filters(filters)
    if clause is not None:
        boolean["filter"] = [clause]
    return {"bool": boolean}


def build_bm25_body(
    query: str,
    *,
    top_k: int,
    symbols: list[str] | None = None,
    packages: list[str] | None = None,
    filters: dict[str, Any] | None = None,
    weights: QueryWeights | None = None,
    fuzziness: str | None = None,
    return_embedding: bool = False,
) -> dict[str, Any]:
    """
    The whole search body (`size`, `query`, `_source`) for `Elasticsearch.search(**body)`.

    :param top_k: How many hits.
    :param return_embedding: Ship each hit's vector back (off: 384 floats per hit that BM25 callers never use).
    See `build_bm25_query` for the other parameters.
    """
    if top_k <= 0:
        raise ValueError(f"top_k must be > 0, got {top_k}")
    body: dict[str, Any] = {
        "size": top_k,
        "query": build_bm25_query(
            query, symbols=symbols, packages=packages, filters=filters, weights=weights, fuzziness=fuzziness
        ),
    }
    if not return_embedding:
        body["source_excludes"] = ["embedding"]
    return body
