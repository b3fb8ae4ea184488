#!/bin/bash
# session 15, call 1: lookback_staged (the tile in shared memory by the copy engine): its candidates
# checked at edge sizes call after call, under memcheck and racecheck, then timed beside the shipped
# lookback, CUB and memcpy at 2^20-2^28
set -u
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/cccl .whl/*.whl || echo "cccl install failed"
export PYTHONPATH=$PWD:/tmp/cccl
STEPS_DIR=$OUT/logs; mkdir -p $STEPS_DIR; start=$SECONDS
source studies/steps.sh
git log --oneline -1 > $STEPS_DIR/build.txt 2>&1; git status --short >> $STEPS_DIR/build.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $STEPS_DIR/gpu.txt 2>&1
step check-edges 110 python3 studies/scan_lookback.py --check-staged 1,3,4095,4096,4097,6145,7169,8191,8192,8193,100003,1048578,16777219 --calls 10
step memcheck 80 compute-sanitizer --tool memcheck --print-limit 10 python3 studies/scan_lookback.py --check-staged 3,8193,100003 --calls 2
step racecheck 90 compute-sanitizer --tool racecheck --print-limit 10 python3 studies/scan_lookback.py --check-staged 8193,100003 --calls 1
step study 230 python3 studies/scan_lookback.py --families staged --sizes 20,24,26,28 --json $STEPS_DIR/study.json
step profile 50 python3 studies/scan_lookback.py --profile
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv >> $STEPS_DIR/gpu.txt 2>&1
tar czf $OUT/logs.tgz -C $OUT logs
