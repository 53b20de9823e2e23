"""Hint evidence and confidence, the evidence-weighted fusion, and symbol answers (issue 13)."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from haystack import Document

from haystack_integrations.components.code_alias.core.builder import DictionaryBuilder, SourceText
from haystack_integrations.components.code_alias.core.fusion import (
    definition_weight,
    protect_question_top,
    reciprocal_rank_fusion,
)
from haystack_integrations.components.code_alias.core.hints import EVIDENCE_CONFIDENCE, HintIndex, combine_confidence
from haystack_integrations.components.code_alias.core.model import AliasDictionary
from haystack_integrations.components.code_alias.core.rewrite import dictionary_rewrite
from haystack_integrations.components.code_alias.retrieval.fusion import RankFusion
from haystack_integrations.components.code_alias.retrieval.results import FileRanker, rank_symbols

ACME = Path(__file__).parent / "fixtures" / "acme_repo"


@pytest.fixture(scope="module")
def dictionary() -> AliasDictionary:
    return DictionaryBuilder().build(ACME)[0]


@pytest.fixture(scope="module")
def hints(dictionary: AliasDictionary) -> HintIndex:
    return HintIndex(dictionary)


def _hint(index: HintIndex, question: str, name: str, **kwargs: object):  # type: ignore[no-untyped-def]
    found = {h.name: h for h in index.lookup(question, **kwargs)}  # type: ignore[arg-type]
    assert name in found, f"{name} not among the hints for {question!r}: {list(found)}"
    return found[name]


# ---- each evidence type ----------------------------------------------------------------------------------------
def test_exact_identifier_is_evidence_with_high_confidence(hints: HintIndex) -> None:
    hint = _hint(hints, "what calls PostJournal on month end?", "PostJournal")
    assert "exact" in hint.evidence and hint.reasons[0] == "exact"
    assert hint.confidence >= EVIDENCE_CONFIDENCE["exact"] - 1e-9


def test_fuzzy_identifier_is_evidence(hints: HintIndex) -> None:
    hint = _hint(hints, "withStripeBakoff is flaky", "withStripeBackoff")
    assert "fuzzy" in hint.evidence and "exact" not in hint.evidence
    assert 0.4 < hint.evidence["fuzzy"] < EVIDENCE_CONFIDENCE["fuzzy"] + 1e-9


def test_nickname_is_evidence_with_its_phrase(hints: HintIndex) -> None:
    hint = _hint(hints, "who owns the bouncer?", "AccessGate")
    assert hint.evidence["nickname"] == EVIDENCE_CONFIDENCE["nickname"]
    assert "nickname:the bouncer" in hint.reasons


def test_package_name_words_are_package_evidence(hints: HintIndex) -> None:
    hint = _hint(hints, "is payments core on the latest stripe api", "@acme/payments-core")
    assert hint.kind == "package" and "package" in hint.evidence and "words" not in hint.evidence


def test_all_words_of_a_split_and_some_words(hints: HintIndex) -> None:
    all_words = _hint(hints, "where do we mint session jwt tokens", "mint_session_jwt")
    assert all_words.evidence["all-words"] == EVIDENCE_CONFIDENCE["all-words"]  # three content words
    some = _hint(hints, "where is the session created", "mint_session_jwt")
    assert "words" in some.evidence and "all-words" not in some.evidence
    assert some.evidence["words"] < all_words.evidence["words"] + 1e-9


def test_a_short_question_that_uses_every_word_describes_the_name(hints: HintIndex) -> None:
    described = _hint(hints, "where do we mint session jwt tokens", "mint_session_jwt")
    assert "described" in described.reasons and described.evidence["described"] == 0.0  # a label: no confidence
    padding = " ".join(["and then the request goes on through the middleware"] * 5)  # a bug report's length
    long_text = _hint(hints, f"where do we mint session jwt tokens {padding}", "mint_session_jwt")
    assert "all-words" in long_text.reasons and "described" not in long_text.reasons
    assert long_text.confidence == pytest.approx(described.confidence, abs=0.05)


def test_docstring_words_are_evidence(hints: HintIndex) -> None:
    hint = _hint(hints, "where's the payments retry helper?", "withStripeBackoff")
    assert hint.evidence["doc"] == EVIDENCE_CONFIDENCE["doc"]
    assert "exact" not in hint.evidence and "all-words" not in hint.evidence


def test_abbreviation_table_is_labelled() -> None:
    sources = [SourceText("store.py", "def open_database_connection():\n    pass\n")]
    index = HintIndex(DictionaryBuilder().build_from_texts(sources)[0])
    hint = _hint(index, "db connection", "open_database_connection")
    assert "abbreviation" in hint.evidence
    written = _hint(index, "database connection", "open_database_connection")
    assert "abbreviation" not in written.evidence


def test_retrieved_evidence_decays_with_rank_and_adds_hints(hints: HintIndex) -> None:
    question = "where is the session created"
    plain = _hint(hints, question, "mint_session_jwt")
    first = _hint(hints, question, "mint_session_jwt", retrieved=["mint_session_jwt", "AccessGate"])
    second = _hint(hints, question, "mint_session_jwt", retrieved=["AccessGate", "mint_session_jwt"])
    assert "retrieved" not in plain.evidence
    assert first.evidence["retrieved"] > second.evidence["retrieved"] > 0
    assert first.confidence > second.confidence > plain.confidence
    assert first.score > plain.score and first.lexical_score == pytest.approx(plain.score)
    # A name only the retrieval pass found is offered (for an LLM to choose), but never put in the rewrite.
    only = _hint(hints, question, "AccessGate", retrieved=["AccessGate"])
    assert only.reasons == ["retrieved:#1"]
    rewrite = dictionary_rewrite(question, hints.lookup(question, retrieved=["AccessGate"]))
    assert "AccessGate" not in rewrite.symbols


def test_words_and_retrieval_together_make_a_strong_hint(hints: HintIndex) -> None:
    question = "where do we mint the session"
    weak = dictionary_rewrite(question, hints.lookup(question))
    corroborated = dictionary_rewrite(question, hints.lookup(question, retrieved=["mint_session_jwt"]))
    assert "mint_session_jwt" not in weak.symbols
    assert "mint_session_jwt" in corroborated.symbols


# ---- the confidence scale --------------------------------------------------------------------------------------
def test_confidence_orders_evidence_kinds(hints: HintIndex) -> None:
    exact = _hint(hints, "what calls PostJournal?", "PostJournal").confidence
    nickname = _hint(hints, "who owns the bouncer?", "AccessGate").confidence
    all_words = _hint(hints, "where do we mint session jwt tokens", "mint_session_jwt").confidence
    docstring = _hint(hints, "where's the payments retry helper?", "withStripeBackoff").confidence
    some_words = _hint(hints, "where is the session created", "mint_session_jwt").confidence
    assert exact > nickname > all_words > some_words
    assert all_words > docstring


def test_combine_confidence_is_noisy_or() -> None:
    assert combine_confidence([]) == 0.0
    assert combine_confidence([0.5, 0.5]) == pytest.approx(0.75)
    assert combine_confidence([0.2, 0.3]) > max(0.2, 0.3)
    assert combine_confidence([1.5, -1.0]) == 1.0  # clipped to [0, 1]


def test_hint_dict_carries_evidence_and_confidence(hints: HintIndex) -> None:
    data = _hint(hints, "what calls PostJournal?", "PostJournal").to_dict()
    assert set(data["evidence"]) >= {"exact"} and 0 < data["confidence"] <= 1  # type: ignore[operator]


# ---- fusion ----------------------------------------------------------------------------------------------------
def test_rrf_is_independent_of_list_order() -> None:
    lists = {"bm25": ["a", "b", "c"], "embedding": ["c", "a", "d"], "definitions": ["d", "b"]}
    weights = {"bm25": 1.0, "embedding": 0.7, "definitions": 0.4}
    results = set()
    for order in itertools.permutations(lists):
        fused = reciprocal_rank_fusion({name: lists[name] for name in order}, weights=weights)
        results.add(tuple((f.item, round(f.score, 12)) for f in fused))
    assert len(results) == 1
    fused = reciprocal_rank_fusion(lists, weights=weights, k=60)
    assert fused[0].item == "a"
    assert fused[0].score == pytest.approx(1.0 / 61 + 0.7 / 62)
    assert fused[0].ranks == {"bm25": 1, "embedding": 2}


def test_rrf_ties_are_deterministic_and_zero_weight_drops() -> None:
    fused = reciprocal_rank_fusion({"x": ["b", "a"], "y": ["a", "b"]})
    assert [f.item for f in fused] == ["b", "a"]  # tie: first appearance in the lists by sorted name
    dropped = reciprocal_rank_fusion({"x": ["a"], "y": ["b"]}, item_weights={"y": {"b": 0.0}})
    assert [f.item for f in dropped] == ["a"]
    with pytest.raises(ValueError, match="k must be"):
        reciprocal_rank_fusion({"x": ["a"]}, k=0)


def test_protect_question_top_only_yields_to_confident_items() -> None:
    lists = {"bm25": ["a", "b", "c"], "definitions": ["c"]}
    question = reciprocal_rank_fusion({"bm25": lists["bm25"]})
    fused = reciprocal_rank_fusion(lists)
    assert fused[0].item == "c"
    guarded = protect_question_top(fused, question, confident=set())
    assert [f.item for f in guarded] == ["a", "c", "b"]
    fused = reciprocal_rank_fusion(lists)
    assert [f.item for f in protect_question_top(fused, question, confident={"c"})] == ["c", "a", "b"]
    fused = reciprocal_rank_fusion(lists)
    # among the defining items {b, c}: b, the question's best of them, takes c's place and c follows it
    assert [f.item for f in protect_question_top(fused, question, confident=set(), among={"b", "c"})] == [
        "b",
        "c",
        "a",
    ]


def test_definition_weight_gates_weak_guesses() -> None:
    assert definition_weight(0.9, corroborated=False) == 0.9
    assert definition_weight(0.3, corroborated=False) == 0.0
    assert definition_weight(0.3, corroborated=True, weak_factor=0.5) == pytest.approx(0.15)
    assert definition_weight(0.3, corroborated=True, strong_confidence=0.2) == 0.3


def _doc(doc_id: str, path: str, name: str | None = None) -> Document:
    meta = {"file_path": path}
    if name:
        meta.update(symbol=name.rsplit(".", 1)[-1], qualified_name=name, kind="function", start_line=1, end_line=3)
    return Document(id=doc_id, content=doc_id, meta=meta)


BM25 = [_doc("a1", "a.py", "a.helper"), _doc("b1", "b.py", "b.other"), _doc("c1", "c.py", "c.get_root_path")]
GUESS = [_doc("c1", "c.py", "c.get_root_path")]


def _fuse(confidence: float, **kwargs: object) -> list[Document]:
    hints = [{"kind": "symbol", "name": "get_root_path", "confidence": confidence, "reasons": ["words", "doc"]}]
    out = RankFusion(**kwargs).run(bm25_documents=BM25, definition_documents=GUESS, hints=hints)  # type: ignore[arg-type]
    return out["documents"]


def test_a_weak_guess_cannot_take_rank_one_but_a_confident_one_can() -> None:
    weak = _fuse(0.2)
    assert [d.id for d in weak] == ["a1", "c1", "b1"]  # corroborated (BM25 #3) and weak: reorders below the top
    assert [d.score for d in weak] == sorted((d.score for d in weak), reverse=True)
    assert _fuse(0.95)[0].id == "c1"  # an identifier the user wrote: promoted
    assert _fuse(0.2, confidence_weighting=False)[0].id == "c1"  # plain RRF: the hijack the issue measured
    assert _fuse(0.2, protect_top=False)[0].id == "c1"  # RRF's flat top: even a small weight flips it


def test_a_weak_guess_outside_the_question_ranking_adds_a_candidate_below_the_top() -> None:
    hints = [{"kind": "symbol", "name": "elsewhere", "confidence": 0.2, "reasons": ["words"]}]
    far = [_doc("z1", "z.py", "z.elsewhere")]
    out = RankFusion().run(bm25_documents=BM25, definition_documents=far, hints=hints)["documents"]
    assert [d.id for d in out] == ["a1", "b1", "c1", "z1"]  # 0.2 / 61 ranks after BM25's #3 (1 / 63)
    closed = RankFusion(uncorroborated_factor=0.0).run(bm25_documents=BM25, definition_documents=far, hints=hints)
    assert [d.id for d in closed["documents"]] == ["a1", "b1", "c1"]  # 0: a guess brings in nothing new


def test_a_described_name_the_first_pass_found_may_take_rank_one() -> None:
    def fuse(reasons: list[str], **kwargs: object) -> list[str]:
        hints = [{"kind": "symbol", "name": "get_root_path", "confidence": 0.6, "reasons": reasons}]
        out = RankFusion(**kwargs).run(bm25_documents=BM25, definition_documents=GUESS, hints=hints)  # type: ignore[arg-type]
        return [d.id for d in out["documents"]]

    assert fuse(["retrieved:#3", "words", "all-words", "described"])[0] == "c1"  # spelled out, and BM25 found it
    assert fuse(["words", "all-words", "described"])[0] == "a1"  # spelled out alone: not enough for the top
    assert fuse(["retrieved:#3", "words", "all-words"])[0] == "a1"  # all words of a long text: chance
    assert fuse(["retrieved:#3", "words", "all-words", "described"], top_evidence=[])[0] == "a1"
    custom = fuse(["retrieved:#3", "doc"], top_evidence=[["doc", "retrieved"]])
    assert custom[0] == "c1"


def test_a_container_never_displaces_its_member() -> None:
    bm25 = [_doc("m", "f.py", "f.FilePathField.formfield"), _doc("c", "f.py", "f.FilePathField")]
    hints = [{"kind": "symbol", "name": "FilePathField", "confidence": 0.95, "reasons": ["exact"]}]
    out = RankFusion().run(bm25_documents=bm25, definition_documents=[bm25[1]], hints=hints)["documents"]
    assert [d.id for d in out] == ["m", "c"]


def test_a_namesake_in_another_module_never_displaces_a_member_of_the_named_symbol() -> None:
    # Lite django-10924: "Allow FilePathField path to accept a callable." The question's own best is the model
    # field's formfield; the rewrite's first FilePathField definition is the *form* field, another module.
    formfield = _doc("m", "django/db/models/fields/__init__.py", "django.db.models.fields.FilePathField.formfield")
    form_field = _doc("f", "django/forms/fields.py", "django.forms.fields.FilePathField")
    model_field = _doc("c", "django/db/models/fields/__init__.py", "django.db.models.fields.FilePathField")
    hints = [{"kind": "symbol", "name": "FilePathField", "confidence": 0.95, "reasons": ["exact"]}]
    out = RankFusion().run(
        bm25_documents=[formfield, form_field], definition_documents=[form_field, model_field], hints=hints
    )["documents"]
    assert [d.id for d in out][:2] == ["m", "f"]
    # The module path is no enclosing class: a symbol named like a folder ("fields") protects nothing.
    folder = [{"kind": "symbol", "name": "fields", "confidence": 0.95, "reasons": ["exact"]}]
    fields = _doc("x", "fields.py", "fields.fields")
    moved = RankFusion().run(bm25_documents=[formfield, fields], definition_documents=[fields], hints=folder)
    assert moved["documents"][0].id == "x"


def test_a_member_of_another_written_name_keeps_the_top() -> None:
    # Lite django-13658: "ManagementUtility instantiates CommandParser without ...": both names written; the
    # question's own best, ManagementUtility.execute, answers one of them more specifically than CommandParser.
    execute = _doc("e", "django/core/management/__init__.py", "django.core.management.ManagementUtility.execute")
    parser = _doc("p", "django/core/management/base.py", "django.core.management.base.CommandParser")
    utility = _doc("u", "django/core/management/__init__.py", "django.core.management.ManagementUtility")
    hints = [
        {"kind": "symbol", "name": "CommandParser", "confidence": 0.95, "reasons": ["exact"]},
        {"kind": "symbol", "name": "ManagementUtility", "confidence": 0.95, "reasons": ["exact"]},
    ]
    out = RankFusion().run(bm25_documents=[execute, parser], definition_documents=[parser, utility], hints=hints)
    assert out["documents"][0].id == "e"
    only_parser = RankFusion().run(bm25_documents=[execute, parser], definition_documents=[parser], hints=hints[:1])
    assert only_parser["documents"][0].id == "p"  # the one name written: it may take the top


def test_the_first_symbol_outside_tests_is_guarded_when_a_test_leads() -> None:
    # Lite sympy-24152: BM25's first is a test; the answer demotes tests, so its first symbol is the question's
    # best code definition, a member of the named class, which the class must not displace.
    test = _doc("t", "sympy/physics/quantum/tests/test_tensorproduct.py", "tests.test_tensorproduct.test_expand")
    member = _doc("m", "sympy/physics/quantum/tensorproduct.py", "quantum.tensorproduct.TensorProduct._eval_expand")
    owner = _doc("c", "sympy/physics/quantum/tensorproduct.py", "quantum.tensorproduct.TensorProduct")
    hints = [{"kind": "symbol", "name": "TensorProduct", "confidence": 0.95, "reasons": ["exact"]}]
    fused = RankFusion().run(bm25_documents=[test, member, owner], definition_documents=[owner], hints=hints)
    ranked = rank_symbols(fused["documents"], test_files="demote", question="Bug in expand of TensorProduct")
    assert [s["qualified_name"] for s in ranked][:2] == [member.meta["qualified_name"], owner.meta["qualified_name"]]


def test_when_a_test_leads_a_guess_may_not_take_the_first_code_symbol_but_a_written_name_may() -> None:
    # matplotlib-25311 (a guess held back) and preact-3345 full text (a name the issue writes out, 0.6 sure once
    # shared with the other names it writes, takes the first code symbol as it did before the guard).
    test = _doc("t", "tests/test_pickle.py", "tests.test_pickle.test_simple")
    own = _doc("p", "lib/pyplot.py", "pyplot.subplot")
    other = _doc("g", "hooks/src/index.js", "hooks.src.useErrorBoundary")

    def first_code(confidence: float) -> str:
        hints = [{"kind": "symbol", "name": "useErrorBoundary", "confidence": confidence, "reasons": ["exact"]}]
        fused = RankFusion().run(bm25_documents=[test, own, other], definition_documents=[other], hints=hints)
        return rank_symbols(fused["documents"], test_files="demote", question="where")[0]["qualified_name"]

    assert first_code(0.3) == "pyplot.subplot"  # a guess: the question's own best code definition stays first
    assert first_code(0.6) == "hooks.src.useErrorBoundary"  # written out: it may
    assert first_code(0.6) != first_code(0.49)  # the line is `strong_confidence`


def test_fusion_provenance_and_symbol_answers() -> None:
    documents = _fuse(0.95)
    assert documents[0].meta["fusion"]["ranks"] == {"bm25": 3, "definitions": 1}
    assert documents[0].meta["fusion"]["symbol"] == "get_root_path"
    answer = FileRanker(top_k=5).run(documents=documents, question="root path")
    top = answer["symbols"][0]
    assert top["qualified_name"] == "c.get_root_path" and top["file_path"] == "c.py" and top["rank"] == 1
    assert top["why"] == ["bm25 #3", "rewrite: get_root_path (words, doc, confidence 0.95)"]
    assert [f["file_path"] for f in answer["files"]][:1] == ["c.py"]


def test_rank_symbols_dedupes_and_puts_tests_last() -> None:
    documents = [
        _doc("t1", "tests/test_a.py", "test_a.test_helper"),
        _doc("a1", "a.py", "a.helper"),
        _doc("a2", "a.py", "a.helper"),  # a second chunk of the same definition
        _doc("m1", "a.py"),  # a module remainder: defines nothing
    ]
    ranked = rank_symbols(documents, test_files="demote", question="where is the helper")
    assert [s["qualified_name"] for s in ranked] == ["a.helper", "test_a.test_helper"]
    assert [s["rank"] for s in ranked] == [1, 2]
    kept = rank_symbols(documents, test_files="demote", question="which test covers the helper")
    assert kept[0]["qualified_name"] == "test_a.test_helper"


def test_rank_fusion_round_trips_and_validates() -> None:
    fusion = RankFusion(
        weights={"definitions": 0.5},
        strong_confidence=0.6,
        corroboration_depth=10,
        protect_top=False,
        top_evidence=[["exact", "retrieved"]],
        top_k=7,
    )
    again = RankFusion.from_dict(fusion.to_dict())
    assert again.to_dict() == fusion.to_dict() and again.top_evidence == [["exact", "retrieved"]]
    assert RankFusion.from_dict(RankFusion().to_dict()).top_evidence == [["described", "retrieved"]]
    with pytest.raises(ValueError, match="unknown list"):
        RankFusion(weights={"bm42": 1.0})


def test_the_first_symbol_is_guarded_too() -> None:
    # The question's best chunk is a module remainder (no symbol); its best definition is b.other. A weak guess
    # must not become the answer's first symbol either.
    bm25 = [_doc("m1", "m.py"), _doc("b1", "b.py", "b.other"), _doc("c1", "c.py", "c.get_root_path")]
    hints = [{"kind": "symbol", "name": "get_root_path", "confidence": 0.2, "reasons": ["words"]}]
    fused = RankFusion().run(bm25_documents=bm25, definition_documents=[bm25[2]], hints=hints)["documents"]
    assert [d.id for d in fused] == ["m1", "b1", "c1"]
    confident = [{**hints[0], "confidence": 0.9}]
    promoted = RankFusion().run(bm25_documents=bm25, definition_documents=[bm25[2]], hints=confident)["documents"]
    assert [d.id for d in promoted][:2] == ["c1", "m1"]


def test_many_written_names_each_say_less(hints: HintIndex) -> None:
    one = _hint(hints, "what calls PostJournal?", "PostJournal")
    many = _hint(hints, "PostJournal calls withStripeBackoff and mint_session_jwt via AccessGate", "PostJournal")
    assert "exact" in many.evidence
    assert many.evidence["exact"] == pytest.approx(one.evidence["exact"] / 2)  # four names written: / sqrt(4)


def test_a_definition_may_displace_the_module_it_is_in() -> None:
    # The question's best chunk is retry.ts's module remainder; the weak guess defined in that same file is more
    # specific and changes no file's place.
    bm25 = [_doc("mod", "retry.ts"), _doc("o", "other.ts", "other.x"), _doc("w", "retry.ts", "retry.withBackoff")]
    hints = [{"kind": "symbol", "name": "withBackoff", "confidence": 0.5, "reasons": ["retrieved:#2", "doc"]}]
    out = RankFusion().run(bm25_documents=bm25, definition_documents=[bm25[2]], hints=hints)["documents"]
    assert [d.id for d in out][:2] == ["w", "mod"]


def test_symbol_evidence_is_shared_not_copied_and_fuses_like_hints() -> None:
    import copy

    from haystack.core.pipeline.utils import _deepcopy_with_exceptions

    from haystack_integrations.components.code_alias.core.hints import SymbolEvidence

    hints = [{"kind": "symbol", "name": "get_root_path", "confidence": 0.95, "reasons": ["exact"]}]
    evidence = SymbolEvidence.from_hints(hints)
    assert evidence["get_root_path"] == (0.95, ("exact",))
    assert copy.deepcopy(evidence) is evidence and _deepcopy_with_exceptions(evidence) is evidence
    by_hints = RankFusion().run(bm25_documents=BM25, definition_documents=GUESS, hints=hints)["documents"]
    by_evidence = RankFusion().run(bm25_documents=BM25, definition_documents=GUESS, symbol_evidence=evidence)
    assert [d.id for d in by_hints] == [d.id for d in by_evidence["documents"]] == ["c1", "a1", "b1"]


def test_symbols_of_several_repositories_keep_their_repository() -> None:
    first, second = _doc("a1", "src/util.py", "util.helper"), _doc("b1", "src/util.py", "util.helper")
    first.meta["repo"], second.meta["repo"] = "acme/payments", "acme/web"
    ranked = rank_symbols([first, second, _doc("c1", "c.py", "c.other")])
    assert [(s.get("repo"), s["qualified_name"]) for s in ranked] == [
        ("acme/payments", "util.helper"),
        ("acme/web", "util.helper"),  # the same path and name in another repository is another symbol
        (None, "c.other"),
    ]
    assert "repo" not in ranked[2]  # a one-repository index answers as before


# ---- the first symbol after FileRanker moves files (BENCHMARKS.md 8, session 10) --------------------------------
def _def(path: str, symbol: str, content: str = "") -> Document:
    meta = {"file_path": path, "symbol": symbol, "qualified_name": f"hooks.src.{symbol}"}
    return Document(id=f"{path}:{symbol}", content=content or f"function {symbol}() {{}}", meta=meta)


def _hooks_answer(confidence: float, reasons: list[str]) -> list[str]:
    """preact-3739's shape: the declaration file leads BM25, the implementation follows it, a hint boosts useState."""
    declaration = Document(
        id="d.ts",
        content="export function useReducer(); export function useState();",
        meta={"file_path": "hooks/src/index.d.ts"},
    )
    other = _def("src/component.js", "Component")
    reducer, state = _def("hooks/src/index.js", "useReducer"), _def("hooks/src/index.js", "useState")
    fused = RankFusion(top_k=None).run(
        bm25_documents=[declaration, other, reducer, state],
        definition_documents=[state],
        hints=[{"name": "useState", "confidence": confidence, "reasons": reasons}],
    )["documents"]
    if confidence < 0.5:  # the guess lifts useState over useReducer, below the guarded top
        assert [d.meta.get("symbol") for d in fused][:4] == [None, "Component", "useState", "useReducer"]
    return [s["symbol"] for s in rank_symbols(fused, implementation_first=True)]


