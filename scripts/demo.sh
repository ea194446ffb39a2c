#!/usr/bin/env bash
# The main job: set up .venv if needed, then run example workflows headless with tiny stand-in models.
# Usage: bash scripts/demo.sh [--workflow 04 [26 ...] | workflows/<name>.json | --each-kind] [--out out] [--side 256]
#                             [--steps 4]
#        bash scripts/demo.sh --list   (the host, the shipped workflows and which it runs; under a second once set up)
#        COMFYUI_PATH=.hosts/comfyui-0.30.0 bash scripts/demo.sh ...   (the second tested host)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh  # instant when nothing changed since the last set-up (its stamp)
exec "${VENV:-.venv}/bin/python" scripts/demo.py "$@"
