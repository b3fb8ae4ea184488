#!/bin/bash
# session 12, call 1: bulk_private / sliced candidates (check, sanitizers, timing), first_variant rerun
set -u
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/cccl .whl/*.whl || echo "cccl install failed"
export PYTHONPATH=$PWD:/tmp/cccl
L=$OUT/logs; mkdir -p $L
git log --oneline -1 > $L/build.txt 2>&1; git status --short >> $L/build.txt 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $L/gpu.txt 2>&1
date +%s > $L/t0
timeout 120 python3 studies/histogram_private.py --bins 7 --check-only --n 1,31,2559,2560,2561,1000003,16777223 > $L/check-edges.txt 2>&1; echo "rc=$?" >> $L/check-edges.txt
timeout 150 compute-sanitizer --tool memcheck --print-limit 20 python3 studies/histogram_private.py --bins 7 --check-only --n 100003 > $L/memcheck.txt 2>&1; echo "rc=$?" >> $L/memcheck.txt
timeout 150 compute-sanitizer --tool racecheck --print-limit 20 python3 studies/histogram_private.py --bins 7 --check-only --n 100003 > $L/racecheck.txt 2>&1; echo "rc=$?" >> $L/racecheck.txt
date +%s >> $L/t0
timeout 200 python3 studies/histogram_private.py --bins 7 --n 67108864,268435456 --json $L/study.json > $L/study.txt 2>&1; echo "rc=$?" >> $L/study.txt
date +%s >> $L/t0
timeout 150 python3 -m pytest -q -rfE -p no:cacheprovider -m gpu tests/test_first_variant.py > $L/first-variant.txt 2>&1; echo "rc=$?" >> $L/first-variant.txt
date +%s >> $L/t0
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv >> $L/gpu.txt 2>&1
tar czf $OUT/logs.tgz -C $OUT logs
