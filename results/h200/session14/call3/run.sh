#!/bin/bash
# session 14, call 3: does anything see wgmma's missed mbarrier wait? The mutant (tests/test_gemm_tc.py
# MUTATIONS) checked at four shapes three times each (probe.py), and under compute-sanitizer's
# racecheck and synccheck; then the shipped rungs (G = 16) against G = 1 and cuBLAS at 8192^3, 15 batches
# a candidate a round, 4 alternating rounds
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
STEPS_DIR=$OUT/logs; mkdir -p $STEPS_DIR /tmp/m; start=$SECONDS
source studies/steps.sh
git log --oneline -1 > $STEPS_DIR/build.txt 2>&1
P=results/h200/session14/call3/probe.py
step probe 150 python3 $P
for tool in racecheck synccheck; do
  step sanitizer-$tool 120 compute-sanitizer --tool $tool --report-api-errors no python3 $P 512x384x1024 1
done
step tile-order-long 200 python3 studies/gemm_tile_order.py --groups 1 --shapes 8192:bf16,8192:fp16 \
  --batches 15 --rounds 4 --json $STEPS_DIR/tile_order_long.json
tar czf $OUT/logs.tgz -C $OUT logs