def test_a_guess_does_not_become_the_first_symbol_when_its_file_moves_up() -> None:
    # The implementation moves before its `.d.ts`, so its first chunk leads the answer: that stays BM25's best of
    # the file, not the definition a word-overlap guess boosted; the guess keeps its place right after it.
    assert _hooks_answer(0.2, ["words"]) == ["useReducer", "useState", "Component"]


def test_a_name_the_question_writes_out_may_lead_the_answer() -> None:
    assert _hooks_answer(0.95, ["exact"]) == ["useState", "Component", "useReducer"]  # the fusion let it lead


def test_the_fusion_says_which_definitions_may_lead_and_plain_rrf_guards_nothing() -> None:
    state = _def("hooks/src/index.js", "useState")
    weak = [{"name": "useState", "confidence": 0.2, "reasons": ["words"]}]
    fused = RankFusion().run(bm25_documents=[_def("a.js", "other")], definition_documents=[state], hints=weak)
    assert {d.meta["symbol"]: d.meta["fusion"].get("may_lead") for d in fused["documents"]} == {
        "other": None,
        "useState": False,
    }
    plain = RankFusion(confidence_weighting=False).run(definition_documents=[state], hints=weak)["documents"]
    assert plain[0].meta["fusion"]["may_lead"] is True


