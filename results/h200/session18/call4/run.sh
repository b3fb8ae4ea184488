#!/bin/bash
# session 18, call 4: after the two TMA sector forms were folded into one tile body (sector_tma_tile;
# coarsened_sector_tma's sm_90 SASS unchanged, coarsened_sector_tma_any's reordered): the transpose
# GPU tests, the sanitizers at 133 x 261, the study config once more. Logs tarred after every step.
set -u
source studies/steps.sh
device_begin
step gpu-transpose 200 python3 -m pytest -q -rfE -p no:cacheprovider -m gpu --durations=5 tests/test_transpose.py; pack
for tool in memcheck racecheck; do
  step sanitizer-$tool 60 compute-sanitizer --tool $tool --print-limit 10 python3 -m pmppbench transpose 133 261 2 --variants coarsened_sector_tma_any,coarsened_sector_tma,best --check-only; pack
done
step any4 150 python3 -m pmppbench all --config studies/memory_roof/sector_any18.toml --out $STEPS_DIR/any4.csv; pack
device_end
