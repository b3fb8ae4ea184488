#!/bin/bash
# session 18, call 2: best with coarsened_sector_tma_any picked where neither M nor N is a multiple
# of 4: the transpose GPU tests (best at every check shape, the 64-bit one included), the study config
# again, the counters of the two TMA sector forms (the extra sector a 68-column box row reads where
# A's rows start on 32 bytes), `all` (its wall time). Logs tarred after every step.
set -u
source studies/steps.sh
device_begin
step gpu-transpose 200 python3 -m pytest -q -rfE -p no:cacheprovider -m gpu --durations=5 tests/test_transpose.py; pack
step any3 150 python3 -m pmppbench all --config studies/memory_roof/sector_any18.toml --out $STEPS_DIR/any3.csv; pack
step counters 150 python3 -m pmppbench transpose 10001 10000 --variants coarsened_sector_tma,coarsened_sector_tma_any,memcpy --counters --out $STEPS_DIR/counters-10000.csv; pack
step counters-odd 150 python3 -m pmppbench transpose 8193 8193 --variants coarsened_sector_vec,coarsened_sector_tma_any,memcpy --counters --out $STEPS_DIR/counters-8193.csv; pack
step all 90 python3 -m pmppbench all --out $STEPS_DIR/all.csv; pack
device_end