# ---- namesakes: the question chooses among the definitions of one name ------------------------------------------
def _backend(path: str, qualified: str) -> Document:
    meta = {"file_path": path, "symbol": "_destroy_test_db", "qualified_name": qualified}
    return Document(id=qualified, content="def _destroy_test_db(self): ...", meta=meta)


SQLITE = _backend("db/backends/sqlite3/creation.py", "sqlite3.DatabaseCreation._destroy_test_db")
BASE = _backend("db/backends/base/creation.py", "base.BaseDatabaseCreation._destroy_test_db")
ORACLE = _backend("db/backends/oracle/creation.py", "oracle.DatabaseCreation._destroy_test_db")
SIGNATURE = Document(
    id="signature",
    content="def test_db_signature(self): ...",
    meta={"file_path": "db/backends/sqlite3/creation.py", "symbol": "test_db_signature", "qualified_name": "sig"},
)


def _fused_names(fusion: RankFusion, bm25: list[Document], confidence: float) -> list[str]:
    hints = [{"name": "_destroy_test_db", "confidence": confidence, "reasons": ["words"]}]
    fused = fusion.run(bm25_documents=bm25, definition_documents=[SQLITE, BASE, ORACLE], hints=hints)
    return [d.id for d in fused["documents"]]


def test_namesakes_of_the_definition_the_question_found_weigh_little() -> None:
    # Lite django-12113: the sqlite3 question found sqlite3's `_destroy_test_db`; the base and oracle ones came in
    # only as namesakes and pushed the gold `test_db_signature` from 2nd to 5th.
    fillers = [Document(id=f"filler{i}", content="x", meta={"file_path": f"f{i}.py"}) for i in range(25)]
    bm25 = [SQLITE, *fillers, SIGNATURE]  # the gold chunk 27th, as chunk ranks go in a long list
    ranked = _fused_names(RankFusion(), bm25, 0.8)
    assert ranked.index(SIGNATURE.id) < ranked.index(BASE.id) < ranked.index(ORACLE.id)
    plain = _fused_names(RankFusion(namesake_factor=1.0), bm25, 0.8)
    assert plain.index(BASE.id) < plain.index(ORACLE.id) < plain.index(SIGNATURE.id)  # without the rule


