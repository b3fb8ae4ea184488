#!/bin/bash
# session 12, call 8: the warp-0 look-back's distance ahead (0 to 0.75 waves) at 2^24-2^28
set -u
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/cccl .whl/*.whl || echo "cccl install failed"
export PYTHONPATH=$PWD:/tmp/cccl
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw,clocks_throttle_reasons.active --format=csv > $L/gpu.txt 2>&1
timeout 100 python3 studies/scan_lookback.py --sizes 24,26,28 --dtypes f32,i32 --no-persistent > $L/scan-ahead.txt 2>&1; echo "rc=$?" >> $L/scan-ahead.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw,clocks_throttle_reasons.active --format=csv >> $L/gpu.txt 2>&1
tar czf $OUT/logs.tgz -C $OUT logs
