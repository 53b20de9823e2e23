"""The ranking stage (issue 42): candidate pools, features, the fit, the model file, the answer, the component."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import numpy as np
import pytest
from haystack import Document

from haystack_integrations.components.code_alias.ranking import fit, linear
from haystack_integrations.components.code_alias.ranking.answer import document_why, rank_pool
from haystack_integrations.components.code_alias.ranking.candidates import CandidatePool, QuestionContext
from haystack_integrations.components.code_alias.ranking.features import (
    FEATURES,
    INDEX,
    asks_about_tests,
    feature_matrix,
)
from haystack_integrations.components.code_alias.ranking.model import (
    CONFIDENCE_FEATURES,
    DEFAULT_MODEL_PATH,
    RankingModel,
    RankingModelError,
)
from haystack_integrations.components.code_alias.ranking.ranker import CodeRanker
from haystack_integrations.components.code_alias.rewriting.hints import HintEvidence, SymbolEvidence


def _doc(doc_id: str, path: str, name: str | None, content: str = "", score: float = 1.0, **meta: object) -> Document:
    base: dict[str, object] = {"file_path": path, "start_line": 1, "end_line": 10}
    if name:
        base.update({"symbol": name.rsplit(".", 1)[-1], "qualified_name": name, "kind": "function"})
    return Document(id=doc_id, content=content or f"def {name or 'x'}(): pass", meta={**base, **meta}, score=score)


def _hint(confidence: float, *kinds: str, rank: int = 1, similarity: float | None = None) -> HintEvidence:
    return HintEvidence(
        confidence=confidence,
        reasons=kinds,
        evidence=tuple(sorted((kind, confidence) for kind in kinds)),
        similarity=similarity,
        rank=rank,
    )


# ---- pools and features ---------------------------------------------------------------------------------------
def test_pool_holds_each_chunk_once_with_its_rank_in_every_list() -> None:
    bm25 = [_doc("a", "pay/retry.py", "retry", score=9.0), _doc("b", "pay/api.py", "charge", score=3.0)]
    definitions = [_doc("b", "pay/api.py", "charge"), _doc("c", "pay/stripe.py", "withStripeBackoff")]
    pool, documents = CandidatePool.from_documents(QuestionContext("q"), bm25=bm25, definitions=definitions)
    by_id = {c.id: c for c in pool.candidates}
    assert [c.id for c in pool.candidates] == ["a", "b", "c"] and set(documents) == {"a", "b", "c"}
    assert by_id["b"].ranks == {"bm25": 2, "definitions": 1} and by_id["b"].scores == {"bm25": 3.0}
    assert by_id["c"].ranks == {"definitions": 2} and by_id["c"].scores == {}


def test_pool_records_round_trip_and_give_the_same_features() -> None:
    hints = SymbolEvidence({"charge": _hint(0.8, "exact", "retrieved", similarity=0.41)}, packages={"@acme/pay": 0.5})
    context = QuestionContext("where is charge?", hints=hints, symbols=("charge",), packages=("@acme/pay",),
                              term_coverage=0.75)
    bm25 = [_doc("a", "pay/retry.py", "retry"), _doc("b", "pay/api.py", "charge", package="@acme/pay")]
    pool, _ = CandidatePool.from_documents(context, bm25=bm25, definitions=[bm25[1]])
    again = CandidatePool.from_record(json.loads(json.dumps(pool.to_record())))
    assert again.candidates == pool.candidates
    assert np.array_equal(feature_matrix(again), feature_matrix(pool), equal_nan=True)


def test_features_say_what_the_old_rules_looked_at() -> None:
    hints = SymbolEvidence({"charge": _hint(0.8, "exact", "described", rank=2, similarity=0.4)})
    context = QuestionContext("where is charge", hints=hints, symbols=("charge",), term_coverage=0.5)
    bm25 = [
        _doc("t", "tests/test_api.py", "test_charge", score=9.0),
        _doc("b", "pay/api.py", "charge", score=5.0),
        _doc("n", "other/api.py", "charge", score=1.0),  # a namesake: the question's lists found pay/api.py first
        _doc("d", "types/index.d.ts", "charge"),
        _doc("i", "types/index.js", "charge"),
    ]
    pool, _ = CandidatePool.from_documents(context, bm25=bm25, definitions=[bm25[1], bm25[2]])
    rows = {c.id: row for c, row in zip(pool.candidates, feature_matrix(pool), strict=True)}

    def value(item: str, name: str) -> float:
        return float(rows[item][INDEX[name]])

    assert value("t", "test_file") == 1.0 and value("b", "test_file") == 0.0
    assert value("b", "hint_confidence") == pytest.approx(0.8) and value("b", "evidence_exact") == pytest.approx(0.8)
    assert value("b", "label_described") == 1.0 and value("b", "hint_similarity") == pytest.approx(0.4)
    assert value("b", "chosen_rank") == 0.0 and value("b", "hint_log_rank") == 1.0  # first chosen, second hint
    assert math.isnan(value("t", "hint_confidence"))  # no hint names it
    assert value("n", "namesake") == 1.0 and value("b", "namesake") == 0.0
    assert value("d", "declaration_with_implementation") == 1.0 and value("i", "implementation_of_declaration") == 1.0
    assert value("b", "bm25_relative_score") == pytest.approx(5.0 / 9.0)
    assert value("b", "term_coverage") == 0.5 and value("b", "rewritten") == 1.0
    assert value("b", "name_written") == 1.0 and value("b", "name_share_in_question") == 1.0


def test_without_the_rewrite_no_hint_feature_is_known() -> None:
    pool, _ = CandidatePool.from_documents(QuestionContext("where is charge"), bm25=[_doc("b", "pay/api.py", "charge")])
    row = feature_matrix(pool)[0]
    assert row[INDEX["rewritten"]] == 0.0
    for name in ("hint_confidence", "chosen_rank", "definitions_log_rank", "card_similarity", "embedding_score"):
        assert math.isnan(row[INDEX[name]]), name


def test_near_duplicate_files_are_marked_as_copies() -> None:
    body = " ".join(f"token{i}" for i in range(40))
    bm25 = [_doc("a", "lib/index.d.ts", "A", content=body), _doc("b", "lib/index.d.cts", "A", content=body)]
    pool, _ = CandidatePool.from_documents(QuestionContext("q"), bm25=bm25)
    assert [c.copy for c in pool.candidates] == [False, True]
    plain, _ = CandidatePool.from_documents(QuestionContext("q"), bm25=bm25, near_duplicate_threshold=None)
    assert not any(c.copy for c in plain.candidates)


def test_a_question_about_tests_is_told_apart() -> None:
    assert asks_about_tests("which test covers the retry backoff?")
    assert asks_about_tests("where is test_encoding_preserved?")
    assert not asks_about_tests("where is the retry backoff?")
    assert not asks_about_tests("the test below fails " + "x" * 400)  # a long issue text mentions tests in passing


# ---- the answer from scores -------------------------------------------------------------------------------------
def test_answer_ranks_files_by_their_best_chunk_and_each_symbol_once() -> None:
    bm25 = [
        _doc("a1", "a.py", "A.run"),
        _doc("b1", "b.py", "helper"),
        _doc("a2", "a.py", "A.run", content="second part of A.run"),
        _doc("m", "c.py", None),  # a module remainder: counts for its file, is no symbol
    ]
    pool, _ = CandidatePool.from_documents(QuestionContext("q"), bm25=bm25)
    symbols, files = rank_pool(pool, np.array([0.2, 0.9, 0.8, 1.5]))
    assert [f["file_path"] for f in files] == ["c.py", "b.py", "a.py"]
    assert [h["qualified_name"] for h in files[2]["hits"]] == ["A.run", "A.run"]  # best first
    assert [s["qualified_name"] for s in symbols] == ["helper", "A.run"]
    assert symbols[1]["score"] == pytest.approx(0.8)  # its best chunk
    by_symbols, _ = rank_pool(pool, np.array([0.2, 0.9, 0.8, 1.5]), symbol_scores=np.array([2.0, 0.0, 0.0, 0.0]))
    assert [s["qualified_name"] for s in by_symbols] == ["A.run", "helper"]  # a model of its own for the symbols


# ---- fitting -------------------------------------------------------------------------------------------------
def _synthetic_dataset(questions: int, seed: int) -> fit.Dataset:
    """Pools where the gold chunk is the definition of a confident, chosen hint, wherever BM25 put it: a pattern a
    ranking by BM25 alone misses and a fitted model must find."""
    rng = random.Random(seed)
    out: list[fit.Question] = []
    blocks, labels = [], []
    start = 0
    for number in range(questions):
        gold = rng.randrange(1, 8)
        names = [f"f{number}_{i}" for i in range(10)]
        bm25 = [_doc(f"{number}-{i}", f"m{i}.py", name, score=10.0 - i) for i, name in enumerate(names)]
        decoy = rng.choice([i for i in range(10) if i != gold])
        hints = SymbolEvidence(
            {
                names[gold]: _hint(0.9, "exact", rank=1),
                names[decoy]: _hint(0.1, "doc", rank=2),
            }
        )
        context = QuestionContext(f"question {number}", hints=hints, symbols=(names[gold],), term_coverage=1.0)
        pool, _ = CandidatePool.from_documents(context, bm25=bm25, definitions=[bm25[gold], bm25[decoy]])
        label = np.array([2.0 if c.symbol == names[gold] else 0.0 for c in pool.candidates])
        question = fit.Question(
            key=str(number),
            set_name="synthetic",
            repo=f"repo{number % 3}",
            corpus=f"repo{number % 3}",
            item_id=str(number),
            query="title",
            rewrite="dictionary",
            pool=pool,
            gold_files=[f"m{gold}.py"],
            gold_functions=[(f"m{gold}.py", names[gold])],
            start=start,
            stop=start + len(pool.candidates),
        )
        start = question.stop
        out.append(question)
        blocks.append(feature_matrix(pool))
        labels.append(label)
    return fit.Dataset(questions=out, X=np.vstack(blocks), y=np.concatenate(labels))


def test_a_fitted_model_learns_the_pattern_out_of_fold() -> None:
    dataset = _synthetic_dataset(90, seed=3)
    small = {"min_data_in_leaf": 5, "num_leaves": 4}
    scores = fit.out_of_fold(dataset, fit=lambda data, chosen: fit.fit_ranker(data, chosen, params=small, rounds=30))
    metrics = fit.evaluate(dataset, scores)
    assert np.mean([m["acc@1"] for m in metrics]) > 0.95  # every repository scored by a model that never saw it
    bm25_only = fit.evaluate(dataset, -dataset.X[:, INDEX["bm25_log_rank"]])
    assert np.mean([m["acc@1"] for m in bm25_only]) < 0.2


def test_an_appended_feature_column_is_fitted_under_its_own_name() -> None:
    # an experiment (benchmarks/ranking_variants.py) appends columns after FEATURES: here one that marks the gold
    # chunk, beside the BM25 columns only (the synthetic gold is anywhere in BM25), so only it can place gold first
    dataset = _synthetic_dataset(60, seed=4)
    signal = (dataset.y >= 2).astype(np.float64)[:, None]
    bm25_only = np.zeros_like(dataset.X)
    for name in ("bm25_log_rank", "bm25_relative_score"):
        bm25_only[:, INDEX[name]] = dataset.X[:, INDEX[name]]
    dataset.X = np.hstack([bm25_only, signal])
    small = {"min_data_in_leaf": 5, "num_leaves": 4}
    names = (*FEATURES, "gold_marker")
    booster = fit.fit_ranker(dataset, dataset.questions, params=small, rounds=10, feature_names=names)
    assert booster.feature_name()[-1] == "gold_marker"
    importance = dict(zip(booster.feature_name(), booster.feature_importance("gain"), strict=True))
    assert max(importance, key=lambda name: importance[name]) == "gold_marker"
    scores = fit.out_of_fold(
        dataset, fit=lambda data, chosen: fit.fit_ranker(data, chosen, params=small, rounds=10, feature_names=names)
    )
    assert np.mean([m["acc@1"] for m in fit.evaluate(dataset, scores)]) > 0.95


@pytest.mark.parametrize("learner", ["logistic", "pairwise"])
def test_the_linear_learners_compared_in_benchmarks_learn_the_pattern_too(learner: str) -> None:
    # ranking/linear.py (benchmarks/ranking_variants.py --learner): "LambdaMART or a logistic model, whichever
    # measures better"
    dataset = _synthetic_dataset(90, seed=3)
    scores = fit.out_of_fold(dataset, fit=linear.fitter(learner, "files", set_weights={}, seed=1))
    assert np.mean([m["acc@1"] for m in fit.evaluate(dataset, scores)]) > 0.95
    ranker = linear.fit_linear(dataset, dataset.questions, kind="files", learner=learner)
    missing = np.isnan(dataset.X).any(axis=0)
    assert ranker.transform(dataset.X).shape[1] == dataset.X.shape[1] + int(missing.sum())  # an indicator per gap
    assert np.isfinite(ranker.predict(dataset.X)).all()


def test_confidence_and_threshold_are_fitted_out_of_fold() -> None:
    rng = np.random.default_rng(0)
    facts = rng.normal(size=(200, len(CONFIDENCE_FEATURES)))
    correct = facts[:, 0] + 0.3 * rng.normal(size=200) > 0
    model = fit.fit_confidence(facts, correct)
    probabilities = np.array([model.probability(dict(zip(model.features, row, strict=True))) for row in facts])
    assert probabilities[correct].mean() > probabilities[~correct].mean() + 0.3
    threshold = fit.abstention_threshold(probabilities, correct, right_abstaining=0.05)
    assert np.mean(probabilities[correct] < threshold) <= 0.05


# ---- the model file --------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def tiny_model() -> RankingModel:
    dataset = _synthetic_dataset(30, seed=5)
    small = {"min_data_in_leaf": 5, "num_leaves": 4}
    boosters = {kind: fit.fit_ranker(dataset, dataset.questions, kind=kind, params=small, rounds=10)
                for kind in ("files", "symbols")}
    return RankingModel.from_boosters(boosters, provenance={"command": "test"})


def test_model_round_trips_through_its_file(tmp_path: Path, tiny_model: RankingModel) -> None:
    path = tiny_model.save(tmp_path / "model.json")
    again = RankingModel.load(path)
    matrix = _synthetic_dataset(3, seed=9).X
    for kind in ("files", "symbols"):
        assert np.allclose(again.score(matrix, kind), tiny_model.score(matrix, kind))
    assert again.provenance == {"command": "test"} and again.features == FEATURES
    assert not list(tmp_path.glob(".model.json.*"))  # written atomically, nothing left behind


def test_model_file_problems_name_the_file(tmp_path: Path, tiny_model: RankingModel) -> None:
    data = tiny_model.to_dict()
    broken = tmp_path / "other-features.json"
    broken.write_text(json.dumps({**data, "features": ["bm25_log_rank"]}), encoding="utf-8")
    with pytest.raises(RankingModelError, match=r"other-features\.json.*fitted on other features"):
        RankingModel.load(broken)
    garbage = tmp_path / "garbage.json"
    garbage.write_text("{not json", encoding="utf-8")
    with pytest.raises(RankingModelError, match=r"garbage\.json"):
        RankingModel.load(garbage)
    with pytest.raises(RankingModelError, match="no ranking model there"):
        RankingModel.load(tmp_path / "missing.json")


def test_the_packaged_model_says_how_it_was_fitted() -> None:
    model = RankingModel.load(DEFAULT_MODEL_PATH)
    assert "fit_ranking.py" in model.provenance["command"]
    assert len(model.provenance["folds"]) >= 5  # repositories, never a question's own in its training fold
    assert model.confidence is not None and model.abstain_below is not None


# ---- the component ---------------------------------------------------------------------------------------------
def test_ranker_answers_with_symbols_files_confidence_and_provenance(tiny_model: RankingModel, tmp_path: Path) -> None:
    ranker = CodeRanker(top_k=3, model_path=str(tiny_model.save(tmp_path / "m.json")))
    bm25 = [_doc(f"d{i}", f"m{i}.py", f"f{i}", score=10.0 - i) for i in range(6)]
    hints = SymbolEvidence({"f4": _hint(0.9, "exact")})
    out = ranker.run(question="where is f4", bm25_documents=bm25, definition_documents=[bm25[4]],
                     symbol_evidence=hints, symbols=["f4"])
    assert len(out["symbols"]) == 3 and len(out["files"]) == 3
    assert out["documents"][0].meta["ranking"]["score"] >= out["documents"][-1].meta["ranking"]["score"]
    named = next(d for d in out["documents"] if d.id == "d4")
    assert named.meta["ranking"]["symbol"] == "f4" and "rewrite: f4 (exact, confidence 0.90)" in document_why(named)
    assert out["confidence"] is None and out["abstained"] is False  # this model has no confidence part
    empty = ranker.run(question="qwzx")
    assert empty["symbols"] == [] and empty["abstained"] is False


def test_ranker_serialises_and_rejects_bad_settings() -> None:
    ranker = CodeRanker(top_k=7, model_path="some/model.json", near_duplicate_threshold=None, documents_top_k=None)
    again = CodeRanker.from_dict(ranker.to_dict())
    assert (again.top_k, again.model_path, again.near_duplicate_threshold, again.documents_top_k) == (
        7, "some/model.json", None, None
    )
    with pytest.raises(ValueError, match="top_k"):
        CodeRanker(top_k=0)
    with pytest.raises(ValueError, match="near_duplicate_threshold"):
        CodeRanker(near_duplicate_threshold=1.5)


def test_packaged_model_abstains_when_nothing_matched() -> None:
    out = CodeRanker().run(question="qwzx flurb blorp")
    assert out["symbols"] == [] and out["confidence"] == 0.0 and out["abstained"] is True
