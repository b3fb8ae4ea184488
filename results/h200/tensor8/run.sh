#!/usr/bin/env bash
# One H200 call for the wgmma rungs (issue 33, session 8): the GPU tests of tests/test_gemm_tc.py
# (the mutants each in a process of its own, side by side: a mutant that faults the context
# must not take the other tests with it), the 4096^3 and 8192^3 BF16 / FP16 tables beside
# cuBLAS, compute-sanitizer memcheck on both load paths and racecheck on the one without TMA,
# `all` with the default config (its wall time), and the SASS's HGMMA / UTMALDG counts; logs
# tarred under $OUT after every step (a call stopped at its limit still brings back the rest).
# Run from the checkout's root: bash results/h200/tensor8/run.sh
set -u
export PYTHONUNBUFFERED=1
py=python3
dest=${OUT:-/tmp/out}/tensor8
mkdir -p "$dest"
begin=$SECONDS
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv > "$dest/gpu.txt" 2>&1
cat COMMIT > "$dest/commit.txt" 2>/dev/null || echo "no COMMIT file (write git rev-parse HEAD there)" > "$dest/commit.txt"
pack() { tar czf "$(dirname "$dest")/tensor8.tgz" -C "$(dirname "$dest")" tensor8; }
step() {  # step NAME SECONDS COMMAND...: its output in NAME.txt, its exit and wall time in summary.txt
  local name=$1 limit=$2; shift 2
  local start=${EPOCHREALTIME/./}
  timeout "$limit" "$@" > "$dest/$name.txt" 2>&1
  local rc=$? end=${EPOCHREALTIME/./}
  echo "$name: exit $rc, $(( (end - start) / 1000 )) ms" | tee -a "$dest/summary.txt"
  tail -n 5 "$dest/$name.txt"
  pack
}
step gpu-tests 90 $py -m pytest -q -rA -m gpu -p no:cacheprovider --durations=6 -k "not mutants_fail" \
  tests/test_gemm_tc.py
mutants=$($py -c "import sys; sys.path.insert(0, 'tests'); import test_gemm_tc as t; print(' '.join(t.MUTATIONS))")
start=${EPOCHREALTIME/./}
for m in $mutants; do
  timeout 60 $py -m pytest -q -rA -m gpu -p no:cacheprovider "tests/test_gemm_tc.py::test_mutants_fail[$m]" \
    > "$dest/mutant-$m.log" 2>&1 &
done
wait
for m in $mutants; do echo "== $m"; grep -E "^(PASSED|FAILED|ERROR)|^E .*(assert|Error)" "$dest/mutant-$m.log" | head -4; done \
  > "$dest/gpu-mutants.txt"
rm -f "$dest"/mutant-*.log
echo "gpu-mutants: $(grep -c ^PASSED "$dest/gpu-mutants.txt") of $(echo $mutants | wc -w) PASSED, $(( (${EPOCHREALTIME/./} - start) / 1000 )) ms" \
  | tee -a "$dest/summary.txt"
pack
step gemm4096 40 $py -m pmppbench gemm 4096 4096 4096 --precision bf16,fp16 --out "$dest/gemm4096.csv" --force
step gemm8192 50 $py -m pmppbench gemm 8192 8192 8192 --precision bf16,fp16 --out "$dest/gemm8192.csv" --force
if command -v compute-sanitizer > /dev/null; then
  step sanitizer-memcheck 25 compute-sanitizer --tool memcheck $py -m pmppbench gemm 130 264 136 \
    --precision bf16 --variants wgmma,wgmma_ws --check-only --quiet
  step sanitizer-memcheck-unaligned 25 compute-sanitizer --tool memcheck $py -m pmppbench gemm 65 66 35 \
    --precision fp16 --variants wgmma,wgmma_ws --check-only --quiet
  step sanitizer-racecheck-unaligned 25 compute-sanitizer --tool racecheck $py -m pmppbench gemm 65 66 35 \
    --precision bf16 --variants wgmma,wgmma_ws --check-only --quiet
fi
if [ $(( SECONDS - begin )) -lt 130 ]; then  # `all` must stay <= 30 s on the H200
  step all-default 60 $py -m pmppbench all --quiet --out "$dest/default.csv" --force
fi
if command -v cuobjdump > /dev/null; then  # each cached kernel of the wgmma rungs: HGMMA, not HMMA
  for f in "${PMPPBENCH_CACHE_DIR:-$HOME/.cache/pmppbench}"/kernels/*.cubin; do
    cuobjdump -sass "$f" 2> /dev/null | awk -v f="$(basename "$f")" '
      /Function :/ { name = $3 } /HGMMA/ { h[name]++ } /UTMALDG/ { t[name]++ } / HMMA/ { m[name]++ }
      END { for (n in h) printf "%s %s: %d HGMMA, %d UTMALDG, %d HMMA\n", f, n, h[n], t[n], m[n] }'
  done > "$dest/sass.txt" 2>&1
  head -n 8 "$dest/sass.txt"
fi
pack
