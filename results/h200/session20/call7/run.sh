#!/bin/bash
# session 20, call 7: the TMA sector forms' maps with each L2 promotion (none, 64, 128, 256 bytes: the
# study knob PMPP_STUDY_L2_PROMOTION of this call's tree), promotion20.toml once each, 256 twice.
set -u
source studies/steps.sh
device_begin
i=0
for p in 3 0 1 2 3; do
  i=$((i + 1))
  export PMPP_STUDY_L2_PROMOTION=$p
  step promo$i-$p 120 python3 -m pmppbench all --config results/h200/session20/call7/promotion20.toml --out $STEPS_DIR/promo$i-$p.csv; pack
done
device_end
