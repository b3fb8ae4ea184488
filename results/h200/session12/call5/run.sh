#!/bin/bash
# session 12, call 9: the look-back a quarter wave ahead (LOOKBACK_AHEAD_WAVES 0.25): pmppbench scan at 2^20-2^28, the scan's GPU tests
set -u
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/cccl .whl/*.whl || echo "cccl install failed"
export PYTHONPATH=$PWD:/tmp/cccl
L=$OUT/logs; mkdir -p $L
for n in 1048576 16777216 67108864 268435456; do
  timeout 40 python3 -m pmppbench scan $n --variants lookback,cub,memcpy --kind inclusive >> $L/scan-sizes.txt 2>&1; echo "rc=$?" >> $L/scan-sizes.txt
done
timeout 60 python3 -m pytest -q -rfEs -p no:cacheprovider -n 4 -m gpu -k "not (64_bit_path or larger_than_the_free_memory)" tests/test_scan.py > $L/gpu-scan.txt 2>&1; echo "rc=$?" >> $L/gpu-scan.txt
tar czf $OUT/logs.tgz -C $OUT logs
