#!/bin/bash
# session 20, call 2: coarsened_sector_tma_any_runs (coarsened_sector_tma_any, each lane's addresses
# worked out once for its four rows of B) and coarsened_sector_tma_split with a select in place of
# call 1's branch at every read: the transpose GPU tests (the three any-N forms bit-exact at 11
# shapes), memcheck and racecheck of the runs form at every N mod 4, sector_split20.toml three times,
# and ncu's instructions and issue slots of the forms at 8193^2 and 8192^2 (is the write phase
# bound by instruction issue?). Logs tarred after every step.
set -u
source studies/steps.sh
device_begin
step gpu-transpose 200 python3 -m pytest -q -rfE -p no:cacheprovider -m gpu --durations=5 tests/test_transpose.py; pack
for tool in memcheck racecheck; do
  for mn in "133 261" "133 262" "133 263" "131 260"; do
    step sanitizer-$tool-${mn/ /x} 60 compute-sanitizer --tool $tool --print-limit 10 python3 -m pmppbench transpose $mn 2 --variants coarsened_sector_tma_any_runs --check-only; pack
  done
done
for i in 1 2 3; do
  step split-$i 150 python3 -m pmppbench all --config results/h200/session20/call2/sector_split20.toml --out $STEPS_DIR/split-$i.csv; pack
done
M=smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,smsp__thread_inst_executed_per_inst_executed.ratio,dram__throughput.avg.pct_of_peak_sustained_elapsed,gpu__time_duration.sum,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio
step ncu-8193 200 ncu --metrics $M -k regex:coarsened --csv python3 -m pmppbench transpose 8193 8193 2 --variants coarsened_sector_tma_any,coarsened_sector_tma_any_runs,coarsened_sector_tma_split,coarsened_sector_vec --check-only; pack
step ncu-8192 200 ncu --metrics $M -k regex:coarsened --csv python3 -m pmppbench transpose 8192 8192 2 --variants coarsened_tma,coarsened_sector_tma,coarsened_sector_tma_any,coarsened_sector_tma_any_runs,coarsened --check-only; pack
device_end
