#!/bin/bash
# Session 23, call 1. New: coarsened_sector_tma_lines (the bulk form's line-offset layout filled by 32 tensor
# boxes through maps of A's rows 32 at a time), first on any GPU: checked (its own check, the transpose GPU
# tests, memcheck and racecheck), timed beside coarsened_sector_tma_any and the bulk form (lines23.toml,
# twice), and counted (ncu at 8193^2: instructions, L2 requests; the per-instruction counts of the forms).
# On an H200 also session 22's plan (results/h100/session22/next/run.sh): shapes22.toml (best where only N
# is off a float4, never timed there), the scan at its defaults and sizes, a cold `all` last.
# The most wanted steps first (a call can be cut); logs tarred after every step; the board in logs/board.txt.
set -u
source studies/steps.sh
device_begin
nvidia-smi --query-gpu=name --format=csv,noheader | head -1 >"$STEPS_DIR/board.txt"
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem --format=csv >>"$STEPS_DIR/gpu.txt"
M=gpu__time_duration.sum,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_requests_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_tag_requests.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,launch__occupancy_limit_shared_mem,launch__registers_per_thread,dram__bytes_read.sum,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum
V=coarsened_sector_tma_any,coarsened_sector_bulk,coarsened_sector_tma_lines
h200=0; grep -q H200 "$STEPS_DIR/board.txt" && h200=1
step lines-check 60 python3 -m pmppbench transpose 133 261 1 --variants coarsened_sector_tma_lines --check-only; pack
step gpu-sector 120 python3 -m pytest -q -rfE -p no:cacheprovider -m gpu --durations=5 tests/test_transpose.py -k test_the_sector_forms_are_bit_exact_at_every_pitch; pack
step lines-1 150 python3 -m pmppbench all --config results/h100/session24/call1/lines23.toml --out $STEPS_DIR/lines-1.csv; pack
if [ $h200 = 1 ]; then
  step shapes 150 python3 -m pmppbench all --config results/h100/session22/call2/shapes22.toml --out $STEPS_DIR/shapes.csv; pack
  step scan-default 90 python3 -m pmppbench scan --out $STEPS_DIR/scan-default.csv; pack
fi
step lines-2 150 python3 -m pmppbench all --config results/h100/session24/call1/lines23.toml --out $STEPS_DIR/lines-2.csv; pack
step ncu-8193 120 ncu --metrics $M --csv -k regex:coarsened_sector python3 -m pmppbench transpose 8193 8193 1 --variants $V --check-only; pack
for tool in memcheck racecheck; do
  for mn in "133 261" "95 66"; do
    step sanitizer-$tool-${mn/ /x} 60 compute-sanitizer --tool $tool --print-limit 10 python3 -m pmppbench transpose $mn 1 --variants coarsened_sector_tma_lines --check-only; pack
  done
done
if [ $h200 = 1 ]; then step gpu-transpose 150 python3 -m pytest -q -rfE -p no:cacheprovider -m gpu --durations=5 tests/test_transpose.py; pack; fi
step ncu-src 150 ncu --section SourceCounters --section InstructionStats -k regex:coarsened_sector -o "$STEPS_DIR/src8193" python3 -m pmppbench transpose 8193 8193 1 --variants $V --check-only
ncu -i "$STEPS_DIR/src8193.ncu-rep" --page source --csv --print-source sass >"$STEPS_DIR/src8193-sass.csv" 2>&1
rm -f "$STEPS_DIR/src8193.ncu-rep"; pack
if [ $h200 = 1 ]; then
  step scan-sizes 120 python3 -m pmppbench all --config patterns_sizes --only scan --out $STEPS_DIR/scan-sizes.csv; pack
  step all 120 python3 -m pmppbench all --out $STEPS_DIR/all.csv; pack
fi
device_end
