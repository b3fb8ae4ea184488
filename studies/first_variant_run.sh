#!/usr/bin/env bash
# The first-variant study on a GPU (docs/first_variant.md): OLD is a checkout without the
# pre-roll, NEW one with it (default: this one). Logs under OUTDIR.
#   bash studies/first_variant_run.sh OUTDIR [OLD_CHECKOUT]
set -uo pipefail
out=${1:?OUTDIR}; old=${2:-}; new=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
export PYTHONUNBUFFERED=1
nvidia-smi -q -d CLOCK,PERFORMANCE,POWER > "$out/nvidia-smi.txt" 2>&1
cli() {  # label checkout args...
  local label=$1 dir=$2; shift 2
  echo "== $label: pmppbench $*" >> "$out/cli.txt"
  (cd "$dir" && python3 -m pmppbench "$@" 2>&1) | grep -E "^│|pre-roll|warmup" >> "$out/cli.txt"
}
for i in ${ROUNDS:-1 2}; do
  for side in old new; do
    dir=$new; [ "$side" = old ] && dir=$old
    [ -z "$dir" ] && continue
    cli "$side $i" "$dir" transpose 8192 8192 20 --variants coarsened
    cli "$side $i" "$dir" transpose 8192 8192 20 --variants memcpy,coarsened
    cli "$side $i" "$dir" transpose 8192 8192 20 --variants coarsened,padded33,shared32,naive,copy,memcpy
    cli "$side $i" "$dir" transpose 8192 8192 20
    cli "$side $i" "$dir" vecadd --variants float4
    cli "$side $i" "$dir" vecadd --variants scalar,float4
  done
done
for set in ${SETS:-warm copies l2}; do
  (cd "$new" && PYTHONPATH=. python3 studies/first_variant_study.py --set "$set" --repeats 6) > "$out/study-$set.txt" 2>&1
done
(cd "$new" && python3 -m pytest -q -m gpu tests/test_first_variant.py tests/test_protocol.py -rs 2>&1) > "$out/gpu-tests.txt"
tail -3 "$out/gpu-tests.txt"
