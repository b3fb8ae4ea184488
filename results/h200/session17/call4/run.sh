#!/bin/bash
# session 17, call 4: the shipped lookback_staged with L2 hints (LS_HINT 1) three eighths of a wave ahead and the one-lane poll (LS_POLL 1)
# : the study beside session 16's build and call 3's, the first wave's prefetches skipped or delayed (LS_FIRST) and the
# controls; edge checks; the scan GPU tests; memcheck / racecheck / synccheck; the patterns_sizes scan
# rows; `pmppbench scan` at its defaults; `all`. Logs tarred after every step.
set -u
source studies/steps.sh
device_begin
step check-edges 150 python3 studies/scan_lookback.py --check-staged 1,3,7168,7169,10240,10241,100003,16777219 --calls 5; pack
step study 150 python3 studies/scan_lookback.py --families staged --sizes 20,24,26,28 --json $STEPS_DIR/study.json; pack
step sizes 100 python3 -m pmppbench all --config patterns_sizes --only scan --out $STEPS_DIR/sizes.csv; pack
step gpu-scan 150 python3 -m pytest -q -rfE -p no:cacheprovider -m gpu --durations=5 tests/test_scan.py; pack
for tool in memcheck racecheck synccheck; do
  step sanitizer-$tool 60 compute-sanitizer --tool $tool --print-limit 10 python3 -m pmppbench scan 100003 --variants lookback_staged --check-only; pack
done
step scan 60 python3 -m pmppbench scan --out $STEPS_DIR/scan.csv; pack
step all 90 python3 -m pmppbench all --out $STEPS_DIR/all.csv; pack
step profile 40 python3 studies/scan_lookback.py --profile --profile-staged 0,2; pack
device_end
