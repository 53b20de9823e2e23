#!/usr/bin/env bash
# Run the evaluation harness on the informal question set, one library at a time (a local corpus holds one
# tree, so each library is its own `bench run`; `--repos` picks that library's questions).
#
#   benchmarks/sets/informal_local.sh OUT_DIR RUN_DIR [bench run options...]
#
# OUT_DIR: where fetch_informal.sh puts (or has put) the four libraries; it is called first and does nothing
#          when they are already there.
# RUN_DIR: each library's results go to RUN_DIR/<library>/ (resumable, as `bench run --out` is).
# Anything after RUN_DIR goes to every `code-alias bench run` unchanged, e.g.
#   --rewrites none,dictionary --retrievals hybrid --cache-dir /work/bench-cache
# LIBS="rxjs rich" limits the libraries; DRY_RUN=1 prints the commands instead of running them.
#
# These questions are for evaluation only: never fit or tune anything on them (benchmarks/sets/README.md).
set -euo pipefail

if [[ $# -lt 2 ]]; then
  echo "usage: $0 OUT_DIR RUN_DIR [bench run options...]" >&2
  exit 2
fi
out_dir=$1 run_dir=$2
shift 2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# library folder | the `repo` field of its questions
declare -A REPOS=(
  [marshmallow]=pypi/marshmallow
  [rich]=pypi/rich
  [rxjs]=npm/rxjs
  [query-core]=npm/@tanstack/query-core
)
read -r -a libs <<<"${LIBS:-marshmallow rich rxjs query-core}"
for lib in "${libs[@]}"; do
  [[ -n ${REPOS[$lib]:-} ]] || { echo "error: unknown library '$lib' (known: ${!REPOS[*]})" >&2; exit 2; }
done

if [[ -z ${DRY_RUN:-} ]]; then
  "$here/fetch_informal.sh" "$out_dir" "${libs[@]}"
fi
for lib in "${libs[@]}"; do
  command=(code-alias bench run --golden "$here/informal.jsonl" --corpus local --local-root "$out_dir/$lib"
    --repos "${REPOS[$lib]}" --title "informal: $lib" --out "$run_dir/$lib" "$@")
  if [[ -n ${DRY_RUN:-} ]]; then
    printf '%q ' "${command[@]}"
    echo
  else
    echo "== $lib"
    "${command[@]}"
  fi
done
