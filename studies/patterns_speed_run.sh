#!/usr/bin/env bash
# One device call for the scan and histogram speed work (docs/scan.md, README "Histogram"):
#   bash studies/patterns_speed_run.sh study|final OUT
# study: the look-back and thread_private candidate studies, then the quick GPU tests;
# final: the GPU tests of both workloads, the benchmarks beside the peers, `all --only`.
# Every step has its own time limit inside the call's (steps.txt says which ran how long).
set -o pipefail
phase=$1 out=$2
mkdir -p "$out"
export PYTHONUNBUFFERED=1
start=$SECONDS
step() {  # step NAME LIMIT_S CMD...: run CMD under its limit, log to $out/NAME.txt
    local name=$1 limit=$2; shift 2
    local t0=$SECONDS
    echo "== $*" >"$out/$name.txt"
    timeout "$limit" "$@" >>"$out/$name.txt" 2>&1
    local rc=$?
    echo "$name rc=$rc $((SECONDS - t0)) s (at $((SECONDS - start)) s)" | tee -a "$out/steps.txt"
    tail -n 40 "$out/$name.txt"
}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv \
    >"$out/nvidia-smi.txt" 2>&1
git log -1 --format='%H %s' >"$out/build.txt" 2>/dev/null || true
if [ "$phase" = study ]; then
    step scan-study 100 python3 studies/scan_lookback.py --json "$out/scan-study.json"
    step histogram-study 50 python3 studies/histogram_private.py --json "$out/histogram-study.json"
    step gpu-tests-quick 30 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_scan.py tests/test_histogram.py \
        -k "mutations_fail or call_after"
else
    step gpu-tests 75 python3 -m pytest -q -p no:cacheprovider -m gpu --durations=8 tests/test_scan.py tests/test_histogram.py
    step scan 40 python3 -m pmppbench scan 1048576,16777216,67108864,268435456 --dtype f32,i32 --kind inclusive \
        --variants lookback,cub,memcpy,hierarchical --out "$out/scan.csv"
    step histogram 20 python3 -m pmppbench histogram 268435456 --variants thread_private,warp_vec,cub,read \
        --out "$out/histogram.csv"
    step all 40 python3 -m pmppbench all --only scan,histogram --out "$out/all.csv"
fi
echo "total $((SECONDS - start)) s" | tee -a "$out/steps.txt"
