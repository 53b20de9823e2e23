"""The fast paths: no model imported where none is needed, `--lexical` indexes that remember it, quiet output.

Each import check runs in a fresh interpreter (this test process may already hold torch), so a module-level
`import torch` anywhere on the lexical path, or a haystack that imports torch again, fails it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from haystack_integrations.components.code_alias import cli
from haystack_integrations.components.code_alias.app.search import CodeSearch
from haystack_integrations.components.code_alias.indexing import index_mode
from haystack_integrations.components.code_alias.progress import (
    DELAY_ENV,
    PROGRESS_ENV,
    progress_bar,
    progress_disabled,
    progress_enabled,
)
from tests.support.repos import ACME_REPO

MODEL_MODULES = ("torch", "sentence_transformers", "transformers")
# Prints which model modules a snippet left imported, as JSON on the last line of stdout.
REPORT = f"import json, sys; print(json.dumps(sorted(m for m in {MODEL_MODULES!r} if m in sys.modules)))"


def _python(code: str, *, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "HAYSTACK_TELEMETRY_ENABLED": "False", "HF_HUB_OFFLINE": "1", **(env or {})}
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=environment, timeout=300, check=False
    )


def _imported_models(result: subprocess.CompletedProcess[str]) -> list[str]:
    assert result.returncode == 0, result.stderr[-3000:]
    return list(json.loads(result.stdout.strip().splitlines()[-1]))


def _cli(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    code = (
        f"import sys; from haystack_integrations.components.code_alias.cli import main; sys.exit(main({list(argv)!r}))"
    )
    return _python(code, env=env)


# ---- nothing imports a model unless the pipeline needs one ----------------------------------------------------------
def test_a_lexical_index_and_ask_import_no_model(tmp_path: Path) -> None:
    """Index lexically, then ask without saying so (the index remembers): torch and friends never load."""
    code = f"""
from haystack_integrations.components.code_alias.app.search import CodeSearch
CodeSearch({str(tmp_path / "idx")!r}, lexical=True).index({str(ACME_REPO)!r})
search = CodeSearch({str(tmp_path / "idx")!r})
answer = search.ask("where do we retry failed stripe calls?")
assert search.retrieval == "lexical", search.retrieval
print(answer.files[0]["file_path"])
{REPORT}
"""
    result = _python(code)
    assert _imported_models(result) == []
    assert result.stdout.splitlines()[0] == "packages/payments-core/src/retry.ts", result.stdout


def test_haystack_itself_no_longer_imports_torch() -> None:
    """`import haystack` after this package: no torch; a device resolution then imports the real one."""
    code = """
import haystack_integrations.components.code_alias
from haystack import Pipeline
from haystack.utils import ComponentDevice
import sys
assert "torch" not in sys.modules, "import haystack imported torch"
device = ComponentDevice.resolve_device(None)
assert "torch" in sys.modules and sys.modules["torch"].__name__ == "torch"
import torch
assert isinstance(device.to_torch(), torch.device)
print("[]")
"""
    assert _imported_models(_python(code)) == []


def test_dict_commands_import_no_model(tmp_path: Path) -> None:
    """`code-alias dict lookup/complete/show` read the dictionary only."""
    index = str(tmp_path / "idx")
    assert _cli("index", str(ACME_REPO), "--lexical", "--index-dir", index).returncode == 0
    code = f"""
from haystack_integrations.components.code_alias.cli import main
for argv in (["dict", "lookup", "payments retry helper"], ["dict", "complete", "withStr"], ["dict", "show"]):
    assert main([*argv, "--index-dir", {index!r}]) == 0, argv
{REPORT}
"""
    assert _imported_models(_python(code)) == []


def test_serving_a_lexical_index_imports_no_model(tmp_path: Path) -> None:
    """`code-alias serve` on a lexical index (no CODE_ALIAS_LEXICAL needed): warm-up and an ask load no model."""
    index = str(tmp_path / "idx")
    code = f"""
