#!/bin/bash
# For the next session's first call, on an H200 if one is lent (session 22 had H100s only; not run):
# best's pick where only N is off a float4 was measured on H100s alone (docs/memory_roof.md,
# "Session 22"), and coarsened_sector_bulk has never run on an H200, where its loads had the most to
# win. `all` first (a new machine's cold time, the scan's 2^26 rows), shapes22.toml twice, bulk21.toml
# twice, patterns_sizes' scan rows, the transpose GPU tests and best under memcheck and racecheck.
# Logs tarred after every step; the board is in logs/gpu.txt: file them under results/<board>/.
set -u
source studies/steps.sh
device_begin
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem --format=csv >>"$STEPS_DIR/gpu.txt"
step all-cold 120 python3 -m pmppbench all --out $STEPS_DIR/all-cold.csv; pack
for i in 1 2; do
  step shapes-$i 120 python3 -m pmppbench all --config results/h100/session22/call2/shapes22.toml --out $STEPS_DIR/shapes-$i.csv; pack
  step bulk-$i 120 python3 -m pmppbench all --config results/h200/session21/call3/bulk21.toml --out $STEPS_DIR/bulk-$i.csv; pack
done
step scan-sizes 120 python3 -m pmppbench all --config patterns_sizes --only scan --out $STEPS_DIR/scan-sizes.csv; pack
step gpu-transpose 120 python3 -m pytest -q -rfE -p no:cacheprovider -m gpu --durations=5 tests/test_transpose.py; pack
for tool in memcheck racecheck; do
  for mn in "132 67" "4100 4097"; do
    step sanitizer-$tool-${mn/ /x} 60 compute-sanitizer --tool $tool --print-limit 10 python3 -m pmppbench transpose $mn 2 --variants best --check-only; pack
  done
done
device_end
