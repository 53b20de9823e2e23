#!/usr/bin/env bash
# Every LLM rewrite row of BENCHMARKS.md 11 (issue 14), one benchmark at a time, each folder resumable: a stopped
# run starts where it stopped (the harness skips finished searches; finished rewrites replay from the product's own
# cache and JSONL log under <folder>/llm-rewrites).
#
#   bash benchmarks/llm_rows.sh [STEP ...]     STEP: SET/MODEL/REWRITES, e.g. sweqa/1.5b/none,dictionary,llm
#
# SET: sweqa (all 299 SWE-QA dev questions), jsts (every JS/TS title), lite-title (150-instance spread subset),
# lite-full (100); MODEL: 0.5b or 1.5b; REWRITES: the harness's rows (llm-free: the unconstrained anchor).
# Without steps, the whole plan below, every set with both models first and the anchors last. A folder per set and
# model under $RESULTS (default .bench-cache/results), `<set>-<model>`; after each step, benchmarks/llm_paired.py
# pairs the 0.5B's `llm` row with the 1.5B folder's rows into `<set>-llm-paired.json`.
# Lexical retrieval (BM25 + the rewrite's definitions, RankFusion): the Lite corpora have no vectors here.
# The rewriter's settings are query_llm.yml's (hints, prompt, who writes the text). Needs the `[llama-cpp]` extra
# and both GGUF files (python benchmarks/fetch_qwen_gguf.py --model 0.5b|1.5b). Nothing else should share the cores:
# the rewrite latencies are in the tables.
set -euo pipefail
cd "$(dirname "$0")/.."
MODELS="${CODE_ALIAS_MODEL_CACHE:-$HOME/.cache/code-alias/models}"
RESULTS="${RESULTS:-.bench-cache/results}"
CACHE="${CACHE:-$PWD/.bench-cache}"
GIT_ROOT="${GIT_ROOT:-/work/.mirror}"
SHARED="${SHARED:-../shared/bench}"
export OMP_WAIT_POLICY=PASSIVE
run() {  # run SET MODEL REWRITES ARGS...
  local name=$1 model=$2 rewrites=$3
  shift 3
  echo "== $name $model $rewrites $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
  code-alias bench run "$@" --cache-dir "$CACHE" --lexical --no-progress --llm-threads 2 --llm-timeout 300 \
    --rewrites "$rewrites" --llm-gguf "$MODELS/qwen2.5-coder-$model-q4_k_m.gguf" --title "$name, Qwen2.5-Coder $model" \
    --out "$RESULTS/$name-$model"
}

steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(
  sweqa/1.5b/none,dictionary,llm sweqa/0.5b/llm
  jsts/1.5b/none,dictionary,llm jsts/0.5b/llm
  lite-title/1.5b/none,dictionary,llm lite-title/0.5b/llm
  lite-full/1.5b/none,dictionary,llm lite-full/0.5b/llm
  jsts/1.5b/llm-free sweqa/1.5b/llm-free
)

for step in "${steps[@]}"; do
  IFS=/ read -r set model rewrites <<<"$step"
  case "$set" in
    sweqa) args=(--golden "$SHARED/swe_qa_dev_primary.jsonl" --corpus git --git-root "$GIT_ROOT") ;;
    jsts) args=(--swebench "$SHARED/swebench_multilingual_jsts.jsonl" --corpus git --git-root "$GIT_ROOT" --queries title) ;;
    lite-title) args=(--swebench "$SHARED/swebench_lite.jsonl" --corpus pypi --queries title --subset 150) ;;
    lite-full) args=(--swebench "$SHARED/swebench_lite.jsonl" --corpus pypi --queries full --subset 100) ;;
    *) echo "unknown set in $step (sweqa, jsts, lite-title, lite-full)" >&2; exit 2 ;;
  esac
  case "$model" in 0.5b|1.5b) ;; *) echo "unknown model in $step (0.5b, 1.5b)" >&2; exit 2 ;; esac
  run "$set" "$model" "${rewrites:-llm}" "${args[@]}"
  if [ -f "$RESULTS/$set-1.5b/results.jsonl" ] && [ -f "$RESULTS/$set-0.5b/results.jsonl" ]; then
    python benchmarks/llm_paired.py --out "$RESULTS/$set-1.5b" --with "0.5b=$RESULTS/$set-0.5b" \
      --json "$RESULTS/$set-llm-paired.json" >/dev/null
  fi
done
