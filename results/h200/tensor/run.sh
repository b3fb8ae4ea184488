#!/usr/bin/env bash
# One H200 call for the tensor-core rungs (issue 33): the GPU tests of tests/test_gemm_tc.py,
# the 4096^3 and 8192^3 tables beside cuBLAS, compute-sanitizer memcheck and racecheck on
# partial tiles; with ALL=1 `all` with the default config (its wall time) and configs/gemm_tensor.toml;
# logs tarred under $OUT.
# Run from the checkout's root: bash results/h200/tensor/run.sh
set -u
export PYTHONUNBUFFERED=1
py=python3
dest=${OUT:-/tmp/out}/tensor
mkdir -p "$dest"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$dest/gpu.txt" 2>&1
cat COMMIT > "$dest/commit.txt" 2>/dev/null || echo "no COMMIT file (write git rev-parse HEAD there)" > "$dest/commit.txt"
$py -m pmppbench info > "$dest/info.txt" 2>&1
step() {  # step NAME SECONDS COMMAND...: its output in NAME.txt, its exit and wall time in summary.txt
  local name=$1 limit=$2; shift 2
  local start=${EPOCHREALTIME/./}
  timeout "$limit" "$@" > "$dest/$name.txt" 2>&1
  local rc=$? end=${EPOCHREALTIME/./}
  echo "$name: exit $rc, $(( (end - start) / 1000 )) ms" | tee -a "$dest/summary.txt"
  tail -n 4 "$dest/$name.txt"
}
steps=" ${STEPS:-tests gemm4096 gemm8192 sanitize} "  # which parts run (all: with ALL=1 or ALL=2)
has() { [[ $steps == *" $1 "* ]]; }
has tests && step gpu-tests "${TESTS_S:-110}" $py -m pytest -q -rA -m gpu -p no:cacheprovider tests/test_gemm_tc.py
has gemm4096 && step gemm4096 "${TABLE_S:-60}" $py -m pmppbench gemm 4096 4096 4096 --precision bf16,fp16,tf32 \
  --out "$dest/gemm4096.csv" --force
has gemm8192 && step gemm8192 "${TABLE_S:-40}" $py -m pmppbench gemm 8192 8192 8192 5 --precision bf16,fp16 \
  --out "$dest/gemm8192.csv" --force
if has sanitize && command -v compute-sanitizer > /dev/null; then
  for tool in memcheck racecheck; do
    step "sanitizer-$tool" "${SAN_S:-60}" compute-sanitizer --tool $tool $py -m pmppbench gemm 130 136 72 \
      --precision bf16,fp16,tf32 --check-only --quiet
    step "sanitizer-$tool-unaligned" "${SAN_S:-60}" compute-sanitizer --tool $tool $py -m pmppbench gemm 65 66 35 \
      --precision bf16,fp16 --check-only --quiet
  done
fi
if [ -n "${ALL:-}" ]; then  # `all` must stay <= 30 s on the H200 (ALL=2: once cold, once warm)
  step all-default 90 $py -m pmppbench all --quiet --out "$dest/default.csv" --force
  [ "$ALL" = 2 ] && step all-default-warm 90 $py -m pmppbench all --quiet --out "$dest/default-warm.csv" --force
  [ "$ALL" = 1 ] && step all-gemm-tensor 90 $py -m pmppbench all --config gemm_tensor --out "$dest/gemm_tensor.csv" \
    --force  # the issue's shapes (configs/gemm_tensor.toml)
fi
tar czf "$(dirname "$dest")/tensor.tgz" -C "$(dirname "$dest")" tensor
