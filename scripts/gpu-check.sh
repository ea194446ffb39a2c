#!/usr/bin/env bash
# The one GPU check, for a bare GPU machine: its own python3 and CUDA torch (never installed here), no package
# registry, only this checkout and the carried set .gpu-carry/ (built here by scripts/gpu-carry.sh: both ComfyUI
# hosts pruned to their Python sources, and the few packages the machine lacks). Under 8 minutes, each phase under
# its own timeout, the most valuable first (PLAN below). Every figure is one line of summary.txt, appended as it is
# measured, so a run cut short still returns what it measured; at the end summary.md tables every test per host.
# Files go to $OUT/gpu-check/ when OUT is set (the device tool returns what is under $OUT), else out/gpu-check/.
#
#   bash scripts/gpu-check.sh            with a GPU (nvidia-smi lists one): the phases of PLAN
#                                        without one: seconds; the CUDA tests are collected on both hosts with .venv
#                                        and reported as skipped (CI runs this mode)
#   bash scripts/gpu-check.sh --dry-run  here: proves the carried set complete. Every phase runs on the CPU at its
#                                        smallest size in a Python that sees only the standard library, the machine's
#                                        own packages (scripts/gpu-device-packages.txt, this .venv's copies) and the
#                                        carried set, unpacked as the machine unpacks it; then the size and the plan
#   bash scripts/gpu-check.sh --plan     the time plan
#
#   GPU_CHECK_PYTHON=python3   the machine's Python (with its CUDA torch)
#   GPU_CHECK_CARRY=.gpu-carry the carried set
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
start=$SECONDS
mode=gpu
case "${1:-}" in
  --dry-run) mode=dry ;;
  --plan) mode=plan ;;
  "") ;;
  *) echo "gpu-check: unknown argument ${1} (use --dry-run or --plan, or none)" >&2; exit 2 ;;
esac

