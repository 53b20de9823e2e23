#!/usr/bin/env bash
# Create .venv and install the project with its test tools. Idempotent: a second run installs nothing new.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
# shellcheck disable=SC1091
. .venv/bin/activate
export PIP_DISABLE_PIP_VERSION_CHECK=1
# torch first and pinned: the CPU 2.13.0 build lies on local disk; an unpinned torch pulls a multi-GB CUDA build.
python -m pip install -q "torch==2.13.0"
python -m pip install -q -e ".[dev]"
