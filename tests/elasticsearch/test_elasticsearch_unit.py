"""Elasticsearch backend without a server: mapping and query construction, lazy round trips, error translation."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import elasticsearch
import pytest
import yaml
from elastic_transport import ApiResponseMeta, HttpHeaders, NodeConfig
from haystack import Document, Pipeline
from haystack.document_stores.errors import DocumentStoreError
from haystack.document_stores.types import DuplicatePolicy
from haystack.utils import Secret
from haystack_integrations.document_stores.elasticsearch import ElasticsearchDocumentStore

from haystack_integrations.components.code_alias.core.chunking import CHUNKER_VERSION
from haystack_integrations.components.code_alias.core.identifiers import STOP_WORDS
from haystack_integrations.components.code_alias.elasticsearch import (
    CodeAliasBackendError,
    CodeElasticsearchBM25Retriever,
    CodeElasticsearchDocumentStore,
    CodeElasticsearchEmbeddingRetriever,
    build_bm25_body,
    build_bm25_query,
    code_index_mappings,
    code_index_settings,
    convert_filters,
)
from haystack_integrations.components.code_alias.elasticsearch import store as store_module
from haystack_integrations.components.code_alias.elasticsearch.errors import redact_hosts, translate_exception
from haystack_integrations.components.code_alias.elasticsearch.files import (
    read_file_states as read_elasticsearch_states,
)
from haystack_integrations.components.code_alias.elasticsearch.mapping import (
    ANALYZER,
    mapping_embedding_dim,
    mapping_problems,
)
from haystack_integrations.components.code_alias.elasticsearch.pipelines import (
    EMBEDDED_PIPELINES,
    elasticsearch_pipeline,
    elasticsearch_pipeline_name,
)
from haystack_integrations.components.code_alias.elasticsearch.query import QueryWeights, identifier_terms
from haystack_integrations.components.code_alias.indexing.sync import (
    IndexSyncPlanner,
    IndexSyncWriter,
    read_file_states,
)
from tests.support.repos import PIPELINES


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def offline_url(monkeypatch: pytest.MonkeyPatch) -> str:
    """ELASTICSEARCH_URL pointing at a loopback port nobody listens on."""
    url = f"http://127.0.0.1:{_closed_port()}"
    monkeypatch.setenv("ELASTICSEARCH_URL", url)
    monkeypatch.delenv("ELASTICSEARCH_API_KEY", raising=False)
    monkeypatch.delenv("ELASTICSEARCH_API_KEY_ID", raising=False)
    return url


# ---- mapping ---------------------------------------------------------------------------------------------------
def test_analyzer_splits_identifiers_like_the_embedded_tokenizer() -> None:
    analysis = code_index_settings()["analysis"]
    analyzer = analysis["analyzer"][ANALYZER]
    assert analyzer["tokenizer"] == "code_identifier_tokenizer"
    assert analyzer["filter"][0] == "code_word_parts"
    assert analyzer["filter"].index("flatten_graph") == 1  # word_delimiter_graph output made indexable
    assert "lowercase" in analyzer["filter"]
    parts = analysis["filter"]["code_word_parts"]
    assert parts["type"] == "word_delimiter_graph"
    for flag in ("split_on_case_change", "split_on_numerics", "preserve_original", "catenate_words"):
        assert parts[flag] is True
    assert set(analysis["filter"]["code_stop_words"]["stopwords"]) == set(STOP_WORDS)
    assert analysis["char_filter"]["code_acronym_boundary"]["type"] == "pattern_replace"


def test_extra_settings_merge_without_losing_the_analyzers() -> None:
    settings = code_index_settings(extra={"number_of_replicas": 0, "analysis": {"filter": {"x": {"type": "trim"}}}})
    assert settings["number_of_replicas"] == 0
    assert "x" in settings["analysis"]["filter"] and "code_word_parts" in settings["analysis"]["filter"]


def test_mapping_fields() -> None:
    mapping = code_index_mappings()
    properties = mapping["properties"]
    assert properties["content"] == {"type": "text", "analyzer": ANALYZER}
    assert properties["embedding"] == {"type": "dense_vector", "dims": 384, "index": True, "similarity": "cosine"}
    for name in ("symbol", "qualified_name", "package", "file_path"):
        assert properties[name]["type"] == "keyword"
        assert properties[name]["fields"]["split"] == {"type": "text", "analyzer": ANALYZER}
    assert properties["file_path"]["fields"]["tree"]["analyzer"] == "code_path"
    assert properties["file_path"]["fields"]["tree"]["search_analyzer"] == "keyword"
    assert properties["language"] == {"type": "keyword"}
    assert properties["file_chunk_count"] == {"type": "integer"}
    assert properties["id"] == {"type": "keyword"}
    assert code_index_mappings(embedding_dim=768)["properties"]["embedding"]["dims"] == 768
    with pytest.raises(ValueError):
        code_index_mappings(embedding_dim=0)


def test_mapping_problems_detects_a_foreign_index() -> None:
    assert mapping_problems(code_index_mappings(), embedding_dim=384) == []
    stock = ElasticsearchDocumentStore(hosts="http://127.0.0.1:1")._default_mappings
    problems = mapping_problems(stock, embedding_dim=384)
    assert problems and "content" in problems[0] and "standard" in problems[0]
    assert mapping_embedding_dim(code_index_mappings(embedding_dim=8)) == 8
    assert mapping_embedding_dim(stock) is None
    bad = code_index_mappings()
    bad["properties"]["symbol"] = {"type": "text"}
    assert any("symbol" in p for p in mapping_problems(bad, embedding_dim=384))


# ---- query -----------------------------------------------------------------------------------------------------
def _walk(node: Any) -> Iterator[tuple[str, Any]]:
    if isinstance(node, dict):
        for key, value in node.items():
            yield key, value
            yield from _walk(value)
    elif isinstance(node, list):
        for item in node:
            yield from _walk(item)


def test_every_text_query_names_its_fields() -> None:
    query = build_bm25_query(
        "where is the payments retry helper", symbols=["withStripeBackoff"], packages=["@acme/payments-core"]
    )
    kinds = [key for key, _ in _walk(query)]
    assert "query_string" not in kinds and "simple_query_string" not in kinds
    multi = [value for key, value in _walk(query) if key == "multi_match"]
    assert len(multi) == 3
    assert all(m.get("fields") for m in multi)
    assert all(key not in ("match", "match_phrase") for key in kinds)


def test_symbols_and_packages_weigh_more_than_plain_words() -> None:
    weights = QueryWeights()
    query = build_bm25_query("retry helper", symbols=["pkg.retry.withStripeBackoff"], packages=["@acme/payments-core"])
    should = query["bool"]["should"]
    assert query["bool"]["minimum_should_match"] == 1
    text = should[0]["multi_match"]
    assert text["query"] == "retry helper" and "boost" not in text and "content" in text["fields"]
    symbol_words = should[1]["multi_match"]
    assert symbol_words["query"] == "pkg.retry.withStripeBackoff" and symbol_words["boost"] == weights.symbol_boost > 1
    exact = should[2]["dis_max"]
    assert exact["boost"] == weights.exact_symbol_boost > weights.symbol_boost
    assert {"term": {"symbol": {"value": "withStripeBackoff"}}} in exact["queries"]
    assert {"term": {"qualified_name": {"value": "pkg.retry.withStripeBackoff"}}} in exact["queries"]
    mention = should[3]["dis_max"]
    assert mention["queries"] == [{"term": {"content": {"value": "withstripebackoff"}}}]
    package_words = should[4]["multi_match"]
    assert package_words["fields"] == ["package.split", "file_path.split"]
    assert should[5] == {"term": {"package": {"value": "@acme/payments-core", "boost": weights.exact_package_boost}}}


def test_query_without_text_uses_symbols_only_and_empty_is_an_error() -> None:
    query = build_bm25_query("", symbols=["AccessGate"])
    assert all(c.get("multi_match", {}).get("query") != "" for c in query["bool"]["should"])
    with pytest.raises(ValueError):
        build_bm25_query("  ", symbols=[], packages=[""])


def test_zero_boosts_drop_their_clauses() -> None:
    weights = QueryWeights(
        symbol_boost=0, package_boost=0, exact_symbol_boost=0, exact_package_boost=0, mention_boost=0
    )
    query = build_bm25_query("retry", symbols=["withStripeBackoff"], packages=["x"], weights=weights)
    assert len(query["bool"]["should"]) == 1


def test_identifier_terms() -> None:
    assert identifier_terms("withStripeBackoff") == ["withstripebackoff"]
    assert identifier_terms("MAX_RETRY_COUNT") == ["max_retry_count", "maxretrycount"]


def test_haystack_filters_are_converted() -> None:
    assert convert_filters(None) is None
    package = convert_filters({"field": "meta.package", "operator": "in", "value": ["@acme/payments-core"]})
    assert json.dumps(package) == json.dumps({"bool": {"must": {"terms": {"package": ["@acme/payments-core"]}}}})
    combined = convert_filters(
        {
            "operator": "AND",
            "conditions": [
                {"field": "meta.language", "operator": "==", "value": "python"},
                {"field": "meta.file_path", "operator": "prefix", "value": "services/auth/"},
                {"operator": "NOT", "conditions": [{"field": "meta.kind", "operator": "==", "value": "module"}]},
            ],
        }
    )
    assert combined == {
        "bool": {
            "must": [
                {"term": {"language": "python"}},
                {"prefix": {"file_path": "services/auth/"}},
                {"bool": {"must_not": [{"bool": {"must": [{"term": {"kind": "module"}}]}}]}},
            ]
        }
    }
    either = convert_filters(
        {
            "operator": "OR",
            "conditions": [
                {"field": "meta.file_path", "operator": "prefix", "value": "a/"},
                {"field": "meta.file_path", "operator": "prefix", "value": "b/"},
            ],
        }
    )
    assert either == {
        "bool": {
            "should": [{"prefix": {"file_path": "a/"}}, {"prefix": {"file_path": "b/"}}],
            "minimum_should_match": 1,
        }
    }


def test_body_filters_size_and_source() -> None:
    body = build_bm25_body(
        "retry", top_k=7, filters={"field": "meta.language", "operator": "==", "value": "go"}, symbols=["Post"]
    )
    assert body["size"] == 7
    assert body["source_excludes"] == ["embedding"]
    assert body["query"]["bool"]["filter"] == [{"bool": {"must": {"term": {"language": "go"}}}}]
    assert "source_excludes" not in build_bm25_body("retry", top_k=1, return_embedding=True)
    with pytest.raises(ValueError):
        build_bm25_body("retry", top_k=0)


# ---- lazy construction and round trips -------------------------------------------------------------------------
def test_store_is_lazy_and_follows_the_environment(offline_url: str) -> None:
    store = CodeElasticsearchDocumentStore(index="lazy")
    assert store._client is None
    assert store.hosts == offline_url
    data = store.to_dict()
    assert data["type"].endswith("elasticsearch.store.CodeElasticsearchDocumentStore")
    params = data["init_parameters"]
    assert params["hosts"] is None and params["index"] == "lazy" and params["embedding_dim"] == 384
    assert params["api_key"] == Secret.from_env_var("ELASTICSEARCH_API_KEY", strict=False).to_dict()
    assert params["api_key_id"] == Secret.from_env_var("ELASTICSEARCH_API_KEY_ID", strict=False).to_dict()
    again = CodeElasticsearchDocumentStore.from_dict(data)
    assert again.to_dict() == data and again._client is None


def test_store_keeps_explicit_hosts_and_client_kwargs() -> None:
    store = CodeElasticsearchDocumentStore(hosts="http://es.internal:9200", request_timeout=5, embedding_dim=768)
    data = store.to_dict()
    assert data["init_parameters"]["hosts"] == "http://es.internal:9200"
    assert data["init_parameters"]["request_timeout"] == 5
    assert CodeElasticsearchDocumentStore.from_dict(data).embedding_dim == 768


def test_retrievers_round_trip_without_a_server(offline_url: str) -> None:
    store = CodeElasticsearchDocumentStore(index="rt")
    bm25 = CodeElasticsearchBM25Retriever(
        document_store=store,
        top_k=20,
        symbol_boost=3.0,
        filters={"field": "meta.language", "operator": "==", "value": "go"},
    )
    data = bm25.to_dict()
    again = CodeElasticsearchBM25Retriever.from_dict(data)
    assert again.to_dict() == data
    assert isinstance(again.document_store, CodeElasticsearchDocumentStore) and again.document_store._client is None
    embedding = CodeElasticsearchEmbeddingRetriever(document_store=store, top_k=20, num_candidates=200)
    data = embedding.to_dict()
    again_embedding = CodeElasticsearchEmbeddingRetriever.from_dict(data)
    assert again_embedding.to_dict() == data
    assert isinstance(again_embedding._document_store, CodeElasticsearchDocumentStore)
    with pytest.raises(ValueError):
        CodeElasticsearchBM25Retriever(document_store=store, top_k=0)


def test_pipeline_yaml_round_trip_without_a_server(offline_url: str) -> None:
    store = CodeElasticsearchDocumentStore(index="yaml")
    pipeline = Pipeline()
    pipeline.add_component("planner", IndexSyncPlanner(document_store=store))
    pipeline.add_component("writer", IndexSyncWriter(document_store=store))
    pipeline.add_component("bm25", CodeElasticsearchBM25Retriever(document_store=store))
    pipeline.add_component("knn", CodeElasticsearchEmbeddingRetriever(document_store=store))
    pipeline.connect("planner.removed_files", "writer.removed_files")
    text = pipeline.dumps()
    assert offline_url not in text  # the URL is read from the environment when loaded
    loaded = Pipeline.loads(text)
    assert loaded.to_dict() == pipeline.to_dict()


# ---- error translation -----------------------------------------------------------------------------------------
def _meta(status: int) -> ApiResponseMeta:
    return ApiResponseMeta(
        status=status, http_version="1.1", headers=HttpHeaders(), duration=0.0, node=NodeConfig("http", "es", 9200)
    )


def _api_error(cls: type[elasticsearch.ApiError], status: int, kind: str, reason: str) -> elasticsearch.ApiError:
    return cls(kind, meta=_meta(status), body={"error": {"type": kind, "reason": reason}, "status": status})


HOSTS = "https://elastic:s3cret@es.example:9200"


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (elasticsearch.ConnectionError("Connection refused"), "is unreachable"),
        (
            _api_error(elasticsearch.AuthenticationException, 401, "security_exception", "unable to authenticate"),
            "rejected the credentials (HTTP 401); set ELASTICSEARCH_API_KEY",
        ),
        (
            _api_error(elasticsearch.AuthorizationException, 403, "security_exception", "action unauthorized"),
            "refused access to index 'code' (HTTP 403)",
        ),
        (
            _api_error(
                elasticsearch.BadRequestError,
                400,
                "document_parsing_exception",
                "The [dense_vector] field [embedding] in doc [document with id '9'] has a different number of "
                "dimensions [768] than defined in the mapping [384]",
            ),
            "embedder produces 768-dimensional document vectors but Elasticsearch index 'code' stores 384",
        ),
        (
            _api_error(
                elasticsearch.BadRequestError,
                400,
                "search_phase_execution_exception",
                "failed to create query: The query vector has a different number of dimensions [3] than the "
                "document vectors [384].",
            ),
            "embedder produces 3-dimensional query vectors",
        ),
        (
            _api_error(
                elasticsearch.BadRequestError,
                400,
                "illegal_argument_exception",
                "mapper [start_line] cannot be changed from type [long] to [text]",
            ),
            "exists with an incompatible mapping",
        ),
        (
            _api_error(elasticsearch.NotFoundError, 404, "index_not_found_exception", "no such index [code]"),
            "does not exist",
        ),
        (ValueError("api_key_id is provided but api_key is missing."), "ELASTICSEARCH_API_KEY_ID is set"),
    ],
)
def test_errors_become_one_line_messages(error: Exception, expected: str) -> None:
    translated = translate_exception(error, hosts=HOSTS, index="code")
    assert isinstance(translated, CodeAliasBackendError)
    message = str(translated)
    assert expected in message
    assert "\n" not in message and "s3cret" not in message


def test_mapping_conflict_message_says_how_to_fix() -> None:
    error = _api_error(elasticsearch.BadRequestError, 400, "illegal_argument_exception", "mapper [x] cannot be changed")
    message = str(translate_exception(error, hosts=HOSTS, index="code"))
    assert "delete it" in message and "another index name" in message


def test_unknown_errors_pass_through() -> None:
    assert translate_exception(RuntimeError("boom"), hosts=HOSTS, index="code") is None
    other = _api_error(elasticsearch.ConflictError, 409, "version_conflict_engine_exception", "conflict")
    assert "HTTP 409" in str(translate_exception(other, hosts=HOSTS, index="code"))


def test_redact_hosts() -> None:
    assert redact_hosts(HOSTS) == "https://es.example:9200"
    assert (
        redact_hosts([{"host": "a", "port": 9200, "scheme": "https"}, "http://b:9200"])
        == "https://a:9200, http://b:9200"
    )
    assert redact_hosts(None) == "(no host configured)"


def test_unreachable_server_is_one_clear_error(offline_url: str) -> None:
    store = CodeElasticsearchDocumentStore(index="down", max_retries=0, request_timeout=2)
    with pytest.raises(CodeAliasBackendError, match=r"unreachable .*docker compose up -d elasticsearch"):
        store.count_documents()
    retriever = CodeElasticsearchBM25Retriever(document_store=store)
    with pytest.raises(CodeAliasBackendError, match="unreachable"):
        retriever.run(query="retry")
    assert store._client is None  # a failed first connection is retried in full next time


# ---- a fake client for the index checks ------------------------------------------------------------------------
class _FakeIndices:
    def __init__(self, existing: dict[str, Any] | None) -> None:
        self.existing = existing
        self.created: dict[str, Any] | None = None

    def exists(self, index: str) -> bool:
        return self.existing is not None

    def create(self, index: str, settings: dict[str, Any], mappings: dict[str, Any]) -> dict[str, Any]:
        self.created = {"settings": settings, "mappings": mappings}
        self.existing = mappings
        return {"acknowledged": True}

    def get_mapping(self, index: str) -> dict[str, Any]:
        return {index: {"mappings": self.existing}}

    def refresh(self, index: str) -> dict[str, Any]:
        return {}


class _FakeClient:
    existing: dict[str, Any] | None = None
    last: _FakeClient | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.indices = _FakeIndices(type(self).existing)
        self.searches: list[dict[str, Any]] = []
        self.pages: list[list[dict[str, Any]]] = []
        type(self).last = self

    def info(self) -> dict[str, Any]:
        return {"version": {"number": "8.19.0"}}

    def search(self, **kwargs: Any) -> dict[str, Any]:
        self.searches.append(kwargs)
        return {"hits": {"hits": self.pages.pop(0) if self.pages else []}}


@pytest.fixture
def fake_client(monkeypatch: pytest.MonkeyPatch, offline_url: str) -> type[_FakeClient]:
    _FakeClient.existing = None
    monkeypatch.setattr(store_module, "Elasticsearch", _FakeClient)
    return _FakeClient


def test_new_index_is_created_with_settings_and_mappings(fake_client: type[_FakeClient]) -> None:
    store = CodeElasticsearchDocumentStore(index="code")
    client = store.client
    assert isinstance(client, _FakeClient) and client is fake_client.last
    created = client.indices.created
    assert created is not None
    assert created["settings"]["analysis"]["analyzer"][ANALYZER]
    assert created["mappings"]["properties"]["embedding"]["dims"] == 384


def test_existing_foreign_index_is_refused(fake_client: type[_FakeClient]) -> None:
    fake_client.existing = ElasticsearchDocumentStore(hosts="http://127.0.0.1:1")._default_mappings
    store = CodeElasticsearchDocumentStore(index="code")
    with pytest.raises(CodeAliasBackendError, match=r"index 'code' exists with an incompatible mapping .* delete it"):
        store.count_documents()


def test_existing_index_with_other_vector_size_is_refused(fake_client: type[_FakeClient]) -> None:
    fake_client.existing = code_index_mappings(embedding_dim=768)
    store = CodeElasticsearchDocumentStore(index="code")
    with pytest.raises(CodeAliasBackendError, match=r"384-dimensional document vectors but .* stores 768"):
        store.count_documents()


def test_vectors_are_checked_before_writing(fake_client: type[_FakeClient]) -> None:
    store = CodeElasticsearchDocumentStore(index="code")
    with pytest.raises(CodeAliasBackendError, match="produces 3-dimensional document vectors"):
        store.write_documents([Document(content="x", embedding=[0.1, 0.2, 0.3])], policy=DuplicatePolicy.OVERWRITE)
    with pytest.raises(CodeAliasBackendError, match="produces 2-dimensional query vectors"):
        CodeElasticsearchEmbeddingRetriever(document_store=store).run(query_embedding=[0.1, 0.2])


def test_bulk_errors_of_overwrite_writes_are_reported(offline_url: str) -> None:
    store = CodeElasticsearchDocumentStore(index="code")
    failure = {"index": {"_id": "a", "status": 400, "error": {"type": "x_exception", "reason": "nope"}}}
    with pytest.raises(DocumentStoreError, match="rejected 1 document"):
        store._raise_bulk_errors([failure], DuplicatePolicy.OVERWRITE)
    parse = {"index": {"_id": "a", "error": {"type": "document_parsing_exception", "reason": "failed to parse field"}}}
    with pytest.raises(CodeAliasBackendError, match="contradict its mapping"):
        store._raise_bulk_errors([parse], DuplicatePolicy.OVERWRITE)
    duplicate = {"create": {"_id": "a", "error": {"type": "version_conflict_engine_exception", "reason": "exists"}}}
    store._raise_bulk_errors([duplicate], DuplicatePolicy.SKIP)


def test_sync_reads_elasticsearch_state_narrowly(fake_client: type[_FakeClient]) -> None:
    store = CodeElasticsearchDocumentStore(index="code")
    client = store.client
    assert isinstance(client, _FakeClient)

    def hit(path: str, chunk_id: str, sha: str, count: int) -> dict[str, Any]:
        source = {"file_path": path, "file_sha256": sha, "file_chunk_count": count, "chunker": CHUNKER_VERSION}
        return {"_id": chunk_id, "_source": source, "sort": [path, chunk_id]}

    client.pages = [[hit("a.py", "1", "h", 2), hit("a.py", "2", "h", 2)], [hit("b.py", "3", "g", 1)]]
    states = read_elasticsearch_states(store, page_size=2)
    assert sorted(states) == ["a.py", "b.py"] and states["a.py"].in_sync_with("h")
    assert not states["b.py"].in_sync_with("h")
    first = client.searches[0]
    assert first["source_includes"] == ["file_path", "file_sha256", "file_chunk_count", "repo", "chunker"]
    assert "search_after" not in first
    assert client.searches[1]["search_after"] == ["a.py", "2"]
    # The generic sync entry point dispatches Elasticsearch stores to the narrow read.
    client.pages = [[hit("c.py", "4", "k", 1)]]
    assert list(read_file_states(store)) == ["c.py"]
    assert client.searches[-1]["source_includes"] == ["file_path", "file_sha256", "file_chunk_count", "repo", "chunker"]


def test_sync_reads_one_repositorys_state(fake_client: type[_FakeClient]) -> None:
    store = CodeElasticsearchDocumentStore(index="code")
    client = store.client
    assert isinstance(client, _FakeClient)

    def hit(path: str, chunk_id: str, repo: str | None) -> dict[str, Any]:
        source = {"file_path": path, "file_sha256": "h", "file_chunk_count": 1, "chunker": CHUNKER_VERSION}
        source.update({"repo": repo} if repo else {})
        return {"_id": chunk_id, "_source": source, "sort": [path, chunk_id]}

    client.pages = [
        [hit("a.py", "1", "alpha"), hit("a.py", "2", "beta"), hit("b.py", "3", "beta")],
        [hit("c.py", "4", None)],
    ]
    states = read_elasticsearch_states(store, page_size=3, repo="alpha")
    # Another repository's same-named file is not alpha's; an untagged chunk (an index built before names) is.
    assert sorted(states) == ["a.py", "c.py"]
    assert states["a.py"].in_sync_with("h", "alpha") and not states["c.py"].in_sync_with("h", "alpha")


# ---- the YAML pipelines ----------------------------------------------------------------------------------------
EMBEDDED_WITH_TWIN = [name for name in EMBEDDED_PIPELINES if (PIPELINES / name).is_file()]


@pytest.mark.parametrize("name", EMBEDDED_WITH_TWIN)
def test_elasticsearch_pipelines_are_the_embedded_ones_with_the_backend_swapped(name: str) -> None:
    twin = PIPELINES / elasticsearch_pipeline_name(name)
    regenerate = "python -m haystack_integrations.components.code_alias.elasticsearch.pipelines"
    assert twin.is_file(), f"{twin.name} is missing; run `{regenerate}`"
    embedded = yaml.safe_load((PIPELINES / name).read_text(encoding="utf-8"))
    assert yaml.safe_load(twin.read_text(encoding="utf-8")) == elasticsearch_pipeline(embedded), (
        f"{twin.name} is out of date with {name}; run `{regenerate}`"
    )


def test_generated_store_is_what_the_store_serialises_to(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ELASTICSEARCH_INDEX", raising=False)
    query = yaml.safe_load((PIPELINES / "elasticsearch_query.yml").read_text(encoding="utf-8"))
    store = query["components"]["bm25_retriever"]["init_parameters"]["document_store"]
    assert store == CodeElasticsearchDocumentStore().to_dict()


@pytest.mark.parametrize("name", EMBEDDED_WITH_TWIN)
def test_elasticsearch_pipelines_have_the_embedded_inputs_and_outputs(
    name: str, offline_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODE_ALIAS_INDEX_DIR", str(tmp_path))

    def sockets(pipeline: Pipeline) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
        return (
            {c: sorted(s) for c, s in pipeline.inputs().items()},
            {c: sorted(s) for c, s in pipeline.outputs().items()},
        )

    with (PIPELINES / name).open(encoding="utf-8") as handle:
        embedded = Pipeline.load(handle)
    with (PIPELINES / elasticsearch_pipeline_name(name)).open(encoding="utf-8") as handle:
        twin = Pipeline.load(handle)
    assert sockets(twin) == sockets(embedded)


@pytest.mark.parametrize("name", [elasticsearch_pipeline_name(n) for n in EMBEDDED_WITH_TWIN])
def test_elasticsearch_pipelines_load_in_a_fresh_process_without_a_server(name: str, tmp_path: Path) -> None:
    script = (
        "from haystack import Pipeline\n"
        f"p = Pipeline.load(open({str(PIPELINES / name)!r}))\n"
        "stores = {id(c.document_store) if hasattr(c, 'document_store') else id(c._document_store): "
        "(c.document_store if hasattr(c, 'document_store') else c._document_store)\n"
        "          for _, c in p.walk() if hasattr(c, 'document_store') or hasattr(c, '_document_store')}\n"
        "assert stores and all(s._client is None for s in stores.values()), 'a store connected while loading'\n"
        "assert {s.hosts for s in stores.values()} == {'http://127.0.0.1:9'}\n"
        "a, b = Pipeline.loads(p.dumps()).to_dict(), p.to_dict()\n"
        "key = lambda c: (c['sender'], c['receiver'])\n"
        "print(a['components'] == b['components'] and sorted(a['connections'], key=key) == "
        "sorted(b['connections'], key=key))\n"
    )
    env = {k: v for k, v in os.environ.items() if "ALLOWLIST" not in k and "UNSAFE" not in k}
    env.update({"CODE_ALIAS_INDEX_DIR": str(tmp_path), "ELASTICSEARCH_URL": "http://127.0.0.1:9"})
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith("True")


def test_the_knn_retriever_takes_the_query_pipelines_array() -> None:
    """`CodeTextEmbedder.vector` (float32) reaches Elasticsearch as the JSON list of floats its client sends."""
    import numpy as np

    from haystack_integrations.components.code_alias.elasticsearch.retriever import _as_floats

    assert _as_floats(np.array([0.5, -1.0, 2.0], dtype=np.float32)) == [0.5, -1.0, 2.0]
    assert all(type(value) is float for value in _as_floats(np.ones(3, dtype=np.float32)))
    assert _as_floats([0.1, 0.2]) == [0.1, 0.2]


def test_knn_leaves_out_one_line_definitions_like_the_embedded_retriever(fake_client: type[_FakeClient]) -> None:
    """The same rule as `CodeEmbeddingRetriever` (`short_definition`): twice top_k asked, short definitions dropped."""
    from haystack_integrations.components.code_alias.retrieval.embedding_retriever import short_definition

    def knn_hit(doc_id: str, kind: str, content: str, score: float) -> dict[str, Any]:
        source = {"id": doc_id, "content": content, "kind": kind, "file_path": f"{doc_id}.ts", "embedding": [0.1] * 384}
        return {"_id": doc_id, "_score": score, "_source": source}

    store = CodeElasticsearchDocumentStore(index="code")
    client = store.client
    assert isinstance(client, _FakeClient)
    page = [
        knn_hit("member", "method", "  process(n1: VNode, n2: VNode): void", 0.99),
        knn_hit("module", "module", "export * from './x'", 0.98),
        knn_hit("impl", "function", "function process(n1, n2) {\n  patch(n1, n2)\n}", 0.97),
        knn_hit("other", "function", "function other() {\n  return 1\n}", 0.96),
    ]
    client.pages = [list(page)]
    documents = CodeElasticsearchEmbeddingRetriever(document_store=store, top_k=2).run(query_embedding=[0.1] * 384)
    assert [d.id for d in documents["documents"]] == ["module", "impl"]
    assert client.searches[-1]["knn"]["k"] == 4  # fetched twice top_k
    assert not any(short_definition(d) for d in documents["documents"])

    client.pages = [list(page)]
    every = CodeElasticsearchEmbeddingRetriever(document_store=store, top_k=2, min_definition_lines=1)
    assert [d.id for d in every.run(query_embedding=[0.1] * 384)["documents"]] == ["member", "module"]
    assert CodeElasticsearchEmbeddingRetriever.from_dict(every.to_dict()).min_definition_lines == 1
    with pytest.raises(ValueError, match="min_definition_lines"):
        CodeElasticsearchEmbeddingRetriever(document_store=store, min_definition_lines=0)
