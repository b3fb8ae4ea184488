#!/bin/bash
# session 16, call 4: lookback_staged at a little further ahead, 8-row tiles, and a sleep in the looker's
# spin (LB_BACKOFF), beside the shipped build, session 15's, lookback, CUB and memcpy at 2^24-2^28.
set -u
source studies/steps.sh
device_begin
step check-edges 90 python3 studies/scan_lookback.py --check-staged 1,7169,100003,16777219 --calls 5; pack
step study 150 python3 studies/scan_lookback.py --families staged --sizes 24,26,28 --json $STEPS_DIR/study.json; pack
device_end
