#!/bin/bash
# Written in session 27 after call 2 (not yet run). The build with the settle's reset of evict-last lines
# (lookback_staged marks its prefetched tiles evict-last, so the variants after it on a shape now start
# from the same L2 as after any other).
# On an H200 (#32's and #36's bars): the scan at 2^20-2^28 beside CUB and memcpy, its defaults, a cold
# `all`, the transpose's any-N forms (call 1's el26.toml) on that board, then the scan's GPU tests.
# On any other board: the scan's defaults and a cold `all` with the new settle. Logs tarred after every step.
# Both: first the GPU tests that go through gpu.driver_function (01ee06d: the settle's reset, the TMA maps' encoder).
set -u
source studies/steps.sh
device_begin
nvidia-smi --query-gpu=name --format=csv,noheader | head -1 >"$STEPS_DIR/board.txt"
step gpu-driver 90 python3 -m pytest -q -rfE -p no:cacheprovider -m gpu --durations=3 tests/test_fidelity.py tests/test_transpose.py -k "protocol_agrees or cold_timer or tma or sector"; pack
if grep -q H200 "$STEPS_DIR/board.txt"; then
  step scan-sizes 100 python3 -m pmppbench all --config patterns_sizes --only scan --out $STEPS_DIR/scan-sizes.csv; pack
  step scan-default 60 python3 -m pmppbench scan --out $STEPS_DIR/scan-default.csv; pack
  step all 60 python3 -m pmppbench all --out $STEPS_DIR/all.csv; pack
  step el 100 python3 -m pmppbench all --config results/h100/session27/call1/el26.toml --out $STEPS_DIR/el.csv; pack
  step gpu-scan 150 python3 -m pytest -q -rfE -p no:cacheprovider -m gpu --durations=3 tests/test_scan.py; pack
else
  step scan-default 60 python3 -m pmppbench scan --out $STEPS_DIR/scan-default.csv; pack
  step all 60 python3 -m pmppbench all --out $STEPS_DIR/all.csv; pack
fi
device_end
