#!/bin/bash
# session 16, call 6: the looker taking the epoch's ticket itself (LS_LOOKER_EPOCH) beside the shipped
# build: edge checks, racecheck / synccheck, the study at 2^20-2^28, the profile.
set -u
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/cccl .whl/*.whl || echo "cccl install failed"
export PYTHONPATH=$PWD:/tmp/cccl
STEPS_DIR=$OUT/logs; mkdir -p $STEPS_DIR; start=$SECONDS
source studies/steps.sh
pack() { tar czf $OUT/logs.tgz -C $OUT logs; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $STEPS_DIR/gpu.txt 2>&1
step check-edges 60 python3 studies/scan_lookback.py --check-staged 1,3,7169,100003,16777219 --calls 5; pack
for tool in racecheck synccheck; do
  step scan-$tool 40 compute-sanitizer --tool $tool --print-limit 10 python3 studies/scan_lookback.py --check-staged 100003 --calls 1; pack
done
step study 120 python3 studies/scan_lookback.py --families staged --sizes 20,24,26,28 --json $STEPS_DIR/study.json; pack
step profile 30 python3 studies/scan_lookback.py --profile --profile-staged 0,2; pack
pack
