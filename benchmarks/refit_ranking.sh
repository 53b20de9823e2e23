#!/usr/bin/env bash
# Refit the ranking stage from nothing: record every pool the fit reads, then fit, report out of fold and
# (with SHIP=1) write the shipped model. One command for what BENCHMARKS.md 18 did by hand, so a new machine
# (whose bench cache is empty) can refit without rebuilding the chain from prose.
#
#   benchmarks/refit_ranking.sh CACHE_DIR
#
# CACHE_DIR holds the benchmark's corpora and indexes and RUNS (CACHE_DIR/runs/refit-*): every step is
# resumable (`bench run --out` skips the rows it has), so a cut-off run goes on where it stopped.
#
# Environment:
#   GIT_ROOT      the git mirrors of the SWE-QA and JS/TS repositories (default /work/.mirror; missing ones are
#                 listed first, with the names to fetch)
#   SHARED        the shared benchmark folder (default: ../shared beside the repository)
#   STEPS         which steps, in order (default "sweqa lite jsts hybrid offtopic informal fit")
#   SUBSET        N: only N questions of each set (a smoke test of the whole chain; never for figures)
#   SWEQA_REPOS, JSTS_REPOS, LITE_REPOS, HYBRID_REPOS
#                 comma-separated repositories to keep (default: all). The hybrid rows need every chunk vector: on
#                 two cores astropy's (19,233 chunks) and sympy's (38,607) take about 15 and 20 minutes, once (the
#                 content-hash cache keeps them)
#   OUT           the fit's report folder (default CACHE_DIR/runs/refit-report; SHIP=1: benchmarks/results/ranking)
#   SHIP=1        write the model into the package (config/ranking_model.json) and the report into benchmarks/
#
# The informal held-out sets (benchmarks/sets/) are scored by the final model only: never fitted or tuned on.
# Needs the project's .venv active (code-alias on PATH).
set -euo pipefail

[[ $# -eq 1 ]] || { sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
cache=$(mkdir -p "$1" && cd "$1" && pwd)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")
shared=${SHARED:-$root/../shared}
bench=$shared/bench
git_root=${GIT_ROOT:-/work/.mirror}
runs=$cache/runs
steps=${STEPS:-sweqa lite jsts hybrid offtopic informal fit}
recorder=haystack_integrations.components.code_alias.evaluation.ranking_data:make_recording_searcher
mkdir -p "$runs"

say() { printf '[refit %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
has_step() { [[ " $steps " == *" $1 "* ]]; }
repos_flag() { [[ -n ${1:-} ]] && printf -- '--repos\n%s\n' "$1"; return 0; }

common=(--cache-dir "$cache" --rewrites none,dictionary --no-progress --searcher "$recorder")
[[ -n ${SUBSET:-} ]] && common+=(--subset "$SUBSET")

# The git corpora the sets ask about: say which mirrors are missing before hours of work start.
missing=()
if has_step sweqa || has_step jsts || has_step hybrid; then
  for repo in pallets/flask psf/requests pytest-dev/pytest pylint-dev/pylint sqlfluff/sqlfluff \
    sphinx-doc/sphinx pydata/xarray astropy/astropy sympy/sympy preactjs/preact axios/axios babel/babel \
    vuejs/core immutable-js/immutable-js; do
    [[ -e $git_root/${repo/\//+} || -e $git_root/${repo/\//__} || -e $git_root/${repo#*/} ]] || missing+=("$repo")
  done
  ((${#missing[@]} == 0)) || say "no mirror under $git_root for: ${missing[*]} (their questions are skipped; fetch them first)"
fi

record() { # NAME, then bench run options
  local name=$1
  shift
  say "recording $name -> $runs/refit-$name"
  code-alias bench run "${common[@]}" --out "$runs/refit-$name" "$@"
}

if has_step sweqa; then
  mapfile -t flag < <(repos_flag "${SWEQA_REPOS:-}")
  record sweqa-lexsem --corpus git --git-root "$git_root" --lexical --semantic-hints \
    --golden "$bench/swe_qa_dev_primary.jsonl" "${flag[@]}"
fi
if has_step lite; then
  mapfile -t flag < <(repos_flag "${LITE_REPOS:-}")
  record lite-lexsem --corpus pypi --queries title,full --lexical --semantic-hints \
    --swebench "$bench/swebench_lite.jsonl" "${flag[@]}"
fi
if has_step jsts; then
  mapfile -t flag < <(repos_flag "${JSTS_REPOS:-}")
  record jsts-lexsem --corpus git --git-root "$git_root" --queries title,full --lexical --semantic-hints \
    --swebench "$bench/swebench_multilingual_jsts.jsonl" "${flag[@]}"
fi
if has_step hybrid; then
  mapfile -t flag < <(repos_flag "${HYBRID_REPOS:-}")
  record sweqa-hybrid --corpus git --git-root "$git_root" --retrievals hybrid \
    --golden "$bench/swe_qa_dev_primary.jsonl" "${flag[@]}"
fi
if has_step offtopic; then
  # Negatives for the answer-confidence model only: each corpus asked other repositories' questions.
  # record_off_topic.py appends: a folder is written whole under .part and renamed, so a rerun never doubles it.
  off_topic() { # NAME, the run whose questions it borrows, then its options
    local name=$1 run=$2
    local out=$runs/refit-offtopic-$name
    shift 2
    if [[ -d $out ]]; then say "off-topic $name: $out is there"; return; fi
    say "recording off-topic questions ($name) -> $out"
    rm -rf "$out.part"
    python "$here/record_off_topic.py" --run "$run" --cache-dir "$cache" --out "$out.part" --per-corpus 30 "$@"
    mv "$out.part" "$out"
  }
  off_topic lexsem "$runs/refit-sweqa-lexsem" --lexical --semantic-hints
  off_topic hybrid "$runs/refit-sweqa-hybrid"
fi
if has_step informal; then
  say "recording the informal held-out questions (hybrid)"
  subset=()
  [[ -n ${SUBSET:-} ]] && subset=(--subset "$SUBSET")
  "$here/sets/informal_local.sh" "$cache/informal" "$runs/refit-informal" --rewrites none,dictionary \
    --retrievals hybrid --cache-dir "$cache" --no-progress --searcher "$recorder" "${subset[@]}"
fi
if has_step fit; then
  out=${OUT:-$runs/refit-report}
  ship=()
  if [[ ${SHIP:-0} == 1 ]]; then
    out=${OUT:-$root/benchmarks/results/ranking}
    ship=(--model "$root/components/haystack_integrations/components/code_alias/config/ranking_model.json")
  fi
  held=()
  for lib in marshmallow rich rxjs query-core; do
    [[ -s $runs/refit-informal/$lib/pools.jsonl ]] && held+=(--held-out "informal-$lib=$runs/refit-informal/$lib")
  done
  say "fitting (folds by repository) -> $out"
  python "$here/fit_ranking.py" --run "sweqa=$runs/refit-sweqa-lexsem" --run "lite=$runs/refit-lite-lexsem" \
    --run "jsts=$runs/refit-jsts-lexsem" --run "sweqa-hybrid=$runs/refit-sweqa-hybrid" \
    --off-topic "sweqa=$runs/refit-offtopic-lexsem" --off-topic "sweqa-hybrid=$runs/refit-offtopic-hybrid" \
    --set-weight sweqa=2 "${held[@]}" --out "$out" "${ship[@]}"
fi
say "done"
