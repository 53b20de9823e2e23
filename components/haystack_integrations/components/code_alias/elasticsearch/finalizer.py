"""The last step of the Elasticsearch indexing pipeline: make the sync visible and report it."""

from __future__ import annotations

from typing import Any

from haystack import component
from haystack_integrations.document_stores.elasticsearch import ElasticsearchDocumentStore

from ..core.model import AliasDictionary
from ..indexing.index_files import publish_dictionary
from ..paths import resolve_index_dir
from ..serialization import SerializedByInitParameters
from .errors import redact_hosts
from .retriever import _errors_for

__all__ = ["ElasticsearchIndexFinalizer"]


@component
class ElasticsearchIndexFinalizer(SerializedByInitParameters):
    """
    Refreshes the index after `IndexSyncWriter` and reports the sync, in the shape of the embedded pipeline's
    `DocumentStorePersister` (`stats` with the store's document count, and where the index lives), so code
    that runs either indexing pipeline reads the same outputs.

    ### Usage example

    ```python
    from haystack_integrations.components.code_alias.elasticsearch import CodeElasticsearchDocumentStore
    from haystack_integrations.components.code_alias.elasticsearch.finalizer import ElasticsearchIndexFinalizer

    finalizer = ElasticsearchIndexFinalizer(document_store=CodeElasticsearchDocumentStore())
    print(finalizer.run(stats={"written": 10, "deleted": 2, "files_indexed": 3}))
    # {'stats': {..., 'documents': 1234}, 'path': 'http://localhost:9200/code-alias'}
    ```

    :param document_store: The store the writer wrote to.
    :param index_dir: The index folder the dictionary is published to; None = `$CODE_ALIAS_INDEX_DIR` or
        `./.code-alias` (`CodeSearch` sets its own folder when it loads the pipeline).
    """

    def __init__(self, *, document_store: ElasticsearchDocumentStore, index_dir: str | None = None) -> None:
        if not isinstance(document_store, ElasticsearchDocumentStore):
            raise ValueError("document_store must be an ElasticsearchDocumentStore")
        self.document_store = document_store
        self.index_dir = index_dir

    def _location(self) -> str:
        return f"{redact_hosts(getattr(self.document_store, '_hosts', None))}/{self.document_store._index}"

    @component.output_types(stats=dict[str, Any], path=str)
    def run(self, stats: dict[str, Any], dictionary: AliasDictionary | None = None) -> dict[str, Any]:
        """
        :param stats: The writer's statistics, passed through.
        :param dictionary: The alias dictionary of the same run: saved to the index folder
            (`index_dir`) only now that the chunks are searchable, so it never runs ahead of them.
        :returns: `stats` plus `documents` (chunks in the index), and `path` (the index's URL).
        """
        store = self.document_store
        with _errors_for(store):
            store.client.indices.refresh(index=store._index)
            count = store.count_documents()
        if dictionary is not None:
            publish_dictionary(resolve_index_dir(self.index_dir), dictionary)
        return {"stats": {**stats, "documents": count}, "path": self._location()}

    @component.output_types(stats=dict[str, Any], path=str)
    async def run_async(self, stats: dict[str, Any], dictionary: AliasDictionary | None = None) -> dict[str, Any]:
        """Asynchronous `run`."""
        store = self.document_store
        with _errors_for(store):
            await store._ensure_initialized_async()
            await store.async_client.indices.refresh(index=store._index)
            count = await store.count_documents_async()
        if dictionary is not None:
            publish_dictionary(resolve_index_dir(self.index_dir), dictionary)
        return {"stats": {**stats, "documents": count}, "path": self._location()}
