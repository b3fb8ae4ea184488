#!/bin/bash
# session 22, call 1: `all` on the fresh machine first (its cold time; the scan's 2^26 rows), then
# session 21's call 3 as written (results/h200/session21/call3/run.sh): coarsened_sector_bulk's GPU
# tests, memcheck and racecheck at five shapes, bulk21.toml twice, ncu, the load study.
set -u
source studies/steps.sh
device_begin
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem --format=csv >>"$STEPS_DIR/gpu.txt"
step all-cold 120 python3 -m pmppbench all --out $STEPS_DIR/all-cold.csv; pack
step gpu-transpose 240 python3 -m pytest -q -rfE -p no:cacheprovider -m gpu --durations=5 tests/test_transpose.py; pack
for tool in memcheck racecheck; do
  for mn in "133 261" "131 260" "9 66" "65 129" "131 130"; do
    step sanitizer-$tool-${mn/ /x} 60 compute-sanitizer --tool $tool --print-limit 10 python3 -m pmppbench transpose $mn 2 --variants coarsened_sector_bulk,coarsened_sector_bulk_sec --check-only; pack
  done
done
for i in 1 2; do
  step bulk-$i 150 python3 -m pmppbench all --config results/h200/session21/call3/bulk21.toml --out $STEPS_DIR/bulk-$i.csv; pack
done
M=gpu__time_duration.sum,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_requests_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_tag_requests.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,launch__occupancy_limit_shared_mem,launch__registers_per_thread,dram__bytes_read.sum,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum
step ncu-8193 90 ncu --metrics $M --csv -k regex:coarsened_sector python3 -m pmppbench transpose 8193 8193 2 --variants coarsened_sector_tma_any,coarsened_sector_bulk,coarsened_sector_bulk_sec --check-only; pack
step ncu-16385 90 ncu --metrics $M --csv -k regex:coarsened_sector python3 -m pmppbench transpose 16385 16383 2 --variants coarsened_sector_tma_any,coarsened_sector_bulk,coarsened_sector_bulk_sec --check-only; pack
step loads 60 python3 studies/memory_roof/tma_loads.py 8193 8193 16385 16383; pack
step scan-default 60 python3 -m pmppbench scan; pack
device_end
