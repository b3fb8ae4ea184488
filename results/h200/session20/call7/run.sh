#!/bin/bash
# session 20, call 7: the TMA sector forms' maps with each L2 promotion (none, 64, 128, 256 bytes: the
# study knob PMPP_STUDY_L2_PROMOTION of this call's tree), promotion20.toml once each, 256 twice.
set -u
source studies/steps.sh
device_begin
for p in 3 0 1 2 3; do
  PMPP_STUDY_L2_PROMOTION=$p step promo-$p-$SECONDS 120 python3 -m pmppbench all --config results/h200/session20/call7/promotion20.toml --out $STEPS_DIR/promo-$p-$SECONDS.csv; pack
done
device_end
