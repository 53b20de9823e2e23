#!/usr/bin/env bash
# Fetch the four libraries of the informal question set (benchmarks/sets/informal.jsonl) from their package
# registries, at the pinned versions, into OUT_DIR/<library>/ (the folder `gold_files` are relative to).
#
#   benchmarks/sets/fetch_informal.sh OUT_DIR              # all four
#   benchmarks/sets/fetch_informal.sh OUT_DIR rxjs rich    # just some
#
# Idempotent: a library whose OUT_DIR/<library>/.fetched names the same archive and checksum is left alone;
# anything else in that folder is replaced (FORCE=1 refetches even a complete one). Each archive's sha256 is
# checked against the pin below, so the gold paths always refer to the same bytes. One library failing does
# not stop the others; the script names each failure and exits 1 at the end.
#
# Needs: python3 with pip (PyPI), npm (the npm registry), tar, sha256sum.
set -uo pipefail

usage() { echo "usage: $0 OUT_DIR [library ...]   (libraries: marshmallow rich rxjs query-core)" >&2; exit 2; }
[[ $# -ge 1 ]] || usage
out_dir=$1
shift

# library | registry | spec | archive sha256 | folders to drop after extraction
# - The Python sdists are kept whole (source, tests, docs: the tree a user who indexes the project sees).
# - The npm tarballs ship the TypeScript sources under src/ AND compiled copies of the same code (rxjs: dist/,
#   @tanstack/query-core: build/). The compiled copies are dropped, so the tree is the TypeScript source a user
#   would index, and no question has two equally right files.
LIBRARIES=(
  "marshmallow|pypi|marshmallow==3.22.0|4972f529104a220bb8637d595aa4c9762afbe7f7a77d82dc58c1615d70c5823e|"
  "rich|pypi|rich==13.9.2|51a2c62057461aaf7152b4d611168f93a9fc73068f8ded2790f29fe2b5366d0c|"
  "rxjs|npm|rxjs@7.8.1|c532167725ab7d085123209156c93cef22f2479cb9c8527060f1cd903aa9d149|dist"
  "query-core|npm|@tanstack/query-core@5.59.0|2586579316ffc0957be3c4c33e2f9dfa7732b55c15013b7139244d2ab60d27fc|build"
)

wanted=("$@")
known=()
for entry in "${LIBRARIES[@]}"; do known+=("${entry%%|*}"); done
for name in "${wanted[@]}"; do
  if [[ ! " ${known[*]} " == *" $name "* ]]; then
    echo "error: unknown library '$name' (known: ${known[*]})" >&2
    exit 2
  fi
done

mkdir -p "$out_dir" || { echo "error: cannot create $out_dir" >&2; exit 1; }
out_dir=$(cd "$out_dir" && pwd)

fetch_one() {
  local name=$1 registry=$2 spec=$3 sha=$4 drop=$5
  local target="$out_dir/$name" stamp="$spec sha256:$sha"
  if [[ -z "${FORCE:-}" && -f "$target/.fetched" && "$(cat "$target/.fetched")" == "$stamp" ]]; then
    echo "$name: already there ($spec)"
    return 0
  fi
  local work status
  work=$(mktemp -d "$out_dir/.fetch-$name.XXXXXX") || { echo "$name: error: cannot make a temporary folder" >&2; return 1; }
  fetch_into "$work" "$@"
  status=$?
  rm -rf "$work"
  return $status
}

fetch_into() {
  local work=$1 name=$2 registry=$3 spec=$4 sha=$5 drop=$6
  local target="$out_dir/$name" stamp="$spec sha256:$sha"
  mkdir -p "$work/download" "$work/tree"
  echo "$name: downloading $spec from $registry"
  if [[ $registry == pypi ]]; then
    if ! python3 -m pip download --quiet --no-deps --no-binary :all: --dest "$work/download" "$spec" \
        >"$work/log" 2>&1; then
      echo "$name: error: pip download $spec failed:" >&2; tail -n 5 "$work/log" >&2; return 1
    fi
  else
    if ! (cd "$work/download" && npm pack --silent "$spec") >"$work/log" 2>&1; then
      echo "$name: error: npm pack $spec failed:" >&2; tail -n 5 "$work/log" >&2; return 1
    fi
  fi
  local archives=("$work"/download/*)
  if [[ ${#archives[@]} -ne 1 || ! -f ${archives[0]} ]]; then
    echo "$name: error: expected one archive from $spec, got: ${archives[*]##*/}" >&2; return 1
  fi
  local archive=${archives[0]} got
  got=$(sha256sum "$archive" | cut -d' ' -f1)
  if [[ $got != "$sha" ]]; then
    echo "$name: error: ${archive##*/} has sha256 $got, expected $sha (not the pinned release)" >&2; return 1
  fi
  # Both formats wrap the tree in one top folder (package/, or <dist>-<version>/): strip it.
  if ! tar -xzf "$archive" -C "$work/tree" --strip-components=1 --no-same-owner; then
    echo "$name: error: cannot extract ${archive##*/}" >&2; return 1
  fi
  local folder
  for folder in $drop; do
    [[ -d "$work/tree/$folder" ]] || { echo "$name: error: expected a $folder/ folder to drop" >&2; return 1; }
    rm -rf "${work:?}/tree/$folder"
  done
  echo "$stamp" >"$work/tree/.fetched"
  rm -rf "$target" && mv "$work/tree" "$target" || { echo "$name: error: cannot move the tree to $target" >&2; return 1; }
  echo "$name: $spec -> $target ($(find "$target" -type f | wc -l) files)"
}

failed=()
for entry in "${LIBRARIES[@]}"; do
  IFS='|' read -r name registry spec sha drop <<<"$entry"
  if [[ ${#wanted[@]} -gt 0 && ! " ${wanted[*]} " == *" $name "* ]]; then
    continue
  fi
  fetch_one "$name" "$registry" "$spec" "$sha" "$drop" || failed+=("$name")
done
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "failed: ${failed[*]}" >&2
  exit 1
fi
