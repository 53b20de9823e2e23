#!/usr/bin/env bash
# The main job on the embedded default (no server): index this repository's own source, then ask it an
# informal question. Pass another folder and question to try your own code:
#   bash scripts/demo.sh path/to/repo "where do we retry failed payments?"
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# shellcheck disable=SC1091
. .venv/bin/activate
export HAYSTACK_TELEMETRY_ENABLED=False HF_HUB_OFFLINE=1
REPO="${1:-components}"
QUESTION="${2:-where do we split camelCase identifiers into words?}"
code-alias --index-dir .code-alias index "$REPO"
code-alias --index-dir .code-alias ask "$QUESTION" --top-k 5
