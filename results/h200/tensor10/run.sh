#!/usr/bin/env bash
# One H200 call for issue 33 in session 10 (mma_sync's TF32 kernel, mma_tf32_tc): the GPU tests
# of tests/test_gemm_tc.py (odd shapes on every rung, --like mma_sync in BF16 and TF32, cuBLAS),
# the three TF32 mutants (each in a process of its own, side by side), every rung at 4096^3 in
# TF32, BF16 and FP16 beside cuBLAS, a repeat of TF32 4096^3 in the other order, TF32 8192^3,
# racecheck and memcheck on small TF32 mma_sync runs (cp.async path, element-wise path),
# --counters at 2048^3 and the kernel's SASS instruction counts; logs tarred under $OUT after
# every step (a call stopped at its limit still brings back the rest).
# Run from the checkout's root: bash results/h200/tensor10/run.sh
set -u
export PYTHONUNBUFFERED=1
py=python3
dest=${OUT:-/tmp/out}/tensor10
mkdir -p "$dest"
begin=$SECONDS
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv > "$dest/gpu.txt" 2>&1
cat COMMIT > "$dest/commit.txt" 2>/dev/null || echo "no COMMIT file (write git rev-parse HEAD there)" > "$dest/commit.txt"
pack() { tar czf "$(dirname "$dest")/tensor10.tgz" -C "$(dirname "$dest")" tensor10; }
step() {  # step NAME SECONDS COMMAND...: its output in NAME.txt, its exit and wall time in summary.txt
  local name=$1 limit=$2; shift 2
  local start=${EPOCHREALTIME/./}
  timeout "$limit" "$@" > "$dest/$name.txt" 2>&1
  local rc=$? end=${EPOCHREALTIME/./}
  echo "$name: exit $rc, $(( (end - start) / 1000 )) ms, at $(( SECONDS - begin )) s" | tee -a "$dest/summary.txt"
  tail -n 4 "$dest/$name.txt"
  pack
}
mutants="tf32_dropped_k_tile tf32_transposed_fragment tf32_b_k_half"
start=${EPOCHREALTIME/./}
for m in $mutants; do  # beside the tests below: the mutants' own compiles and launches, in processes of their own
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
step gpu-tests 90 $py -m pytest -q -rA -m gpu -p no:cacheprovider --durations=8 -k "not mutants_fail" \
  tests/test_gemm_tc.py
step gemm4096 45 $py -m pmppbench gemm 4096 4096 4096 --precision tf32,bf16,fp16 --out "$dest/gemm4096.csv" --force
step gemm4096-tf32-again 20 $py -m pmppbench gemm 4096 4096 4096 --precision tf32 --variants cublas,mma_sync
step gemm8192-tf32 45 $py -m pmppbench gemm 8192 8192 8192 --precision tf32 \
  --variants mma_sync,wgmma,wgmma_ws,wgmma_persist,cublas --out "$dest/gemm8192.csv" --force
if command -v compute-sanitizer > /dev/null; then
  for tool in racecheck memcheck; do  # 130 x 136 x 72: cp.async's zero fill, partial tiles; 65 x 66 x 35: element-wise
    step sanitizer-$tool 40 bash -c "compute-sanitizer --tool $tool $py -m pmppbench gemm 130 136 72 --precision tf32 \
      --variants mma_sync --check-only --quiet; compute-sanitizer --tool $tool $py -m pmppbench gemm 65 66 35 \
      --precision tf32 --variants mma_sync --check-only --quiet"
  done
fi
step counters 40 $py -m pmppbench gemm 2048 2048 2048 --precision tf32,bf16 --variants mma_sync,wgmma_ws,cublas \
  --counters --out "$dest/counters.csv" --force
if command -v cuobjdump > /dev/null; then  # mma_sync TF32's instructions: HMMA, LDSM (ldmatrix), LDS.128, STG.E.128
  step sass 30 $py -c "
import subprocess, tempfile
from pmppbench.compile import compile_unit, device_target
names = ['mma_tf32_tc<true>', 'mma_tf32_tc<false>', 'mma_tc<1, true, 128, 3>']
unit = compile_unit('gemm', names, device_target('sm_90'))
with tempfile.NamedTemporaryFile(suffix='.cubin') as f:
    f.write(unit.cubin); f.flush()
    sass = subprocess.run(['cuobjdump', '-sass', f.name], capture_output=True, text=True).stdout
name = None; counts = {}
for line in sass.splitlines():
    if 'Function :' in line:
        name = line.split('Function :')[1].strip(); counts[name] = {}
    elif name:
        for op in ('HMMA.1688.F32.TF32', 'HMMA.16816.F32.BF16', 'LDSM.16.M88.4', 'LDS.128', 'LDS ', 'LDGSTS', 'STG.E.128', 'STG.E ', 'BAR.SYNC'):
            if op in line: counts[name][op] = counts[name].get(op, 0) + 1
for n, c in counts.items(): print(n, c)
for n in names: print(n, unit.ptxas[n])
"
fi
echo "total: $(( SECONDS - begin )) s" | tee -a "$dest/summary.txt"
pack
