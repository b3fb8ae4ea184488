#!/usr/bin/env bash
# Session 10's one device call for #36 (docs/memory_roof.md "Session 10", docs/measurement.md
# "Short kernels against nvbench"): the transpose's GPU tests of the TMA forms, the benchmark at
# studies/memory_roof/pitch10.toml's shapes, the short-kernel study, the benchmark again (a
# repeat), then --counters at pitch_counters.toml's shapes. Every step is cut at a shared deadline
# (DEADLINE seconds from the start, default 175) so the call ends inside its limit; logs in OUTDIR.
# Usage: bash studies/memory_roof/pitch_run.sh OUTDIR [STUDY_ROUNDS]
set -u
out=${1:?usage: pitch_run.sh OUTDIR [STUDY_ROUNDS]}
deadline=${DEADLINE:-175}
source "$(dirname "$0")/steps.sh"  # $py; begin; step SECONDS LOG command...; finish
begin
step 40 gpu-tests.txt $py -m pytest -q -m gpu -p no:cacheprovider tests/test_transpose.py -k "tma or 64_bit"
step 45 transpose.txt $py -m pmppbench all --config studies/memory_roof/pitch10.toml --out "$out/transpose1.json"
step 85 short-kernel-gap.txt bash studies/short_kernel_gap_run.sh "$out/short-kernel-gap" "${2:-3}"
step 45 transpose-repeat.txt $py -m pmppbench all --config studies/memory_roof/pitch10.toml --out "$out/transpose2.json"
step 60 counters.txt $py -m pmppbench all --config studies/memory_roof/pitch_counters.toml --counters \
  --out "$out/counters.json"
finish
