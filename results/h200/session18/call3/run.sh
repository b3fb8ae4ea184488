#!/bin/bash
# session 18, call 3: `all` twice in one fresh machine (call 2's 33.9 s was the first `all` there, with
# 13.5 s of "other"): the first run's wall time against the second's, CUB's builds and the kernel cache
# warm. Logs tarred after every step.
set -u
source studies/steps.sh
device_begin
step all1 90 python3 -m pmppbench all --out $STEPS_DIR/all1.csv; pack
step all2 90 python3 -m pmppbench all --out $STEPS_DIR/all2.csv; pack
device_end
