"""The calibration's fit (held-out split, output) and the hint replay's first-pass reconstruction."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from haystack_integrations.components.code_alias.rewriting.hints import EVIDENCE_CONFIDENCE, RETRIEVED_DEPTH, fit
from haystack_integrations.components.code_alias.rewriting.hints.calibration import HintCalibration


def _hint(name: str, *, similarity: float, evidence: dict[str, float], confidence: float) -> dict:
    return {
        "name": name,
        "kind": "symbol",
        "confidence": confidence,
        "similarity": similarity,
        "evidence": evidence,
        "definitions": [["m.py", name]],
    }


def _run(folder: Path, questions: int) -> Path:
    """A run whose gold hint is the near card with words; the others are far or only share a word."""
    folder.mkdir()
    rows = []
    for i in range(questions):
        hints = [
            _hint(f"gold_{i}", similarity=0.6, evidence={"semantic": 0.5, "words": 0.1}, confidence=0.6),
            _hint(f"near_{i}", similarity=0.55, evidence={"semantic": 0.4}, confidence=0.4),
            _hint(f"word_{i}", similarity=0.2, evidence={"words": 0.1, "doc": 0.1}, confidence=0.2),
            _hint(f"far_{i}", similarity=0.1, evidence={"doc": 0.1}, confidence=0.1),
        ]
        if i % 3 == 0:  # some questions' gold is the word hint: both classes in every model
            hints[0]["name"], hints[2]["name"] = hints[2]["name"], hints[0]["name"]
        gold = f"gold_{i}"
        rows.append({"id": f"q-{i}", "rewrite": "dictionary", "gold_functions": [["m.py", gold]], "hints": hints})
    (folder / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return folder


def test_the_held_out_split_is_stable_and_about_its_share() -> None:
    ids = [f"sweqa-dev-{i:03d}" for i in range(1000)]
    chosen = [i for i in ids if fit.held_out(i, 0.3)]
    assert chosen == [i for i in ids if fit.held_out(i, 0.3)]  # the same questions every time
    assert 250 < len(chosen) < 350
    assert not any(fit.held_out(i, 0.0) for i in ids)
    assert set(chosen) <= {i for i in ids if fit.held_out(i, 0.5)}  # a larger share holds the smaller one


def test_the_fit_leaves_the_held_out_questions_out_and_writes_where_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _run(tmp_path / "run", 60)
    out = tmp_path / "calibration.json"
    fit.main([str(run), "--l2", "0.1", "--held-out", "0.3", "--write", "--output", str(out)])
    printed = capsys.readouterr().out
    held = sum(fit.held_out(f"q-{i}", 0.3) for i in range(60))
    assert f"held out ({held} questions) AUC" in printed
    calibration = HintCalibration.load(out)
    assert f"{60 - held} dictionary rows, {held} held out" in calibration.source
    # the near card with words is likelier gold than a far word-only hint
    near = calibration.hint_confidence({"words": 0.1}, (0.6, 0, 0.6), 0.6)
    far = calibration.hint_confidence({"doc": 0.1}, None, 0.1)
    assert near is not None and far is not None and near > far


def test_the_replay_reads_the_first_pass_back_from_recorded_evidence() -> None:
    decay = [1.0 - rank / RETRIEVED_DEPTH for rank in range(3)]
    hints = [
        {"name": "third", "evidence": {"retrieved": EVIDENCE_CONFIDENCE["retrieved"] * decay[2], "words": 0.1}},
        {"name": "plain", "evidence": {"words": 0.1}},
        {"name": "first", "evidence": {"retrieved": EVIDENCE_CONFIDENCE["retrieved"] * decay[0]}},
        {"name": "second", "evidence": {"retrieved": EVIDENCE_CONFIDENCE["retrieved"] * decay[1]}},
    ]
    assert fit.recorded_retrieved(hints) == ["first", "second", "third"]
    reasons = [{"name": "b", "reasons": ["retrieved:#2"]}, {"name": "a", "reasons": ["words", "retrieved:#1"]}]
    assert fit.recorded_retrieved(reasons) == ["a", "b"]
