#!/bin/bash
# session 15, call 3: lookback_staged split into a copy per warp part (LS_SPLIT) and an eighth of a wave ahead; the
# study's staged candidates beside lookback, CUB and memcpy;
# the variant's GPU tests and sanitizers; the patterns_sizes scan rows; the profile; edge checks of
# every staged candidate. Logs tarred after every step (a cut call still brings back what ran).
set -u
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/cccl .whl/*.whl || echo "cccl install failed"
export PYTHONPATH=$PWD:/tmp/cccl
STEPS_DIR=$OUT/logs; mkdir -p $STEPS_DIR; start=$SECONDS
source studies/steps.sh
pack() { tar czf $OUT/logs.tgz -C $OUT logs; }
git log --oneline -1 > $STEPS_DIR/build.txt 2>&1; git status --short >> $STEPS_DIR/build.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $STEPS_DIR/gpu.txt 2>&1
step study 90 python3 studies/scan_lookback.py --families staged --sizes 20,24,26,28 --json $STEPS_DIR/study.json; pack
step gpu-scan 150 python3 -m pytest -q -rfE -p no:cacheprovider -m gpu --durations=5 tests/test_scan.py; pack
for tool in memcheck racecheck; do
  step sanitizer-$tool 40 compute-sanitizer --tool $tool --print-limit 10 python3 -m pmppbench scan 100003 --variants lookback_staged --check-only; pack
done
step sizes 100 python3 -m pmppbench all --config patterns_sizes --only scan --out $STEPS_DIR/sizes.csv; pack
step profile 30 python3 studies/scan_lookback.py --profile; pack
step check-edges 60 python3 studies/scan_lookback.py --check-staged 1,3,4097,8193,100003,16777219 --calls 10
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv >> $STEPS_DIR/gpu.txt 2>&1
pack
