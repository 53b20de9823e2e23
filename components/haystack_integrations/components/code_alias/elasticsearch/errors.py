"""Turn Elasticsearch client failures into one-line `CodeAliasBackendError` messages that say what to do.

The client's exceptions carry the HTTP metadata, the whole response body and a stack of transport errors;
a user who typed `code-alias ask --backend elasticsearch` needs one sentence: the server is down, the key
is wrong, the index was built with another mapping (and how to fix that), or the embedder and the index
disagree on the vector size.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import elastic_transport
import elasticsearch
from haystack.document_stores.errors import DocumentStoreError

from ..errors import CodeAliasError

__all__ = [
    "CodeAliasBackendError",
    "dimension_error_from_text",
    "dimension_mismatch_error",
    "mapping_conflict_error",
    "redact_hosts",
    "rejected_documents_error",
    "translate_errors",
    "translate_exception",
]

_DIMENSION_RES = (
    # write: "... has a different number of dimensions [768] than defined in the mapping [384]"
    re.compile(r"different number of dimensions \[(?P<got>\d+)\] than defined in the mapping \[(?P<want>\d+)\]"),
    # kNN query: "The query vector has a different number of dimensions [768] than the document vectors [384]"
    re.compile(
        r"query vector has a different number of dimensions \[(?P<got>\d+)\] than the document vectors"
        r" \[(?P<want>\d+)\]"
    ),
)
_MAPPING_CONFLICT_TYPES = frozenset(
    {
        "mapper_parsing_exception",
        "illegal_argument_exception",
        "document_parsing_exception",
        "strict_dynamic_mapping_exception",
    }
)
_MAPPING_CONFLICT_HINTS = (
    "cannot be changed from type",
    "mapper [",
    "failed to parse field",
    "conflicts with existing mapping",
)


class CodeAliasBackendError(DocumentStoreError, CodeAliasError):
    """
    A retrieval backend failed in a way the user can fix; the message is one line that says how.

    It subclasses Haystack's `DocumentStoreError`, so code that already handles document-store failures keeps
    working.
    """


def redact_hosts(hosts: Any) -> str:
    """
    The configured hosts as text, with any `user:password@` removed.

    :param hosts: What the store was given: a URL, a list of URLs or node dicts, or None.
    """
    if hosts is None:
        return "(no host configured)"
    items = hosts if isinstance(hosts, list | tuple) else [hosts]
    shown: list[str] = []
    for item in items:
        if isinstance(item, str):
            parts = urlsplit(item)
            if parts.username or parts.password:
                netloc = parts.hostname or ""
                if parts.port:
                    netloc += f":{parts.port}"
                item = urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
            shown.append(item)
        elif isinstance(item, dict):
            shown.append(f"{item.get('scheme', 'http')}://{item.get('host', '?')}:{item.get('port', '?')}")
        else:
            shown.append(str(item))
    return ", ".join(shown)


def dimension_mismatch_error(*, got: int, expected: int, index: str, where: str) -> CodeAliasBackendError:
    """
    The error for vectors of the wrong size.

    :param got: The size of the vectors the embedder produced.
    :param expected: The size the index stores.
    :param index: The index name.
    :param where: "document" (indexing) or "query".
    """
    return CodeAliasBackendError(
        f"Embedding dimension mismatch: the embedder produces {got}-dimensional {where} vectors but Elasticsearch "
        f"index '{index}' stores {expected}-dimensional ones; use the embedding model the index was built with, "
        f"or re-index into a new index (another index name, or delete '{index}' first)"
    )


def mapping_conflict_error(*, index: str, problems: list[str]) -> CodeAliasBackendError:
    """
    The error for an existing index whose mapping is not the one this package creates.

    :param index: The index name.
    :param problems: What differs, e.g. "field 'content' is analyzed by 'standard', expected 'code_identifier'".
    """
    detail = "; ".join(problems)
    return CodeAliasBackendError(
        f"Elasticsearch index '{index}' exists with an incompatible mapping ({detail}); delete it "
        f"(`curl -X DELETE <ELASTICSEARCH_URL>/{index}`) and index again "
        f"(`code-alias index PATH --backend elasticsearch`), or use another index name"
    )


def rejected_documents_error(*, index: str, count: int, reason: str) -> CodeAliasBackendError:
    """
    The error for documents whose fields contradict the index's mapping (a bulk write's per-item failures).

    :param index: The index name.
    :param count: How many documents were rejected.
    :param reason: The first rejection's reason.
    """
    return CodeAliasBackendError(
        f"Elasticsearch index '{index}' rejected {count} document(s) whose fields contradict its mapping "
        f"({_one_line(reason)}); if the index was built by another tool or version, delete it and index again, "
        f"or use another index name"
    )


def _reason(error: elasticsearch.ApiError) -> tuple[str, str]:
    """(type, reason) of an API error's body, digging into root_cause/caused_by when present."""
    body = error.body if isinstance(error.body, dict) else {}
    detail = body.get("error", body)
    if isinstance(detail, str):
        return "", detail
    if not isinstance(detail, dict):
        return "", str(error.message)
    kind = str(detail.get("type", ""))
    reason = str(detail.get("reason", "") or error.message)
    caused = detail.get("caused_by")
    if isinstance(caused, dict) and caused.get("reason"):
        reason = f"{reason}: {caused['reason']}" if caused["reason"] not in reason else reason
    return kind, reason


