#!/bin/bash
# session 16, after the review's mends (LS_LOOKER_EPOCH removed from scan.cu; coarsened_sector_tma's
# limits in one predicate for pick and its job): the scan and transpose GPU tests, `pmppbench scan` at
# its defaults and `pmppbench transpose` where best's pick changed.
set -u
source studies/steps.sh
device_begin
step gpu-tests 240 python3 -m pytest -q -rfE -p no:cacheprovider -m gpu --durations=5 tests/test_scan.py tests/test_transpose.py; pack
step scan 60 python3 -m pmppbench scan --out $STEPS_DIR/scan.csv; pack
step transpose 60 python3 -m pmppbench all --config studies/memory_roof/sector_tma16.toml --out $STEPS_DIR/tr16.csv; pack
device_end
