#!/bin/bash
# session 16, call 1: lookback_staged's new study knobs (LS_SPEC: the guessed tile copied before the
# ticket; LS_LOOKER: a ninth warp looking back while the tile lands; 10-row tiles) checked at edge sizes
# and timed beside the shipped kernel, lookback, CUB and memcpy; their profile; coarsened_sector_tma at
# M % 4 != 0, N % 4 == 0 under memcheck / racecheck and timed. Logs tarred after every step.
set -u
source studies/steps.sh
device_begin
step check-edges 90 python3 studies/scan_lookback.py --check-staged 1,3,7168,7169,10240,10241,100003,16777219 --calls 10; pack
step study 150 python3 studies/scan_lookback.py --families staged --sizes 20,24,26,28 --json $STEPS_DIR/study.json; pack
step profile 40 python3 studies/scan_lookback.py --profile --profile-staged 0,1,2,3; pack
for tool in memcheck racecheck; do
  step tr-$tool 60 compute-sanitizer --tool $tool --print-limit 10 python3 -m pmppbench transpose 131 260 2 --variants coarsened_sector_tma,coarsened_sector_vec --check-only; pack
  step scan-$tool 60 compute-sanitizer --tool $tool --print-limit 10 python3 studies/scan_lookback.py --check-staged 100003 --calls 1; pack
done
step tr-time 90 python3 -m pmppbench all --config studies/memory_roof/sector_tma16.toml --out $STEPS_DIR/tr16.csv; pack
device_end
