"""What an Elasticsearch index holds per source file, read cheaply for the incremental sync.

`filter_documents` would fetch every chunk whole (code and a 384-float vector) ten hits per request, and
stops at the 10,000-hit result window. The sync only needs three small fields per chunk, so this pages
through `_source: [file_path, file_sha256, file_chunk_count]` sorted by (file_path, id) with
`search_after`: one request per `page_size` chunks, no result-window limit, nothing large on the wire.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from haystack_integrations.document_stores.elasticsearch import ElasticsearchDocumentStore

from ..indexing.file_states import FileState, in_repo_scope
from .retriever import _errors_for

__all__ = ["read_file_states", "read_file_states_async"]

_FIELDS = ["file_path", "file_sha256", "file_chunk_count", "repo", "chunker"]


def _page_body(page_size: int, after: list[Any] | None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "size": page_size,
        "query": {"exists": {"field": "file_path"}},
        "source_includes": _FIELDS,
        # unmapped_type: an index with no chunk yet has no file_path mapping to sort on.
        "sort": [
            {"file_path": {"order": "asc", "unmapped_type": "keyword"}},
            {"id": {"order": "asc", "unmapped_type": "keyword"}},
        ],
        "track_total_hits": False,
    }
    if after is not None:
        body["search_after"] = after
    return body


def _accumulate(
    states: dict[str, FileState], hits: Iterable[dict[str, Any]], repo: str | None = None
) -> list[Any] | None:
    last: list[Any] | None = None
    for hit in hits:
        source = hit.get("_source", {})
        path = source.get("file_path")
        if isinstance(path, str) and in_repo_scope(source.get("repo"), repo):
            states.setdefault(path, FileState()).add(
                source.get("file_sha256"), source.get("file_chunk_count"), source.get("repo"), source.get("chunker")
            )
        last = hit.get("sort")
    return last


def read_file_states(
    store: ElasticsearchDocumentStore, *, page_size: int = 5000, repo: str | None = None
) -> dict[str, FileState]:
    """
    file_path -> what the index holds of it (its chunks' hashes and declared chunk counts, and how many).

    :param store: An Elasticsearch store (the code store or the integration's).
    :param page_size: Chunks per request.
    :param repo: Only the chunks of this repository (and untagged ones); None = all.
    """
    states: dict[str, FileState] = {}
    after: list[Any] | None = None
    with _errors_for(store):
        client = store.client
        # Chunks written without a refresh wait by an interrupted sync must be seen.
        client.indices.refresh(index=store._index)
        while True:
            response = client.search(index=store._index, **_page_body(page_size, after))
            hits = response["hits"]["hits"]
            after = _accumulate(states, hits, repo)
            if len(hits) < page_size or after is None:
                return states


async def read_file_states_async(
    store: ElasticsearchDocumentStore, *, page_size: int = 5000, repo: str | None = None
) -> dict[str, FileState]:
    """Asynchronous `read_file_states`."""
    states: dict[str, FileState] = {}
    after: list[Any] | None = None
    with _errors_for(store):
        await store._ensure_initialized_async()
        client = store.async_client
        await client.indices.refresh(index=store._index)
        while True:
            response = await client.search(index=store._index, **_page_body(page_size, after))
            hits = response["hits"]["hits"]
            after = _accumulate(states, hits, repo)
            if len(hits) < page_size or after is None:
                return states
