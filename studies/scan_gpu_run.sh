#!/usr/bin/env bash
# The scan's evidence in one device call: the GPU tests, --check-only, the sizes 2^20-2^28
# (configs/scan_sizes.toml), whether float look-back results repeat bit for bit from call to
# call, compute-sanitizer memcheck and racecheck over the sanitize config, the textbook rungs
# beside the course's listings (baselines.py) and the default config's scan section.
#   Usage: bash studies/scan_gpu_run.sh OUTDIR [STEPS]   (STEPS: a subset of the names below)
set -u
out=${1:?usage: scan_gpu_run.sh OUTDIR [STEPS]}
steps=${2:-"tests sizes repeat sanitize baselines default"}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
py=${PYTHON:-python3}
step() { echo "== $*" | tee -a "$out/steps.txt"; local t0=$SECONDS; "$@"; local rc=$?; echo "   rc=$rc $((SECONDS - t0)) s" | tee -a "$out/steps.txt"; }
want() { [[ " $steps " == *" $1 "* ]]; }

nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,driver_version --format=csv > "$out/gpu.txt" 2>&1
if want tests; then
  step timeout 150 $py -m pytest -q -m gpu -p no:cacheprovider -x tests/test_scan.py > "$out/gpu-tests.txt" 2>&1
fi
if want sizes; then
  step timeout 120 $py -m pmppbench all --config configs/scan_sizes.toml --only scan --out "$out/sizes.csv" > "$out/sizes.txt" 2>&1
fi
if want repeat; then
  step timeout 60 $py studies/scan_repeat.py > "$out/repeat.txt" 2>&1
fi
if want sanitize; then
  for tool in memcheck racecheck; do
    step timeout 90 env -u PYTHONPATH compute-sanitizer --tool $tool --error-exitcode 9 $py -m pmppbench all \
      --config sanitize --only scan --check-only --debug > "$out/sanitize-$tool.txt" 2>&1
  done
fi
if want baselines; then
  step timeout 60 $py studies/baselines.py --only scan --out "$out/baselines.txt" > "$out/baselines.log" 2>&1
fi
if want default; then
  step timeout 60 $py -m pmppbench all --only scan --out "$out/default.csv" > "$out/default.txt" 2>&1
fi
