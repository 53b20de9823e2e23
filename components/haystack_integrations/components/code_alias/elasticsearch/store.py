"""An `ElasticsearchDocumentStore` that creates its index with the code mapping and fails with clear errors."""

from __future__ import annotations

import os
from typing import Any, Literal

from elasticsearch import AsyncElasticsearch, Elasticsearch, helpers
from haystack import Document, default_from_dict, default_to_dict, logging
from haystack.document_stores.errors import DocumentStoreError, DuplicateDocumentError
from haystack.document_stores.types import DuplicatePolicy
from haystack.utils import Secret
from haystack_integrations.document_stores.elasticsearch import ElasticsearchDocumentStore
from haystack_integrations.document_stores.elasticsearch.document_store import Hosts

from .errors import (
    dimension_error_from_text,
    dimension_mismatch_error,
    mapping_conflict_error,
    rejected_documents_error,
    translate_errors,
)
from .mapping import (
    DEFAULT_EMBEDDING_DIM,
    Similarity,
    code_index_mappings,
    code_index_settings,
    mapping_embedding_dim,
    mapping_problems,
)

logger = logging.getLogger(__name__)

__all__ = [
    "DEFAULT_INDEX",
    "DEFAULT_URL",
    "INDEX_ENV",
    "URL_ENV",
    "CodeElasticsearchDocumentStore",
    "hosts_from_env",
    "index_from_env",
]

URL_ENV = "ELASTICSEARCH_URL"
INDEX_ENV = "ELASTICSEARCH_INDEX"
API_KEY_ENV = "ELASTICSEARCH_API_KEY"
API_KEY_ID_ENV = "ELASTICSEARCH_API_KEY_ID"
DEFAULT_URL = "http://localhost:9200"
DEFAULT_INDEX = "code-alias"

Refresh = Literal["wait_for", True, False]


def hosts_from_env() -> str:
    """`$ELASTICSEARCH_URL`, else `http://localhost:9200`."""
    return os.environ.get(URL_ENV, "").strip() or DEFAULT_URL


def index_from_env() -> str:
    """`$ELASTICSEARCH_INDEX`, else `code-alias`."""
    return os.environ.get(INDEX_ENV, "").strip() or DEFAULT_INDEX


