#!/usr/bin/env bash
# The device calls of the thread_private histogram and the every-shape transpose work (README's
# histogram section, docs/memory_roof.md "Every shape").  Usage: bash studies/perf_run.sh STUDY|FINAL OUTDIR
# STUDY: --check-only of the histogram (every variant, edge sizes, 2^31 + 5 bytes), then the two
# candidate studies. FINAL: the GPU tests of both workloads, the benchmark commands, --counters.
set -u
mode=${1:?usage: perf_run.sh STUDY|FINAL OUTDIR}
out=${2:?usage: perf_run.sh STUDY|FINAL OUTDIR}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
py=${PYTHON:-python3}
step() { echo "== $*" | tee -a "$out/steps.txt"; local t0=$SECONDS; "$@"; local rc=$?; echo "   rc=$rc $((SECONDS - t0)) s" | tee -a "$out/steps.txt"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > "$out/nvidia-smi.txt" 2>&1
if [ "$mode" = STUDY ]; then
  step $py -m pmppbench histogram --check-only > "$out/check-only.txt" 2>&1
  step $py studies/histogram_private.py --json "$out/histogram-study.json" > "$out/histogram-study.txt" 2>&1
  step $py studies/memory_roof/every_shape.py --json "$out/every-shape.json" > "$out/every-shape.txt" 2>&1
else  # FINAL: the comparisons first, then the tests, the whole table and the counters
  step $py studies/histogram_private.py --json "$out/histogram-study.json" > "$out/histogram-study.txt" 2>&1
  step $py studies/memory_roof/every_shape.py --json "$out/every-shape.json" > "$out/every-shape.txt" 2>&1
  step $py -m pmppbench histogram 268435456 --variants warp_vec,thread_private,cub,read --out "$out/histogram-best.csv" \
    > "$out/histogram-best.txt" 2>&1
  for s in "10000 10000" "8200 8200" "8192 8196" "4100 4100" "8192 8192" "4096 4096" "4097 4097"; do
    step $py -m pmppbench transpose $s --variants coarsened,memcpy >> "$out/transpose.txt" 2>&1
  done
  step $py -m pytest -q -m gpu -p no:cacheprovider tests/test_histogram.py tests/test_transpose.py > "$out/gpu-tests.txt" 2>&1
  step $py -m pmppbench histogram 268435456 5 --batches 3 --warmup 1 --out "$out/histogram.csv" > "$out/histogram.txt" 2>&1
  step $py -m pmppbench histogram 268435456 --variants shared_private,warp_vec,thread_private,cub --counters \
    > "$out/histogram-counters.txt" 2>&1
fi
