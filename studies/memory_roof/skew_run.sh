#!/usr/bin/env bash
# Session 10's third device call (#36): coarsened_tma_skew's GPU test and its timing beside the
# other forms at pitch_skew.toml's shapes, twice. Usage: bash studies/memory_roof/skew_run.sh OUTDIR
set -u
out=${1:?usage: skew_run.sh OUTDIR}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
echo "build $(cat BUILD 2>/dev/null || echo unknown)" > "$out/steps.txt"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > "$out/nvidia-smi.txt" 2>&1
timeout 9 python3 -m pmppbench all --config studies/memory_roof/pitch_skew.toml --out "$out/skew1.json" > "$out/skew.txt" 2>&1
echo "skew1 rc=$?" >> "$out/steps.txt"
timeout 9 python3 -m pmppbench all --config studies/memory_roof/pitch_skew.toml --out "$out/skew2.json" >> "$out/skew.txt" 2>&1
echo "skew2 rc=$?" >> "$out/steps.txt"
timeout 11 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_transpose.py -k tma_form_is_bit_exact > "$out/gpu-tests.txt" 2>&1
echo "gpu tests rc=$?" >> "$out/steps.txt"
cat "$out/steps.txt"
