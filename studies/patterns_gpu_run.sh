#!/usr/bin/env bash
# The reduction and histogram evidence in one call on a GPU machine (results/h200/reduce/,
# results/h200/histogram/): GPU tests, the commands at their defaults and a few sizes,
# --check-only, and compute-sanitizer memcheck / racecheck over the sanitize config.
# Usage: bash studies/patterns_gpu_run.sh OUTDIR   (cuda-cccl on PYTHONPATH for the cub rows)
set -u
out=${1:?usage: patterns_gpu_run.sh OUTDIR}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
py=${PYTHON:-python3}
step() { echo "== $*" | tee -a "$out/steps.txt"; local t0=$SECONDS; "$@"; local rc=$?; echo "   rc=$rc $((SECONDS - t0)) s" | tee -a "$out/steps.txt"; }

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$out/gpu.txt" 2>&1
$py -c "import cuda.compute, importlib.metadata as m; print('cuda-cccl', m.version('cuda-cccl'))" > "$out/cccl.txt" 2>&1
step $py -m pmppbench reduce --out "$out/reduce.csv" > "$out/reduce.txt" 2>&1
for n in 16777216 268435456; do
  step $py -m pmppbench reduce $n --out "$out/reduce-$n.csv" > "$out/reduce-$n.txt" 2>&1
done
step $py -m pmppbench histogram 268435456 5 --batches 3 --warmup 1 --out "$out/histogram.csv" > "$out/histogram.txt" 2>&1
step $py -m pmppbench histogram 16777216 10 --out "$out/histogram-16777216.csv" > "$out/histogram-16777216.txt" 2>&1
step $py -m pytest -q -m gpu -p no:cacheprovider tests/test_reduce.py tests/test_histogram.py > "$out/gpu-tests.txt" 2>&1
step $py -m pmppbench reduce --check-only > "$out/check-only.txt" 2>&1
step $py -m pmppbench histogram --check-only >> "$out/check-only.txt" 2>&1
for tool in memcheck racecheck; do
  step env -u PYTHONPATH compute-sanitizer --tool $tool --error-exitcode 9 $py -m pmppbench all --config sanitize \
    --only reduce,histogram --check-only --debug > "$out/sanitize-$tool.txt" 2>&1
done
