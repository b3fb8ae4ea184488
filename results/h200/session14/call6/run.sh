#!/bin/bash
# session 14, call 6: the one-wave rule (%nsmid): tensor GPU tests, the study at 2048^3 and 8192^3
# (shipped against G = 1), and `gemm 8192 8192 8192 --precision bf16,fp16`
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
STEPS_DIR=$OUT/logs; mkdir -p $STEPS_DIR; start=$SECONDS
source studies/steps.sh
git log --oneline -1 > $STEPS_DIR/build.txt 2>&1; git status --short >> $STEPS_DIR/build.txt
step gpu-tc 240 python3 -m pytest -q -rfE -p no:cacheprovider -m gpu tests/test_gemm_tc.py
step tile-order 200 python3 studies/gemm_tile_order.py --groups 1 --shapes 2048:fp16,2048:bf16,2048:tf32,8192:bf16,8192:fp16 \
  --rounds 4 --json $STEPS_DIR/tile_order.json
tar czf $OUT/logs.tgz -C $OUT logs
