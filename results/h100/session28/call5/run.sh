#!/bin/bash
# Same-board A/B: session 27's tree (1d493d9, before the driver-loader mend) against this one, alternating.
set -u
source studies/steps.sh
device_begin
nvidia-smi --query-gpu=name,uuid --format=csv,noheader >"$STEPS_DIR/board.txt"
for i in 1 2; do
  (cd ab_old && export PYTHONPATH=$PWD:/tmp/cccl && step old$i 60 python3 -m pmppbench all --config ab.toml --out $STEPS_DIR/old$i.csv)
  step new$i 60 python3 -m pmppbench all --config ab_old/ab.toml --out $STEPS_DIR/new$i.csv
done
device_end
