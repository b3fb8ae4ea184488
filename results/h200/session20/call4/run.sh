#!/bin/bash
# session 20, call 4: the final tree (coarsened_sector_tma and coarsened_sector_tma_any with call 3's
# _runs bodies, the same sm_90a machine code): the transpose GPU tests, memcheck and racecheck of
# best and both forms at 133 x 261 and 131 x 260, sector_final20.toml twice. Logs tarred after every step.
set -u
source studies/steps.sh
device_begin
step gpu-transpose 200 python3 -m pytest -q -rfE -p no:cacheprovider -m gpu --durations=5 tests/test_transpose.py; pack
for tool in memcheck racecheck; do
  for mn in "133 261" "131 260"; do
    step sanitizer-$tool-${mn/ /x} 60 compute-sanitizer --tool $tool --print-limit 10 python3 -m pmppbench transpose $mn 2 --variants best,coarsened_sector_tma,coarsened_sector_tma_any --check-only; pack
  done
done
for i in 1 2; do
  step final-$i 150 python3 -m pmppbench all --config studies/memory_roof/sector_final20.toml --out $STEPS_DIR/final-$i.csv; pack
done
device_end
