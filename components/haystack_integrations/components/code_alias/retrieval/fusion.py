"""`RankFusion`: BM25, embedding and the rewrite's definitions -> one ranking, weighted by the rewrite's confidence."""

from __future__ import annotations

import dataclasses
from pathlib import PurePosixPath
from typing import Any

from haystack import Document, component, default_from_dict, default_to_dict

from .._legacy import with_current_type
from ..core.fusion import RRF_K, Fused, definition_weight, protect_question_top, reciprocal_rank_fusion
from ..core.hints import SymbolEvidence, evidence_kinds
from ..core.reexports import declaration_stem
from ..core.testfiles import is_test_file

#: The named lists, in the order ties are broken.
LISTS: tuple[str, ...] = ("bm25", "embedding", "definitions")
#: Confidence assumed for a rewrite symbol that is not among the hints (an unconstrained LLM's choice).
UNKNOWN_CONFIDENCE = 0.3
#: Evidence that lets a definition take the first place whatever its confidence: the question spells out every
#: word of the name (a short question) and the first retrieval pass found its definition (BENCHMARKS.md 6).
DEFAULT_TOP_EVIDENCE: tuple[tuple[str, ...], ...] = (("described", "retrieved"),)


def _qualified(document: Document) -> str:
    return str(document.meta.get("qualified_name") or document.meta.get("symbol") or document.id)


def _file_path(document: Document) -> str:
    return str(document.meta.get("file_path") or "")


