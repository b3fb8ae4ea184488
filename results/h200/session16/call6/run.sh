#!/bin/bash
# session 16, call 6: the looker taking the epoch's ticket itself (LS_LOOKER_EPOCH) beside the shipped
# build: edge checks, racecheck / synccheck, the study at 2^20-2^28, the profile.
set -u
source studies/steps.sh
device_begin
step check-edges 60 python3 studies/scan_lookback.py --check-staged 1,3,7169,100003,16777219 --calls 5; pack
for tool in racecheck synccheck; do
  step scan-$tool 40 compute-sanitizer --tool $tool --print-limit 10 python3 studies/scan_lookback.py --check-staged 100003 --calls 1; pack
done
step study 120 python3 studies/scan_lookback.py --families staged --sizes 20,24,26,28 --json $STEPS_DIR/study.json; pack
step profile 30 python3 studies/scan_lookback.py --profile --profile-staged 0,2; pack
device_end
