#!/bin/bash
# session 21, call 3 (not run: no machine was lent after call 2; for the next session): coarsened_sector_bulk.
# The transpose GPU tests (it bit-exact at 20 shapes), memcheck and
# racecheck at five shapes, bulk21.toml twice, ncu at 8193^2 and 16385 x 16383 (both bulk forms and
# coarsened_sector_tma_any); the load study with bulk_sec, timed and under ncu.
set -u
source studies/steps.sh
device_begin
step gpu-transpose 240 python3 -m pytest -q -rfE -p no:cacheprovider -m gpu --durations=5 tests/test_transpose.py; pack
for tool in memcheck racecheck; do
  for mn in "133 261" "131 260" "9 66" "65 129" "131 130"; do
    step sanitizer-$tool-${mn/ /x} 60 compute-sanitizer --tool $tool --print-limit 10 python3 -m pmppbench transpose $mn 2 --variants coarsened_sector_bulk,coarsened_sector_bulk_sec --check-only; pack
  done
done
for i in 1 2; do
  step bulk-$i 240 python3 -m pmppbench all --config results/h200/session21/call3/bulk21.toml --out $STEPS_DIR/bulk-$i.csv; pack
done
M=gpu__time_duration.sum,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_requests_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_tag_requests.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,launch__occupancy_limit_shared_mem,launch__registers_per_thread,dram__bytes_read.sum,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum
step ncu-8193 120 ncu --metrics $M --csv -k regex:coarsened_sector python3 -m pmppbench transpose 8193 8193 2 --variants coarsened_sector_tma_any,coarsened_sector_bulk,coarsened_sector_bulk_sec --check-only; pack
step ncu-16385 120 ncu --metrics $M --csv -k regex:coarsened_sector python3 -m pmppbench transpose 16385 16383 2 --variants coarsened_sector_tma_any,coarsened_sector_bulk,coarsened_sector_bulk_sec --check-only; pack
step loads 120 python3 studies/memory_roof/tma_loads.py 8193 8193 16385 16383; pack
L=gpu__time_duration.sum,lts__t_requests_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read.sum
step ncu-loads 120 ncu --metrics $L --csv -k regex:bulk python3 studies/memory_roof/tma_loads.py 8193 8193 --once; pack
device_end
