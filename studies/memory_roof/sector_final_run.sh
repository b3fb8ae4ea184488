#!/usr/bin/env bash
# Session 11's second (last) device call (#36): every sector form and best bit-exact on odd shapes
# (sector_check.toml), the benchmark at sector_final.toml's shapes twice,
# memcheck and racecheck on small odd shapes (coarsened_sector_tma with A's last M % 4 rows past its
# map, coarsened_sector, best), the transpose GPU tests (the 64-bit path's shape among them), then
# --counters. Steps cut at DEADLINE s
# (default 150); logs in OUTDIR.
# Usage: bash studies/memory_roof/sector_final_run.sh OUTDIR
set -u
out=${1:?usage: sector_final_run.sh OUTDIR}
deadline=${DEADLINE:-150}
source "$(dirname "$0")/steps.sh"  # $py; begin; step SECONDS LOG command...; finish
begin
step 15 check.txt $py -m pmppbench all --config studies/memory_roof/sector_check.toml --check-only
step 20 time.txt $py -m pmppbench all --config studies/memory_roof/sector_final.toml --out "$out/time1.json"
step 20 time.txt $py -m pmppbench all --config studies/memory_roof/sector_final.toml --out "$out/time2.json"
for run in "memcheck 67 133" "racecheck 67 133" "memcheck 130 70"; do
  set -- $run
  step 12 sanitizer-$1.txt compute-sanitizer --tool $1 $py -m pmppbench transpose $2 $3 2 \
    --variants coarsened_sector_tma,coarsened_sector,best --check-only
done
step 70 gpu-tests.txt $py -m pytest -q -m gpu -n 4 -p no:cacheprovider tests/test_transpose.py
step 20 counters.txt $py -m pmppbench all --config studies/memory_roof/sector_final_counters.toml --counters \
  --out "$out/counters.json"
finish
