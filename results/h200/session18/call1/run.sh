#!/bin/bash
# session 18, call 1: the shipped scan (session 17's kernel, unchanged) on this session's board:
# the patterns_sizes scan rows, `pmppbench scan` at its defaults and at 2^27, the scan GPU tests,
# memcheck / racecheck / synccheck, `all`. Logs tarred after every step.
set -u
source studies/steps.sh
device_begin
step sizes 100 python3 -m pmppbench all --config patterns_sizes --only scan --out $STEPS_DIR/sizes.csv; pack
step scan 60 python3 -m pmppbench scan --out $STEPS_DIR/scan.csv; pack
step scan27 60 python3 -m pmppbench scan 134217728 --out $STEPS_DIR/scan27.csv; pack
step all 90 python3 -m pmppbench all --out $STEPS_DIR/all.csv; pack
step gpu-scan 150 python3 -m pytest -q -rfE -p no:cacheprovider -m gpu --durations=5 tests/test_scan.py; pack
for tool in memcheck racecheck synccheck; do
  step sanitizer-$tool 60 compute-sanitizer --tool $tool --print-limit 10 python3 -m pmppbench scan 100003 --variants lookback_staged --check-only; pack
done
step sizes2 100 python3 -m pmppbench all --config patterns_sizes --only scan --out $STEPS_DIR/sizes2.csv; pack
device_end
