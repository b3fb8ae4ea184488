#!/bin/bash
# session 15, call 4: the shipped lookback_staged (7 x 256 tiles, 7 per SM, one copy, early aggregate,
# an eighth of a wave ahead): the patterns_sizes scan rows, the scan GPU tests, memcheck and racecheck.
# Logs tarred after every step.
set -u
source studies/steps.sh
device_begin
step sizes 80 python3 -m pmppbench all --config patterns_sizes --only scan --out $STEPS_DIR/sizes.csv; pack
step gpu-scan 130 python3 -m pytest -q -rfE -p no:cacheprovider -m gpu --durations=5 tests/test_scan.py; pack
for tool in memcheck racecheck; do
  step sanitizer-$tool 40 compute-sanitizer --tool $tool --print-limit 10 python3 -m pmppbench scan 100003 --variants lookback_staged --check-only; pack
done
device_end
