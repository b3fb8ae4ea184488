#!/usr/bin/env bash
# The second call of the reduction/histogram evidence: the histogram after its warp_vec change
# (GPU tests, the command at 2^28 and 2^24, --check-only), compute-sanitizer over the sanitize
# config, the textbook rungs beside the course's listings (studies/baselines.py) and `all` on
# the default config.   Usage: bash studies/patterns_gpu_run2.sh OUTDIR
set -u
out=${1:?usage: patterns_gpu_run2.sh OUTDIR}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
py=${PYTHON:-python3}
step() { echo "== $*" | tee -a "$out/steps.txt"; local t0=$SECONDS; "$@"; local rc=$?; echo "   rc=$rc $((SECONDS - t0)) s" | tee -a "$out/steps.txt"; }

step $py -m pmppbench histogram 268435456 5 --batches 3 --warmup 1 --out "$out/histogram.csv" > "$out/histogram.txt" 2>&1
step $py -m pmppbench histogram 16777216 10 --out "$out/histogram-16777216.csv" > "$out/histogram-16777216.txt" 2>&1
step $py -m pytest -q -m gpu -p no:cacheprovider tests/test_histogram.py > "$out/gpu-tests.txt" 2>&1
step $py -m pmppbench histogram --check-only > "$out/check-only.txt" 2>&1
for tool in memcheck racecheck; do
  step env -u PYTHONPATH compute-sanitizer --tool $tool --error-exitcode 9 $py -m pmppbench all --config sanitize \
    --only reduce,histogram --check-only --debug > "$out/sanitize-$tool.txt" 2>&1
done
step $py studies/baselines.py --only reduce,histogram --out "$out/baselines.txt" > "$out/baselines.log" 2>&1
step $py -m pmppbench all --out "$out/all.csv" > "$out/all.txt" 2>&1
