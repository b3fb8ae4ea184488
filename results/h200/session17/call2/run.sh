#!/bin/bash
# session 17, call 2: the looker reading 2-4 windows a round trip (LS_WINDOWS) with the L2 hints three
# eighths of a wave ahead, beside session 16's shipped build; edge checks first, then profiles and the study.
set -u
source studies/steps.sh
device_begin
step check-edges 120 python3 studies/scan_lookback.py --check-staged 1,7169,100003,16777219 --calls 3; pack
step profile 90 python3 studies/scan_lookback.py --profile --profile-staged 1,2,4; pack
step study 240 python3 studies/scan_lookback.py --families staged --sizes 24,26,28 --json $STEPS_DIR/study.json; pack
device_end
