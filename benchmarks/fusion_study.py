"""How should the rewrite's definitions list be fused? Record each retriever's list once, then replay fusions.

Two steps, so that trying a fusion costs milliseconds instead of a benchmark run:

1. ``record``: runs the evaluation harness (`code-alias bench run`) with a searcher that is the product's own
   `PipelineSearcher` plus a recorder: for every question it stores the BM25 list (raw question), the embedding
   list (raw question, and rewritten question), the definitions list and the rewrite's hints with their
   confidence. Arguments after ``record`` are the harness's own (``--golden``/``--swebench``, ``--corpus``...);
   add ``--rewrites none,dictionary`` so both lists are there. Writes ``<out>/lists.jsonl`` beside the harness's
   ``results.jsonl`` (which holds the gold).

2. ``replay --out DIR [DIR ...]``: fuses the stored lists under several strategies with the product's own
   `RankFusion` and file/symbol ranking (test files after code), and prints file Acc@1/Acc@5, hit@1/5 and
   symbol hit@1/5, each with the paired wins/losses and sign-test p against the same retrieval without the
   rewrite.

    python benchmarks/fusion_study.py record --golden ../shared/bench/swe_qa_dev_primary.jsonl --corpus git \
        --git-root /work/.mirror --cache-dir $PWD/.bench-cache --lexical --rewrites none,dictionary \
        --out .bench-cache/results/study-sweqa-lexical
    python benchmarks/fusion_study.py replay --out .bench-cache/results/study-sweqa-lexical
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from haystack import Document

from haystack_integrations.components.code_alias.core.fusion import reciprocal_rank_fusion
from haystack_integrations.components.code_alias.core.hints import DESCRIBED_MAX_WORDS, evidence_kinds
from haystack_integrations.components.code_alias.evaluation.bench_searcher import PipelineSearcher, make_searcher
from haystack_integrations.components.code_alias.evaluation.golden import load_golden, load_swebench
from haystack_integrations.components.code_alias.evaluation.metrics import (
    file_metrics,
    mean,
    sign_test_p_value,
    symbol_metrics,
)
from haystack_integrations.components.code_alias.evaluation.runner import SearchResult, bench_main
from haystack_integrations.components.code_alias.retrieval.fusion import RankFusion
from haystack_integrations.components.code_alias.retrieval.results import rank_files, rank_symbols

# ---- recording -------------------------------------------------------------------------------------------------


def _slim(documents: list[Document]) -> list[dict[str, Any]]:
    return [
        {
            "id": d.id,
            "file_path": d.meta.get("file_path"),
            "qualified_name": d.meta.get("qualified_name"),
            "symbol": d.meta.get("symbol"),
            "kind": d.meta.get("kind"),
            # The chunk's size: what a replay of a minimum size for a list reads.
            "chars": len(d.content or ""),
            "lines": (d.content or "").count("\n") + 1,
        }
        for d in documents
    ]


class RecordingSearcher(PipelineSearcher):
    """The product's searcher, which also stores each retriever's list per (question, rewrite)."""

    def __init__(self, out: Path, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._out = out
        self._recorded: set[tuple[str, str]] = set()
        if (out / "lists.jsonl").is_file():
            for line in (out / "lists.jsonl").read_text(encoding="utf-8").splitlines():
                row = json.loads(line)
                self._recorded.add((row["question"], row["rewrite"]))

    def search(self, question: str, *, rewrite: str, retrieval: str, top_k: int) -> SearchResult:
        result = super().search(question, rewrite=rewrite, retrieval=retrieval, top_k=top_k)
        if (question, rewrite) not in self._recorded:
            answer = self._answers[(question, rewrite)]
            row = {
                "question": question,
                "rewrite": rewrite,
                "bm25": _slim(answer.bm25_documents),
                "embedding": _slim(answer.embedding_documents),
                "definitions": _slim(answer.definition_documents),
                "hints": [
                    {k: h.get(k) for k in ("kind", "name", "confidence", "reasons")}
                    for h in answer.rewrite.get("hints", [])
                ],
                "symbols": answer.rewrite.get("symbols", []),
            }
            self._out.mkdir(parents=True, exist_ok=True)
            with (self._out / "lists.jsonl").open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(row) + "\n")
            self._recorded.add((question, rewrite))
        return result


def record(argv: list[str]) -> int:
    out = Path(argv[argv.index("--out") + 1])

    def factory(args: argparse.Namespace) -> RecordingSearcher:
        base = make_searcher(args)
        return RecordingSearcher(
            out,
            cache_dir=base.cache_dir,
            lexical=base.lexical,
            candidates=base.candidates,
            chat_generator=base.chat_generator,
            rewriter_params=base.rewriter_params,
        )

    return bench_main(["run", *argv], searcher_factory=factory)


# ---- replaying -------------------------------------------------------------------------------------------------


def _documents(rows: list[dict[str, Any]]) -> list[Document]:
    return [
        Document(id=r["id"], content="", meta={k: r[k] for k in ("file_path", "qualified_name", "symbol") if r[k]})
        for r in rows
    ]


def add_described(row: dict[str, Any]) -> dict[str, Any]:
    """
    The "described" label by today's rule in `HintIndex.lookup` ("all-words" in a question of at most
    `DESCRIBED_MAX_WORDS` words), so replays of lists recorded under an older rule (or
    before the label) fuse like today.
    """
    short = len(row["question"].split()) <= DESCRIBED_MAX_WORDS
    for hint in row["hints"]:
        reasons = [r for r in hint.get("reasons") or [] if r != "described"]
        kinds = evidence_kinds(reasons)
        if short and "all-words" in kinds:
            reasons.append("described")
        hint["reasons"] = reasons
    return row


Strategy = Callable[[dict[str, Any], dict[str, Any], str], list[Document]]


def rank_level_consensus(raw: list[Document], rewritten: list[Document]) -> list[Document]:
    """DESIGN.md's floor: equal-weight RRF of the ranking without the rewrite and the ranking with it."""
    by_id = {d.id: d for d in [*raw, *rewritten]}
    fused = reciprocal_rank_fusion({"a_raw": [d.id for d in raw], "b_rewrite": [d.id for d in rewritten]})
    return [by_id[f.item] for f in fused]


