#!/bin/bash
# session 22, call 2 (a machine started for this call): `all` cold with session 19's worker
# trace, then warm; shapes22.toml twice (best's new pick where only N is off a float4, every kind of
# pitch >= 4096^2); patterns_sizes' scan rows (2^20-2^28, CUB, memcpy); memcheck and racecheck of best
# where it now runs coarsened_sector_tma_any at M a multiple of 4; the transpose GPU tests, then the
# rest of the GPU suite in what time is left. (Also
# session 21's bulk21.toml once: coarsened_sector_bulk beside _any, for a board other than call 1's.)
set -u
source studies/steps.sh
device_begin
T=results/h200/session19/call1/trace
step all-cold 120 env PYTHONPATH=$T:$PYTHONPATH PMPP_TRACE=$STEPS_DIR/trace-cold.txt python3 -m pmppbench all --out $STEPS_DIR/all-cold.csv; pack
step all-warm 90 python3 -m pmppbench all --out $STEPS_DIR/all-warm.csv; pack
for i in 1 2; do
  step shapes-$i 120 python3 -m pmppbench all --config results/h100/session22/call2/shapes22.toml --out $STEPS_DIR/shapes-$i.csv; pack
done
step bulk 120 python3 -m pmppbench all --config results/h200/session21/call3/bulk21.toml --out $STEPS_DIR/bulk.csv; pack
step scan-sizes 120 python3 -m pmppbench all --config patterns_sizes --only scan --out $STEPS_DIR/scan-sizes.csv; pack
for tool in memcheck racecheck; do
  for mn in "132 67" "4100 4097" "8 6"; do
    step sanitizer-$tool-${mn/ /x} 60 compute-sanitizer --tool $tool --print-limit 10 python3 -m pmppbench transpose $mn 2 --variants best --check-only; pack
  done
done
step gpu-transpose 120 python3 -m pytest -q -rfE -p no:cacheprovider -m gpu --durations=5 tests/test_transpose.py; pack
step gpu-rest 240 python3 -m pytest -q -rfE -p no:cacheprovider -m gpu --durations=10 tests --deselect tests/test_transpose.py; pack
device_end
