#!/bin/bash
# session 20, call 6: coarsened_sector_tma_any_wide (session 19's 128-column tiles) written by
# sector_write_rows: the transpose GPU tests (both any-N forms bit-exact at 11 shapes), memcheck and
# racecheck at every N mod 4, wide20.toml three times, ncu at 8193^2.
set -u
source studies/steps.sh
device_begin
step gpu-transpose 200 python3 -m pytest -q -rfE -p no:cacheprovider -m gpu --durations=5 tests/test_transpose.py; pack
for tool in memcheck racecheck; do
  for mn in "133 261" "133 262" "133 263" "131 260"; do
    step sanitizer-$tool-${mn/ /x} 60 compute-sanitizer --tool $tool --print-limit 10 python3 -m pmppbench transpose $mn 2 --variants coarsened_sector_tma_any_wide --check-only; pack
  done
done
for i in 1 2 3; do
  step wide-$i 150 python3 -m pmppbench all --config results/h200/session20/call6/wide20.toml --out $STEPS_DIR/wide-$i.csv; pack
done
M=smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,gpu__time_duration.sum,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,sm__warps_active.avg.pct_of_peak_sustained_active
step ncu-8193 200 ncu --metrics $M -k regex:coarsened --csv python3 -m pmppbench transpose 8193 8193 2 --variants coarsened_sector_tma_any,coarsened_sector_tma_any_wide --check-only; pack
device_end
