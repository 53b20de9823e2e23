"""The stock-pipeline recipes (pipelines/stock_*.yml, docs/stock-pipelines.md, the README's snippet) run as written.

Each YAML is loaded as a user would load it, with three things pointed at this machine: the sentence-transformers
model name at the packaged copy of the same model (no hub here), the in-memory store's index name and Qdrant's folder
at the test's own, and the rewriter at the index folder the indexing pipeline wrote. The embedders are the real
sentence-transformers ones, hence `slow`. The Elasticsearch recipe runs against the server at ELASTICSEARCH_URL
(CI: the noida-db stand-in).
"""

from __future__ import annotations

import os
import re
import shutil
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml
from haystack import Pipeline

from haystack_integrations.components.code_alias.retrieval.embedders import resolve_model
from tests.support.repos import PIPELINES, ROOT

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
QUESTION = "where's the payments retry helper?"
INPUTS = {
    "first_pass": {"query": QUESTION},
    "question_embedder": {"text": QUESTION},
    "rewriter": {"question": QUESTION},
}
RETRY_FILE = "packages/payments-core/src/retry.ts"
SOURCE_SUFFIXES = {".py", ".ts", ".tsx", ".js", ".jsx", ".go", ".rs", ".java"}

pytestmark = pytest.mark.slow


def local(data: dict[str, Any], **where: str) -> dict[str, Any]:
    """A recipe's dict with the model, the store locations and the rewriter's index pointed at this test's."""
    model = resolve_model("all-MiniLM-L6-v2")[0]

    def visit(params: dict[str, Any]) -> None:
        if params.get("model") == MODEL_NAME:
            params["model"] = model
            params["local_files_only"] = True
        if params.get("index") == "code-alias-stock" and "store_index" in where:
            params["index"] = where["store_index"]
        if params.get("index") == "code_alias_stock" and "qdrant_path" in where:
            params["path"] = where["qdrant_path"]
        if "hosts" in params and "es_url" in where:
            params["hosts"] = where["es_url"]
            params["index"] = where["store_index"]
        for value in params.values():
            if isinstance(value, dict) and isinstance(value.get("init_parameters"), dict):
                visit(value["init_parameters"])

    for name, spec in data["components"].items():
        params = spec.setdefault("init_parameters", {}) or {}
        spec["init_parameters"] = params
        if name == "rewriter" and "index_dir" in where:
            params["index_dir"] = where["index_dir"]
        visit(params)
    return data


def recipe(name: str, **where: str) -> Pipeline:
    return Pipeline.from_dict(local(yaml.safe_load((PIPELINES / name).read_text(encoding="utf-8")), **where))


def sources(root: Path) -> list[str]:
    return sorted(str(p) for p in root.rglob("*") if p.suffix in SOURCE_SUFFIXES and ".code-alias" not in p.parts)


def index(name: str, repo: Path, **where: str) -> Pipeline:
    pipeline = recipe(name, **where)
    result = pipeline.run({"converter": {"sources": sources(repo)}, "dictionary_builder": {"root": str(repo)}})
    assert result["writer"]["documents_written"] > 5
    assert result["dictionary_builder"]["cards"]["cards"] > 10
    return pipeline


