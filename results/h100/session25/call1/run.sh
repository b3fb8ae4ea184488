#!/bin/bash
# Session 24, call 2. The lines form's tile order (band24.toml, twice: bands of 16, 32, 128 tile columns
# against column by column; every row checked; the sector forms' GPU test, bit-exact, between the two runs),
# then ncu's DRAM and L2 counters at 10001^2. On an H200 also what session 23 left for one (lines23.toml,
# shapes22.toml, the scan at its defaults and sizes, the transpose GPU tests, a cold `all`).
# The most wanted steps first; logs tarred after every step; the board in logs/board.txt.
set -u
source studies/steps.sh
device_begin
nvidia-smi --query-gpu=name --format=csv,noheader | head -1 >"$STEPS_DIR/board.txt"
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem --format=csv >>"$STEPS_DIR/gpu.txt"
h200=0; grep -q H200 "$STEPS_DIR/board.txt" && h200=1
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_tag_requests.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_requests_srcunit_tex_op_read.sum,lts__t_requests_srcunit_tex_op_write.sum,smsp__inst_executed.sum,lts__t_sectors_srcunit_tex_lookup_miss.sum
step band-1 150 python3 -m pmppbench all --config results/h100/session25/call1/band24.toml --out $STEPS_DIR/band-1.csv; pack
step gpu-sector 120 python3 -m pytest -q -rfE -p no:cacheprovider -m gpu --durations=5 tests/test_transpose.py -k test_the_sector_forms_are_bit_exact_at_every_pitch; pack
step band-2 150 python3 -m pmppbench all --config results/h100/session25/call1/band24.toml --out $STEPS_DIR/band-2.csv; pack
step ncu-10001 120 ncu --metrics $M --csv -k regex:coarsened_sector python3 -m pmppbench transpose 10001 10001 1 --variants coarsened_sector_tma_lines,coarsened_sector_tma_lines_band32,coarsened_sector_tma_lines_band128,coarsened_sector_tma_any --check-only; pack
if [ $h200 = 1 ]; then
  step scan-default 90 python3 -m pmppbench scan --out $STEPS_DIR/scan-default.csv; pack
  step lines-1 150 python3 -m pmppbench all --config results/h100/session24/call1/lines23.toml --out $STEPS_DIR/lines-1.csv; pack
  step shapes 150 python3 -m pmppbench all --config results/h100/session22/call2/shapes22.toml --out $STEPS_DIR/shapes.csv; pack
  step scan-sizes 120 python3 -m pmppbench all --config patterns_sizes --only scan --out $STEPS_DIR/scan-sizes.csv; pack
  step gpu-transpose 150 python3 -m pytest -q -rfE -p no:cacheprovider -m gpu --durations=5 tests/test_transpose.py; pack
fi
device_end
