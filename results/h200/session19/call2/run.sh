#!/bin/bash
# session 19, call 2: LS_GROUPS (a two-level look-back: groups of 32 tiles with their own status
# words) beside the shipped lookback_staged: edge checks (a group, a group plus one, many groups),
# the study twice (two processes), the LB_PROFILE phases of both. Logs tarred after every step.
set -u
source studies/steps.sh
device_begin
step check-edges 150 python3 studies/scan_lookback.py --check-staged 1,3,7168,7169,229375,229376,229377,236545,1000003,16777219,67108867 --calls 5; pack
step study-1 150 python3 studies/scan_lookback.py --families staged --sizes 20,24,26,28 --json $STEPS_DIR/study-1.json; pack
step study-2 150 python3 studies/scan_lookback.py --families staged --sizes 20,24,26,28 --json $STEPS_DIR/study-2.json; pack
step profile 60 python3 studies/scan_lookback.py --profile --profile-staged 0,1; pack
device_end