# Client failures worded by their class alone, tried in this order (a TLS error is a connection error too).
# `{where}`: the redacted hosts, `{index}`: the index, `{error}`: the client's message, first line.
_CLIENT_ERRORS: tuple[tuple[type[BaseException], str], ...] = (
    (
        elasticsearch.UnsupportedProductError,
        "The server at {where} is not Elasticsearch (the client rejected its product header); point "
        "ELASTICSEARCH_URL at an Elasticsearch 8.x node",
    ),
    (
        elastic_transport.TlsError,
        "TLS handshake with Elasticsearch at {where} failed ({error}); check the URL scheme "
        "(http vs https) and the CA certificate",
    ),
    (
        elastic_transport.ConnectionError,
        "Elasticsearch at {where} is unreachable ({error}); start it with "
        "`docker compose up -d elasticsearch` or set ELASTICSEARCH_URL to a running server",
    ),
    (
        elasticsearch.AuthenticationException,
        "Elasticsearch at {where} rejected the credentials (HTTP 401); set ELASTICSEARCH_API_KEY to a valid "
        "API key (base64 'id:key', or the key with ELASTICSEARCH_API_KEY_ID)",
    ),
    (
        elasticsearch.AuthorizationException,
        "Elasticsearch at {where} refused access to index '{index}' (HTTP 403); the API key needs the "
        "read, write and create_index privileges on it",
    ),
)


def dimension_error_from_text(text: str, *, index: str) -> CodeAliasBackendError | None:
    """
    The dimension-mismatch error described by a server message, or None when the message is about something else.

    :param text: An Elasticsearch error reason.
    :param index: The index name.
    """
    for pattern in _DIMENSION_RES:
        match = pattern.search(text)
        if match:
            where = "query" if "query vector" in match.group(0) else "document"
            return dimension_mismatch_error(
                got=int(match.group("got")), expected=int(match.group("want")), index=index, where=where
            )
    return None


def translate_exception(error: BaseException, *, hosts: Any, index: str) -> CodeAliasBackendError | None:
    """
    The one-line error for a client or store failure, or None when it is not one this module knows.

    :param error: What the Elasticsearch client or the document store raised.
    :param hosts: The hosts the store uses (credentials are not shown).
    :param index: The index name.
    """
    where = redact_hosts(hosts)
    if isinstance(error, CodeAliasBackendError):
        return error
    for error_type, message in _CLIENT_ERRORS:
        if isinstance(error, error_type):
            return CodeAliasBackendError(message.format(where=where, index=index, error=_first_line(error)))
    if isinstance(error, ValueError) and "api_key_id is provided but api_key is missing" in str(error):
        return CodeAliasBackendError(
            "ELASTICSEARCH_API_KEY_ID is set but ELASTICSEARCH_API_KEY is not; set both, or only the base64 API key"
        )
    if isinstance(error, elasticsearch.ApiError):
        kind, reason = _reason(error)
        dimension = dimension_error_from_text(reason, index=index)
        if dimension is not None:
            return dimension
        if kind == "resource_already_exists_exception":
            return None
        if kind in _MAPPING_CONFLICT_TYPES and any(hint in reason for hint in _MAPPING_CONFLICT_HINTS):
            return mapping_conflict_error(index=index, problems=[_one_line(reason)])
        if kind == "index_not_found_exception":
            return CodeAliasBackendError(
                f"Elasticsearch index '{index}' does not exist at {where}; build it with "
                f"`code-alias index PATH --backend elasticsearch`"
            )
        return CodeAliasBackendError(
            f"Elasticsearch at {where} answered HTTP {error.status_code} ({kind or 'error'}: {_one_line(reason)})"
        )
    if isinstance(error, DocumentStoreError):
        dimension = dimension_error_from_text(str(error), index=index)
        if dimension is not None:
            return dimension
    return None


@contextmanager
def translate_errors(*, hosts: Any, index: str) -> Iterator[None]:
    """
    Re-raise known Elasticsearch failures inside the block as `CodeAliasBackendError` (chained to the original).

    Usage::

        with translate_errors(hosts=store_hosts, index="code-alias"):
            client.info()

    :param hosts: The hosts the store uses, for the message.
    :param index: The index name, for the message.
    """
    try:
        yield
    except CodeAliasBackendError:
        raise
    except Exception as error:
        translated = translate_exception(error, hosts=hosts, index=index)
        if translated is None:
            raise
        raise translated from error


def _first_line(error: BaseException) -> str:
    """A short description of a transport error (its innermost cause, one line)."""
    inner: BaseException = error
    errors = getattr(error, "errors", ())
    if errors:
        inner = errors[-1]
    text = str(getattr(inner, "message", "") or inner) or type(inner).__name__
    return _one_line(text)


def _one_line(text: str, limit: int = 300) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."
