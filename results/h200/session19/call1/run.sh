#!/bin/bash
# session 19, call 1 (a machine started for this call): `all` cold with a trace of the worker's
# steps, prebuilds and CUB builds; CUB's six builds timed on 1 and on 6 threads from empty caches;
# the transpose GPU tests and check runs after the host mend of rows_of_four_map; `pmppbench scan`
# at its defaults on this board; `all` warm. Logs tarred after every step.
set -u
source studies/steps.sh
device_begin
T=results/h200/session19/call1/trace
step all-cold 120 env PYTHONPATH=$T:$PYTHONPATH PMPP_TRACE=$STEPS_DIR/trace-cold.txt python3 -m pmppbench all --out $STEPS_DIR/all-cold.csv; pack
step builds-1 120 env PMPPBENCH_CACHE_DIR=/tmp/cb1 CCCL_PCH_CACHE_DIR=/tmp/pch1 python3 studies/cub_builds.py --threads 1; pack
step builds-6 120 env PMPPBENCH_CACHE_DIR=/tmp/cb6 CCCL_PCH_CACHE_DIR=/tmp/pch6 python3 studies/cub_builds.py --threads 6; pack
step builds-6-pch 120 env PMPPBENCH_CACHE_DIR=/tmp/cb6b CCCL_PCH_CACHE_DIR=/tmp/pch1 python3 studies/cub_builds.py --threads 6; pack
step gpu-transpose 200 python3 -m pytest -q -rfE -p no:cacheprovider -m gpu --durations=5 tests/test_transpose.py; pack
step transpose-check 60 bash -c "python3 -m pmppbench transpose 133 261 2 --variants coarsened_sector_tma_any,coarsened_sector_tma,best --check-only && python3 -m pmppbench transpose 131 260 2 --variants coarsened_sector_tma_any,coarsened_sector_tma,best --check-only && python3 -m pmppbench transpose 8193 8193 --variants coarsened_sector_tma_any,best,memcpy && python3 -m pmppbench transpose 10001 10000 --variants coarsened_sector_tma,best,memcpy"; pack
step scan 90 python3 -m pmppbench scan --out $STEPS_DIR/scan.csv; pack
step all-warm 90 env PYTHONPATH=$T:$PYTHONPATH PMPP_TRACE=$STEPS_DIR/trace-warm.txt python3 -m pmppbench all --out $STEPS_DIR/all-warm.csv; pack
device_end
