#!/usr/bin/env bash
# Hayhooks ask throughput of two commits side by side, alternating, on one frozen corpus.
#
#   bash benchmarks/hayhooks_load_compare.sh BEFORE AFTER [ROUNDS] [extra hayhooks_load.py options...]
#   bash benchmarks/hayhooks_load_compare.sh 1b51046 HEAD 2 --max-concurrent-asks 16
#
# Each commit is checked out into its own git worktree under $WORK (default /tmp/code-alias-load-compare) and
# imported from there (PYTHONPATH), with this checkout's virtual environment. The corpus is BEFORE's `components/`
# (so both index the same source), each into its own index folder (built once, by its own code). Reports go to
# $WORK/<commit>-<round>.json; the last lines print throughput per run. Needs the two cores to itself.
set -euo pipefail
cd "$(dirname "$0")/.."
BEFORE=$(git rev-parse --short "${1:?before commit}")
AFTER=$(git rev-parse --short "${2:?after commit}")
ROUNDS=${3:-1}
shift $(( $# < 3 ? $# : 3 ))
WORK=${WORK:-/tmp/code-alias-load-compare}
PYTHON=${PYTHON:-$PWD/.venv/bin/python}
mkdir -p "$WORK"
for commit in "$BEFORE" "$AFTER"; do
  [ -d "$WORK/$commit" ] || git worktree add --detach "$WORK/$commit" "$commit" >/dev/null
done
export HAYSTACK_TELEMETRY_ENABLED=False HF_HUB_OFFLINE=1
for round in $(seq "$ROUNDS"); do
  for commit in "$BEFORE" "$AFTER"; do
    echo "== round $round, $commit, load $(cut -d' ' -f1-3 /proc/loadavg)"
    PYTHONPATH="$WORK/$commit/components" "$PYTHON" "$WORK/$commit/benchmarks/hayhooks_load.py" \
      --repo "$WORK/$BEFORE/components" --index-dir "$WORK/index-$commit" --phases ask --requests 1000 --serial 30 \
      --in-process 60 --output "$WORK/$commit-$round.json" "$@" 2>&1 | grep --line-buffered -E "^ask: 32|error" || true
  done
done
"$PYTHON" - "$WORK" "$BEFORE" "$AFTER" <<'PY'
import json, statistics, sys
from pathlib import Path
work, commits = Path(sys.argv[1]), sys.argv[2:]
for commit in commits:
    runs = [json.loads(p.read_text()) for p in sorted(work.glob(f"{commit}-*.json"))]
    rps = [r["load"]["ask"]["throughput_rps"] for r in runs]
    errors = sum(r["load"]["ask"]["errors"] for r in runs)
    print(f"{commit}: ask req/s median {statistics.median(rps):.2f} over {len(rps)} runs {rps}, errors {errors}")
PY
