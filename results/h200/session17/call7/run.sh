#!/bin/bash
# session 17, call 7: hardware counters (ncu, one untimed run each after the timed batches) of every
# scan variant at 2^26, float32 inclusive and int32 exclusive: the traffic beside README's claims
# (the three-kernel scans' 4N element passes, a single pass's 2N, shared-memory wavefronts of the
# book's section scans).
set -u
source studies/steps.sh
device_begin
step counters 240 python3 -m pmppbench scan 67108864 --dtype f32 --kind inclusive --counters --out $STEPS_DIR/counters-f32.csv; pack
step counters-i32 200 python3 -m pmppbench scan 67108864 --dtype i32 --kind exclusive --counters --out $STEPS_DIR/counters-i32.csv; pack
device_end
