#!/usr/bin/env bash
# `comfy node validate` (the Comfy registry's publish checks on pyproject.toml) from PyPI comfy-cli, in its own venv
# so its dependencies never meet the test host's. Needs PyPI to install; the check itself runs offline (verified
# under `unshare -rn`). A throwaway HOME keeps comfy-cli's config and telemetry prompt out of the user's.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv-cli/bin/comfy ]; then
  "${PYTHON:-python3}" -m venv .venv-cli
  .venv-cli/bin/pip install -q --disable-pip-version-check comfy-cli==1.23.0
fi
HOME=$(mktemp -d) .venv-cli/bin/comfy --skip-prompt --no-enable-telemetry node validate
