#!/usr/bin/env bash
# Install, lint, type-check and run the whole test suite (what CI runs).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# shellcheck disable=SC1091
. .venv/bin/activate
export HAYSTACK_TELEMETRY_ENABLED=False HF_HUB_OFFLINE=1
ruff check components tests benchmarks
mypy components/haystack_integrations/components/code_alias
python -m pytest -q "$@"
