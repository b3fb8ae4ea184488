#!/bin/bash
# Written in session 26; run in session 27 (call 1, on an H100: the H200-only steps skipped). On an H200 (the board #32's and #36's bars are set on): the scan with the first
# wave's ramp at every size and its defaults and a cold `all` (#32), then on any board: the transpose
# GPU tests, plain26.toml, el26.toml (coarsened_sector_tma_any's _p128, _p0 and _el beside it, best, memcpy), ncu's DRAM
# counters of the four at three shapes, el26.toml again. Logs tarred after every step; the board in logs/board.txt.
set -u
source studies/steps.sh
device_begin
nvidia-smi --query-gpu=name --format=csv,noheader | head -1 >"$STEPS_DIR/board.txt"
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem --format=csv >>"$STEPS_DIR/gpu.txt"
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_lookup_miss.sum
if grep -q H200 "$STEPS_DIR/board.txt"; then
  step scan-sizes 100 python3 -m pmppbench all --config patterns_sizes --only scan --out $STEPS_DIR/scan-sizes.csv; pack
  step scan-default 60 python3 -m pmppbench scan --out $STEPS_DIR/scan-default.csv; pack
  step all 60 python3 -m pmppbench all --out $STEPS_DIR/all.csv; pack
fi
step gpu-transpose 120 python3 -m pytest -q -rfE -p no:cacheprovider -m gpu --durations=3 tests/test_transpose.py -k sector; pack
step plain 70 python3 -m pmppbench all --config results/next/plain26.toml --out $STEPS_DIR/plain.csv; pack
step el-1 100 python3 -m pmppbench all --config results/next/el26.toml --out $STEPS_DIR/el-1.csv; pack
for s in "16384 16385" "16384 16384" "10001 10001"; do
  step "ncu-${s/ /x}" 70 ncu --metrics $M --csv -k regex:coarsened python3 -m pmppbench transpose $s 1 --variants coarsened_sector_tma_any,coarsened_sector_tma_any_p128,coarsened_sector_tma_any_p0,coarsened_sector_tma_any_el --check-only; pack
done
step el-2 100 python3 -m pmppbench all --config results/next/el26.toml --out $STEPS_DIR/el-2.csv; pack
device_end
