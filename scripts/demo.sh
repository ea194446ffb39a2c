#!/usr/bin/env bash
# The main job: set up .venv if needed, then run an example workflow headless with tiny stand-in models.
# Usage: bash scripts/demo.sh [--workflow workflows/<name>.json] [--out out] [--side 256] [--steps 4]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
exec .venv/bin/python scripts/demo.py "$@"
