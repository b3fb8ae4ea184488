#!/bin/bash
# session 20, call 3: coarsened_sector_tma_runs (coarsened_sector_tma written by sector_write_rows) and
# coarsened_sector_tma_any_runs on sector_write_rows' final form (first / next): the transpose GPU
# tests (bit-exact: the runs forms at 6 and 11 shapes), memcheck and racecheck of both at four
# shapes each, sector_runs20.toml three times, ncu's instructions and issue slots at 10001 x 10000
# and 8196^2. Logs tarred after every step.
set -u
source studies/steps.sh
device_begin
step gpu-transpose 200 python3 -m pytest -q -rfE -p no:cacheprovider -m gpu --durations=5 tests/test_transpose.py; pack
for tool in memcheck racecheck; do
  for mn in "133 261" "133 262" "131 260" "130 268"; do
    step sanitizer-$tool-${mn/ /x} 60 compute-sanitizer --tool $tool --print-limit 10 python3 -m pmppbench transpose $mn 2 --variants coarsened_sector_tma_runs,coarsened_sector_tma_any_runs --check-only; pack
  done
done
for i in 1 2 3; do
  step runs-$i 150 python3 -m pmppbench all --config results/h200/session20/call3/sector_runs20.toml --out $STEPS_DIR/runs-$i.csv; pack
done
M=smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,gpu__time_duration.sum,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio
step ncu-10001x10000 200 ncu --metrics $M -k regex:coarsened --csv python3 -m pmppbench transpose 10001 10000 2 --variants coarsened_sector_tma,coarsened_sector_tma_runs,coarsened_sector_tma_any_runs --check-only; pack
step ncu-8196 200 ncu --metrics $M -k regex:coarsened --csv python3 -m pmppbench transpose 8196 8196 2 --variants best,coarsened_sector_tma_runs,coarsened_sector_tma_any_runs --check-only; pack
device_end
