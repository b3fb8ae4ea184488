#!/usr/bin/env bash
# The issue-22 run on a GPU machine (results/h200/memory-roof/, docs/memory_roof.md): the four
# benchmark commands, each with its `memcpy` roof row; the GPU tests of transpose and stencil;
# compute-sanitizer memcheck and racecheck over the sanitize config; then, with BEFORE set to a
# folder holding an earlier build's transpose.cu and stencil.cu (fb7189f, before round 2, or
# 7c56340, before round 1), the before/after table of studies/memory_roof_sweep.py --final.
# Each step writes one file under ${OUT:-out}.
#   mkdir before; for k in transpose stencil; do git show fb7189f:kernels_cu/$k.cu > before/$k.cu; done
#   BEFORE=before bash studies/memory_roof_run.sh
set -uo pipefail
out=${OUT:-out}
mkdir -p "$out"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
py=${PYTHON:-python3}

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv \
  > "$out/nvidia-smi.txt" 2>&1

for cmd in "transpose 8192 8192 20" "transpose 4096 4096 20" "stencil 16777216 100 --radius 2,32" \
           "stencil 4194304 100 --radius 2,32"; do
  echo "== pmppbench $cmd" >> "$out/commands.txt"
  # shellcheck disable=SC2086
  timeout 90 $py -m pmppbench $cmd >> "$out/commands.txt" 2>&1
  echo "exit $?" >> "$out/commands.txt"
done

timeout 150 $py -m pytest -q -m gpu tests/test_transpose.py tests/test_stencil.py > "$out/gpu-tests.txt" 2>&1
echo "exit $?" >> "$out/gpu-tests.txt"

for tool in memcheck racecheck; do
  start=$EPOCHREALTIME
  timeout 90 compute-sanitizer --tool "$tool" $py -m pmppbench all --config sanitize --check-only \
    --only transpose,stencil --quiet > "$out/sanitizer-$tool.txt" 2>&1
  echo "exit $?, $(awk "BEGIN{printf \"%.0f\", $EPOCHREALTIME - $start}") s wall" >> "$out/sanitizer-$tool.txt"
done

if [ -n "${BEFORE:-}" ]; then
  timeout 90 $py studies/memory_roof_sweep.py --before "$BEFORE" --final --log "$out/final.log" \
    > "$out/final.txt" 2>&1
  echo "exit $?" >> "$out/final.txt"
fi

# The summary: every coarsened and memcpy row with its % of memcpy, the test and sanitizer verdicts.
grep -E "^== |^(│|\|) *(coarsened|memcpy) " "$out/commands.txt" | sed 's/ \{2,\}/ /g'
tail -n 2 "$out/gpu-tests.txt"
for tool in memcheck racecheck; do echo "$tool: $(grep -E 'SUMMARY|rows' "$out/sanitizer-$tool.txt" | tr '\n' ' ') $(tail -n 1 "$out/sanitizer-$tool.txt")"; done
[ -f "$out/final.txt" ] && sed -n '/^# shape/,$p' "$out/final.txt"
