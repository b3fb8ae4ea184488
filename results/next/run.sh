#!/bin/bash
# Written in session 27, changed in sessions 28 and 29 (not yet run on an H200). The build with the
# settle's reset of evict-last lines (lookback_staged marks its prefetched tiles evict-last, so the
# variants after it on a shape now start from the same L2 as after any other).
# On an H200 (#32's and #36's bars): a cold `all` (the first pmppbench command on the machine), the
# fidelity GPU tests, the scan at 2^20-2^28 beside CUB and memcpy, transpose best at 21 shapes, _el
# against _any at 22 (el28h.toml), the scan's defaults, then the scan's and the transpose's GPU tests.
# Logs tarred after every step.
# On any other board it stops after naming the board (session 29's call 1 ran the cold `all` and the
# driver-lookup GPU tests on an H100; session 28's calls 1-14, results/h100/session28/, the rest).
set -u
board=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
case "$board" in *H200*) ;; *) echo "board: $board (not an H200): nothing run"; exit 0 ;; esac
source studies/steps.sh
device_begin
echo "$board" >"$STEPS_DIR/board.txt"
# A cold `all` first (the first pmppbench command on the machine; every variant's settle), then the
# fidelity tests, whose settle resets the persisting L2 lines through gpu.driver_function (the TMA maps'
# encoder, its other user, runs in the transpose GPU tests of the last step).
step all 60 python3 -m pmppbench all --out $STEPS_DIR/all.csv; pack
step gpu-fidelity 60 python3 -m pytest -q -rfE -p no:cacheprovider -m gpu --durations=3 tests/test_fidelity.py -k "protocol_agrees or cold_timer"; pack
step scan-sizes 100 python3 -m pmppbench all --config patterns_sizes --only scan --out $STEPS_DIR/scan-sizes.csv; pack
step every 90 python3 -m pmppbench all --config studies/memory_roof/every_shape28.toml --out $STEPS_DIR/every.csv; pack
step el 100 python3 -m pmppbench all --config studies/memory_roof/el28h.toml --out $STEPS_DIR/el.csv; pack
step el28c 60 python3 -m pmppbench all --config studies/memory_roof/el28c.toml --out $STEPS_DIR/el28c.csv; pack
step scan-default 60 python3 -m pmppbench scan --out $STEPS_DIR/scan-default.csv; pack
step gpu-scan 150 python3 -m pytest -q -rfE -p no:cacheprovider -m gpu --durations=3 tests/test_scan.py tests/test_transpose.py; pack
device_end
