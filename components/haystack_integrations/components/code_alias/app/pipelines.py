"""The YAML pipelines of an index folder: which file each backend and kind loads, and loading them on one folder.

`PipelineLoading` is the part of `CodeSearch` that holds the folder, the backend and the options, and loads the
pipelines under `pipelines/` bound to that folder; `building.IndexBuilding` writes the index with them and
`search.CodeSearch` answers from them.
"""

from __future__ import annotations

import inspect
import logging
from pathlib import Path
from typing import Any, Literal

import yaml
from haystack import Pipeline
from haystack.core.serialization import DeserializationCallbacks

from ..errors import CodeAliasError
from ..indexing import index_files, index_mode
from ..indexing.code_index import CodeIndex
from ..paths import pipelines_dir

Backend = Literal["embedded", "elasticsearch"]
PIPELINE_FILES: dict[tuple[Backend, str], str] = {
    ("embedded", "indexing"): "indexing.yml",
    ("embedded", "query"): "query.yml",
    ("embedded", "query_llm"): "query_llm.yml",
    ("embedded", "indexing_lexical"): "indexing_lexical.yml",
    ("embedded", "query_lexical"): "query_lexical.yml",
    ("embedded", "query_lexical_semantic"): "query_lexical_semantic.yml",
    ("elasticsearch", "indexing"): "elasticsearch_indexing.yml",
    ("elasticsearch", "query"): "elasticsearch_query.yml",
    ("elasticsearch", "query_llm"): "elasticsearch_query_llm.yml",
    ("elasticsearch", "indexing_lexical"): "elasticsearch_indexing_lexical.yml",
    ("elasticsearch", "query_lexical"): "elasticsearch_query_lexical.yml",
    ("elasticsearch", "query_lexical_semantic"): "elasticsearch_query_lexical_semantic.yml",
}
logger = logging.getLogger(__name__)


def _accepts(cls: type, name: str) -> bool:
    try:
        return name in inspect.signature(cls.__init__).parameters  # type: ignore[misc]  # the class's own, not the component wrapper's
    except (TypeError, ValueError):
        return False


def _is_embedder(cls: type) -> bool:
    """One of our embedders (their `cache_dir` is the vector cache)."""
    return cls.__module__.endswith(".retrieval.embedders")


def _writer_store(pipeline: Pipeline) -> Any:
    """The document store the indexing pipeline's writer wrote to (None when it has no `writer`)."""
    if "writer" not in pipeline.graph.nodes:
        return None
    return getattr(pipeline.get_component("writer"), "document_store", None)


class IndexMissingError(FileNotFoundError, CodeAliasError):
    """`ask` before `index`."""


class EmptyIndexError(IndexMissingError):
    """An index that holds no chunks (nothing indexed yet, or an empty repository)."""


def pipeline_file(backend: Backend, kind: str, directory: Path | None = None) -> Path:
    try:
        name = PIPELINE_FILES[(backend, kind)]
    except KeyError:
        raise ValueError(f"no {kind!r} pipeline for backend {backend!r}") from None
    return (directory or pipelines_dir()) / name


def _index_cause(error: BaseException) -> BaseException | None:
    """The index problem (damaged file, missing index) behind a pipeline's deserialisation error, if any."""
    cause = error.__cause__ or error.__context__
    while cause is not None:
        if isinstance(cause, index_files.IndexDamagedError | FileNotFoundError | OSError):
            return cause
        cause = cause.__cause__ or cause.__context__
    return None


def bind_to_index(data: dict[str, Any], index_dir: Path, *, writer: str | None = None) -> dict[str, Any]:
    """
    Point a pipeline's components (and the document stores inside them) that name no index folder, at
    `index_dir`: every `index_dir: null` of the YAML. `writer` binds its in-memory stores to that writer's
    private copy of the chunks (`CodeIndexDocumentStore(writer=...)`). Changes and returns `data`.
    """

    def bind(params: dict[str, Any]) -> None:
        if "index_dir" in params and params["index_dir"] is None:
            params["index_dir"] = str(index_dir)
        for value in params.values():
            if isinstance(value, dict) and isinstance(value.get("init_parameters"), dict):
                nested = value["init_parameters"]
                bind(nested)
                if writer is not None and str(value.get("type", "")).endswith(".CodeIndexDocumentStore"):
                    nested["writer"] = writer

    for spec in (data.get("components") or {}).values():
        if isinstance(spec, dict):
            bind(spec.setdefault("init_parameters", {}) or {})
    return data


