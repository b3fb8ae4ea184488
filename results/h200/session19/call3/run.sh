#!/bin/bash
# session 19, call 3: coarsened_sector_tma_any_wide (128-column tiles of A, 132-column boxes): the
# transpose GPU tests (both any-N forms bit-exact at 11 shapes), memcheck and racecheck on a shape
# with partial tiles on both edges and MN = 1 mod 4, sector_any19.toml twice, and ncu's bytes of
# both forms at 8193^2. Logs tarred after every step.
set -u
source studies/steps.sh
device_begin
step gpu-transpose 200 python3 -m pytest -q -rfE -p no:cacheprovider -m gpu --durations=5 tests/test_transpose.py; pack
for tool in memcheck racecheck; do
  step sanitizer-$tool 60 compute-sanitizer --tool $tool --print-limit 10 python3 -m pmppbench transpose 133 261 2 --variants coarsened_sector_tma_any,coarsened_sector_tma_any_wide --check-only; pack
done
step any-1 150 python3 -m pmppbench all --config studies/memory_roof/sector_any19.toml --out $STEPS_DIR/any-1.csv; pack
step any-2 150 python3 -m pmppbench all --config studies/memory_roof/sector_any19.toml --out $STEPS_DIR/any-2.csv; pack
step counters 150 python3 -m pmppbench transpose 8193 8193 --variants coarsened_sector_tma_any,coarsened_sector_tma_any_wide,memcpy --counters --out $STEPS_DIR/counters-8193.csv; pack
device_end
