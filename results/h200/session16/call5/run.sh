#!/bin/bash
# session 16, call 5: the looker reading 2, 4 or 8 words a lane (LS_LANE_WORDS) beside the shipped build.
# at 2^20-2^28, edge checks first.
set -u
source studies/steps.sh
device_begin
step check-edges 90 python3 studies/scan_lookback.py --check-staged 1,7169,100003,16777219 --calls 5; pack
step study 150 python3 studies/scan_lookback.py --families staged --sizes 20,24,26,28 --json $STEPS_DIR/study.json; pack
device_end