class PipelineLoading:
    """The index folder, its backend and the options of a `CodeSearch`, and its pipelines loaded on that folder."""

    index_dir: Path
    code_index: CodeIndex
    embedding_cache: Path
    backend: Backend
    llm: bool
    lexical: bool | None
    pipelines: Path | None
    chat_generator: dict[str, Any] | None
    rewriter_params: dict[str, Any] | None
    semantic_hints: bool | None

    def load_pipeline(self, kind: str, *, writer: str | None = None) -> Pipeline:
        """
        Load one of the YAML pipelines on this index folder: every component and store that names no folder gets
        this one, embedders that name no vector cache get `embedding_cache` (nothing goes through the
        environment).

        :param writer: For an indexing run: its stores work on a private copy of the chunks, unseen by queries
            until the run saves it (`CodeIndexDocumentStore(writer=...)`).
        """
        path = pipeline_file(self.backend, kind, self.pipelines)
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        if kind == "query_llm" and (self.chat_generator or self.rewriter_params):
            params = data["components"]["rewriter"].setdefault("init_parameters", {})
            params.update(self.rewriter_params or {})
            if self.chat_generator:
                params["chat_generator"] = self.chat_generator
        return self.pipeline_from_dict(data, writer=writer)

    def pipeline_from_dict(self, data: dict[str, Any], *, writer: str | None = None) -> Pipeline:
        """A pipeline dict (parsed YAML) loaded on this index folder, as `load_pipeline` loads its files."""
        return Pipeline.from_dict(bind_to_index(data, self.index_dir, writer=writer), callbacks=self._callbacks)

    @property
    def _callbacks(self) -> DeserializationCallbacks:
        return DeserializationCallbacks(component_pre_init=self._bind_component)

    def _bind_component(self, name: str, cls: type, init_params: dict[str, Any]) -> None:
        """`bind_to_index` for parameters a YAML leaves out: a component built here sees this folder and cache."""
        if init_params.get("index_dir") is None and _accepts(cls, "index_dir"):
            init_params["index_dir"] = str(self.index_dir)
        if init_params.get("cache_dir") is None and _accepts(cls, "cache_dir") and _is_embedder(cls):
            init_params["cache_dir"] = str(self.embedding_cache)

    def check_index(self) -> None:
        """
        Check the index folder before answering from it (cheap: its manifest and its files' sizes).

        :raises IndexMissingError: No index in the folder.
        :raises EmptyIndexError: An index of no chunks ("nothing indexed under DIR").
        :raises index_files.IndexDamagedError: A damaged or truncated file (named, with the fix).
        """
        folder = self.index_dir
        if self.backend != "embedded":
            if not index_files.index_exists(folder):
                raise IndexMissingError(f"no index at {folder}; {index_files.rebuild_hint(folder)}")
            return
        manifest = index_files.current_manifest(folder)
        if manifest is None or manifest.dictionary is None:
            raise IndexMissingError(f"no index at {folder}; build it with `code-alias index PATH --index-dir {folder}`")
        documents = manifest.documents
        if documents is None or documents.count == 0:
            raise EmptyIndexError(
                f"nothing indexed under {folder}: no source files were found, or indexing did not finish; "
                f"run `code-alias index PATH --index-dir {folder}`"
            )
        if not manifest.legacy:
            for artifact in (manifest.dictionary, documents):
                index_files.check_artifact(folder, artifact)

    def _has_documents(self) -> bool:
        if self.backend != "embedded":
            return index_files.index_exists(self.index_dir)
        manifest = index_files.current_manifest(self.index_dir)
        return bool(manifest is not None and manifest.documents is not None and manifest.documents.count != 0)

    @property
    def retrieval(self) -> index_mode.Retrieval:
        """
        The retrieval questions run with: "lexical" or "hybrid" (`lexical=None` follows the index).

        :raises index_mode.RetrievalMismatchError: Hybrid (or the LLM pipeline) asked of a lexical index.
        """
        if self.llm:
            index_mode.choose_for_query(self.index_dir, False)
            return "hybrid"
        return index_mode.choose_for_query(self.index_dir, self.lexical)
