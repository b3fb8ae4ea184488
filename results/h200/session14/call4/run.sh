#!/bin/bash
# session 14, call 4: the tensor-core GPU tests with the missed wait held to synccheck, and `all`
# (its BF16 4096^3, FP16 2048^3 and TF32 2048^3 tables run the grouped order)
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
STEPS_DIR=$OUT/logs; mkdir -p $STEPS_DIR; start=$SECONDS
source studies/steps.sh
git log --oneline -1 > $STEPS_DIR/build.txt 2>&1; git status --short >> $STEPS_DIR/build.txt
step gpu-tc 240 python3 -m pytest -q -rfE -p no:cacheprovider -m gpu tests/test_gemm_tc.py
step all 150 python3 -m pmppbench all --out $STEPS_DIR/all.csv
tar czf $OUT/logs.tgz -C $OUT logs
