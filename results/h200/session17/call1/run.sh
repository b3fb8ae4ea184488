#!/bin/bash
# session 17, call 1: lookback_staged's L2 eviction hints (LS_HINT) and the no-walk control (LS_CONTROL)
# beside the shipped build; the profile's timeline (first wave, steady middle, last wave, windows walked);
# Nsight Compute's DRAM bytes for the scans and the copy at 2^26.
set -u
source studies/steps.sh
device_begin
step check-edges 100 python3 studies/scan_lookback.py --check-staged 1,7169,100003,16777219 --calls 3; pack
step profile 90 python3 studies/scan_lookback.py --profile --profile-staged 0,1,5 --profile-out $STEPS_DIR; pack
step study 200 python3 studies/scan_lookback.py --families staged --sizes 24,26,28 --json $STEPS_DIR/study.json; pack
step counters 180 python3 -m pmppbench scan 67108864 --dtype f32,i32 --kind inclusive --variants lookback_staged,lookback,cub,memcpy --counters; pack
device_end