@component
class RankFusion:
    """
    Reciprocal rank fusion with named inputs, where the rewrite's list weighs what the rewrite is sure of.

    Each list has a weight by name (so, unlike a variadic joiner, the result never depends on which retriever
    finished first). The definitions list (`SymbolDefinitionRetriever`: the chunks defining the rewrite's symbols)
    is weighted per chunk by the confidence of its symbol, taken from the rewriter's `hints`. A symbol at least
    `strong_confidence` sure weighs its confidence; a weaker one weighs `weak_factor` times it where the question's
    own retrievers already ranked the chunk in their first `corroboration_depth` places (it has their votes too),
    `uncorroborated_factor` times it elsewhere. With `protect_top`, the first chunk (the first file) and the first
    definition (the first symbol) stay the question's own best (BM25 and embedding fused) unless a definition at
    least `top_confidence` sure outranks them, or one whose evidence holds every kind of one of the `top_evidence`
    sets (default: *described*, every word of its name in a short question, and *retrieved*, found by the first
    retrieval pass: the question spells the name out in words and the retrievers agree), and never from a
    member of a symbol the rewrite is sure of (`FilePathField`, nor a namesake `FilePathField` in another module,
    does not displace `FilePathField.formfield`). The first definition outside test files (the answer's first
    symbol when a test leads, since `FileRanker` demotes tests) is guarded against word-overlap guesses, and yields
    to any symbol at least `strong_confidence` sure. RRF's top is flat, so even a small weight would otherwise let
    a guess take it. So the rewrite adds candidates below the top, and takes the top only for a name the user
    wrote out or a nickname. See `core.fusion` for the formula. Every output document's `meta["fusion"]` says where
    it came from: its rank in each list, and for a definition, the symbol, its confidence and evidence (the *why*
    of a symbol answer), and `may_lead`, whether the definition is sure enough to be the answer's first symbol
    (`FileRanker` keeps the question's own best first against the others, whatever files it moves).

    ### Usage example

    ```python
    from haystack_integrations.components.code_alias.retrieval.fusion import RankFusion

    fusion = RankFusion(top_k=50)
    fused = fusion.run(bm25_documents=bm25_docs, embedding_documents=dense_docs,
                       definition_documents=definition_docs, hints=rewriter_output["hints"])["documents"]
    print(fused[0].meta["fusion"])   # {'score': ..., 'ranks': {'bm25': 1, 'definitions': 1}, 'symbol': ...}
    ```

    :param weights: Weight of each list by name (`bm25`, `embedding`, `definitions`); missing names weigh 1.0.
    :param k: The RRF constant.
    :param strong_confidence: Definitions of symbols at least this sure are promoted wherever they are.
    :param weak_factor: Weaker symbols' definitions weigh this times their confidence, when corroborated.
    :param uncorroborated_factor: Weaker symbols' definitions the question did not find weigh this times their
        confidence (0: a guess brings in nothing the question's retrievers did not find; the default 1.0 lets it
        add candidates below the guarded top, which measured +4 symbol hit@5 on SWE-QA dev, BENCHMARKS.md).
    :param namesake_factor: Where the question's own lists found a definition of a rewrite symbol, its other
        definitions (namesakes in other classes or modules) weigh this times their weight and may not take the
        top: the question already chose among them (BENCHMARKS.md 8, session 10).
    :param corroboration_depth: How deep in the BM25 and embedding lists a chunk counts as found by the question.
    :param confidence_weighting: False weighs every definition 1.0 (plain RRF, for ablations).
    :param protect_top: Keep the question's own best chunk (and best definition) first unless a definition at least
        `top_confidence` sure beats it.
    :param top_confidence: How sure a rewrite symbol must be to take the first place from the question's own best.
    :param top_evidence: Sets of evidence kinds (`core.hints`) that also let a definition take the first place when
        its symbol's evidence holds all the kinds of one set; None: `[["described", "retrieved"]]`, [] for none.
    :param top_k: Most documents to return.
    """

    def __init__(
        self,
        *,
        weights: dict[str, float] | None = None,
        k: float = RRF_K,
        strong_confidence: float = 0.5,
        weak_factor: float = 0.5,
        uncorroborated_factor: float = 1.0,
        namesake_factor: float = 0.25,
        corroboration_depth: int = 20,
        confidence_weighting: bool = True,
        protect_top: bool = True,
        top_confidence: float = 0.9,
        top_evidence: list[list[str]] | None = None,
        top_k: int | None = 50,
    ) -> None:
        unknown = set(weights or {}) - set(LISTS)
        if unknown:
            raise ValueError(f"weights: unknown list(s) {sorted(unknown)}; expected {list(LISTS)}")
        if namesake_factor < 0:
            raise ValueError(f"namesake_factor must be >= 0, got {namesake_factor}")
        if k <= 0:
            raise ValueError(f"k must be > 0, got {k}")
        if corroboration_depth <= 0:
            raise ValueError(f"corroboration_depth must be > 0, got {corroboration_depth}")
        if top_k is not None and top_k <= 0:
            raise ValueError(f"top_k must be > 0 or None, got {top_k}")
        self.weights = dict(weights or {})
        self.k = k
        self.strong_confidence = strong_confidence
        self.weak_factor = weak_factor
        self.uncorroborated_factor = uncorroborated_factor
        self.namesake_factor = namesake_factor
        self.corroboration_depth = corroboration_depth
        self.confidence_weighting = confidence_weighting
        self.protect_top = protect_top
        self.top_confidence = top_confidence
        self.top_evidence = [list(kinds) for kinds in (DEFAULT_TOP_EVIDENCE if top_evidence is None else top_evidence)]
        self._top_evidence_sets = [frozenset(kinds) for kinds in self.top_evidence if kinds]
        self.top_k = top_k

    @component.output_types(documents=list[Document])
    def run(
        self,
        bm25_documents: list[Document] | None = None,
        embedding_documents: list[Document] | None = None,
        definition_documents: list[Document] | None = None,
        hints: list[dict[str, Any]] | None = None,
        top_k: int | None = None,
        symbol_evidence: SymbolEvidence | None = None,
    ) -> dict[str, list[Document]]:
        """
        :param bm25_documents: The BM25 ranking.
        :param embedding_documents: The embedding ranking.
        :param definition_documents: The chunks defining the rewrite's symbols, in the rewrite's order.
        :param hints: The rewriter's hints (`name`, `confidence`, `reasons`), for each definition's weight.
        :param top_k: Overrides the init `top_k`.
        :param symbol_evidence: The same as `hints`, as the rewriter's read-only `symbol_evidence` (what the shipped
            pipelines connect: it costs nothing to pass); takes precedence over `hints`.
        :returns: `documents`: fused, best first, scored by the fusion, with `meta["fusion"]`.
        """
        named = {
            "bm25": bm25_documents or [],
            "embedding": embedding_documents or [],
            "definitions": definition_documents or [],
        }
        by_id: dict[str, Document] = {}
        for name in LISTS:
            for document in named[name]:
                by_id.setdefault(document.id, document)
        lists = {name: [d.id for d in documents] for name, documents in named.items() if documents}
        evidence = symbol_evidence if symbol_evidence is not None else SymbolEvidence.from_hints(hints or [])
        definition_symbols = {d.id: self._hint_of(d, evidence) for d in reversed(named["definitions"])}
        item_weights, top_confident, strong = self._definition_weights(named, definition_symbols)
        fused = reciprocal_rank_fusion(lists, weights=self.weights, item_weights=item_weights, k=self.k)
        if self.protect_top and self.confidence_weighting and fused and "definitions" in lists:
            fused = self._guard_top(fused, lists, by_id, top_confident, strong)
        limit = top_k or self.top_k
        guarded = self.protect_top and self.confidence_weighting
        documents = []
        for entry in fused[:limit] if limit else fused:
            document = by_id[entry.item]
            provenance: dict[str, Any] = {"score": round(entry.score, 6), "ranks": dict(entry.ranks)}
            if entry.item in definition_symbols and "definitions" in entry.contributions:
                symbol, hint = definition_symbols[entry.item]
                provenance["symbol"] = symbol
                if hint is not None:
                    provenance["confidence"] = hint[0]
                    provenance["evidence"] = list(hint[1])
                # Whether this definition may lead an answer: `FileRanker` keeps a guess out of the first symbol.
                provenance["may_lead"] = not guarded or entry.item in strong or entry.item in top_confident
            meta = {**document.meta, "fusion": provenance}
            documents.append(dataclasses.replace(document, score=entry.score, meta=meta, embedding=None))
        return {"documents": documents}

    def _definition_weights(
        self,
        named: dict[str, list[Document]],
        definition_symbols: dict[str, tuple[str, tuple[float, tuple[str, ...]] | None]],
    ) -> tuple[dict[str, dict[str, float]], set[str], set[str]]:
        """
        Each definition's weight (`core.fusion.definition_weight`), the definitions sure enough for the top, and
        those at least `strong_confidence` sure (a name the question writes out, not a word-overlap guess).
        """
        if not named["definitions"] or not self.confidence_weighting:
            return {}, set(), set()
        rank: dict[str, int] = {}  # each chunk's best place in the question's own lists
        for name in ("bm25", "embedding"):
            for position, document in enumerate(named[name], 1):
                rank[document.id] = min(position, rank.get(document.id, position))
        question_found = {item for item, position in rank.items() if position <= self.corroboration_depth}
        weights: dict[str, float] = {}
        top_confident: set[str] = set()
        strong: set[str] = set()
        for document in named["definitions"]:
            _, hint = definition_symbols[document.id]
            confidence = hint[0] if hint else UNKNOWN_CONFIDENCE
            if confidence >= self.top_confidence or (hint and self._evidence_may_take_top(hint[1])):
                top_confident.add(document.id)
            if confidence >= self.strong_confidence:
                strong.add(document.id)
            weights.setdefault(
                document.id,
                definition_weight(
                    confidence,
                    corroborated=document.id in question_found,
                    strong_confidence=self.strong_confidence,
                    weak_factor=self.weak_factor,
                    uncorroborated_factor=self.uncorroborated_factor,
                ),
            )
        for item in self._namesakes(named["definitions"], definition_symbols, rank):
            weights[item] *= self.namesake_factor
            top_confident.discard(item)
            strong.discard(item)
        return {"definitions": weights}, top_confident, strong

    def _namesakes(
        self,
        definition_documents: list[Document],
        definition_symbols: dict[str, tuple[str, tuple[float, tuple[str, ...]] | None]],
        rank: dict[str, int],
    ) -> set[str]:
        """
        The definitions of a rewrite symbol other than the one the question's own lists rank best, where those
        lists found one in their first `corroboration_depth` places: of `_destroy_test_db` in the sqlite3, base and
        oracle backends, a question about SQLite found the first, and the others are only namesakes. Parts of one
        long definition share its qualified name and are not namesakes. Not namesakes either: a `.d.ts`
        declaration (the same symbol as its implementation), a sibling in the best one's own file (flask's
        `TagTuple.to_json` beside `TagDict.to_json`: the question found the file, not the class), and every
        definition of the name when the best one calls `.name(` (a wrapper such as pyplot's `rc_context` or
        pytest's `Testdir.runpytest`, whose answer may be the wrapped one). `rank`: each chunk's best place in the
        question's own lists.
        """
        # A `.d.ts` declaration neither chooses among the namesakes nor is one (axios-5085: `index.d.ts`'s
        # `AxiosHeaders` and `AxiosHeaders.js`).
        definitions = [d for d in definition_documents if declaration_stem(_file_path(d)) is None]
        best: dict[str, tuple[int, str]] = {}  # symbol -> (rank, qualified name) of its best-found definition
        for document in definitions:
            found = rank.get(document.id, self.corroboration_depth + 1)
            if found <= self.corroboration_depth:
                symbol, here = definition_symbols[document.id][0], (found, _qualified(document))
                best[symbol] = min(best.get(symbol, here), here)
        files: dict[str, set[str]] = {}  # symbol -> the files of its best definition's chunks
        delegating: set[str] = set()
        for document in definitions:
            symbol = definition_symbols[document.id][0]
            if symbol in best and _qualified(document) == best[symbol][1]:
                files.setdefault(symbol, set()).add(_file_path(document))
                if f".{symbol.rsplit('.', 1)[-1]}(" in (document.content or ""):
                    delegating.add(symbol)
        return {
            document.id
            for document in definitions
            if (symbol := definition_symbols[document.id][0]) in best
            and symbol not in delegating
            and _qualified(document) != best[symbol][1]
            and _file_path(document) not in files[symbol]
        }

    def _evidence_may_take_top(self, reasons: tuple[str, ...]) -> bool:
        """Whether a symbol's evidence holds every kind of one of the `top_evidence` sets."""
        if not self._top_evidence_sets:
            return False
        kinds = evidence_kinds(reasons)
        return any(needed <= kinds for needed in self._top_evidence_sets)

    def _guard_top(
        self,
        fused: list[Fused],
        lists: dict[str, list[str]],
        by_id: dict[str, Document],
        top_confident: set[str],
        strong: set[str],
    ) -> list[Fused]:
        """The first chunk (the first file) and the first definition (the first symbol) stay the question's own."""
        defining = {d.id for d in by_id.values() if d.meta.get("qualified_name") or d.meta.get("symbol")}
        question_lists = {name: items for name, items in lists.items() if name != "definitions"}
        question_ranking = reciprocal_rank_fusion(question_lists, weights=self.weights, k=self.k)
        top_meta = by_id[question_ranking[0].item].meta if question_ranking else {}
        # The module remainder the question found first: a definition inside it is more specific.
        top_module = None if top_meta.get("qualified_name") else top_meta.get("file_path")

        # The short names of the symbols the rewrite is sure enough of to take the top.
        confident_names = {self._short_name(by_id[item].meta) for item in top_confident if item in by_id}

        def may_displace(item: str, best: str, allowed: set[str] = top_confident) -> bool:
            usurper, question_best = by_id[item].meta, by_id[best].meta
            # Never from one of its own members, nor from a member of any symbol the rewrite is sure of: the
            # question's own best `FilePathField.formfield` already answers "FilePathField" more specifically than
            # the class does, or than a namesake class in another module (Lite django-10924, BENCHMARKS.md 6).
            inner, outer = question_best.get("qualified_name"), usurper.get("qualified_name")
            if inner and outer and str(inner).startswith(f"{outer}."):
                return False
            if self._enclosing_names(question_best) & confident_names:
                return False
            if top_module is not None and usurper.get("file_path") == top_module:
                return True
            return item in allowed

        for among in (None, defining):
            fused = protect_question_top(fused, question_ranking, may_displace, among=among)
        # The first definition outside test files, which `FileRanker` makes the answer's first symbol when a test
        # leads: a word-overlap guess may not take it, a name the question writes out (`strong_confidence`) may.
        code = {item for item in defining if not is_test_file(_file_path(by_id[item]))}
        strong_or_top = strong | top_confident
        return protect_question_top(
            fused, question_ranking, lambda item, best: may_displace(item, best, strong_or_top), among=code
        )

    @staticmethod
    def _short_name(meta: dict[str, Any]) -> str:
        return str(meta.get("symbol") or meta.get("qualified_name") or "").rsplit(".", 1)[-1]

    @staticmethod
    def _enclosing_names(meta: dict[str, Any]) -> set[str]:
        """The classes (namespaces) a definition sits in: its qualified name's parts, less the name and the module."""
        parts = str(meta.get("qualified_name") or "").split(".")[:-1]
        path = PurePosixPath(str(meta.get("file_path") or ""))
        module = {*path.parent.parts, path.name.split(".", 1)[0]}  # `internal.d.ts` is the module `internal`
        return {part for part in parts if part and part not in module}

    @staticmethod
    def _hint_of(document: Document, hints: SymbolEvidence) -> tuple[str, tuple[float, tuple[str, ...]] | None]:
        """The rewrite symbol a definition chunk stands for, and its (confidence, reasons), None if not a hint."""
        symbol = str(document.meta.get("symbol") or document.meta.get("qualified_name") or "")
        qualified = str(document.meta.get("qualified_name") or "")
        hint = hints.get(symbol) or hints.get(qualified) or hints.get(qualified.rsplit(".", 1)[-1])
        return symbol, hint

    def to_dict(self) -> dict[str, Any]:
        return default_to_dict(
            self,
            weights=self.weights,
            k=self.k,
            strong_confidence=self.strong_confidence,
            weak_factor=self.weak_factor,
            uncorroborated_factor=self.uncorroborated_factor,
            namesake_factor=self.namesake_factor,
            corroboration_depth=self.corroboration_depth,
            confidence_weighting=self.confidence_weighting,
            protect_top=self.protect_top,
            top_confidence=self.top_confidence,
            top_evidence=self.top_evidence,
            top_k=self.top_k,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RankFusion:
        return default_from_dict(cls, with_current_type(data))
