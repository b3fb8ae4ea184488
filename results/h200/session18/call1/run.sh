#!/bin/bash
# session 18, call 1: coarsened_sector_tma_any (the TMA sector form at any N) checked (the transpose
# GPU tests, memcheck / racecheck on partial tiles at odd N, 133 x 261: MN = 1 mod 4, the turned reads) and timed beside the forms best picks
# (studies/memory_roof/sector_any18.toml, twice); then the shipped scan (session 17's kernel,
# unchanged) on this board: the patterns_sizes scan rows, `pmppbench scan` at its defaults and at
# 2^27. Logs tarred after every step.
set -u
source studies/steps.sh
device_begin
step any-check 60 python3 -m pmppbench transpose 131 261 2 --variants coarsened_sector_tma_any,coarsened_sector_vec --check-only; pack
for tool in memcheck racecheck; do
  step sanitizer-$tool 60 compute-sanitizer --tool $tool --print-limit 10 python3 -m pmppbench transpose 133 261 2 --variants coarsened_sector_tma_any --check-only; pack
done
step any1 150 python3 -m pmppbench all --config studies/memory_roof/sector_any18.toml --out $STEPS_DIR/any1.csv; pack
step gpu-transpose 150 python3 -m pytest -q -rfE -p no:cacheprovider -m gpu --durations=5 tests/test_transpose.py; pack
step any2 150 python3 -m pmppbench all --config studies/memory_roof/sector_any18.toml --out $STEPS_DIR/any2.csv; pack
step sizes 100 python3 -m pmppbench all --config patterns_sizes --only scan --out $STEPS_DIR/sizes.csv; pack
step scan 60 python3 -m pmppbench scan --out $STEPS_DIR/scan.csv; pack
device_end
