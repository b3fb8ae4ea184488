#!/bin/bash
# session 14, call 7: memcheck and racecheck on the final build's grouped path (306 BF16 tiles, 153 TF32: more than one wave)
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
STEPS_DIR=$OUT/logs; mkdir -p $STEPS_DIR; start=$SECONDS
source studies/steps.sh
git log --oneline -1 > $STEPS_DIR/build.txt 2>&1; git status --short >> $STEPS_DIR/build.txt
for tool in memcheck racecheck; do
  step sanitizer-$tool 70 compute-sanitizer --tool $tool --report-api-errors no python3 -m pmppbench gemm 2200 4104 136 \
    --precision bf16,tf32 --variants wgmma,wgmma_ws,wgmma_persist --check-only
done
tar czf $OUT/logs.tgz -C $OUT logs
