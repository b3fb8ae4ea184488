#!/bin/bash
# session 21, call 1: ncu's full set (raw page) on the TMA forms at 8192^2 (coarsened_tma, coarsened_sector_tma,
# coarsened_sector_tma_any: one shape, three load layouts), 8193^2 and 10001 x 10000, 10000^2; then
# sizes21.toml (8K-16K, round and odd) once.
set -u
source studies/steps.sh
device_begin
ncu_full() {  # name M N variant
  step ncu-$1 120 ncu --set full --csv --page raw -c 1 -k regex:coarsened python3 -m pmppbench transpose $2 $3 1 --variants $4 --check-only; pack
}
ncu_full tma-8192 8192 8192 coarsened_tma
ncu_full stma-8192 8192 8192 coarsened_sector_tma
ncu_full any-8192 8192 8192 coarsened_sector_tma_any
ncu_full any-8193 8193 8193 coarsened_sector_tma_any
ncu_full stma-10001x10000 10001 10000 coarsened_sector_tma
ncu_full tma-10000 10000 10000 coarsened_tma
step sizes 300 python3 -m pmppbench all --config results/h200/session21/call1/sizes21.toml --out $STEPS_DIR/sizes.csv; pack
device_end
