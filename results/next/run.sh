#!/bin/bash
# Session 25, call 4: for an H200 only (another board exits at once). The scan with the first wave's ramp
# (LS_RAMP 10, shipped in session 25; checked on an H100 in call 3) at every size (patterns_sizes) and at
# its defaults, a cold `all`, then the ramp study and the transpose's odd shapes (lines23.toml) as time
# allows. Logs tarred after every step; the board in logs/board.txt.
set -u
source studies/steps.sh
device_begin
nvidia-smi --query-gpu=name --format=csv,noheader | head -1 >"$STEPS_DIR/board.txt"
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem --format=csv >>"$STEPS_DIR/gpu.txt"
grep -q H200 "$STEPS_DIR/board.txt" || { echo "not an H200: $(cat "$STEPS_DIR/board.txt")"; device_end; exit 0; }
step scan-sizes 100 python3 -m pmppbench all --config patterns_sizes --only scan --out $STEPS_DIR/scan-sizes.csv; pack
step scan-default 60 python3 -m pmppbench scan --out $STEPS_DIR/scan-default.csv; pack
step all 60 python3 -m pmppbench all --out $STEPS_DIR/all.csv; pack
step ramp-1 60 python3 studies/scan_lookback.py --families staged --sizes 20,24,26,28 --json $STEPS_DIR/ramp-1.json; pack
step lines 100 python3 -m pmppbench all --config results/h100/session24/call1/lines23.toml --out $STEPS_DIR/lines.csv; pack
device_end
