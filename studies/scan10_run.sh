#!/usr/bin/env bash
# Session 10's one device call for the scan (docs/scan.md, README "Prefix sum"; its logs:
# results/h200/scan10/):
#   bash studies/scan10_run.sh OUT
# the look-back candidates beside CUB and memcpy at 2^26 and 2^28 (studies/scan_lookback.py; at
# 38e5cd3, where this ran, `lookback` was the persistent kernel, since reverted: docs/scan.md), the
# harness's own rows at 2^20-2^28 (configs/patterns_sizes.toml's [scan]), the scan's GPU tests, and
# compute-sanitizer memcheck and racecheck on the persistent kernel with fewer blocks than tiles.
# Every step has its own limit inside the call's (steps.txt says which ran how long).
set -o pipefail
out=$1
mkdir -p "$out"
export PYTHONUNBUFFERED=1 COLUMNS=400
start=$SECONDS
STEPS_DIR=$out
source "$(dirname "$0")/steps.sh"  # step NAME LIMIT_S CMD...
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv \
    >>"$out/steps.txt" 2>&1
{ cat BUILD 2>/dev/null || git log -1 --format='%H %s' 2>/dev/null; } | sed 's/^/build /' >>"$out/steps.txt"
step scan-study 42 python3 studies/scan_lookback.py --sizes 26,28 --dtypes f32,i32 --json "$out/scan-study.json"
step scan-sizes 50 python3 -m pmppbench all --config patterns_sizes --only scan --out "$out/sizes-scan.csv"
step gpu-tests 42 python3 -m pytest -q -p no:cacheprovider -m gpu -n 4 -rA --durations=8 tests/test_scan.py
for tool in memcheck racecheck; do
    step sanitize 14 env -u PYTHONPATH compute-sanitizer --tool $tool --error-exitcode 9 python3 studies/scan_persistent_check.py
    mv "$out/sanitize.txt" "$out/sanitize-$tool.txt"
done
echo "total $((SECONDS - start)) s" | tee -a "$out/steps.txt"