import os
from haystack_integrations.components.code_alias.app.search import CodeSearch
from haystack_integrations.components.code_alias.serving.service import CodeAliasService, ServiceSettings
CodeSearch({index!r}, lexical=True).index({str(ACME_REPO)!r})
os.environ["CODE_ALIAS_INDEX_DIR"] = {index!r}
os.environ.pop("CODE_ALIAS_LEXICAL", None)
service = CodeAliasService(ServiceSettings.from_env())
service.warm_up()
assert service._search().retrieval == "lexical"
{REPORT}
"""
    assert _imported_models(_python(code)) == []


# ---- --lexical on the command line, remembered by the index ---------------------------------------------------------
def test_cli_lexical_index_then_ask_without_the_flag(tmp_path: Path) -> None:
    index = str(tmp_path / "idx")
    built = _cli("index", str(ACME_REPO), "--lexical", "--index-dir", index)
    assert built.returncode == 0, built.stderr
    assert "lexical: BM25 only" in built.stdout
    asked = _cli("ask", "where do we retry failed stripe calls?", "--index-dir", index, "--json")
    assert asked.returncode == 0, asked.stderr
    payload = json.loads(asked.stdout)
    assert payload["retrieval"] == "lexical" and payload["files"], payload
    text = _cli("ask", "where do we retry failed stripe calls?", "--index-dir", index)
    assert "retrieval: lexical" in text.stdout.splitlines()[-1], text.stdout  # said in the answer's footer


def test_hybrid_asked_of_a_lexical_index_says_how_to_fix_it(tmp_path: Path) -> None:
    folder = tmp_path / "idx"
    CodeSearch(folder, lexical=True).index(ACME_REPO)
    with pytest.raises(index_mode.RetrievalMismatchError, match="built with --lexical"):
        CodeSearch(folder, lexical=False).ask("where do we retry failed stripe calls?")
    with pytest.raises(index_mode.RetrievalMismatchError, match="cannot become hybrid"):
        CodeSearch(folder, lexical=False).index(ACME_REPO)
    with pytest.raises(index_mode.RetrievalMismatchError, match="built with --lexical"):
        CodeSearch(folder, llm=True).ask("where do we retry failed stripe calls?")
    # The default follows the index, and a refresh keeps it lexical.
    refreshed = CodeSearch(folder).index(ACME_REPO)
    assert refreshed["retrieval"] == "lexical"
    assert index_mode.recorded_retrieval(folder) == "lexical"


def test_cli_hybrid_on_a_lexical_index_is_one_clear_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "idx"
    CodeSearch(folder, lexical=True).index(ACME_REPO)
    code = cli.main(["ask", "retry", "--llm", "--index-dir", str(folder)])
    err = capsys.readouterr().err
    assert code == cli.EXIT_ERROR and "built with --lexical" in err and len(err.strip().splitlines()) == 1


def test_an_index_keeps_its_retrieval(tmp_path: Path) -> None:
    """The rules without building a hybrid index (no model): a recorded hybrid index refuses --lexical."""
    folder = tmp_path / "idx"
    assert index_mode.choose_for_build(folder, None, has_documents=False) == "hybrid"
    assert index_mode.choose_for_build(folder, True, has_documents=False) == "lexical"
    index_mode.record_retrieval(folder, "hybrid")
    assert index_mode.choose_for_build(folder, None, has_documents=True) == "hybrid"
    with pytest.raises(index_mode.RetrievalMismatchError, match="cannot become lexical"):
        index_mode.choose_for_build(folder, True, has_documents=True)
    assert index_mode.choose_for_build(folder, True, has_documents=False) == "lexical"  # nothing indexed yet
    assert index_mode.choose_for_query(folder, True) == "lexical"  # BM25 needs no vectors
    assert index_mode.choose_for_query(folder, None) == "hybrid"
    (folder / index_mode.MODE_FILE).write_text('{"retrieval": "sparse"}')
    with pytest.raises(index_mode.RetrievalMismatchError, match=r"retrieval\.json"):
        index_mode.recorded_retrieval(folder)


# ---- progress bars: one switch, and only on long work --------------------------------------------------------------
def test_no_progress_silences_every_indexing_bar(tmp_path: Path) -> None:
    """With bars forced on for short work (delay 0), `index` prints them; `--no-progress` prints none."""
    noisy = _cli("index", str(ACME_REPO), "--lexical", "--index-dir", str(tmp_path / "a"), env={DELAY_ENV: "0"})
    assert noisy.returncode == 0, noisy.stderr
    assert "Reading files" in noisy.stderr and "Indexing chunks" in noisy.stderr, noisy.stderr
    quiet = _cli(
        "--no-progress", "index", str(ACME_REPO), "--lexical", "--index-dir", str(tmp_path / "b"), env={DELAY_ENV: "0"}
    )
    assert quiet.returncode == 0, quiet.stderr
    assert quiet.stderr.strip() == "", quiet.stderr


def test_short_work_prints_no_bar_by_default(tmp_path: Path) -> None:
    result = _cli("index", str(ACME_REPO), "--lexical", "--index-dir", str(tmp_path / "a"))
    assert result.returncode == 0, result.stderr
    assert "Reading files" not in result.stderr and "it/s" not in result.stderr, result.stderr


def test_progress_switch_and_its_restoration(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv(PROGRESS_ENV, raising=False)
    monkeypatch.setenv(DELAY_ENV, "0")
    assert progress_enabled()
    from huggingface_hub import utils as hub

    assert not hub.are_progress_bars_disabled()
    with progress_disabled():
        assert not progress_enabled() and hub.are_progress_bars_disabled()  # through its switch, not the environment
        assert PROGRESS_ENV not in os.environ and "HF_HUB_DISABLE_PROGRESS_BARS" not in os.environ
        for _ in progress_bar(range(3), desc="hidden"):
            pass
    assert progress_enabled() and not hub.are_progress_bars_disabled()
    for _ in progress_bar(range(3), desc="shown"):
        pass
    for _ in progress_bar(range(3), desc="off by the caller", enabled=False):
        pass
    err = capsys.readouterr().err
    assert "shown" in err and "hidden" not in err and "off by the caller" not in err
    monkeypatch.setenv(DELAY_ENV, "soon")
    with pytest.raises(ValueError, match=DELAY_ENV):
        progress_bar(range(1))


def test_a_model_library_first_loaded_under_no_progress_keeps_its_bars_after() -> None:
    """
    transformers copies huggingface_hub's switch when first imported: loaded inside `--no-progress` (a model loaded
    by the command) it used to keep its bars off for the process, and the next model load then turned the hub's off
    for good (seen as a test that failed or passed by the order of the suite). In a fresh interpreter, as a first
    import.
    """
    code = (
        "from huggingface_hub import utils as hub\n"
        "from haystack_integrations.components.code_alias.progress import progress_disabled, quiet_model_loading\n"
        "with progress_disabled():\n"
        "    from transformers.utils import logging as tl\n"
        "    inside = [hub.are_progress_bars_disabled(), tl.is_progress_bar_enabled()]\n"
        "after_block = [hub.are_progress_bars_disabled(), tl.is_progress_bar_enabled()]\n"
        "with quiet_model_loading():\n"
        "    loading = [hub.are_progress_bars_disabled(), tl.is_progress_bar_enabled()]\n"
        "after_load = [hub.are_progress_bars_disabled(), tl.is_progress_bar_enabled()]\n"
        "import json; print(json.dumps([inside, after_block, loading, after_load]))\n"
    )
    result = _python(code, env={"PYTHONPATH": os.pathsep.join(sys.path)})
    assert result.returncode == 0, result.stderr
    inside, after_block, loading, after_load = json.loads(result.stdout.splitlines()[-1])
    assert inside == [True, False] and loading == [True, False]  # (hub bars disabled, transformers bars on)
    assert after_block == [False, True] and after_load == [False, True]


def test_bench_no_progress_turns_the_switch_off_for_the_run(tmp_path: Path) -> None:
    """`code-alias bench run --no-progress` runs with the switch off (the indexing bars read it) and restores it."""
    from haystack_integrations.components.code_alias.evaluation import runner

    seen: list[bool] = []

    def factory(args: object) -> object:
        seen.append(progress_enabled())
        raise ValueError("stop here")

    golden = tmp_path / "golden.jsonl"
    golden.write_text(json.dumps({"id": "q1", "question": "retry", "repo": str(ACME_REPO), "gold_files": ["a.py"]}))
    argv = ["run", "--golden", str(golden), "--out", str(tmp_path / "out"), "--no-progress"]
    assert runner.bench_main(argv, searcher_factory=factory) == 2  # type: ignore[arg-type]
    assert seen == [False] and progress_enabled()


# ---- model loading is quiet (needs the model) ----------------------------------------------------------------------
@pytest.mark.slow
def test_loading_the_question_embedder_prints_nothing() -> None:
    code = """
from haystack_integrations.components.code_alias.retrieval.embedders import CodeTextEmbedder
embedder = CodeTextEmbedder()
embedder.warm_up()
assert len(embedder.run(text="where is the retry helper?")["embedding"]) == 384
print("[]")
"""
    result = _python(code, env={DELAY_ENV: "0"})
    assert result.returncode == 0, result.stderr
    assert "Loading weights" not in result.stderr and "LOAD REPORT" not in result.stderr, result.stderr
