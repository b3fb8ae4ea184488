#!/bin/bash
# session 16, call 2: lookback_staged with the looker warp (LS_LOOKER) at other distances ahead, tiles
# and with the tile by block index (LS_TICKET 0), checked at edge sizes and timed beside the shipped
# kernel, lookback, CUB and memcpy; their profile; sanitizers; the transpose GPU tests with best's new
# pick (coarsened_sector_tma where M % 4 != 0 and N % 4 == 0) and best timed there. Logs tarred after
# every step.
set -u
source studies/steps.sh
device_begin
step check-edges 120 python3 studies/scan_lookback.py --check-staged 1,3,7168,7169,10240,10241,12288,12289,100003,16777219 --calls 10; pack
step study 180 python3 studies/scan_lookback.py --families staged --sizes 20,24,26,28 --json $STEPS_DIR/study.json; pack
step profile 40 python3 studies/scan_lookback.py --profile --profile-staged 0,1,4; pack
for tool in memcheck racecheck synccheck; do
  step scan-$tool 60 compute-sanitizer --tool $tool --print-limit 10 python3 studies/scan_lookback.py --check-staged 100003 --calls 1; pack
done
step gpu-transpose 150 python3 -m pytest -q -rfE -p no:cacheprovider -m gpu --durations=5 tests/test_transpose.py; pack
step tr-time 90 python3 -m pmppbench all --config studies/memory_roof/sector_tma16.toml --out $STEPS_DIR/tr16.csv; pack
device_end
