#!/usr/bin/env bash
# One H200 call for the wgmma rung (issue 33, session 8): where its output comes from on one
# tile (diag.py), the GPU tests of tests/test_gemm_tc.py, the 4096^3 BF16 / FP16 and 8192^3 BF16
# tables beside cuBLAS, compute-sanitizer memcheck (and racecheck on the path without TMA) on
# partial tiles, and the SASS's HGMMA count; logs tarred under $OUT.
# Run from the checkout's root: bash results/h200/tensor8/run.sh
set -u
export PYTHONUNBUFFERED=1
py=python3
dest=${OUT:-/tmp/out}/tensor8
mkdir -p "$dest"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$dest/gpu.txt" 2>&1
cat COMMIT > "$dest/commit.txt" 2>/dev/null || echo "no COMMIT file (write git rev-parse HEAD there)" > "$dest/commit.txt"
step() {  # step NAME SECONDS COMMAND...: its output in NAME.txt, its exit and wall time in summary.txt
  local name=$1 limit=$2; shift 2
  local start=${EPOCHREALTIME/./}
  timeout "$limit" "$@" > "$dest/$name.txt" 2>&1
  local rc=$? end=${EPOCHREALTIME/./}
  echo "$name: exit $rc, $(( (end - start) / 1000 )) ms" | tee -a "$dest/summary.txt"
  tail -n 6 "$dest/$name.txt"
  return $rc
}
steps=" ${STEPS:-diag tests gemm4096 gemm8192 sanitize sass} "
has() { [[ $steps == *" $1 "* ]]; }
hung=0
if has diag; then step diag "${DIAG_S:-40}" $py results/h200/tensor8/diag.py; [ $? -eq 124 ] && hung=1; fi
if [ $hung = 0 ]; then
  has tests && step gpu-tests "${TESTS_S:-90}" $py -m pytest -q -rA -m gpu -p no:cacheprovider --durations=8 \
    tests/test_gemm_tc.py
  has gemm4096 && step gemm4096 "${TABLE_S:-40}" $py -m pmppbench gemm 4096 4096 4096 --precision bf16,fp16 \
    --out "$dest/gemm4096.csv" --force
  has gemm8192 && step gemm8192 "${TABLE_S:-40}" $py -m pmppbench gemm 8192 8192 8192 --precision bf16 \
    --out "$dest/gemm8192.csv" --force
  if has sanitize && command -v compute-sanitizer > /dev/null; then
    step sanitizer-memcheck "${SAN_S:-25}" compute-sanitizer --tool memcheck $py -m pmppbench gemm 130 264 136 \
      --precision bf16 --variants wgmma --check-only --quiet
    step sanitizer-memcheck-unaligned "${SAN_S:-25}" compute-sanitizer --tool memcheck $py -m pmppbench gemm 65 66 35 \
      --precision fp16 --variants wgmma --check-only --quiet
    step sanitizer-racecheck-unaligned "${SAN_S:-25}" compute-sanitizer --tool racecheck $py -m pmppbench gemm 65 66 35 \
      --precision bf16 --variants wgmma --check-only --quiet
  fi
fi
if has sass && command -v cuobjdump > /dev/null; then  # the cached cubins that hold wgmma_tc: HGMMA, not HMMA
  for f in "${PMPPBENCH_CACHE_DIR:-$HOME/.cache/pmppbench}"/kernels/*.cubin; do
    if cuobjdump -sass "$f" 2> /dev/null | grep -q wgmma_tc; then
      echo "$f: $(cuobjdump -sass "$f" | grep -c HGMMA) HGMMA, $(cuobjdump -sass "$f" | grep -c UTMALDG) UTMALDG, $(cuobjdump -sass "$f" | grep -c ' HMMA') HMMA"
    fi
  done > "$dest/sass.txt" 2>&1
  head -n 4 "$dest/sass.txt"
fi
tar czf "$(dirname "$dest")/tensor8.tgz" -C "$(dirname "$dest")" tensor8
