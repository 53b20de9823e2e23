#!/usr/bin/env bash
# Start (or stop) noida-db's Elasticsearch-protocol server on a free loopback port, for the wire-level run
# of the `elasticsearch` integration tests.
#
# noida-db (PyPI `noida-db`) is a small local server that speaks the Elasticsearch 8 REST protocol: index
# creation with analyzers, bulk writes, filters, BM25 search, kNN. It is NOT Elasticsearch and not Lucene;
# passing against it checks the wire format and our request shapes, not Elasticsearch's ranking. Tests that
# only a real server can pass are marked `elasticsearch_real` and skip when the server identifies as noida.
#
#   export ELASTICSEARCH_URL="$(.ci/start-noida.sh)"    # prints the URL on stdout once the server answers
#   python -m pytest -m elasticsearch
#   .ci/start-noida.sh stop
#
# Each start begins with empty data. State lives in $NOIDA_STATE_DIR (default: a per-user temp folder).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
state="${NOIDA_STATE_DIR:-${TMPDIR:-/tmp}/code-alias-noida-$(id -u)}"
data="$state/data"

noida="$(command -v noida-db || true)"
if [[ -z "$noida" && -x "$here/.venv/bin/noida-db" ]]; then
  noida="$here/.venv/bin/noida-db"
fi
if [[ -z "$noida" ]]; then
  echo "start-noida: noida-db is not installed; run: pip install noida-db" >&2
  exit 2
fi
python="$(command -v python3 || command -v python)"

# The prebuilt binary prints a harmless glibc symbol-version warning on some systems; keep it off the output.
run_noida() { "$noida" "$@" 2> >(grep -v "GLIBC_" >&2 || true); }

if [[ "${1:-start}" == "stop" ]]; then
  if [[ -d "$data" ]]; then
    run_noida down --data-dir "$data" >&2 || true
  fi
  exit 0
fi

if [[ -d "$data" ]]; then
  run_noida down --data-dir "$data" >/dev/null 2>&1 || true
  rm -rf "$data"
fi
mkdir -p "$data"

for attempt in 1 2 3; do
  port="$("$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
  url="http://127.0.0.1:$port"
  run_noida up --only elasticsearch --host 127.0.0.1 --elasticsearch-port "$port" --data-dir "$data" >&2 || true
  if "$python" - "$url" <<'PY'
import json, sys, time, urllib.request
url = sys.argv[1]
deadline = time.time() + 20
while time.time() < deadline:
    try:
        with urllib.request.urlopen(url, timeout=1) as response:
            if json.load(response).get("version", {}).get("number"):
                sys.exit(0)
    except Exception:
        time.sleep(0.2)
sys.exit(1)
PY
  then
    echo "$url" > "$state/url"
    echo "$url"
    exit 0
  fi
  echo "start-noida: no answer on $url (attempt $attempt)" >&2
  run_noida down --data-dir "$data" >/dev/null 2>&1 || true
done
echo "start-noida: could not start noida-db; see $data/noida.log" >&2
exit 1