# phase | seconds at most (the GPU run; the dry run runs the same phases at their smallest sizes)
PLAN=(
  "unpack the carried set|30"
  "CUDA tests (tests/test_cuda.py, marker cuda), ComfyUI 0.3.75 and 0.30 side by side|150"
  "per-call time and peak memory at 4096², ours vs stock, interleaved; HAP's block mask and attention|90"
  "whole sampling, tiny Flux 2048², DyPE + SEGA vs stock|90"
  "the cascades (HiFlow, I-Max, HRDiT) vs one pass, tiny FLUX 256² -> 1024², time inside the model calls|90"
  "summary table|10"
)
budget=0
for p in "${PLAN[@]}"; do budget=$((budget + ${p##*|})); done
factor=1  # the dry run runs the CPU twins on a small machine: 4x the GPU limits
[ "$mode" = dry ] && factor=4
limit() { local p=${PLAN[$1]}; echo $((${p##*|} * factor)); }
print_plan() {
  echo "time plan (each phase under its own timeout; a phase that runs out is cut and the next one starts):"
  local i=1 p
  for p in "${PLAN[@]}"; do printf '  %d. %4d s  %s\n' "$i" "${p##*|}" "${p%|*}"; i=$((i + 1)); done
  printf '     %4d s  in all (%d min %02d s; a device command may run 10 min)\n' "$budget" $((budget / 60)) \
    $((budget % 60))
}
if [ "$mode" = plan ]; then print_plan; exit 0; fi

out=${OUT:-out}/gpu-check
[ "$mode" = dry ] && out=out/gpu-check-dry-run
rm -rf "$out" && mkdir -p "$out"
summary="$out/summary.txt"
phases=$(mktemp)
work=""
trap 'rm -rf "$phases" ${work:+"$work"}' EXIT
note() { echo "$*" | tee -a "$summary"; }
phase() { printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >> "$phases"; }
status_of() { case $1 in 0) echo ok ;; 124 | 137) echo "timed out" ;; *) echo "FAIL (exit $1)" ;; esac; }

leg2=.hosts/comfyui-0.30.0
gpu=""
if [ "$mode" = gpu ] && command -v nvidia-smi > /dev/null 2>&1; then
  gpu=$(nvidia-smi -L 2> /dev/null | grep -m 1 '^GPU ')  # "GPU 0: NVIDIA H200 (UUID: ...)"; none: no line
fi

# ------------------------------------------------------------------------------------- no GPU: collect and skip (CI)
if [ "$mode" = gpu ] && [ -z "$gpu" ]; then
  echo "gpu-check: no NVIDIA GPU on this machine (nvidia-smi lists none): the CUDA checks are skipped."
  phase "GPU" "skipped" "" "none here (nvidia-smi lists no GPU): run scripts/gpu-check.sh on a GPU machine"
  reports=()
  if [ -x .venv/bin/python ]; then  # each CUDA test must be collected on both hosts and skip with its reason
    for host in 0.3.75 0.30; do
      path=""; [ "$host" = 0.30 ] && path="$PWD/$leg2"
      [ "$host" = 0.30 ] && [ ! -d "$leg2" ] && continue
      COMFYUI_PATH=$path DYPE_SEGA_TEST_DEVICE=cuda timeout -k 10 150 .venv/bin/python -m pytest -q -rs -m cuda \
        tests/test_cuda.py -o junit_family=xunit1 --junitxml="$out/$host.xml" > "$out/$host.log" 2>&1
      tail -n 1 "$out/$host.log" | sed "s/^/  [$host] /"
      reports+=("$host=$out/$host.xml")
    done
  else
    phase "CUDA tests" "skipped" "" "no .venv to collect them with (bash scripts/bootstrap.sh)"
  fi
  .venv/bin/python scripts/gpu_check_summary.py "$phases" "$out/summary.md" ${reports[@]+"${reports[@]}"}
  exit $?
fi

# ---------------------------------------------------------------------------- the phases (on the GPU, or the dry run)
carry=${GPU_CHECK_CARRY:-.gpu-carry}
if [ ! -f "$carry/manifest.json" ]; then
  echo "gpu-check: no carried set at $carry: build it here with 'bash scripts/gpu-carry.sh' and carry it" >&2
  exit 2
fi
work=$(mktemp -d /tmp/gpu-check.XXXXXX)
if [ "$mode" = dry ]; then
  [ -x .venv/bin/python ] || { echo "gpu-check --dry-run: no .venv here (bash scripts/bootstrap.sh)" >&2; exit 2; }
  # The machine's Python, emulated: this .venv's interpreter without its site-packages (-S), seeing the standard
  # library, links to its copies of the machine's packages, and the carried site (PYTHONPATH below).
  .venv/bin/python scripts/gpu_carry.py device-site "$work/device-site" | tee -a "$out/dry-run.log"
  printf '#!/bin/sh\nexec %s -S "$@"\n' "$repo/.venv/bin/python" > "$work/python3" && chmod +x "$work/python3"
  py=$work/python3
  device_site=$work/device-site
  echo "gpu-check --dry-run: the machine emulated by $py (-S) with $device_site and the carried set"
else
  py=${GPU_CHECK_PYTHON:-python3}
  device_site=""
  echo "gpu-check: $gpu; $($py -c 'import sys, torch; print(f"python {sys.version.split()[0]}, torch {torch.__version__}, CUDA {torch.version.cuda}")' 2>&1 | tail -n 1)"
fi

# 1. the carried set, unpacked by the machine's own Python (standard library only)
t0=$SECONDS
timeout -k 5 "$(limit 0)" "$py" scripts/gpu_carry.py unpack "$carry" "$work" > "$out/unpack.log" 2>&1
rc=$?
phase "${PLAN[0]%|*}" "$(status_of $rc)" "$((SECONDS - t0)) s" "$(cat "$out/unpack.log" | tail -n 1)"
rm -f "$out/unpack.log"
if ((rc != 0)); then "$py" scripts/gpu_check_summary.py "$phases" "$out/summary.md"; exit 1; fi
export PYTHONPATH="$work/site${device_site:+:$device_site}" PYTHONUNBUFFERED=1
# tests/conftest.py + host.py: boot ComfyUI on the GPU and run the tests marked cuda (the dry run: the CPU, as users)
[ "$mode" = gpu ] && export DYPE_SEGA_TEST_DEVICE=cuda
host_path() { echo "$work/hosts/$1"; }

# 2. the CUDA tests on both hosts at once (one GPU is plenty; these are checks, not timings). The dry run runs the
#    same file's CPU twins instead (the CUDA ones skip there) and imports comfy-kitchen on 0.30 as its tests do.
t0=$SECONDS
marker=cuda
[ "$mode" = dry ] && marker="not cuda"
pids=()
for host in 0.3.75 0.30; do
  COMFYUI_PATH=$(host_path $host) timeout -k 10 "$(limit 1)" "$py" -m pytest -q -rs -m "$marker" tests/test_cuda.py \
    -o junit_family=xunit1 --junitxml="$out/$host.xml" > "$out/$host.log" 2>&1 &
  pids+=($!)
done
for i in 0 1; do
  wait "${pids[$i]}"; rc=$?
  host=$([ "$i" = 0 ] && echo 0.3.75 || echo 0.30)
  case $rc in 0 | 1) ;; *) phase "CUDA tests, ComfyUI $host" "$(status_of $rc)" "" "see $host.log" ;; esac
  note "CUDA tests, ComfyUI $host: $("$py" scripts/gpu_check_summary.py --count "$out/$host.xml") ($((SECONDS - t0)) s)"
done
if [ "$mode" = dry ]; then
  COMFYUI_PATH=$(host_path 0.30) "$py" -c "import comfy_kitchen as ck, comfy_aimdo; print('comfy-kitchen backends:', \
{k: v['available'] for k, v in ck.list_backends().items()})" >> "$out/0.30.log" 2>&1 || note "comfy-kitchen: FAIL (see 0.30.log)"
fi

# 3-5. the bench on the primary host, one process per figure, each under its limit (on the GPU only if torch sees it)
cuda_seen=$("$py" -c "import torch; print(torch.cuda.is_available())" 2>&1 | tail -n 1)
if [ "$mode" = gpu ] && [ "$cuda_seen" != True ]; then
  note "bench: not run, torch sees no CUDA device here ($cuda_seen)"
  for i in 2 3 4; do phase "${PLAN[$i]%|*}" "FAIL" "" "torch sees no CUDA device"; done
fi
bench() {  # phase-index args...
  local i=$1 t0=$SECONDS rc
  shift
  COMFYUI_PATH=$(host_path 0.3.75) timeout -k 10 "$(limit "$i")" "$py" . bench "$@" --summary "$summary" \
    >> "$out/bench.log" 2>&1
  rc=$?
  phase "${PLAN[$i]%|*}" "$(status_of $rc)" "$((SECONDS - t0)) s" "bench.log; figures in summary.txt"
  ((rc == 0)) || note "${PLAN[$i]%|*}: $(status_of $rc) after $((SECONDS - t0)) s (bench.log)"
}
if [ "$mode" = dry ]; then
  bench 2 --only calls hap --sides 4096 --qwen-sides --batch 1 --repeats 1 --hap-sides 256 --hap-compile-side 0 \
    --hap-time-side 256 --hap-runs 1
  bench 3 --only sampling --sampling-side 64 --sampling-runs 1
  bench 4 --only hiflow --hiflow-side 32 --hiflow-runs 1
elif [ "$cuda_seen" = True ]; then
  bench 2 --only calls hap --sides 4096 --qwen-sides 4096 --batch 1 2 --repeats 30 --hap-sides 2048 4096 \
    --hap-compile-side 4096 --hap-time-side 4096 --hap-heads 24 --hap-runs 5
  bench 3 --only sampling --sampling-side 2048 --sampling-runs 10
  bench 4 --only hiflow --hiflow-side 256 --hiflow-runs 3
fi

# 6. the table of every phase and every test, per host
phase "total" "$( ((SECONDS - start <= budget * factor)) && echo ok || echo "over the plan")" \
  "$((SECONDS - start)) s" "plan $((budget * factor)) s"
"$py" scripts/gpu_check_summary.py "$phases" "$out/summary.md" "0.3.75=$out/0.3.75.xml" "0.30=$out/0.30.xml"
rc=$?
if [ "$mode" = dry ]; then
  echo
  .venv/bin/python scripts/gpu_carry.py sizes "$carry" | tee -a "$summary" || rc=1
  print_plan
  echo "gpu-check --dry-run: $( ((rc == 0)) && echo "the carried set is complete" || echo "FAILED (see $out)")"
fi
exit $rc
