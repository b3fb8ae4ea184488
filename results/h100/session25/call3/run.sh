#!/bin/bash
# Session 25, call 3. The ramp (scan.cu's LS_RAMP 10, now shipped): the scan GPU tests, the scan at every
# size (patterns_sizes) and at its defaults, the study (shipped ramp against no ramp and ramps of 16 and
# 24 cycles) and the profile of both. On an H200 then also a cold `all`, the transpose's odd shapes
# (lines23.toml) and session 22's shape set. Logs tarred after every step; the board in logs/board.txt.
set -u
source studies/steps.sh
device_begin
nvidia-smi --query-gpu=name --format=csv,noheader | head -1 >"$STEPS_DIR/board.txt"
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem --format=csv >>"$STEPS_DIR/gpu.txt"
step gpu-scan 150 python3 -m pytest -q -rfE -p no:cacheprovider -m gpu --durations=5 tests/test_scan.py; pack
step scan-sizes 150 python3 -m pmppbench all --config patterns_sizes --only scan --out $STEPS_DIR/scan-sizes.csv; pack
step scan-default 90 python3 -m pmppbench scan --out $STEPS_DIR/scan-default.csv; pack
step ramp-1 120 python3 studies/scan_lookback.py --families staged --sizes 20,22,24,26,28 --json $STEPS_DIR/ramp-1.json; pack
step ramp-profile 60 python3 studies/scan_lookback.py --profile --profile-staged 0,1; pack
if grep -q H200 "$STEPS_DIR/board.txt"; then
  step all 90 python3 -m pmppbench all --out $STEPS_DIR/all.csv; pack
  step lines 150 python3 -m pmppbench all --config results/h100/session24/call1/lines23.toml --out $STEPS_DIR/lines.csv; pack
  step shapes 150 python3 -m pmppbench all --config results/h100/session22/call2/shapes22.toml --out $STEPS_DIR/shapes.csv; pack
fi
device_end
