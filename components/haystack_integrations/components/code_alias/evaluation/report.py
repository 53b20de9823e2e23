"""Benchmark reports: aggregate per-instance records into JSON, a Markdown table and a PNG plot.

Framework-free (matplotlib with the Agg backend for the plot). Input: the per-instance records the runner
appends to ``results.jsonl`` (see :mod:`.runner`), so a report can be rebuilt from a finished or partial run.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from haystack_integrations.components.code_alias.evaluation.metrics import (
    FILE_KS,
    hit_at_k,
    mean,
    paired_comparison,
    percentile,
    symbol_metrics,
)

__all__ = [
    "DETAIL_COLUMNS",
    "MARKDOWN_COLUMNS",
    "PAIRED_METRICS",
    "SUBSETS",
    "aggregate",
    "backfill_metrics",
    "build_report",
    "render_markdown",
    "write_plot",
    "write_report",
]

#: (metric key, column title) of the headline Markdown tables, in order (``n sym``: questions with gold symbols).
MARKDOWN_COLUMNS: tuple[tuple[str, str], ...] = (
    ("acc@1", "Acc@1"),
    ("acc@5", "Acc@5"),
    ("hit@1", "hit@1"),
    ("hit@5", "hit@5"),
    ("mrr", "MRR"),
    ("n_symbols", "n sym"),
    ("sym_hit@1", "sym hit@1"),
    ("sym_hit@5", "sym hit@5"),
    ("sym_mrr", "sym MRR"),
    ("sym_hint_recall", "hint recall"),
)
#: (metric key, column title) of the second table: the remaining metrics.
DETAIL_COLUMNS: tuple[tuple[str, str], ...] = (
    ("acc@3", "Acc@3"),
    ("acc@10", "Acc@10"),
    ("hit@3", "hit@3"),
    ("hit@10", "hit@10"),
    ("recall@5", "R@5"),
    ("ndcg@10", "nDCG@10"),
    ("sym_hit@3", "sym hit@3"),
    ("sym_hit@10", "sym hit@10"),
    ("fn_acc@5", "fn Acc@5"),
    ("fn_acc@10", "fn Acc@10"),
)
#: Metrics compared pair-wise (wins / losses / sign test) against a baseline config.
PAIRED_METRICS: tuple[str, ...] = ("acc@1", "acc@5", "acc@10", "hit@1", "hit@5", "sym_hit@1", "sym_hit@5")
#: Metrics shown in the compact paired tables of the Markdown report (the JSON has every one).
PAIRED_COLUMNS: tuple[str, ...] = ("acc@1", "acc@5", "hit@1", "hit@5", "sym_hit@1", "sym_hit@5")
CURVE_KS: tuple[int, ...] = tuple(range(1, 11))
#: Subsets reported on their own: key -> (record field that must be False, heading).
SUBSETS: dict[str, tuple[str, str]] = {
    "no_file_hint": ("names_file", 'Issues that do not name the file (`file_location_hint == "None"`)'),
    "no_gold_symbol_named": (
        "names_gold_symbol",
        "Questions that name no gold symbol (`meta.names_gold_symbol == false`)",
    ),
}


def backfill_metrics(record: Mapping[str, Any]) -> dict[str, Any]:
    """
    A record with file ``hit@k`` and symbol metrics added from its stored rankings when it lacks them
    (results written before those metrics existed). Stored rankings keep the top 20, so k <= 10 is exact
    and ``sym_mrr`` counts ranks up to 20 only.
    """
    metrics = dict(record.get("metrics") or {})
    files, gold_files = record.get("files"), record.get("gold_files")
    if "hit@1" not in metrics and files is not None and gold_files:
        metrics.update({f"hit@{k}": hit_at_k(files, gold_files, k) for k in FILE_KS})
    functions, gold_functions = record.get("functions"), record.get("gold_functions")
    if "sym_mrr" not in metrics and functions is not None and gold_functions:
        ranked = [(str(pair[0]), str(pair[1])) for pair in functions]
        metrics.update(symbol_metrics(ranked, [(str(pair[0]), str(pair[1])) for pair in gold_functions]))
    return {**record, "metrics": metrics}


def aggregate(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """
    Means of every metric over records of one config, plus latency, faithfulness and cache figures.

    File metrics average over all records; function metrics over those whose gold functions are complete
    (``functions_complete``), counted in ``n_functions``; symbol metrics (``sym_*``) over those with any gold
    function, counted in ``n_symbols``. Function and symbol metrics are NaN when the records hold ranked
    ``functions`` lists that are all empty (a searcher that ranks files only).
    """
    summary: dict[str, Any] = {"n": len(records)}
    if not records:
        return summary
    keys = sorted({key for record in records for key in record["metrics"] if not key.startswith(("fn_", "sym_"))})
    for key in keys:
        summary[key] = mean(float(record["metrics"][key]) for record in records if key in record["metrics"])
    with_functions = [record for record in records if record.get("functions_complete")]
    summary["n_functions"] = len(with_functions)
    # A config whose searcher returns no functions at all has no function-level score (not a score of 0).
    returns_functions = any(record.get("functions") for record in records) or not any(
        "functions" in record for record in records
    )
    for key in sorted({key for record in with_functions for key in record["metrics"] if key.startswith("fn_")}):
        summary[key] = (
            mean(float(record["metrics"][key]) for record in with_functions) if returns_functions else math.nan
        )
    with_symbols = [record for record in records if "sym_mrr" in record["metrics"]]
    summary["n_symbols"] = len(with_symbols)
    for key in sorted({key for record in with_symbols for key in record["metrics"] if key.startswith("sym_")}):
        summary[key] = (
            mean(float(record["metrics"][key]) for record in with_symbols if key in record["metrics"])
            if returns_functions
            else math.nan
        )
    rewrite_ms = [float(record.get("rewrite_ms") or 0.0) for record in records]
    search_ms = [float(record.get("search_ms") or 0.0) for record in records]
    summary["rewrite_ms_p50"] = percentile(rewrite_ms, 50)
    summary["rewrite_ms_p95"] = percentile(rewrite_ms, 95)
    summary["search_ms_p50"] = percentile(search_ms, 50)
    summary["search_ms_p95"] = percentile(search_ms, 95)
    dropped = [int(record.get("dropped_symbols") or 0) for record in records]
    summary["dropped_symbols_total"] = sum(dropped)
    summary["dropped_symbols_per_query"] = mean(dropped)
    summary["cache_hit_rate"] = mean(1.0 if record.get("cache_hit") else 0.0 for record in records)
    return summary


def _by_config(records: Iterable[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]]:
    grouped: dict[str, list[Mapping[str, Any]]] = {}
    for record in records:
        grouped.setdefault(str(record["config"]), []).append(record)
    return grouped


_GRID_ORDER = (("title", "full"), ("none", "dictionary", "llm", "llm-free"), ("bm25", "embedding", "hybrid"))


def _grid_key(config: str) -> tuple[Any, ...]:
    """Grid order: query, then rewrite (none first), then retrieval (bm25 first); unknown names last."""
    parts = config.split("/")
    if len(parts) != 3:
        return (1, config)
    ranks = [
        values.index(part) if part in values else len(values) for part, values in zip(parts, _GRID_ORDER, strict=True)
    ]
    return (0, *ranks, config)


def baseline_of(config: str) -> str:
    """The baseline of a config name ``query/rewrite/retrieval``: the same query, no rewrite, BM25."""
    query = config.split("/", 1)[0]
    return f"{query}/none/bm25"


def no_rewrite_twin(config: str) -> str:
    """The same query and retrieval without the rewrite: what isolates the rewrite's own lift."""
    query, _, retrieval = config.split("/", 2)
    return f"{query}/none/{retrieval}"


