#!/bin/bash
# Session 23, call 1. On an H200 (neither #36's new pick where only N is off a float4 nor the bulk forms
# have run there): session 22's planned call (results/h100/session22/next/run.sh). On any board: where
# coarsened_sector_bulk's extra instructions go (ncu's per-instruction counts of it and
# coarsened_sector_tma_any at 8193^2; session 22 measured 56% more on an H100 without locating them).
# Logs tarred after every step; the board is in logs/board.txt.
set -u
source studies/steps.sh
device_begin
nvidia-smi --query-gpu=name --format=csv,noheader | head -1 >"$STEPS_DIR/board.txt"
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem --format=csv >>"$STEPS_DIR/gpu.txt"
V=coarsened_sector_tma_any,coarsened_sector_bulk
src() {  # per-instruction executed counts of both forms at $1 x $2
  step ncu-src-$1x$2 120 ncu --section SourceCounters --section InstructionStats --section LaunchStats --section Occupancy \
    -k regex:coarsened_sector -o "$STEPS_DIR/src$1x$2" python3 -m pmppbench transpose $1 $2 1 --variants $V --check-only
  ncu -i "$STEPS_DIR/src$1x$2.ncu-rep" --page source --csv --print-source sass >"$STEPS_DIR/src$1x$2-sass.csv" 2>&1
  ncu -i "$STEPS_DIR/src$1x$2.ncu-rep" --page details --csv >"$STEPS_DIR/src$1x$2-details.csv" 2>&1
  rm -f "$STEPS_DIR/src$1x$2.ncu-rep"; pack
}
if grep -q H200 "$STEPS_DIR/board.txt"; then
  step all-cold 120 python3 -m pmppbench all --out $STEPS_DIR/all-cold.csv; pack
  for i in 1 2; do
    step shapes-$i 120 python3 -m pmppbench all --config results/h100/session22/call2/shapes22.toml --out $STEPS_DIR/shapes-$i.csv; pack
    step bulk-$i 120 python3 -m pmppbench all --config results/h200/session21/call3/bulk21.toml --out $STEPS_DIR/bulk-$i.csv; pack
  done
  step scan-sizes 120 python3 -m pmppbench all --config patterns_sizes --only scan --out $STEPS_DIR/scan-sizes.csv; pack
  step scan-default 120 python3 -m pmppbench scan --out $STEPS_DIR/scan-default.csv; pack
  src 8193 8193
  step gpu-transpose 120 python3 -m pytest -q -rfE -p no:cacheprovider -m gpu --durations=5 tests/test_transpose.py; pack
  for tool in memcheck racecheck; do
    for mn in "132 67" "4100 4097"; do
      step sanitizer-$tool-${mn/ /x} 60 compute-sanitizer --tool $tool --print-limit 10 python3 -m pmppbench transpose $mn 2 --variants best --check-only; pack
    done
  done
else
  src 8193 8193
  src 16385 16383
fi
device_end
