#!/bin/bash
# session 12, call 3: one launch by the accumulator (atomicExch) against zeroing
set -u
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/cccl .whl/*.whl || echo "cccl install failed"
export PYTHONPATH=$PWD:/tmp/cccl
L=$OUT/logs; mkdir -p $L
git log --oneline -1 > $L/build.txt 2>&1; git status --short >> $L/build.txt 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw,clocks_throttle_reasons.active --format=csv > $L/gpu.txt 2>&1
s() { echo "$(date +%s) $1" >> $L/steps.txt; }
s start
timeout 120 python3 studies/histogram_private.py --bins 7 --check-only --n 1,31,2559,2560,2561,1000003,16777223 > $L/check-edges.txt 2>&1; echo "rc=$?" >> $L/check-edges.txt
s edges
for t in memcheck racecheck; do
  timeout 150 compute-sanitizer --tool $t --report-api-errors no --print-limit 20 python3 studies/histogram_private.py --bins 7 --check-only --n 100003 > $L/$t.txt 2>&1; echo "rc=$?" >> $L/$t.txt
done
s sanitizers
timeout 200 python3 studies/histogram_private.py --bins 7 --n 67108864,268435456 --json $L/study.json > $L/study.txt 2>&1; echo "rc=$?" >> $L/study.txt
s study
timeout 150 python3 -m pytest -q -rfE -p no:cacheprovider -m gpu tests/test_histogram.py > $L/gpu-tests.txt 2>&1; echo "rc=$?" >> $L/gpu-tests.txt
s gputests
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw,clocks_throttle_reasons.active --format=csv >> $L/gpu.txt 2>&1
tar czf $OUT/logs.tgz -C $OUT logs
