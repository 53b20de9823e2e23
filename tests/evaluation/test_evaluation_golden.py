"""Golden sets: the JSONL format, the SWE-bench loader, and gold functions derived from patches."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from haystack_integrations.components.code_alias.evaluation.corpus import CorpusCache
from haystack_integrations.components.code_alias.evaluation.golden import (
    GoldenError,
    GoldenItem,
    GoldFunction,
    gold_functions_for,
    load_golden,
    load_swebench,
    save_golden,
)
from haystack_integrations.components.code_alias.evaluation.runner import default_extract
from tests.support.repos import FIXTURES

EVALUATION_FIXTURES = FIXTURES / "evaluation"
SWEBENCH = EVALUATION_FIXTURES / "swebench_mini.jsonl"


def test_load_swebench_derives_gold_and_keeps_labels() -> None:
    items = load_swebench(SWEBENCH)
    # acme__payments-3 changes only a test file: no gold, left out
    assert [item.id for item in items] == ["acme__payments-1", "acme__payments-2", "acme__payments-4"]
    first, second, _ = items
    assert first.gold_files == ["src/payments/retry.py"]  # tests/test_retry.py left out
    assert second.gold_files == ["src/payments/client.py", "src/payments/ledger.py"]
    assert first.question == first.title == "Backoff grows without bound"
    assert second.title == "refund() and balance() choke on messy input"  # first non-empty line
    assert first.full_text is not None and "doubles forever" in first.full_text
    assert first.repo == "acme/payments" and first.version == "1.0" and first.base_commit == "0" * 40
    assert first.meta["file_location_hint"] == "None" and first.meta["created_at"] == "2024-01-01T00:00:00Z"
    assert first.names_file is False and second.names_file is True
    assert first.gold_symbols == [] and first.patch is not None
    assert first.question_for("full") == first.full_text and first.question_for("title") == first.title


def test_load_swebench_full_queries() -> None:
    items = load_swebench(SWEBENCH, query="full")
    assert items[0].question.startswith("Backoff grows without bound\r\nWhen the provider")


def test_load_swebench_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"instance_id": "x", "problem_statement": "y"}\n')
    with pytest.raises(GoldenError, match=r"bad.jsonl:1: SWE-bench instance lacks patch"):
        load_swebench(bad)
    bad.write_text("\n{not json\n")
    with pytest.raises(GoldenError, match=r"bad.jsonl:2: not JSON"):
        load_swebench(bad)
    with pytest.raises(GoldenError, match="cannot read"):
        load_swebench(tmp_path / "absent.jsonl")


def test_golden_jsonl_round_trip_and_validation(tmp_path: Path) -> None:
    items = [
        GoldenItem(
            id="q1",
            question="where is the retry helper?",
            gold_files=["src/payments/retry.py"],
            gold_symbols=["src/payments/retry.py::with_stripe_backoff"],
            repo="acme/payments",
            meta={"file_location_hint": "None"},
        ),
        GoldenItem(id="q2", question="how are refunds made?", gold_files=["src/payments/client.py"]),
    ]
    path = save_golden(items, tmp_path / "golden.jsonl")
    lines = path.read_text().splitlines()
    assert json.loads(lines[1]) == {
        "id": "q2",
        "question": "how are refunds made?",
        "gold_files": ["src/payments/client.py"],
    }
    assert load_golden(path) == items
    path.write_text(lines[0] + "\n" + '{"id": "q3", "question": "x"}\n')
    with pytest.raises(GoldenError, match=r"golden.jsonl:2: invalid golden item at gold_files"):
        load_golden(path)
    path.write_text('{"id": "q4", "question": "x", "gold_files": [], "surprise": 1}\n')
    with pytest.raises(GoldenError, match="surprise"):
        load_golden(path)


def test_gold_functions_from_patches_in_the_repository_layout() -> None:
    corpus = CorpusCache().local(EVALUATION_FIXTURES / "minirepo")
    first, second, module_level = load_swebench(SWEBENCH)
    functions, complete = gold_functions_for(first, corpus.read, default_extract)
    assert complete
    assert functions == [
        GoldFunction(
            file="src/payments/retry.py",
            local_name="with_stripe_backoff",
            qualified_name="payments.retry.with_stripe_backoff",
        )
    ]
    functions, complete = gold_functions_for(second, corpus.read, default_extract)
    assert complete
    assert [(f.file, f.local_name) for f in functions] == [
        ("src/payments/client.py", "StripeClient.refund"),  # a line inserted inside refund's body
        ("src/payments/ledger.py", "balance"),
    ]
    # a module-level change has no gold function: not usable for function-level metrics
    assert gold_functions_for(module_level, corpus.read, default_extract) == ([], False)


def test_gold_functions_in_a_wheel_layout(tmp_path: Path) -> None:
    wheel_like = tmp_path / "wheel"
    shutil.copytree(EVALUATION_FIXTURES / "minirepo" / "src", wheel_like)  # payments/ at the root, like a wheel
    corpus = CorpusCache(tmp_path / "cache").local(wheel_like)
    first = load_swebench(SWEBENCH)[0]
    functions, complete = gold_functions_for(first, corpus.read, default_extract)
    assert complete and [(f.file, f.local_name) for f in functions] == [("payments/retry.py", "with_stripe_backoff")]
    # a corpus without the file: incomplete
    (wheel_like / "payments" / "retry.py").unlink()
    assert gold_functions_for(first, corpus.read, default_extract) == ([], False)


def test_gold_functions_from_gold_symbols() -> None:
    corpus = CorpusCache().local(EVALUATION_FIXTURES / "minirepo")
    item = GoldenItem(
        id="q",
        question="q",
        gold_files=["src/payments/retry.py"],
        gold_symbols=["src/payments/retry.py::RetryPolicy.delays", "balance"],
    )
    functions, complete = gold_functions_for(item, corpus.read, default_extract)
    assert complete
    assert [(f.file, f.local_name) for f in functions] == [
        ("src/payments/retry.py", "RetryPolicy.delays"),
        ("", "balance"),
    ]
    missing = item.model_copy(update={"gold_symbols": ["src/payments/nothing.py::f"]})
    assert gold_functions_for(missing, corpus.read, default_extract) == ([], False)
