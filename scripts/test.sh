#!/usr/bin/env bash
# The test command (README, CI): set up .venv from scratch if needed, lint, then run every test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
.venv/bin/ruff check .
.venv/bin/python -m pytest -q "$@"
