#!/bin/bash
# session 17, call 6: more bytes in flight per SM with narrower blocks (12 x 128 tiles at 9 per SM,
# 13 x 128 at 8, 9 x 192 at 8: 216 KB of tiles an SM against 196 KB) beside the shipped build and
# session 16's; edge checks first.
set -u
source studies/steps.sh
device_begin
step check-edges 100 python3 studies/scan_lookback.py --check-staged 1,7169,100003,16777219 --calls 3; pack
step study 150 python3 studies/scan_lookback.py --families staged --sizes 24,26,28 --json $STEPS_DIR/study.json; pack
device_end
