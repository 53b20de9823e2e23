#!/usr/bin/env bash
# Create .venv and install the project with its test tools. Idempotent: a second run with the same
# pyproject.toml installs nothing and says so in a second (SETUP_FORCE=1 reinstalls anyway).
# Non-interactive: each step prints a line with the time since the start, pip prints a line per package (download
# bars only on a terminal), and a long step says every 30 s that it still runs: no log sits silent for minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
TORCH="torch==2.13.0"
START=$SECONDS
step() { printf '[setup %4ds] %s\n' "$((SECONDS - START))" "$*"; }
# Run a command, and while it runs say every 30 s that it still does: pip's last line ("Installing collected
# packages: ...") stays for minutes while it unpacks torch, transformers and the rest.
with_heartbeat() {
  # sleep's output goes nowhere, so the one left behind by kill holds no pipe of the caller's (a CI log, `| tee`) open
  ( while sleep "${SETUP_HEARTBEAT_SECONDS:-30}" </dev/null >/dev/null 2>&1; do step "... still running"; done ) &
  local ticker=$! status=0
  "$@" || status=$?
  kill "$ticker" 2>/dev/null || true
  wait "$ticker" 2>/dev/null || true
  return "$status"
}

if [ ! -x .venv/bin/python ]; then
  step "creating .venv with $("$PYTHON" --version 2>&1)"
  "$PYTHON" -m venv .venv
fi
# shellcheck disable=SC1091
. .venv/bin/activate
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1

# What the installed environment was made from: a changed pyproject.toml (or torch pin) installs again.
STAMP=.venv/.code-alias-setup
WANT="$(sha256sum pyproject.toml | cut -d' ' -f1) $TORCH"
if [ "${SETUP_FORCE:-0}" != 1 ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT" ]; then
  step ".venv is up to date with pyproject.toml; nothing to install (SETUP_FORCE=1 reinstalls)"
  exit 0
fi
rm -f "$STAMP"

# torch first and pinned: the CPU 2.13.0 build lies on local disk; an unpinned torch pulls a multi-GB CUDA build.
step "1/2 installing $TORCH (CPU build; about a minute)"
with_heartbeat python -m pip install --progress-bar on "$TORCH"
step "2/2 installing the project and its test tools (pip install -e .[dev]; several minutes on 2 cores)"
with_heartbeat python -m pip install --progress-bar on -e ".[dev]"
python -c "import haystack_integrations.components.code_alias" # fails loudly if the install did not take
echo "$WANT" >"$STAMP"
step "done: . .venv/bin/activate"