def strategies(retrieval: str) -> dict[str, Strategy]:
    """name -> (raw row, rewrite row, retrieval) -> fused chunk ranking."""

    def lists(
        raw: dict[str, Any], rw: dict[str, Any], embedding_from: str, variant: EmbeddingVariant | None = None
    ) -> dict[str, list[Document]]:
        found: dict[str, list[Document]] = {"bm25_documents": _documents(raw["bm25"])}
        if retrieval in ("hybrid", "embedding"):
            rows = (raw if embedding_from == "raw" else rw)["embedding"]
            found["embedding_documents"] = _documents(variant(rows) if variant else rows)
        if retrieval == "embedding":
            found.pop("bm25_documents")
        return found

    def fusion(variant: EmbeddingVariant | None = None, **params: Any) -> Strategy:
        def run(raw: dict[str, Any], rw: dict[str, Any], embedding_from: str = "rewrite") -> list[Document]:
            out = RankFusion(top_k=None, **params).run(
                **lists(raw, rw, embedding_from, variant),
                definition_documents=_documents(rw["definitions"]),
                hints=rw["hints"],
            )
            return list(out["documents"])

        return run

    def unrewritten(variant: EmbeddingVariant | None = None, **params: Any) -> Strategy:
        def run(raw: dict[str, Any], rw: dict[str, Any], _: str) -> list[Document]:
            return list(RankFusion(top_k=None, **params).run(**lists(raw, rw, "raw", variant))["documents"])

        return run

    none = unrewritten()

    def consensus(inner: Strategy) -> Strategy:
        def run(raw: dict[str, Any], rw: dict[str, Any], r: str) -> list[Document]:
            return rank_level_consensus(none(raw, rw, r), inner(raw, rw, r))

        return run

    plain = fusion(confidence_weighting=False)
    found: dict[str, Strategy] = {
        "none": none,
        "plain-rrf": plain,
        "consensus(plain)": consensus(plain),
        "shipped": fusion(),
        "shipped open-top": fusion(protect_top=False),
        "strong0.7": fusion(strong_confidence=0.7),
        "strong0.7 w0.25": fusion(strong_confidence=0.7, weak_factor=0.25, uncorroborated_factor=0.5),
        "k20": fusion(k=20),
        "top0.7": fusion(top_confidence=0.7),
        "top0.9": fusion(top_confidence=0.9),
        "top-never": fusion(top_confidence=1.01),
        "top0.7 u1": fusion(top_confidence=0.7, uncorroborated_factor=1.0),
        "top0.9 u1": fusion(top_confidence=0.9, uncorroborated_factor=1.0),
        "top-never u1": fusion(top_confidence=1.01, uncorroborated_factor=1.0),
        "top-never u1 w1": fusion(top_confidence=1.01, uncorroborated_factor=1.0, weak_factor=1.0),
        "shipped without described top": fusion(top_evidence=[]),
        "shipped u0.25": fusion(uncorroborated_factor=0.25),
        "shipped u0.5": fusion(uncorroborated_factor=0.5),
        "shipped u1.0": fusion(uncorroborated_factor=1.0),
        "w1 u0.5": fusion(weak_factor=1.0, uncorroborated_factor=0.5),
        "w1 u1 k20": fusion(weak_factor=1.0, uncorroborated_factor=1.0, k=20),
        "w1 u0.5 k20": fusion(weak_factor=1.0, uncorroborated_factor=0.5, k=20),
        "w1 u0.5 d50": fusion(weak_factor=1.0, uncorroborated_factor=0.5, corroboration_depth=50),
        "consensus(shipped)": consensus(fusion()),
    }
    for k in (60, 20, 10):
        for weight in (1.0, 0.5, 0.25):
            found[f"plain k{k} x{weight}"] = fusion(confidence_weighting=False, k=k, weights={"definitions": weight})
        for strong in (0.5, 0.7):
            for weak in (0.0, 0.25, 1.0):
                for depth in (10, 50):
                    for guard in (True, False):
                        name = f"conf k{k} s{strong} w{weak} d{depth}{'' if guard else ' open-top'}"
                        found[name] = fusion(
                            k=k,
                            strong_confidence=strong,
                            weak_factor=weak,
                            corroboration_depth=depth,
                            protect_top=guard,
                        )
    if retrieval in ("hybrid", "embedding"):
        # What the embedding list brings: each variant without the rewrite ("raw") and with the shipped fusion.
        variants: dict[str, tuple[EmbeddingVariant | None, dict[str, Any]]] = {
            **{f"emb x{w}": (None, {"weights": {"embedding": w}}) for w in (0.75, 0.5, 0.35, 0.25)},
            "emb per-file": (one_chunk_per_file, {}),
        }
        for chars in (40, 80, 120, 160, 240):
            variants[f"emb min{chars}"] = (minimum_chars(chars), {})
        variants["emb min2lines"] = (minimum_lines(2), {})
        variants["emb min3lines"] = (minimum_lines(3), {})
        for name, (variant, params) in variants.items():
            found[f"raw | {name}"] = unrewritten(variant, **params)
            found[f"shipped | {name}"] = fusion(variant, **params)
    return found