def _paired(
    grouped: Mapping[str, Sequence[Mapping[str, Any]]], order: Sequence[str], base_of: Callable[[str], str]
) -> dict[str, dict[str, Any]]:
    paired: dict[str, dict[str, Any]] = {}
    for name in order:
        base = base_of(name)
        if base == name or base not in grouped:
            continue
        paired[name] = {"baseline": base}
        for metric in PAIRED_METRICS:
            baseline_values = {
                str(r["id"]): float(r["metrics"][metric]) for r in grouped[base] if metric in r["metrics"]
            }
            values = {str(r["id"]): float(r["metrics"][metric]) for r in grouped[name] if metric in r["metrics"]}
            if set(baseline_values) & set(values):
                paired[name][metric] = paired_comparison(baseline_values, values, metric=metric).to_dict()
    return paired


def build_report(
    records: Sequence[Mapping[str, Any]],
    *,
    coverage: Sequence[Mapping[str, Any]] = (),
    config_order: Sequence[str] = (),
    run_info: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """
    The whole report as a JSON-ready dict.

    :param records: Per-instance results (runner's ``results.jsonl``).
    :param coverage: Per-instance coverage (runner's ``coverage.jsonl``): ``{id, repo, covered, error, ...}``.
    :param config_order: Config names in the order rows should appear (others follow, sorted).
    :param run_info: Free-form facts about the run (command, timings) copied into the report.
    :returns: ``{"run", "coverage", "configs": [...], "overall", "no_file_hint", "subsets", "per_repo",
        "paired", "rewrite_lift", "curves"}``; ``paired`` compares each config with raw BM25 on the same query,
        ``rewrite_lift`` each rewrite config with the same query and retrieval without the rewrite;
        ``subsets`` has, for each of :data:`SUBSETS`, its label, ``overall`` and ``rewrite_lift``
        (``no_file_hint`` repeats that subset's ``overall``). Records lacking the newer metrics get them from
        their stored rankings (:func:`backfill_metrics`).
    """
    grouped = _by_config(backfill_metrics(record) for record in records)
    order = [name for name in config_order if name in grouped]
    order += sorted((name for name in grouped if name not in order), key=_grid_key)
    overall = {name: aggregate(grouped[name]) for name in order}
    subsets: dict[str, dict[str, Any]] = {}
    for key, (flag, label) in SUBSETS.items():
        members = {name: [record for record in grouped[name] if record.get(flag) is False] for name in order}
        subsets[key] = {
            "label": label,
            "overall": {name: aggregate(members[name]) for name in order},
            "rewrite_lift": _paired({name: rows for name, rows in members.items() if rows}, order, no_rewrite_twin),
        }
    repos = sorted({str(record.get("repo") or "") for record in records})
    per_repo = {
        repo: {name: aggregate([r for r in grouped[name] if str(r.get("repo") or "") == repo]) for name in order}
        for repo in repos
    }
    paired = _paired(grouped, order, baseline_of)
    rewrite_lift = _paired(grouped, order, no_rewrite_twin)
    covered = [entry for entry in coverage if entry.get("covered")]
    failures = [
        {"id": entry.get("id"), "repo": entry.get("repo"), "error": entry.get("error")}
        for entry in coverage
        if not entry.get("covered")
    ]

    def curve(summary: Mapping[str, Any], prefix: str) -> list[float]:
        return [summary.get(f"{prefix}@{k}", math.nan) for k in CURVE_KS]

    return {
        "run": dict(run_info or {}),
        "coverage": {"instances": len(coverage), "covered": len(covered), "not_covered": failures},
        "configs": order,
        "overall": overall,
        "no_file_hint": subsets["no_file_hint"]["overall"],
        "subsets": subsets,
        "per_repo": per_repo,
        "paired": paired,
        "rewrite_lift": rewrite_lift,
        "curves": {
            name: {
                "all": curve(overall[name], "acc"),
                **{key: curve(subset["overall"][name], "acc") for key, subset in subsets.items()},
                "symbols": curve(overall[name], "sym_hit"),
            }
            for name in order
        },
    }


def _pct(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{100.0 * float(value):.1f}"


def _ms(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{float(value):.0f}"


def _cell(key: str, summary: Mapping[str, Any]) -> str:
    value = summary.get(key)
    if key.startswith("n_"):
        return str(value) if value is not None else "–"
    return _pct(value)


def _table(
    rows: Mapping[str, Mapping[str, Any]],
    paired: Mapping[str, Any] | None,
    *,
    extras: bool,
    columns: Sequence[tuple[str, str]] = MARKDOWN_COLUMNS,
) -> list[str]:
    head = ["config", "n", *[title for _, title in columns]]
    if extras:
        head += ["rewrite ms p50/p95", "dropped/q", "cache hits", "Acc@5 W/L vs raw BM25"]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(["---"] + ["---:"] * (len(head) - 1)) + "|"]
    for name, summary in rows.items():
        if not summary.get("n"):
            continue
        cells = [f"`{name}`", str(summary["n"]), *[_cell(key, summary) for key, _ in columns]]
        if extras:
            cells.append(f"{_ms(summary.get('rewrite_ms_p50'))} / {_ms(summary.get('rewrite_ms_p95'))}")
            dropped = summary.get("dropped_symbols_per_query")
            cells.append("–" if dropped is None or math.isnan(dropped) else f"{dropped:.2f}")
            cells.append(_pct(summary.get("cache_hit_rate")))
            comparison = (paired or {}).get(name, {}).get("acc@5")
            cells.append(f"+{comparison['wins']} / −{comparison['losses']}" if comparison else "(baseline)")
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _paired_table(paired: Mapping[str, Any], heading: str) -> list[str]:
    """One row per config: for each metric, Δ in points, wins/losses and the sign-test p."""
    if not paired:
        return []
    metrics = [metric for metric in PAIRED_COLUMNS if any(metric in entry for entry in paired.values())]
    lines = ["", f"## {heading}", ""]
    lines += ["Each cell: Δ points (wins / losses, sign-test p); n = paired questions, n sym = with gold symbols.", ""]
    titles = dict([*MARKDOWN_COLUMNS, *DETAIL_COLUMNS])
    lines += ["| config | baseline | n | n sym | " + " | ".join(titles.get(m, m) for m in metrics) + " |"]
    lines += ["|---|---|---:|---:|" + "|".join(["---:"] * len(metrics)) + "|"]
    for name, entry in paired.items():
        cells = [f"`{name}`", f"`{entry['baseline']}`"]
        cells.append(str(entry.get("acc@1", {}).get("n", "–")))
        cells.append(str(entry.get("sym_hit@1", {}).get("n", 0)))
        for metric in metrics:
            value = entry.get(metric)
            cells.append(
                f"{100 * value['delta']:+.1f} ({value['wins']}/{value['losses']}, p {value['p_value']:.2g})"
                if value
                else "–"
            )
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _per_repo_table(per_repo: Mapping[str, Any], configs: Sequence[str], metric: str, heading: str) -> list[str]:
    lines = ["", f"## {heading}", ""]
    lines += ["| repo | n | " + " | ".join(f"`{name}`" for name in configs) + " |"]
    lines += ["|---|---:|" + "|".join(["---:"] * len(configs)) + "|"]
    for repo, rows in per_repo.items():
        counts = [rows[name].get("n", 0) for name in configs if name in rows]
        cells = [_pct(rows.get(name, {}).get(metric)) for name in configs]
        lines.append(f"| {repo or '(none)'} | {max(counts) if counts else 0} | " + " | ".join(cells) + " |")
    return lines


def render_markdown(report: Mapping[str, Any], *, title: str = "Benchmark") -> str:
    """
    The report as Markdown: coverage, the headline table (rows = configs, columns = file Acc@k, file hit@k,
    symbol hit@k, MRR in percent, rewrite latency), the remaining metrics, each subset of :data:`SUBSETS` that
    has questions (with its own rewrite lift), the rewrite's own lift and the comparison with raw BM25
    (paired, sign test), and file Acc@5 / symbol hit@5 per repository.
    """
    coverage = report.get("coverage", {})
    lines = [f"# {title}", ""]
    run = report.get("run") or {}
    if run.get("command"):
        lines += ["Command:", "", "```", str(run["command"]), "```", ""]
    lines.append(
        f"Coverage: {coverage.get('covered', 0)} of {coverage.get('instances', 0)} instances have all their gold "
        "files in the corpus, as files the index reads (source code); metrics are over those."
    )
    overall = report.get("overall", {})
    symbol_counts = sorted({summary["n_symbols"] for summary in overall.values() if summary.get("n_symbols")})
    if symbol_counts:
        lines.append(
            "Symbol hit@k and symbol MRR are over questions with at least one gold symbol "
            f"(n sym = {', '.join(str(count) for count in symbol_counts)}); a symbol is a distinct "
            "(file, qualified name inside the file)."
        )
    function_counts = {summary.get("n_functions") for summary in overall.values()}
    function_counts.discard(None)
    if function_counts:
        lines.append(
            "Function-level Acc@k (every gold function in the top k) is over instances whose gold functions "
            "(SWE-bench: the functions the patch changes) were all found in the corpus "
            f"(n = {', '.join(str(count) for count in sorted(function_counts))})."
        )
    lines += ["", "## All covered instances", ""]
    lines += _table(overall, report.get("paired"), extras=True)
    if any(summary.get("n") for summary in overall.values()):
        lines += ["", "## More metrics (all covered instances)", ""]
        lines += _table(overall, None, extras=False, columns=DETAIL_COLUMNS)
    subsets = report.get("subsets") or {
        "no_file_hint": {"label": SUBSETS["no_file_hint"][1], "overall": report.get("no_file_hint", {})}
    }
    for subset in subsets.values():
        rows = subset.get("overall") or {}
        if not any(summary.get("n") for summary in rows.values()):
            continue
        lines += ["", f"## {subset.get('label')}", ""]
        lines += _table(rows, None, extras=False)
        lines += _paired_table(
            subset.get("rewrite_lift") or {}, f"The rewrite's own lift on this subset: {subset.get('label')}"
        )
    for key, heading in (
        ("rewrite_lift", "The rewrite's own lift: each rewrite against no rewrite (same query, retrieval, instances)"),
        ("paired", "Paired comparison against raw BM25 (same query, same instances)"),
    ):
        lines += _paired_table(report.get(key) or {}, heading)
    per_repo = report.get("per_repo", {})
    configs = list(report.get("configs", []))
    if per_repo and configs:
        lines += _per_repo_table(per_repo, configs, "acc@5", "File Acc@5 per repository")
        if symbol_counts:
            lines += _per_repo_table(per_repo, configs, "sym_hit@5", "Symbol hit@5 per repository")
    failures = coverage.get("not_covered") or []
    if failures:
        lines += ["", "## Not covered", ""]
        for failure in failures:
            lines.append(f"- `{failure.get('id')}`: {failure.get('error')}")
    return "\n".join(lines) + "\n"


def write_plot(report: Mapping[str, Any], path: str | Path) -> Path:
    """
    A PNG of file Acc@k (k = 1..10) per config on all covered instances and on the first subset of
    :data:`SUBSETS` that has questions, and of symbol hit@k on all covered instances.
    """
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    curves = report.get("curves", {})

    def has_values(key: str) -> bool:
        return any(
            value is not None and not math.isnan(value) for curve in curves.values() for value in curve.get(key, [])
        )

    subset = next((key for key in SUBSETS if has_values(key)), "no_file_hint")
    panels = [
        ("all", "file Acc@k: all covered instances", "file Acc@k (%)"),
        (subset, f"file Acc@k: {SUBSETS[subset][1].split(' (')[0].lower()}", "file Acc@k (%)"),
    ]
    if has_values("symbols"):
        panels.append(("symbols", "symbol hit@k: questions with gold symbols", "symbol hit@k (%)"))
    figure, axes = plt.subplots(1, len(panels), figsize=(6.5 * len(panels), 5))
    styles = {"none": "-", "dictionary": "--", "llm": ":", "llm-free": "-."}
    for axis, (key, label, ylabel) in zip(axes, panels, strict=True):
        for name, curve in curves.items():
            values = [
                100.0 * value if value is not None and not math.isnan(value) else math.nan
                for value in curve.get(key, [])
            ]
            if not values or all(math.isnan(value) for value in values):
                continue
            parts = name.split("/")
            style = styles.get(parts[1], "-") if len(parts) == 3 else "-"
            axis.plot(CURVE_KS, values, style, marker="o", markersize=3, label=name)
        axis.set_title(label, fontsize=10)
        axis.set_xlabel("k")
        axis.set_ylabel(ylabel)
        axis.set_xticks(list(CURVE_KS))
        axis.grid(True, alpha=0.3)
    handles, labels = axes[0].get_legend_handles_labels()
    if handles:
        figure.legend(handles, labels, loc="lower center", ncol=min(6, len(labels)), fontsize=8, frameon=False)
    figure.tight_layout(rect=(0, 0.12 if handles else 0, 1, 1))
    figure.savefig(target, dpi=120)
    plt.close(figure)
    return target


def write_report(
    report: Mapping[str, Any], output_dir: str | Path, *, title: str = "Benchmark", stem: str = "report"
) -> dict[str, Path]:
    """Write ``<stem>.json``, ``<stem>.md`` and ``<stem>.png`` into ``output_dir``; returns their paths."""
    folder = Path(output_dir)
    folder.mkdir(parents=True, exist_ok=True)
    json_path = folder / f"{stem}.json"
    json_path.write_text(
        json.dumps(_finite(report), indent=2, sort_keys=False, default=_json_default, allow_nan=False),
        encoding="utf-8",
    )
    markdown_path = folder / f"{stem}.md"
    markdown_path.write_text(render_markdown(report, title=title), encoding="utf-8")
    plot_path = write_plot(report, folder / f"{stem}.png")
    return {"json": json_path, "markdown": markdown_path, "plot": plot_path}


def _finite(value: Any) -> Any:
    """NaN and infinities (a metric over no instances) become null, so the JSON stays standard."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Mapping):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(item) for item in value]
    return value


def _json_default(value: Any) -> Any:
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")
