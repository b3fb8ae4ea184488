#!/usr/bin/env bash
# Session 11's first device call (#36, rows not on a float4): the sector forms bit-exact on odd
# shapes (sector_check.toml, --check-only), the benchmark at sector11.toml's shapes twice,
# --counters at sector_counters.toml's, the 64-bit path's shape, then memcheck and racecheck on a
# small odd shape. Every step is cut at a shared deadline (DEADLINE seconds from the start,
# default 140); logs in OUTDIR.
# Usage: bash studies/memory_roof/sector_run.sh OUTDIR
set -u
out=${1:?usage: sector_run.sh OUTDIR}
deadline=${DEADLINE:-140}
source "$(dirname "$0")/steps.sh"  # $py; begin; step SECONDS LOG command...; finish
forms=coarsened_sector,coarsened_sector_vec,coarsened_sector_tall,coarsened_sector_tall_vec
begin
step 20 check.txt $py -m pmppbench all --config studies/memory_roof/sector_check.toml --check-only
step 25 time.txt $py -m pmppbench all --config studies/memory_roof/sector11.toml --out "$out/time1.json"
step 25 time.txt $py -m pmppbench all --config studies/memory_roof/sector11.toml --out "$out/time2.json"
step 45 counters.txt $py -m pmppbench all --config studies/memory_roof/sector_counters.toml --counters \
  --out "$out/counters.json"
step 25 check-large.txt $py -m pmppbench transpose 32771 65537 --variants coarsened_sector,coarsened_sector_vec \
  --check-only
for tool in memcheck racecheck; do
  step 15 sanitizer-$tool.txt compute-sanitizer --tool $tool $py -m pmppbench transpose 67 133 2 --variants $forms \
    --check-only
done
finish
