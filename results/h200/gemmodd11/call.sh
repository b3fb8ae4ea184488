#!/usr/bin/env bash
# Session 11, #36's odd GEMM shapes: best (pipelined_padded where it pads), the checked loop
# it ran there before (`_chk_nf`) and pipelined_padded by name beside cuBLAS in the same run,
# each odd shape twice; the pad copies timed alone; the GEMM GPU tests; compute-sanitizer
# memcheck / racecheck on pipelined_padded and pad_rows. `bash call.sh OUT STEPS`.
set -uo pipefail
R=$1; STEPS=${2:-"bench pad tests sanitizer"}; mkdir -p "$R"
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 COLUMNS=300
t0=$SECONDS
step() { local name=$1 limit=$2; shift 2; local s=$SECONDS; timeout "$limit" "$@"; echo "$name rc=$? $((SECONDS - s)) s (at $((SECONDS - t0)) s)" >> "$R/steps.txt"; }
CHK=pl_128x256x16_w64x64_i4_t4x4_chk_nf PAD=pl_128x256x16_w64x64_i4_t4x4_nf_pad
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm,temperature.gpu,power.draw --format=csv > "$R/nvidia-smi.txt"
gemm() { local s=$1; shift; echo "== pmppbench gemm $s $*" >> "$R/gemm.txt"
  step "gemm $s" 60 python3 -m pmppbench gemm $s "$@" >> "$R/gemm.txt" 2>&1; }
if [[ $STEPS == *bench* ]]; then
  for s in "4097 4095 4096" "4095 4095 4095" "4097 4095 4096" "4095 4095 4095"; do
    gemm "$s" --variants best,$CHK,$PAD,cublas
  done
  for s in "3000 5000 2000" "4096 4096 4096" "3000 5000 2000"; do
    gemm "$s" --variants best,$PAD,cublas
  done
fi
if [[ $STEPS == *pad* ]]; then
  step pad-cost 60 python3 - > "$R/pad-cost.txt" 2>&1 <<'PY'
# pad_rows alone, as best's call launches it: B (K x N to kp x np) and A (M x K to M x kp)
import cupy as cp
from pmppbench.workloads.gemm.best import PIPELINED_TILES
from pmppbench.workloads.gemm.configs import padding_for
from pmppbench.workloads.gemm.launch import pad_launch
for m, n, k in ((4097, 4095, 4096), (4095, 4095, 4095)):
    p = padding_for(PIPELINED_TILES, m, n, k)
    ctx = {"kernels": {}}
    a, b = cp.ones((m, k), cp.float32), cp.ones((k, n), cp.float32)
    steps = [("B", pad_launch(ctx, b, cp.empty(p.kp * p.np, cp.float32), k, n, p.kp, p.np), 4 * (k * n + p.kp * p.np))]
    if p.a:
        steps.append(("A", pad_launch(ctx, a, cp.empty(m * p.kp, cp.float32), m, k, m, p.kp), 4 * m * (k + p.kp)))
    for name, launch, nbytes in steps:
        for _ in range(5):
            launch()
        e0, e1 = cp.cuda.Event(), cp.cuda.Event()
        e0.record()
        for _ in range(50):
            launch()
        e1.record(); e1.synchronize()
        us = cp.cuda.get_elapsed_time(e0, e1) * 1000 / 50
        print(f"{m}x{n}x{k} pad {name}: {us:.1f} us, {nbytes / us / 1e3:.0f} GB/s ({nbytes} bytes read + written)")
PY
fi
if [[ $STEPS == *tests* ]]; then
  step gpu-tests 240 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm.py --durations=8 > "$R/gpu-tests.txt" 2>&1
fi
if [[ $STEPS == *retest* ]]; then  # the GPU tests of the padded call alone
  step gpu-tests-padded 60 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemm.py \
    -k "pads_and_on_odd_dims or best_choices_pass" > "$R/gpu-tests-padded.txt" 2>&1
fi
if [[ $STEPS == *sanitizer* ]]; then
  step memcheck 120 compute-sanitizer --tool memcheck python3 -m pmppbench gemm --check-only --variants best,$PAD > "$R/memcheck.txt" 2>&1
  for s in "129 131 133" "131 259 48" "1409 2815 33"; do
    step "memcheck $s" 60 compute-sanitizer --tool memcheck python3 -m pmppbench gemm $s --check-only --variants best,$PAD >> "$R/memcheck.txt" 2>&1
  done
  for s in "129 131 133" "131 259 48"; do
    step "racecheck $s" 60 compute-sanitizer --tool racecheck python3 -m pmppbench gemm $s --check-only --variants $PAD >> "$R/racecheck.txt" 2>&1
  done
fi
if [[ $STEPS == *sancopy* ]]; then  # best where it pads: pad_rows of B, of A and B, then the kernel
  for s in "1409 2815 64" "1535 5631 40"; do
    step "memcheck $s" 60 compute-sanitizer --tool memcheck python3 -m pmppbench gemm $s --check-only \
      --timeout 200 --variants best >> "$R/memcheck-best.txt" 2>&1
  done
fi
cat "$R/steps.txt"
