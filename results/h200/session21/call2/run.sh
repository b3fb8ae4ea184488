#!/bin/bash
# session 21, call 2: the copy engine's loads alone (studies/memory_roof/tma_loads.py): each layout's time
# at 8192^2, 8193^2, 16384^2 and 16385 x 16383, twice; then ncu's L2 read requests and sectors for one
# call of each at 8192^2 and 8193^2.
set -u
source studies/steps.sh
device_begin
for i in 1 2; do
  step loads-$i 150 python3 studies/memory_roof/tma_loads.py 8192 8192 8193 8193 16384 16384 16385 16383; pack
done
M=gpu__time_duration.sum,lts__t_requests_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_tag_requests.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,l1tex__m_xbar2l1tex_read_sectors.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
step ncu 200 ncu --metrics $M --csv python3 studies/memory_roof/tma_loads.py 8192 8192 8193 8193 --once; pack
device_end
