#!/bin/bash
# Written in session 27; run as call 2 (an H100, so the H200-only scan steps were skipped). The settle now makes evict-last lines ordinary before its fill
# (gpu.reset_persisting_l2: session 27's call 1 saw memcpy at 4097^2 and 4100^2 read 5% faster when the shape
# before it had run coarsened_sector_tma_any_el, whose evict-last lines the fill did not evict).
# On an H200 first: the scan at every size, its defaults and a cold `all` (#32's bar, with this settle).
# Then on any board: the protocol's and the sector forms' GPU tests, the reset's own cost, plain26.toml
# (no _el), el26.toml with the reset, el26.toml without it (the reset patched out in-process, --debug
# keeps the steps in this process), el26.toml with it again. Logs tarred after every step.
set -u
source studies/steps.sh
device_begin
nvidia-smi --query-gpu=name --format=csv,noheader | head -1 >"$STEPS_DIR/board.txt"
C=results/h100/session27/call1
if grep -q H200 "$STEPS_DIR/board.txt"; then
  step scan-sizes 100 python3 -m pmppbench all --config patterns_sizes --only scan --out $STEPS_DIR/scan-sizes.csv; pack
  step scan-default 60 python3 -m pmppbench scan --out $STEPS_DIR/scan-default.csv; pack
  step all 60 python3 -m pmppbench all --out $STEPS_DIR/all.csv; pack
fi
step gpu-tests 150 python3 -m pytest -q -rfE -p no:cacheprovider -m gpu --durations=3 tests/test_protocol.py tests/test_fidelity.py tests/test_transpose.py -k "sector or settle or fidelity or protocol or timer"; pack
step reset-cost 30 python3 -c "
import time, cupy as cp
from pmppbench.gpu import reset_persisting_l2
reset_persisting_l2(); t = time.perf_counter()
for _ in range(200): reset_persisting_l2()
print(f'reset_persisting_l2: {(time.perf_counter() - t) / 200 * 1e6:.1f} us a call (GPU idle)')"; pack
step plain 70 python3 -m pmppbench all --config $C/plain26.toml --out $STEPS_DIR/plain.csv; pack
step el-reset-1 100 python3 -m pmppbench all --config $C/el26.toml --out $STEPS_DIR/el-reset-1.csv; pack
step el-noreset 100 python3 -c "
import sys, pmppbench.gpu as gpu
gpu.reset_persisting_l2 = lambda: None  # the settle of session 27's call 1: the fill alone
from pmppbench.cli import main
sys.exit(main(sys.argv[1:]))" all --config $C/el26.toml --out $STEPS_DIR/el-noreset.csv --debug; pack
step el-reset-2 100 python3 -m pmppbench all --config $C/el26.toml --out $STEPS_DIR/el-reset-2.csv; pack
device_end