def ask(pipeline: Pipeline, inputs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return pipeline.run(inputs, include_outputs_from={"rewriter"})


def check_rewrite(out: dict[str, Any], *, first_pass: bool = True) -> None:
    rewrite = out["rewriter"]
    assert "withStripeBackoff" in rewrite["symbols"]
    if first_pass:
        assert rewrite["meta"]["retrieved"]["mapped"] > 0
    assert rewrite["meta"]["semantic"]["used"] is True


@pytest.fixture
def repo(acme_repo: Path) -> Path:
    return acme_repo


def test_stock_inmemory_bm25_recipe(repo: Path) -> None:
    where = {"store_index": f"stock-{uuid.uuid4().hex}", "index_dir": str(repo / ".code-alias")}
    index("stock_indexing.yml", repo, **where)
    query = recipe("stock_query.yml", **where)
    out = ask(query, INPUTS)
    check_rewrite(out)
    assert out["bm25"]["documents"][0].meta["file_path"].endswith(RETRY_FILE)


def test_stock_inmemory_hybrid_recipe(repo: Path) -> None:
    where = {"store_index": f"stock-{uuid.uuid4().hex}", "index_dir": str(repo / ".code-alias")}
    index("stock_hybrid_indexing.yml", repo, **where)
    out = ask(recipe("stock_hybrid_query.yml", **where), INPUTS)
    check_rewrite(out)
    assert out["joiner"]["documents"][0].meta["file_path"].endswith(RETRY_FILE)


def test_stock_qdrant_local_recipe(repo: Path, tmp_path: Path) -> None:
    pytest.importorskip("haystack_integrations.document_stores.qdrant", reason="pip install qdrant-haystack")
    where = {"qdrant_path": str(tmp_path / "qdrant-data"), "index_dir": str(repo / ".code-alias")}
    indexing = index("stock_qdrant_indexing.yml", repo, **where)
    indexing.get_component("writer").document_store.close()  # one process may open a local Qdrant folder at a time
    query = recipe("stock_qdrant_query.yml", **where)
    out = ask(query, {"question_embedder": {"text": QUESTION}, "rewriter": {"question": QUESTION}})
    check_rewrite(out, first_pass=False)
    assert out["retriever"]["documents"][0].meta["file_path"].endswith(RETRY_FILE)
    query.get_component("retriever")._document_store.close()


@pytest.mark.elasticsearch
def test_stock_elasticsearch_recipe(repo: Path) -> None:
    url = os.environ.get("ELASTICSEARCH_URL", "").strip()
    if not url:
        pytest.skip("ELASTICSEARCH_URL is not set (CI starts the noida-db stand-in: .ci/start-noida.sh)")
    from tests.support.servers import server_info

    info = server_info()
    if info is None:
        pytest.skip(f"no Elasticsearch-protocol server answers at {url}")
    where = {"es_url": url, "store_index": f"stock-{uuid.uuid4().hex}", "index_dir": str(repo / ".code-alias")}
    indexing = index("stock_elasticsearch_indexing.yml", repo, **where)
    store = indexing.get_component("writer").document_store
    try:
        out = ask(recipe("stock_elasticsearch_query.yml", **where), INPUTS)
        rewrite = out["rewriter"]
        assert "withStripeBackoff" in rewrite["symbols"] and rewrite["meta"]["semantic"]["used"] is True
        files = [d.meta["file_path"] for d in out["joiner"]["documents"]]
        assert any(f.endswith(RETRY_FILE) for f in files[:3])
    finally:
        store.client.indices.delete(index=where["store_index"], ignore_unavailable=True)


def run_snippet(code: str, repo: Path, workdir: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Run a documentation snippet in `workdir`, where `path/to/repo` is a copy of the fixture repository and
    `pipelines/` the recipes; the model name stands for its packaged copy."""
    shutil.copytree(repo, workdir / "path/to/repo")
    shutil.copytree(PIPELINES, workdir / "pipelines")
    monkeypatch.chdir(workdir)
    monkeypatch.delenv("CODE_ALIAS_INDEX_DIR", raising=False)
    model = resolve_model("all-MiniLM-L6-v2")[0]
    if "pipelines/" in code or 'Path("pipelines"' in code:
        for path in (workdir / "pipelines").glob("*.yml"):
            path.write_text(path.read_text(encoding="utf-8").replace(MODEL_NAME, model), encoding="utf-8")
    namespace: dict[str, Any] = {}
    exec(compile(code.replace(MODEL_NAME, model), "snippet", "exec"), namespace)
    return namespace


def python_blocks(markdown: str, heading: str) -> list[str]:
    section = markdown.split(heading, 1)[1]
    level = heading.split(" ", 1)[0]
    section = re.split(rf"\n{level} ", section, maxsplit=1)[0]
    return re.findall(r"```python\n(.*?)```", section, flags=re.S)


def test_readme_stock_snippet_runs(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The README's python block of its stock-pipeline section."""
    blocks = python_blocks((ROOT / "README.md").read_text(encoding="utf-8"), "## In your own Haystack pipeline")
    assert len(blocks) == 1, "the section has one python snippet"
    namespace = run_snippet(blocks[0], repo, tmp_path / "work", monkeypatch)
    assert namespace["result"]["bm25"]["documents"][0].meta["file_path"].endswith(RETRY_FILE)


def test_docs_recipe_snippet_runs(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/stock-pipelines.md: the YAML recipes loaded and run as its Recipes section shows."""
    docs = (ROOT / "docs" / "stock-pipelines.md").read_text(encoding="utf-8")
    blocks = python_blocks(docs, "## Recipes (YAML, in `pipelines/`)")
    namespace = run_snippet(blocks[0], repo, tmp_path / "work", monkeypatch)
    assert namespace["result"]["bm25"]["documents"][0].meta["file_path"].endswith(RETRY_FILE)


PUBLIC = {"AliasDictionaryBuilder", "ConstrainedQueryRewriter", "SymbolFaithfulnessFilter"}


@pytest.mark.parametrize("path", sorted(PIPELINES.glob("stock_*.yml")), ids=lambda p: p.name)
def test_stock_recipes_use_haystack_components_and_only_the_three_of_ours(path: Path) -> None:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    ours = {
        spec["type"].rsplit(".", 1)[-1]
        for spec in data["components"].values()
        if spec["type"].startswith("haystack_integrations.components.code_alias.")
    }
    assert ours and ours <= PUBLIC, f"{path.name} uses {ours - PUBLIC}"
    pipeline = Pipeline.from_dict(local(data))
    again = Pipeline.loads(pipeline.dumps())
    assert again.to_dict()["components"] == pipeline.to_dict()["components"]
