#!/bin/bash
# session 19, call 4 (the final tree: call 1's code, scan.cu's header comment aside): `all` as the
# first command on a machine started for this call, then the scan and transpose GPU tests. Logs
# tarred after every step.
set -u
source studies/steps.sh
device_begin
step all 120 python3 -m pmppbench all --out $STEPS_DIR/all.csv; pack
step gpu-scan-transpose 300 python3 -m pytest -q -rfE -p no:cacheprovider -m gpu --durations=5 tests/test_scan.py tests/test_transpose.py; pack
device_end
