#!/usr/bin/env bash
# One device call for studies/short_kernel_gap.py (docs/measurement.md, "Short kernels
# against nvbench"). Needs the cuda-bench wheel for the device's Python 3.12 in .whl/, fetched
# where pip works:
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#     --platform manylinux_2_27_x86_64 -d .whl cuda-bench==0.3.0
# (its one dependency, cuda-bindings 13, is on the H200 image). Usage: bash studies/short_kernel_gap_run.sh OUTDIR [ROUNDS] [CASES]
set -uo pipefail
out=${1:?usage: short_kernel_gap_run.sh OUTDIR [ROUNDS] [CASES]}
mkdir -p "$out"
if ls .whl/cuda_bench-*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/cudabench .whl/cuda_bench-*.whl
  export PYTHONPATH=/tmp/cudabench${PYTHONPATH:+:$PYTHONPATH}
fi
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > "$out/gpu.txt" 2>&1
PYTHONUNBUFFERED=1 python3 studies/short_kernel_gap.py "$out" "${2:-3}" ${3:+"$3"} 2>&1 | tee "$out/log.txt"
