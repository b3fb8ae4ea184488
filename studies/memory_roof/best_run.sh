#!/usr/bin/env bash
# Session 10's second device call (#36): the GPU test of the TMA forms and best, best beside
# coarsened and memcpy at pitch_best.toml's shapes (twice), and the short-kernel study's two
# transpose cases with the protocol also timed inside nvbench's child. Steps cut at DEADLINE s.
# Usage: bash studies/memory_roof/best_run.sh OUTDIR
set -u
out=${1:?usage: best_run.sh OUTDIR}
deadline=${DEADLINE:-60}
source "$(dirname "$0")/steps.sh"  # $py; begin; step SECONDS LOG command...; finish
begin
step 12 best.txt $py -m pmppbench all --config studies/memory_roof/pitch_best.toml --out "$out/best1.json"
step 25 short-kernel-gap.txt bash studies/short_kernel_gap_run.sh "$out/short-kernel-gap" 2 1,2
step 12 best.txt $py -m pmppbench all --config studies/memory_roof/pitch_best.toml --out "$out/best2.json"
step 30 gpu-tests.txt $py -m pytest -q -m gpu -p no:cacheprovider tests/test_transpose.py -k "tma_form_is_bit_exact"
finish
