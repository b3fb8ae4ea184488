#!/bin/bash
# session 14, call 5: the grouped order against row-major at 2048^3 (one wave of tiles: call 4's `all`
# read FP16 2048^3 at 94.0% of cuBLAS and TF32 at 85.7%, session 9's 96.0 and 88.3), 4 alternating rounds
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
STEPS_DIR=$OUT/logs; mkdir -p $STEPS_DIR; start=$SECONDS
source studies/steps.sh
git log --oneline -1 > $STEPS_DIR/build.txt 2>&1; git status --short >> $STEPS_DIR/build.txt
step tile-order-2048 200 python3 studies/gemm_tile_order.py --groups 1 --shapes 2048:fp16,2048:tf32,2048:bf16 \
  --rounds 4 --json $STEPS_DIR/tile_order_2048.json
tar czf $OUT/logs.tgz -C $OUT logs
