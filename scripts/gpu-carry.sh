#!/usr/bin/env bash
# Build the carried set of the GPU check here (needs PyPI and the test environment of scripts/bootstrap.sh): both
# ComfyUI hosts pruned to their Python sources and the packages the GPU machine lacks, in .gpu-carry/ (ignored by
# git; what it holds and why: scripts/gpu_carry.py). Then `bash scripts/gpu-check.sh --dry-run` proves it complete,
# and a device run names it in its carry (docs/development.md, "The one GPU check").
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || bash scripts/bootstrap.sh
rm -rf .gpu-carry
.venv/bin/python scripts/gpu_carry.py build .gpu-carry
