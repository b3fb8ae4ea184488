#!/bin/bash
# session 16, call 5: the looker reading 2, 4 or 8 words a lane (LS_LANE_WORDS) beside the shipped build.
# at 2^20-2^28, edge checks first.
set -u
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/cccl .whl/*.whl || echo "cccl install failed"
export PYTHONPATH=$PWD:/tmp/cccl
STEPS_DIR=$OUT/logs; mkdir -p $STEPS_DIR; start=$SECONDS
source studies/steps.sh
pack() { tar czf $OUT/logs.tgz -C $OUT logs; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $STEPS_DIR/gpu.txt 2>&1
step check-edges 90 python3 studies/scan_lookback.py --check-staged 1,7169,100003,16777219 --calls 5; pack
step study 150 python3 studies/scan_lookback.py --families staged --sizes 20,24,26,28 --json $STEPS_DIR/study.json; pack
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv >> $STEPS_DIR/gpu.txt 2>&1
pack
