"""Is a gold symbol more central than the other symbols a search ranks beside it? A first look for the ranking stage.

    python benchmarks/graph_centrality_signal.py --run RUN_FOLDER --indexes CACHE/indexes/lexical [--top 20]

For each question of a harness run (`code-alias bench run ... --out RUN_FOLDER`: its `results.jsonl`) and each of
its configs, the ranked symbols of the top `--top` with a gold one among them are compared pair by pair, gold
against non-gold, on each graph feature of `ReferenceGraph.centrality()` (in-degree, PageRank's rank share); the
AUC is the share of pairs the feature orders right (ties count half). 0.5: no signal among the candidates the
search already found; the ranking stage (issue 42) decides what to keep with its own fitted model. The graphs come
from the run's own cached indexes (`--indexes`: the folders the harness indexed each corpus into).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any


def main(argv: list[str] | None = None) -> int:
    from haystack_integrations.components.code_alias.core.graph import ReferenceGraph
    from haystack_integrations.components.code_alias.indexing.index_delta import load_index_dictionary
    from haystack_integrations.components.code_alias.paths import DICTIONARY_FILE

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", type=Path, required=True)
    parser.add_argument("--indexes", type=Path, required=True)
    parser.add_argument("--top", type=int, default=20)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    rows = [json.loads(line) for line in (args.run / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    by_corpus: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_corpus[row["corpus"]].append(row)
    pairs: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    questions: dict[str, int] = defaultdict(int)
    for corpus, corpus_rows in sorted(by_corpus.items()):
        graph = ReferenceGraph(load_index_dictionary(args.indexes / corpus / DICTIONARY_FILE))
        centrality = graph.centrality()
        local: dict[tuple[str, str], tuple[str | None, str]] = {}
        for definition in graph.live_definitions():
            name = ".".join((*definition.scopes, definition.name))
            local[(definition.file_path, name)] = (definition.repo, definition.qualified_name)
        for row in corpus_rows:
            gold = {tuple(item) for item in row["gold_functions"]}
            top = [tuple(item) for item in row["functions"][: args.top]]
            if not gold & set(top) or not set(top) - gold:
                continue
            questions[row["config"]] += 1
            features = {}
            for item in top:
                repo, qualified = local.get(item, (None, ""))
                features[item] = centrality.features(item[0], qualified, repo=repo)
            for name in ("in_degree", "pagerank_rank"):
                for good in (item for item in top if item in gold):
                    for bad in (item for item in top if item not in gold):
                        a, b = features[good][name], features[bad][name]
                        pairs[row["config"]][name].append(1.0 if a > b else 0.5 if a == b else 0.0)
        print(f"{corpus}: {graph.summary()['edges']:,} edges", file=sys.stderr)
    result = {
        config: {
            "questions": questions[config],
            **{f"auc_{name}": round(sum(v) / len(v), 3) for name, v in by_name.items() if v},
            "pairs": len(next(iter(by_name.values()), [])),
        }
        for config, by_name in sorted(pairs.items())
    }
    print(json.dumps(result, indent=1))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
