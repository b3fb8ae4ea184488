#!/bin/bash
# session 15, call 2: lookback_staged with the early aggregate (the tile's total by a reduction, the
# parts scanned during the look-back): the study's staged candidates beside lookback, CUB and memcpy;
# the variant's GPU tests and sanitizers; the patterns_sizes scan rows; the profile; edge checks of
# every staged candidate. Logs tarred after every step (a cut call still brings back what ran).
set -u
source studies/steps.sh
device_begin
git log --oneline -1 > $STEPS_DIR/build.txt 2>&1; git status --short >> $STEPS_DIR/build.txt
step study 90 python3 studies/scan_lookback.py --families staged --sizes 20,24,26,28 --json $STEPS_DIR/study.json; pack
step gpu-scan 150 python3 -m pytest -q -rfE -p no:cacheprovider -m gpu --durations=5 tests/test_scan.py; pack
for tool in memcheck racecheck; do
  step sanitizer-$tool 40 compute-sanitizer --tool $tool --print-limit 10 python3 -m pmppbench scan 100003 --variants lookback_staged --check-only; pack
done
step sizes 100 python3 -m pmppbench all --config patterns_sizes --only scan --out $STEPS_DIR/sizes.csv; pack
step profile 30 python3 studies/scan_lookback.py --profile; pack
step check-edges 60 python3 studies/scan_lookback.py --check-staged 1,3,4097,8193,100003,16777219 --calls 10
device_end
