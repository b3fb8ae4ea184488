#!/usr/bin/env bash
# Issue 21 on a GPU machine in one call: the sweep `best`'s rule is read from, the size
# table (best beside the earlier rungs and cuBLAS), and the GEMM GPU tests. Each step has
# its own time limit, so one that hangs cannot take the others' time; logs go to $OUT.
#   bash scripts/gemm_best_run.sh            (SWEEP_S, SIZES_S, TESTS_S: seconds per step)
set -uo pipefail
out=${OUT:-out}
mkdir -p "$out"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
py=${PYTHON:-python3}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee "$out/nvidia-smi.txt"
timeout "${SWEEP_S:-240}" $py scripts/gemm_best_sweep.py --out "$out/gemm_best_sweep.csv" \
    --budget-s "$(( ${SWEEP_S:-240} * 3 / 4 ))" ${SWEEP_ARGS:-} 2>&1 | tee "$out/gemm_best_sweep.log"
timeout "${SIZES_S:-150}" $py -m pmppbench all --config gemm_sizes --out "$out/gemm_sizes.csv" 2>&1 \
    | tee "$out/gemm_sizes.txt"
timeout "${TESTS_S:-200}" $py -m pytest -q -m gpu tests/test_gemm.py 2>&1 | tee "$out/gemm-gpu-tests.txt"
echo "== summary"
grep -A 8 "^== " "$out/gemm_best_sweep.log" | tail -80
tail -3 "$out/gemm-gpu-tests.txt"
