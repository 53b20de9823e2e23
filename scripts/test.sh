#!/usr/bin/env bash
# Install, lint, type-check and run the whole test suite (what CI runs).
# The `elasticsearch` integration tests run against noida-db, a small local server that speaks the
# Elasticsearch 8 protocol (a wire-level check, not Elasticsearch); set ELASTICSEARCH_URL to a real server
# (e.g. `docker compose up -d elasticsearch`) to run them, and the `elasticsearch_real` ones, for real.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# shellcheck disable=SC1091
. .venv/bin/activate
export HAYSTACK_TELEMETRY_ENABLED=False HF_HUB_OFFLINE=1
ruff check components tests benchmarks hayhooks
mypy components/haystack_integrations/components/code_alias
MYPYPATH=hayhooks mypy hayhooks
if [ -z "${ELASTICSEARCH_URL:-}" ]; then
  ELASTICSEARCH_URL="$(.ci/start-noida.sh)"
  export ELASTICSEARCH_URL
  trap '.ci/start-noida.sh stop >/dev/null 2>&1 || true' EXIT
fi
python -m pytest -q "$@"
