#!/usr/bin/env bash
# Issue 15's device run, on a GPU machine:  bash studies/baselines_run.sh DEST [BEFORE_DIR]
# 1. studies/baselines.py --ab: every textbook rung beside the course's listing (with the
#    64-bit and __restrict__ columns, and BEFORE_DIR's older kernels when given)
# 2. pmppbench <w> --check-only for vecadd, transpose, gemm, stencil (each checks one shape
#    past 2^31 elements, on the 64-bit path)
# 3. the GPU tests of those four workloads
# Every step's output goes to DEST; steps.txt has each exit status and the elapsed seconds.
set -uo pipefail
dest=${1:?usage: baselines_run.sh DEST [BEFORE_DIR]}
before=${2:-}
mkdir -p "$dest"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
py=${PYTHON:-python3}
start=$EPOCHREALTIME
step() { echo "$1 exit $2, $(awk "BEGIN{printf \"%.0f\", $EPOCHREALTIME - $start}") s" | tee -a "$dest/steps.txt"; }

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv \
  > "$dest/nvidia-smi.txt" 2>&1
$py studies/baselines.py --ab ${before:+--before "$before"} --out "$dest/baselines.txt" --json "$dest/baselines.json" \
  > "$dest/baselines.log" 2>&1
step baselines $?
for w in vecadd transpose gemm stencil; do
  $py -m pmppbench "$w" --check-only > "$dest/check-$w.txt" 2>&1
  step "check-only $w" $?
done
$py -m pytest -q -rA -m gpu tests/test_vecadd.py tests/test_transpose.py tests/test_gemm.py tests/test_stencil.py \
  > "$dest/gpu-tests.txt" 2>&1
step "gpu tests" $?
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader >> "$dest/nvidia-smi.txt" 2>&1
