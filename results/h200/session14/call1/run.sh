#!/bin/bash
# session 14, call 1: the wgmma rungs' grouped tile order (WG_GROUP_M) beside the shipped order and cuBLAS
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
STEPS_DIR=$OUT/logs; mkdir -p $STEPS_DIR; start=$SECONDS
source studies/steps.sh
git log --oneline -1 > $STEPS_DIR/build.txt 2>&1; git status --short >> $STEPS_DIR/build.txt 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw,power.limit --format=csv > $STEPS_DIR/gpu.txt 2>&1
step gpu-tc 200 python3 -m pytest -q -rfE -p no:cacheprovider -m gpu tests/test_gemm_tc.py
step tile-order 300 python3 studies/gemm_tile_order.py --groups 8,16 --json $STEPS_DIR/tile_order.json
step gemm-8192 90 python3 -m pmppbench gemm 8192 8192 8192 --precision bf16,fp16 --out $STEPS_DIR/gemm8192.csv
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv >> $STEPS_DIR/gpu.txt 2>&1
tar czf $OUT/logs.tgz -C $OUT logs
