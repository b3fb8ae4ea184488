#!/bin/bash
# session 14, call 2: the grouped tile order shipped (G = 16 for BF16/FP16, 8 for TF32): GPU tests,
# the missed-wait mutant alone three times, sanitizers over several groups, the 8192^3 table
# beside cuBLAS, and the study (G = 1, 8, 16) over the shapes and TF32
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
STEPS_DIR=$OUT/logs; mkdir -p $STEPS_DIR; start=$SECONDS
source studies/steps.sh
git log --oneline -1 > $STEPS_DIR/build.txt 2>&1; git status --short >> $STEPS_DIR/build.txt 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw,power.limit --format=csv > $STEPS_DIR/gpu.txt 2>&1
step gemm-8192 90 python3 -m pmppbench gemm 8192 8192 8192 --precision bf16,fp16 --out $STEPS_DIR/gemm8192.csv
step gpu-tc 200 python3 -m pytest -q -rfE -p no:cacheprovider -m gpu tests/test_gemm_tc.py
for i in 1 2 3; do
  step missed-wait-$i 60 python3 -m pytest -q -rfE -p no:cacheprovider -m gpu tests/test_gemm_tc.py -k "missed"
done
for tool in memcheck racecheck; do
  step sanitizer-$tool 120 compute-sanitizer --tool $tool --report-api-errors no python3 -m pmppbench gemm 2200 1032 136 \
    --precision bf16,tf32 --variants wgmma,wgmma_ws,wgmma_persist --check-only
done
step tile-order 240 python3 studies/gemm_tile_order.py --groups 1,8,16 \
  --shapes 8192:bf16,8192:fp16,8192:tf32,4096:tf32,1024x8192x4096:bf16,4096x1024x8192:bf16 --json $STEPS_DIR/tile_order.json
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv >> $STEPS_DIR/gpu.txt 2>&1
tar czf $OUT/logs.tgz -C $OUT logs
