#!/usr/bin/env bash
# Run on a GPU machine: GPU tests plus the benchmark commands given as arguments, each
# command's output appended to ${OUT:-out}/commands.txt. Used for the reference runs.
#   bash scripts/gpu_check.sh "vecadd 268435456 100" "transpose 8192 8192 20"
set -uo pipefail
out=${OUT:-out}
mkdir -p "$out"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
py=${PYTHON:-python3}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee "$out/nvidia-smi.txt"
$py -m pmppbench info 2>&1 | tee "$out/info.txt"
if [ -z "${SKIP_TESTS:-}" ]; then
  $py -m pytest -q -m gpu ${TESTS:-tests} 2>&1 | tee "$out/gpu-tests.txt"
fi
for cmd in "$@"; do
  echo "== pmppbench $cmd" | tee -a "$out/commands.txt"
  start=$EPOCHREALTIME
  # shellcheck disable=SC2086
  $py -m pmppbench $cmd 2>&1 | tee -a "$out/commands.txt"
  rc=${PIPESTATUS[0]}
  echo "exit $rc, $(awk "BEGIN{printf \"%.1f\", $EPOCHREALTIME - $start}") s wall" | tee -a "$out/commands.txt"
done
