#!/bin/bash
# Session 25, call 2. On an H200 (the board #32's and #36's bars are set on): the scan at every size and
# its defaults, the first-wave ramp study (studies/scan_lookback.py's SKNOBS: LS_RAMP) twice with the
# profile of the shipped build and a ramp, a cold `all`, the transpose's odd shapes (lines23.toml, with
# the lines form) and session 22's shape set, the transpose GPU tests. On any other board: the transpose
# GPU tests (the build after the band forms' removal), ncu's DRAM and L2 counters on the pair of shapes
# with one odd side, and the ramp study.
# Logs tarred after every step; the board in logs/board.txt.
set -u
source studies/steps.sh
device_begin
nvidia-smi --query-gpu=name --format=csv,noheader | head -1 >"$STEPS_DIR/board.txt"
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem --format=csv >>"$STEPS_DIR/gpu.txt"
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_tag_requests.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_requests_srcunit_tex_op_read.sum,lts__t_requests_srcunit_tex_op_write.sum,lts__t_sectors_srcunit_tex_op_write.sum,lts__t_sectors_srcunit_tex_lookup_miss.sum
ramp() {
  step ramp-1 120 python3 studies/scan_lookback.py --families staged --sizes 20,24,26,28 --json $STEPS_DIR/ramp-1.json; pack
  step ramp-2 120 python3 studies/scan_lookback.py --families staged --sizes 20,24,26,28 --json $STEPS_DIR/ramp-2.json; pack
  step ramp-profile 60 python3 studies/scan_lookback.py --profile --profile-staged 0,2; pack
}
if grep -q H200 "$STEPS_DIR/board.txt"; then
  step scan-sizes 150 python3 -m pmppbench all --config patterns_sizes --only scan --out $STEPS_DIR/scan-sizes.csv; pack
  step scan-default 90 python3 -m pmppbench scan --out $STEPS_DIR/scan-default.csv; pack
  ramp
  step all-cold 90 python3 -m pmppbench all --out $STEPS_DIR/all-cold.csv; pack
  step lines 150 python3 -m pmppbench all --config results/h100/session24/call1/lines23.toml --out $STEPS_DIR/lines.csv; pack
  step shapes 150 python3 -m pmppbench all --config results/h100/session22/call2/shapes22.toml --out $STEPS_DIR/shapes.csv; pack
  step gpu-transpose 120 python3 -m pytest -q -rfE -p no:cacheprovider -m gpu --durations=5 tests/test_transpose.py; pack
else
  step gpu-transpose 120 python3 -m pytest -q -rfE -p no:cacheprovider -m gpu --durations=5 tests/test_transpose.py; pack
  for s in "16384 16385" "16385 16384" "16384 16384"; do
    step "ncu-${s/ /x}" 90 ncu --metrics $M --csv -k regex:coarsened python3 -m pmppbench transpose $s 1 --variants best,coarsened_sector_tma_any --check-only; pack
  done
  ramp
fi
device_end
