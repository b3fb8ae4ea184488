#!/usr/bin/env bash
# One device call of the scan and histogram speed work of session 9 (docs/scan.md, README
# "Histogram"; its logs: results/h200/patterns9/):
#   bash studies/patterns9_run.sh study|final OUT
# study: the look-back and thread_private candidates (2^26 and 2^28), the look-back's phases
#   (LB_PROFILE), ncu on the shipped lookback and 7-bin thread_private at 2^26, and the GPU tests
#   of both workloads;
# final: the scan's harness rows beside CUB and memcpy at 2^20-2^28 (configs/patterns_sizes.toml's
#   [scan]) and `histogram 67108864 3 --counters` (the device time left allowed no more: the
#   histogram's [patterns_sizes] rows and `all --only scan,histogram` are for a later call).
# Every step has its own time limit inside the call's (steps.txt says which ran how long).
set -o pipefail
phase=$1 out=$2
mkdir -p "$out"
export PYTHONUNBUFFERED=1 COLUMNS=400
start=$SECONDS
STEPS_DIR=$out TAIL=${TAIL:-12}
source "$(dirname "$0")/steps.sh"  # step NAME LIMIT_S CMD...
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv \
    >"$out/nvidia-smi.txt" 2>&1
{ cat BUILD 2>/dev/null || git log -1 --format='%H %s' 2>/dev/null; } | sed 's/^/build /' >>"$out/steps.txt"
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
if [ "$phase" = study ]; then
    step scan-study 45 python3 studies/scan_lookback.py --sizes 26,28 --dtypes f32,i32 --json "$out/scan-study.json"
    step scan-profile 15 python3 studies/scan_lookback.py --profile
    step histogram-study 40 python3 studies/histogram_private.py --n 67108864,268435456 \
        --json "$out/histogram-study.json"
    step ncu 40 "$NCU" --clock-control none -k 'regex:^(lookback|thread_private)$' -c 2 \
        --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
        --section SchedulerStats --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis \
        --section InstructionStats --metrics smsp__inst_executed.sum,dram__bytes_read.sum,dram__bytes_write.sum \
        python3 studies/patterns9_probe.py
    step gpu-tests 60 python3 -m pytest -q -p no:cacheprovider -m gpu -n 4 --durations=6 \
        tests/test_scan.py tests/test_histogram.py
else  # at most 8 files under OUT (the device tool's limit): the logs, the two CSVs and their meta
    step scan-sizes 45 python3 -m pmppbench all --config patterns_sizes --only scan --out "$out/sizes-scan.csv"
    step counters 50 python3 -m pmppbench histogram 67108864 3 --counters --out "$out/hc.csv"
fi
echo "total $((SECONDS - start)) s" | tee -a "$out/steps.txt"