EmbeddingVariant = Callable[[list[dict[str, Any]]], list[dict[str, Any]]]


def minimum_chars(chars: int) -> EmbeddingVariant:
    """The embedding list without chunks shorter than `chars` characters (lists recorded with `chars`)."""

    def run(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [r for r in rows if r.get("chars", chars) >= chars]

    return run


def minimum_lines(lines: int) -> EmbeddingVariant:
    """The embedding list without chunks of fewer than `lines` lines (lists recorded with `lines`)."""

    def run(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [r for r in rows if r.get("lines", lines) >= lines]

    return run


def one_chunk_per_file(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The embedding list with each file's best chunk only: its ranks are then file ranks."""
    seen: set[str] = set()
    kept = []
    for row in rows:
        if row["file_path"] not in seen:
            seen.add(row["file_path"])
            kept.append(row)
    return kept


DECLARATION_SUFFIXES = (".d.ts", ".d.cts", ".d.mts")


def declarations_down(files: list[str], places: int) -> list[str]:
    """
    Each TypeScript declaration file (`.d.ts`) after the next `places` other files of the ranking (0: as ranked;
    a declaration file waits for the implementation files ranked below it, not for other declaration files).
    """
    if places <= 0:
        return list(files)
    ranked: list[str] = []
    waiting: list[list[Any]] = []  # [path, other files still to pass]
    for path in files:
        if path.endswith(DECLARATION_SUFFIXES):
            waiting.append([path, places])
            continue
        ranked.append(path)
        for entry in waiting:
            entry[1] -= 1
        ranked.extend(entry[0] for entry in waiting if entry[1] <= 0)
        waiting = [entry for entry in waiting if entry[1] > 0]
    return ranked + [entry[0] for entry in waiting]


def replay(
    outs: Sequence[Path], retrieval: str, only: str | None, items_path: Path, query: str, declarations: int = 0
) -> int:
    items = load_swebench(items_path) if query == "full" or "swebench" in items_path.name else load_golden(items_path)
    texts = {item.id: item.question_for(query) for item in items}  # type: ignore[arg-type]
    gold: dict[str, dict[str, Any]] = {}
    rows: dict[tuple[str, str, str], dict[str, Any]] = {}
    for out in outs:
        for line in (out / "results.jsonl").read_text(encoding="utf-8").splitlines():
            record_ = json.loads(line)
            if record_["rewrite"] == "dictionary" and record_.get("query", "title") == query:
                gold[f"{out}:{record_['id']}"] = record_
        for line in (out / "lists.jsonl").read_text(encoding="utf-8").splitlines():
            row = add_described(json.loads(line))
            rows[(str(out), row["question"], row["rewrite"])] = row
    questions = {key: texts[record_["id"]] for key, record_ in gold.items() if record_["id"] in texts}
    table = []
    baseline: dict[str, dict[str, float]] = {}
    for name, strategy in strategies(retrieval).items():
        if only and name not in ("none", *only.split(",")):
            continue
        per_question: dict[str, dict[str, float]] = {}
        for key, text in questions.items():
            out = key.split(":", 1)[0]
            raw, rw = rows.get((out, text, "none")), rows.get((out, text, "dictionary"))
            if raw is None or rw is None:
                continue
            record_ = gold[key]
            documents = strategy(raw, rw, retrieval)
            question = text
            files = [f["file_path"] for f in rank_files(documents, None, test_files="demote", question=question)]
            files = declarations_down(files, declarations)
            symbols = [
                (s["file_path"], s["qualified_name"])
                for s in rank_symbols(documents, None, test_files="demote", question=question)
            ]
            metrics = file_metrics(files, record_["gold_files"])
            metrics.update(symbol_metrics(symbols, [tuple(g) for g in record_["gold_functions"]]))
            per_question[key] = metrics
        if name == "none":
            baseline = per_question
        cells = [name, str(len(per_question))]
        for metric in ("acc@1", "acc@5", "hit@1", "hit@5", "sym_hit@1", "sym_hit@5"):
            keys = [k for k in per_question if metric in per_question[k] and metric in baseline.get(k, {})]
            value = 100 * mean(per_question[k][metric] for k in keys)
            wins = sum(per_question[k][metric] > baseline[k][metric] for k in keys)
            losses = sum(per_question[k][metric] < baseline[k][metric] for k in keys)
            cells.append(f"{value:5.1f} ({wins:>2}/{losses:<2} p{sign_test_p_value(wins, losses):.2f})")
        table.append(cells)
    header = ["strategy", "n", "Acc@1", "Acc@5", "hit@1", "hit@5", "sym hit@1", "sym hit@5"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for cells in table:
        print("| " + " | ".join(cells) + " |")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] == "record":
        return record(args[1:])
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["replay"])
    parser.add_argument("--out", type=Path, nargs="+", required=True)
    parser.add_argument("--retrieval", choices=["bm25", "hybrid", "embedding"], default="bm25")
    parser.add_argument("--only", help="comma-separated strategy names")
    parser.add_argument("--items", type=Path, required=True, help="the golden or SWE-bench JSONL the run used")
    parser.add_argument("--query", choices=["title", "full"], default="title")
    parser.add_argument(
        "--declarations-down", type=int, default=0, help="move each .d.ts file this many places down the files"
    )
    parsed = parser.parse_args(args)
    return replay(parsed.out, parsed.retrieval, parsed.only, parsed.items, parsed.query, parsed.declarations_down)


if __name__ == "__main__":
    raise SystemExit(main())
