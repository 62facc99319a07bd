#!/usr/bin/env bash
# Runs every test: unit tests beside the code and the end-to-end tests in
# tests/ (which trace the real kernel and need root; they skip without it).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
exec $PY -m pytest -q "$@"
