"""The Elasticsearch YAML pipelines, derived from the embedded ones so the two stay interchangeable.

Each `pipelines/elasticsearch_<name>.yml` is `pipelines/<name>.yml` with only the backend swapped: the
persistent in-memory store becomes `CodeElasticsearchDocumentStore`, `CodeBM25Retriever` becomes
`CodeElasticsearchBM25Retriever`, `InMemoryEmbeddingRetriever` becomes `CodeElasticsearchEmbeddingRetriever`,
and `DocumentStorePersister` becomes `ElasticsearchIndexFinalizer` (same `stats` / `path` outputs). Every
other component, parameter and connection is copied, so inputs and outputs are the same and a user switches
backend by choosing the file.

Regenerate after editing an embedded pipeline (a test fails until you do):

    python -m haystack_integrations.components.code_alias.elasticsearch.pipelines [PIPELINES_DIR]
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

import yaml

from ..paths import pipelines_dir
from .mapping import DEFAULT_EMBEDDING_DIM

__all__ = ["EMBEDDED_PIPELINES", "elasticsearch_pipeline", "elasticsearch_pipeline_name", "render", "write_all"]

_PACKAGE = "haystack_integrations.components.code_alias"
EMBEDDED_STORE = f"{_PACKAGE}.indexing.store.CodeIndexDocumentStore"
ES_STORE = f"{_PACKAGE}.elasticsearch.store.CodeElasticsearchDocumentStore"

# embedded component type -> (Elasticsearch type, init parameters carried over besides document_store)
SWAPS: dict[str, tuple[str, tuple[str, ...]]] = {
    f"{_PACKAGE}.retrieval.bm25.CodeBM25Retriever": (
        f"{_PACKAGE}.elasticsearch.retriever.CodeElasticsearchBM25Retriever",
        # Boosts are not carried over: in Elasticsearch they are query-clause weights, in the embedded
        # retriever fractions of the best score; each backend keeps its own defaults.
        ("top_k", "filters", "filter_policy"),
    ),
    f"{_PACKAGE}.retrieval.embedding_retriever.CodeEmbeddingRetriever": (
        f"{_PACKAGE}.elasticsearch.retriever.CodeElasticsearchEmbeddingRetriever",
        ("top_k", "filters", "filter_policy"),
    ),
    f"{_PACKAGE}.indexing.store.DocumentStorePersister": (
        f"{_PACKAGE}.elasticsearch.finalizer.ElasticsearchIndexFinalizer",
        (),
    ),
}

# The embedded pipelines that have an Elasticsearch twin.
EMBEDDED_PIPELINES: tuple[str, ...] = (
    "indexing.yml",
    "query.yml",
    "query_llm.yml",
    "indexing_lexical.yml",
    "query_lexical.yml",
)

HEADER = """\
# GENERATED from pipelines/{source} with only the backend swapped to Elasticsearch (same components,
# inputs, outputs and connections); edit pipelines/{source} and regenerate with
#   python -m haystack_integrations.components.code_alias.elasticsearch.pipelines
# Chunks live in an Elasticsearch index with the code mapping (elasticsearch/mapping.py); the alias
# dictionary stays in the index folder (`index_dir`, which CodeSearch fills in). Server and credentials come from the
# environment when the pipeline is loaded: ELASTICSEARCH_URL (default http://localhost:9200),
# ELASTICSEARCH_API_KEY (+ ELASTICSEARCH_API_KEY_ID), ELASTICSEARCH_INDEX (default code-alias; one index per
# indexed tree). Nothing connects until the pipeline runs.
#
# The embedded pipeline's notes:
{notes}"""


def elasticsearch_pipeline_name(embedded_name: str) -> str:
    """`query.yml` -> `elasticsearch_query.yml`."""
    return f"elasticsearch_{embedded_name}"


def _store() -> dict[str, Any]:
    return {
        "type": ES_STORE,
        "init_parameters": {
            "hosts": None,
            "index": None,
            "api_key": {"type": "env_var", "env_vars": ["ELASTICSEARCH_API_KEY"], "strict": False},
            "api_key_id": {"type": "env_var", "env_vars": ["ELASTICSEARCH_API_KEY_ID"], "strict": False},
            "embedding_dim": DEFAULT_EMBEDDING_DIM,
            "embedding_similarity_function": "cosine",
            "index_settings": None,
        },
    }


def _swap_stores(value: Any) -> Any:
    if isinstance(value, dict):
        if value.get("type") == EMBEDDED_STORE:
            return _store()
        return {key: _swap_stores(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_swap_stores(item) for item in value]
    return value


def elasticsearch_pipeline(embedded: dict[str, Any]) -> dict[str, Any]:
    """
    The Elasticsearch twin of an embedded pipeline (as parsed YAML).

    :param embedded: A pipeline dict (`components`, `connections`, `metadata`...).
    :returns: The same pipeline with the backend components swapped.
    """
    result = copy.deepcopy(embedded)
    components: dict[str, Any] = {}
    for name, spec in embedded.get("components", {}).items():
        swap = SWAPS.get(spec.get("type", ""))
        if swap is None:
            components[name] = _swap_stores(copy.deepcopy(spec))
            continue
        new_type, carried = swap
        params = spec.get("init_parameters", {}) or {}
        new_params = {key: copy.deepcopy(params[key]) for key in carried if key in params}
        new_params["document_store"] = _store()
        if new_type.endswith(".ElasticsearchIndexFinalizer"):  # it publishes the dictionary to the store's folder
            store_params = (params.get("document_store") or {}).get("init_parameters") or {}
            new_params["index_dir"] = store_params.get("index_dir")
        components[name] = {"type": new_type, "init_parameters": new_params}
    result["components"] = components
    return result


def render(source_name: str, source_text: str) -> str:
    """The YAML text of the Elasticsearch twin of `source_text` (the file `source_name`)."""
    notes = []
    for line in source_text.splitlines():
        if not line.startswith("#"):
            break
        notes.append(line)
    pipeline = elasticsearch_pipeline(yaml.safe_load(source_text))
    body = yaml.safe_dump(pipeline, sort_keys=False, default_flow_style=False, width=110)
    return HEADER.format(source=source_name, notes="\n".join(notes) or "#   (none)") + "\n" + body


def write_all(directory: Path) -> list[Path]:
    """(Re)write every `elasticsearch_*.yml` twin in `directory`; returns the files written."""
    written = []
    for name in EMBEDDED_PIPELINES:
        source = directory / name
        if not source.is_file():
            continue
        target = directory / elasticsearch_pipeline_name(name)
        target.write_text(render(name, source.read_text(encoding="utf-8")), encoding="utf-8")
        written.append(target)
    return written


def _default_directory() -> Path:

    return pipelines_dir()


if __name__ == "__main__":
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else _default_directory()
    for path in write_all(folder):
        print(path)
