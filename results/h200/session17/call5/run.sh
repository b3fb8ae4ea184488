#!/bin/bash
# session 17, call 5: the one-lane poll followed by a walk that reads 2 or 3 windows a round trip
# (LS_POLL 1 with LS_WINDOWS 2, 3) beside the shipped build, call 3's (no poll) and session 16's; edge checks first.
set -u
source studies/steps.sh
device_begin
step check-edges 100 python3 studies/scan_lookback.py --check-staged 1,7169,100003,16777219 --calls 3; pack
step study 150 python3 studies/scan_lookback.py --families staged --sizes 24,26,28 --json $STEPS_DIR/study.json; pack
device_end
