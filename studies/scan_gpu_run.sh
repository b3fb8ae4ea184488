#!/usr/bin/env bash
# The scan's evidence in one device call: a first look at every variant (scan_smoke.py), the
# sizes 2^20-2^28 (configs/scan_sizes.toml), the GPU tests, whether float results repeat bit
# for bit from call to call (scan_repeat.py), compute-sanitizer memcheck and racecheck over the
# sanitize config and the textbook rungs beside the course's listings (baselines.py). Each step
# has its own time limit so that one that hangs leaves the others their time.
#   Usage: bash studies/scan_gpu_run.sh OUTDIR
set -u
out=${1:?usage: scan_gpu_run.sh OUTDIR}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
py=${PYTHON:-python3}
step() { echo "== $*" | tee -a "$out/steps.txt"; local t0=$SECONDS; "$@"; local rc=$?; echo "   rc=$rc $((SECONDS - t0)) s" | tee -a "$out/steps.txt"; }
lim() { timeout -k 3 -s ABRT "$@"; }

nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,driver_version --format=csv > "$out/gpu.txt" 2>&1
ours=memcpy,kogge_stone,brent_kung,coarsened,hierarchical,domino,lookback
step lim 35 $py -X faulthandler studies/scan_smoke.py --variants $ours 100003 1048576 16777216 67108864 268435456 > "$out/smoke.txt" 2>&1
step lim 30 $py -X faulthandler studies/scan_smoke.py --variants memcpy,lookback,cub 1048576 67108864 268435456 > "$out/smoke-cub.txt" 2>&1
step lim 35 $py -m pmppbench all --config configs/scan_sizes.toml --only scan --timeout 20 --out "$out/sizes.csv" > "$out/sizes.txt" 2>&1
step lim 40 $py -X faulthandler -m pytest -v -m gpu -p no:cacheprovider tests/test_scan.py > "$out/gpu-tests.txt" 2>&1
step lim 15 $py -X faulthandler studies/scan_repeat.py 67108864 10 > "$out/repeat.txt" 2>&1
for tool in memcheck racecheck; do
  step lim 20 env -u PYTHONPATH compute-sanitizer --tool $tool --error-exitcode 9 $py -m pmppbench all \
    --config sanitize --only scan --check-only --debug > "$out/sanitize-$tool.txt" 2>&1
done
step lim 25 $py studies/baselines.py --only scan --quick --out "$out/baselines.txt" > "$out/baselines.log" 2>&1
ps -eo pid,etime,args | grep -i python | grep -v grep > "$out/leftover.txt"
tar -czf "$out.tgz" -C "$(dirname "$out")" "$(basename "$out")"
