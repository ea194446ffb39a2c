#!/usr/bin/env bash
# The main job: set up .venv if needed, then run an example workflow headless with tiny stand-in models.
# Usage: bash scripts/demo.sh [--workflow 04 | workflows/<name>.json] [--out out] [--side 256] [--steps 4]
#        bash scripts/demo.sh --list   (the shipped workflows and which this host runs)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
exec .venv/bin/python scripts/demo.py "$@"
