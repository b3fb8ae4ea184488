#!/usr/bin/env bash
# One H200 call for issue 33 in session 9 (TF32 on the wgmma rungs, the issue's other shapes,
# the tensor-pipe counter, racecheck on the TMA path): the GPU tests of tests/test_gemm_tc.py
# (every mutant in a process of its own, side by side), every rung at 4096^3 in TF32, BF16 and
# FP16 beside cuBLAS, the wgmma rungs at shapes.toml's shapes, --counters at 2048^3, the
# sanitizers on the TMA path, ncu's tensor-pipe metric names; logs tarred under $OUT after
# every step (a call stopped at its limit still brings back the rest).
# `all` with the default config last, when time is left. run1 and run2 are its two calls' logs.
# Run from the checkout's root: bash results/h200/tensor9/run.sh
set -u
export PYTHONUNBUFFERED=1
py=python3
here=results/h200/tensor9
dest=${OUT:-/tmp/out}/tensor9
mkdir -p "$dest"
begin=$SECONDS
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv > "$dest/gpu.txt" 2>&1
cat COMMIT > "$dest/commit.txt" 2>/dev/null || echo "no COMMIT file (write git rev-parse HEAD there)" > "$dest/commit.txt"
pack() { tar czf "$(dirname "$dest")/tensor9.tgz" -C "$(dirname "$dest")" tensor9; }
step() {  # step NAME SECONDS COMMAND...: its output in NAME.txt, its exit and wall time in summary.txt
  local name=$1 limit=$2; shift 2
  local start=${EPOCHREALTIME/./}
  timeout "$limit" "$@" > "$dest/$name.txt" 2>&1
  local rc=$? end=${EPOCHREALTIME/./}
  echo "$name: exit $rc, $(( (end - start) / 1000 )) ms, at $(( SECONDS - begin )) s" | tee -a "$dest/summary.txt"
  tail -n 4 "$dest/$name.txt"
  pack
}
ncu=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2> /dev/null | head -1)
if [ -n "$ncu" ]; then
  step ncu-metrics 30 bash -c "'$ncu' --query-metrics 2>&1 | grep -iE 'tensor|gmma|hmma' | head -40"
fi
step gpu-tests 80 $py -m pytest -q -rA -m gpu -p no:cacheprovider --durations=6 -k "not mutants_fail" \
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
step gemm4096 40 $py -m pmppbench gemm 4096 4096 4096 --precision tf32,bf16,fp16 --out "$dest/gemm4096.csv" --force
step shapes 80 $py -m pmppbench all --config "$here/shapes.toml" --out "$dest/shapes.csv" --force
if command -v compute-sanitizer > /dev/null; then
  step sanitizer-racecheck-tma 25 compute-sanitizer --tool racecheck $py -m pmppbench gemm 130 264 136 \
    --precision bf16,tf32 --variants wgmma,wgmma_ws,wgmma_persist --check-only --quiet
  step sanitizer-memcheck-tma 25 compute-sanitizer --tool memcheck $py -m pmppbench gemm 130 264 136 \
    --precision tf32,fp16 --variants wgmma,wgmma_ws,wgmma_persist --check-only --quiet
  step sanitizer-memcheck-unaligned 20 compute-sanitizer --tool memcheck $py -m pmppbench gemm 65 66 35 \
    --precision tf32 --variants wgmma,wgmma_ws,wgmma_persist --check-only --quiet
fi
step counters 60 $py -m pmppbench gemm 2048 2048 2048 --precision tf32,bf16 --counters --out "$dest/counters.csv" --force
if [ $(( SECONDS - begin )) -lt 105 ]; then  # `all` must stay <= 30 s on the H200 (warm)
  step all-default 50 $py -m pmppbench all --quiet --out "$dest/default.csv" --force
fi
echo "total: $(( SECONDS - begin )) s" | tee -a "$dest/summary.txt"
pack