class CodeElasticsearchDocumentStore(ElasticsearchDocumentStore):
    """
    An `ElasticsearchDocumentStore` whose index is made for code (see `mapping.py`).

    Differences from the integration's store:

    - the index is created with this package's settings (the `code_identifier` analyzer) and mappings; an
      existing index with another mapping, or with vectors of another size, is refused with a message that
      says how to fix it, instead of silently searching with the wrong analyzer;
    - the host comes from `$ELASTICSEARCH_URL` when `hosts` is None and the index name from
      `$ELASTICSEARCH_INDEX` when `index` is None, read when the store is built; the serialised form keeps
      None, so one YAML pipeline follows the environment;
    - the API key comes from `$ELASTICSEARCH_API_KEY` (and optionally `$ELASTICSEARCH_API_KEY_ID`);
    - client failures (unreachable, 401/403, mapping conflicts, vector size) raise `CodeAliasBackendError`;
    - writes check vector sizes before sending, and report bulk errors for every policy (the integration's
      error report only reads `create` items, so an OVERWRITE bulk failure surfaced as `KeyError: 'create'`).

    Construction never connects; the first operation does.

    ### Usage example

    ```python
    from haystack_integrations.components.code_alias.elasticsearch import CodeElasticsearchDocumentStore

    store = CodeElasticsearchDocumentStore(index="my-monorepo")   # $ELASTICSEARCH_URL or localhost:9200
    print(store.count_documents())
    ```

    :param hosts: Elasticsearch hosts; None means `$ELASTICSEARCH_URL`, else `http://localhost:9200`.
    :param index: The index name; None means `$ELASTICSEARCH_INDEX`, else `code-alias`. Use one index per
        indexed code tree: a sync removes from its index every file that is not in the tree it reads.
    :param api_key: API key (base64 `id:key`, or the key when `api_key_id` is given).
    :param api_key_id: API key id.
    :param embedding_dim: Size of the embedder's vectors (384 for all-MiniLM-L6-v2).
    :param embedding_similarity_function: kNN similarity; used when the index is created.
    :param index_settings: Extra index settings merged over the analyzers (shards, replicas, refresh_interval).
    :param kwargs: Passed to the `Elasticsearch` client (e.g. `request_timeout`, `ca_certs`).
    """

    def __init__(
        self,
        *,
        hosts: Hosts | None = None,
        index: str | None = None,
        api_key: Secret | str | None = Secret.from_env_var(API_KEY_ENV, strict=False),  # noqa: B008
        api_key_id: Secret | str | None = Secret.from_env_var(API_KEY_ID_ENV, strict=False),  # noqa: B008
        embedding_dim: int = DEFAULT_EMBEDDING_DIM,
        embedding_similarity_function: Similarity = "cosine",
        index_settings: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        self._configured_hosts = hosts
        self._configured_index = index
        self.embedding_dim = embedding_dim
        self.index_settings = index_settings
        self._index_embedding_dim: int | None = None
        self._async_index_ready = False
        super().__init__(
            hosts=hosts if hosts is not None else hosts_from_env(),
            custom_mapping=code_index_mappings(embedding_dim=embedding_dim, similarity=embedding_similarity_function),
            index=index if index is not None else index_from_env(),
            api_key=api_key,
            api_key_id=api_key_id,
            embedding_similarity_function=embedding_similarity_function,
            **kwargs,
        )

    # ---- serialisation -------------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """Serialise; the hosts stay None when they come from the environment, secrets stay env references."""
        return default_to_dict(
            self,
            hosts=self._configured_hosts,
            index=self._configured_index,
            api_key=self._api_key.to_dict() if isinstance(self._api_key, Secret) else None,
            api_key_id=self._api_key_id.to_dict() if isinstance(self._api_key_id, Secret) else None,
            embedding_dim=self.embedding_dim,
            embedding_similarity_function=self._embedding_similarity_function,
            index_settings=self.index_settings,
            **self._kwargs,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CodeElasticsearchDocumentStore:
        """Deserialise what `to_dict` wrote."""
        params = dict(data.get("init_parameters", {}))
        for key in ("api_key", "api_key_id"):
            if isinstance(params.get(key), dict):
                params[key] = Secret.from_dict(params[key])
        return default_from_dict(cls, {**data, "init_parameters": params})

    # ---- connection and index ------------------------------------------------------------------------------
    @property
    def index(self) -> str:
        """The index name."""
        return self._index

    @property
    def hosts(self) -> Any:
        """The hosts the client connects to (resolved from the environment when configured as None)."""
        return self._hosts

    def translate_errors(self) -> Any:
        """A context manager that turns client failures into `CodeAliasBackendError` for this store."""
        return translate_errors(hosts=self._hosts, index=self._index)

    def _ensure_initialized(self) -> None:
        if self._client is not None:
            return
        with self.translate_errors():
            client = Elasticsearch(self._hosts, api_key=self._handle_auth(), headers=self._headers, **self._kwargs)
            client.info()
            self._prepare_index(client)
        # Only a client whose server answered and whose index checked out is kept: a failed first call is
        # retried in full next time instead of skipping the checks.
        self._client = client

    async def _ensure_initialized_async(self) -> None:
        if self._async_client is not None and self._async_index_ready:
            return
        with self.translate_errors():
            client = self._async_client or self._create_async_client()
            await client.info()
            await self._prepare_index_async(client)
        self._async_client = client
        self._async_index_ready = True

    def _prepare_index(self, client: Elasticsearch) -> None:
        if not client.indices.exists(index=self._index):
            try:
                client.indices.create(
                    index=self._index,
                    settings=code_index_settings(extra=self.index_settings),
                    mappings=self._custom_mapping,
                )
                self._index_embedding_dim = self.embedding_dim
                return
            except Exception as error:  # another process created it first: check it like an existing one
                if "resource_already_exists_exception" not in str(error):
                    raise
        mapping = client.indices.get_mapping(index=self._index)
        self._check_mapping(_one_mapping(dict(mapping), self._index))

    async def _prepare_index_async(self, client: AsyncElasticsearch) -> None:
        if not await client.indices.exists(index=self._index):
            try:
                await client.indices.create(
                    index=self._index,
                    settings=code_index_settings(extra=self.index_settings),
                    mappings=self._custom_mapping,
                )
                self._index_embedding_dim = self.embedding_dim
                return
            except Exception as error:
                if "resource_already_exists_exception" not in str(error):
                    raise
        mapping = await client.indices.get_mapping(index=self._index)
        self._check_mapping(_one_mapping(dict(mapping), self._index))

    def _check_mapping(self, existing: dict[str, Any]) -> None:
        problems = mapping_problems(existing, embedding_dim=self.embedding_dim)
        if problems:
            raise mapping_conflict_error(index=self._index, problems=problems)
        stored_dim = mapping_embedding_dim(existing)
        if stored_dim is not None and stored_dim != self.embedding_dim:
            raise dimension_mismatch_error(
                got=self.embedding_dim, expected=stored_dim, index=self._index, where="document"
            )
        self._index_embedding_dim = stored_dim or self.embedding_dim

    def check_query_embedding(self, embedding: list[float]) -> None:
        """
        Raise `CodeAliasBackendError` when a query vector's size is not the index's.

        :param embedding: The query embedding.
        """
        expected = self._index_embedding_dim or self.embedding_dim
        if embedding and len(embedding) != expected:
            raise dimension_mismatch_error(got=len(embedding), expected=expected, index=self._index, where="query")

    def _check_documents(self, documents: list[Document]) -> None:
        if documents and not isinstance(documents[0], Document):
            raise ValueError("param 'documents' must contain a list of objects of type Document")
        expected = self._index_embedding_dim or self.embedding_dim
        for document in documents:
            if document.embedding is not None and len(document.embedding) != expected:
                raise dimension_mismatch_error(
                    got=len(document.embedding), expected=expected, index=self._index, where="document"
                )

    # ---- operations (errors translated) --------------------------------------------------------------------
    def count_documents(self) -> int:
        """Number of documents in the index."""
        with self.translate_errors():
            return super().count_documents()

    async def count_documents_async(self) -> int:
        """Number of documents in the index."""
        with self.translate_errors():
            return await super().count_documents_async()

    def filter_documents(self, filters: dict[str, Any] | None = None) -> list[Document]:
        """Documents matching Haystack `filters` (see the integration's `filter_documents`)."""
        with self.translate_errors():
            return super().filter_documents(filters)

    async def filter_documents_async(self, filters: dict[str, Any] | None = None) -> list[Document]:
        """Documents matching Haystack `filters`."""
        with self.translate_errors():
            return await super().filter_documents_async(filters)

    def delete_documents(self, document_ids: list[str], refresh: Refresh = "wait_for") -> None:
        """Delete documents by id."""
        with self.translate_errors():
            self._ensure_initialized()
            super().delete_documents(document_ids, refresh=refresh)

    async def delete_documents_async(self, document_ids: list[str], refresh: Refresh = "wait_for") -> None:
        """Delete documents by id."""
        with self.translate_errors():
            await super().delete_documents_async(document_ids, refresh=refresh)

    def delete_by_filter(self, filters: dict[str, Any], refresh: bool = False) -> int:
        """Delete the documents matching Haystack `filters`; returns how many."""
        with self.translate_errors():
            self._ensure_initialized()
            return super().delete_by_filter(filters, refresh=refresh)

    async def delete_by_filter_async(self, filters: dict[str, Any], refresh: bool = False) -> int:
        """Delete the documents matching Haystack `filters`; returns how many."""
        with self.translate_errors():
            await self._ensure_initialized_async()
            return await super().delete_by_filter_async(filters, refresh=refresh)

    def write_documents(
        self, documents: list[Document], policy: DuplicatePolicy = DuplicatePolicy.NONE, refresh: Refresh = "wait_for"
    ) -> int:
        """
        Write Documents in one bulk request.

        :param documents: The Documents.
        :param policy: What to do with an existing id (NONE means FAIL).
        :param refresh: When the writes become visible to search ("wait_for", True or False).
        :returns: How many were written.
        :raises DuplicateDocumentError: An id exists and the policy is FAIL.
        :raises CodeAliasBackendError: A vector of the wrong size, or a known server failure.
        """
        with self.translate_errors():
            self._ensure_initialized()
            self._check_documents(documents)
            if not documents:
                return 0
            written, errors = helpers.bulk(client=self.client, **self._bulk_request(documents, policy, refresh))
            self._raise_bulk_errors(errors, policy)
            return written

    async def write_documents_async(
        self, documents: list[Document], policy: DuplicatePolicy = DuplicatePolicy.NONE, refresh: Refresh = "wait_for"
    ) -> int:
        """Asynchronous `write_documents`."""
        with self.translate_errors():
            await self._ensure_initialized_async()
            self._check_documents(documents)
            if not documents:
                return 0
            request = self._bulk_request(documents, policy, refresh)
            written, errors = await helpers.async_bulk(client=self.async_client, **request)
            self._raise_bulk_errors(errors, policy)
            return written

    def _bulk_request(self, documents: list[Document], policy: DuplicatePolicy, refresh: Refresh) -> dict[str, Any]:
        """The bulk helpers' arguments but the client: per-document errors come back to be raised as one error."""
        return {
            "actions": self._bulk_actions(documents, policy),
            "refresh": refresh,
            "index": self._index,
            "raise_on_error": False,
            "stats_only": False,
        }

    def _bulk_actions(self, documents: list[Document], policy: DuplicatePolicy) -> list[dict[str, Any]]:
        op_type = "index" if policy == DuplicatePolicy.OVERWRITE else "create"
        actions = []
        for document in documents:
            source = document.to_dict()
            for field in ("embedding", "blob", "score"):
                if source.get(field) is None:
                    source.pop(field, None)
            self._handle_sparse_embedding(source, document.id)
            actions.append({"_op_type": op_type, "_id": document.id, "_source": source})
        return actions

    def _raise_bulk_errors(self, errors: Any, policy: DuplicatePolicy) -> None:
        if not errors:
            return
        duplicates: list[str] = []
        others: list[dict[str, Any]] = []
        for item in errors:
            (_, result), *_ = item.items()  # {"create": {...}} or {"index": {...}}
            kind = result.get("error", {}).get("type", "")
            if kind == "version_conflict_engine_exception" and policy in (DuplicatePolicy.SKIP,):
                continue
            if kind == "version_conflict_engine_exception" and policy in (DuplicatePolicy.NONE, DuplicatePolicy.FAIL):
                duplicates.append(str(result.get("_id")))
            else:
                others.append(result)
        if duplicates:
            raise DuplicateDocumentError(f"IDs '{', '.join(duplicates)}' already exist in the document store.")
        if others:
            first = others[0].get("error", {})
            reason = str(first.get("reason", ""))
            caused = str(first.get("caused_by", {}).get("reason", ""))
            dimension = dimension_error_from_text(f"{reason} {caused}", index=self._index)
            if dimension is not None:
                raise dimension
            if first.get("type") in ("document_parsing_exception", "mapper_parsing_exception"):
                raise rejected_documents_error(index=self._index, count=len(others), reason=f"{reason} {caused}")
            raise DocumentStoreError(
                f"Elasticsearch rejected {len(others)} document(s) of a bulk write; first: "
                f"{first.get('type', 'error')}: {reason} {caused}".strip()
            )

    def close(self) -> None:
        """Release the synchronous client."""
        super().close()

    async def close_async(self) -> None:
        """Release the asynchronous client."""
        await super().close_async()
        self._async_index_ready = False


def _one_mapping(response: dict[str, Any], index: str) -> dict[str, Any]:
    """The `mappings` of one index from a get_mapping response (keyed by the concrete index name)."""
    if index in response:
        return dict(response[index].get("mappings", {}))
    if len(response) == 1:  # an alias resolves to one concrete index
        return dict(next(iter(response.values())).get("mappings", {}))
    return {}