def test_a_namesake_may_not_lead_even_for_a_name_written_out() -> None:
    hints = [{"name": "_destroy_test_db", "confidence": 0.95, "reasons": ["exact"]}]
    fused = RankFusion().run(bm25_documents=[SIGNATURE, SQLITE], definition_documents=[BASE, SQLITE], hints=hints)
    lead = {d.id: d.meta["fusion"].get("may_lead") for d in fused["documents"]}
    assert lead[SQLITE.id] is True and lead[BASE.id] is False


def test_when_the_question_found_none_of_them_every_definition_weighs_fully() -> None:
    other = Document(id="other", content="x", meta={"file_path": "x.py"})
    assert _fused_names(RankFusion(), [other], 0.4) == _fused_names(RankFusion(namesake_factor=1.0), [other], 0.4)
    with pytest.raises(ValueError, match="namesake_factor"):
        RankFusion(namesake_factor=-1.0)


def test_a_sibling_in_the_found_file_and_a_wrapped_definition_are_no_namesakes() -> None:
    fillers = [Document(id=f"filler{i}", content="x", meta={"file_path": f"f{i}.py"}) for i in range(25)]
    sibling = _backend(str(SQLITE.meta["file_path"]), "sqlite3.OtherCreation._destroy_test_db")
    hints = [{"name": "_destroy_test_db", "confidence": 0.8, "reasons": ["words"]}]

    def scores(best: Document, others: list[Document], factor: float = 0.25) -> dict[str, float]:
        fusion = RankFusion(namesake_factor=factor)
        fused = fusion.run(bm25_documents=[best, *fillers], definition_documents=[best, *others], hints=hints)
        return {d.id: float(d.score or 0.0) for d in fused["documents"]}

    # flask-010: the question found the file (TagDict.to_json); TagTuple.to_json beside it keeps its weight, the
    # definition in another module does not.
    ruled, plain = scores(SQLITE, [sibling, BASE]), scores(SQLITE, [sibling, BASE], 1.0)
    assert ruled[sibling.id] == pytest.approx(plain[sibling.id])
    assert ruled[BASE.id] == pytest.approx(plain[BASE.id] / 4)
    # matplotlib-23299: pyplot's rc_context calls matplotlib's, so no definition of the name is a namesake.
    wrapper = Document(
        id="wrapper",
        content="def _destroy_test_db(self):\n    return self.inner._destroy_test_db()",
        meta={"file_path": "pyplot.py", "symbol": "_destroy_test_db", "qualified_name": "pyplot._destroy_test_db"},
    )
    assert scores(wrapper, [BASE, ORACLE]) == pytest.approx(scores(wrapper, [BASE, ORACLE], 1.0))
