#!/usr/bin/env bash
# One device call for the rest of issue 36 (docs/memory_roof.md "Every shape", docs/gemm_ladder.md
# "Odd shapes", docs/measurement.md "Short kernels against nvbench"): the GPU tests of the two
# workloads touched, the transpose benchmark command at the shapes, GEMM best beside
# cuBLAS (and the pipelined kernel's checked path, best's pick there before the odd path) at
# shapes that are not multiples of the tile, then studies/short_kernel_gap_run.sh. Every step has
# its own time limit, so the call ends inside the device's; logs go to OUTDIR, tarred by the caller.
# Usage: bash studies/memory_roof/odd_shapes_run.sh OUTDIR [STUDY_ROUNDS]
set -u
out=${1:?usage: odd_shapes_run.sh OUTDIR [STUDY_ROUNDS]}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
py=${PYTHON:-python3}
step() {  # step SECONDS LOG command...: run it with a time limit, its output appended to LOG
  local limit=$1 log=$2; shift 2
  echo "== $*" | tee -a "$out/steps.txt" >> "$out/$log"
  local t0=$SECONDS
  timeout "$limit" "$@" >> "$out/$log" 2>&1
  local rc=$?
  echo "   rc=$rc $((SECONDS - t0)) s" | tee -a "$out/steps.txt" >> "$out/$log"
}
git_rev=$(cat BUILD 2>/dev/null || echo unknown)
echo "build $git_rev" > "$out/steps.txt"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv \
  > "$out/nvidia-smi.txt" 2>&1
PL=pl_128x256x16_w64x64_i4_t4x4_nf      # best's large-tile pick on aligned shapes
for s in "10000 10000" "8200 8200" "8192 8196" "4100 4100" "8192 8192" "4096 4096" "4097 4097"; do
  step 12 transpose.txt $py -m pmppbench transpose $s --variants coarsened,coarsened_tma,memcpy
done
for s in "4097 4095 4096" "4095 4095 4095" "3000 5000 2000" "1000 1000 1000" "999 1001 1003"; do
  step 16 gemm.txt $py -m pmppbench gemm $s --variants best,${PL%_nf}_chk_nf,cublas
done
step 75 short-kernel-gap.txt bash studies/short_kernel_gap_run.sh "$out/short-kernel-gap" "${2:-2}"
step 70 gpu-tests.txt $py -m pytest -q -m gpu -p no:cacheprovider --durations=8 tests/test_transpose.py tests/test_gemm.py
cat "$out/steps.txt"
