#!/bin/bash
# session 20, call 1: coarsened_sector_tma_split (each phase's 68 columns as two swizzled boxes of 32
# and an edge box of 4): the transpose GPU tests (both any-N forms bit-exact at 11 shapes),
# memcheck and racecheck at every N mod 4 with partial tiles on both edges, sector_split20.toml three
# times, and ncu's bytes of the any-N forms at 8193^2. Logs tarred after every step.
set -u
source studies/steps.sh
device_begin
step gpu-transpose 200 python3 -m pytest -q -rfE -p no:cacheprovider -m gpu --durations=5 tests/test_transpose.py; pack
for tool in memcheck racecheck; do
  for mn in "133 261" "133 262" "133 263" "131 260"; do
    step sanitizer-$tool-${mn/ /x} 60 compute-sanitizer --tool $tool --print-limit 10 python3 -m pmppbench transpose $mn 2 --variants coarsened_sector_tma_split --check-only; pack
  done
done
for i in 1 2 3; do
  step split-$i 150 python3 -m pmppbench all --config results/h200/session20/call1/sector_split20.toml --out $STEPS_DIR/split-$i.csv; pack
done
step counters 150 python3 -m pmppbench transpose 8193 8193 --variants coarsened_sector_tma_any,coarsened_sector_tma_split,memcpy --counters --out $STEPS_DIR/counters-8193.csv; pack
device_end
