#!/usr/bin/env bash
# Issue 21 on a GPU machine in one call. Steps (STEPS, default all, in this order):
#   profile   Nsight Compute on tuned, pipelined and cuBLAS at 4096^3, one launch each (not in the default)
#   sweep     studies/gemm_best_sweep.py: every candidate configuration beside tuned, best and
#             cuBLAS at the issue's shapes (the data `best`'s rule is read from)
#   tests     the GEMM GPU tests
#   memcheck  compute-sanitizer memcheck over every streamk schedule on the edge shapes
#   sizes     the size table: pmppbench all --config gemm_sizes (best beside the rungs and cuBLAS)
# Each step has its own time limit (SWEEP_S, TESTS_S, MEMCHECK_S, SIZES_S seconds), so one that
# hangs cannot take the others' time; logs go to $OUT (there as one tarball as well, since a
# device call brings back at most 8 files), a summary is printed last.
#   STEPS="sizes tests" bash studies/gemm_best_run.sh
set -uo pipefail
dest=${OUT:-out}
mkdir -p "$dest"
out=$(mktemp -d)
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
py=${PYTHON:-python3}
steps=" ${STEPS:-sweep tests memcheck sizes} "
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee "$out/nvidia-smi.txt"
t0=$EPOCHREALTIME
stamp() { echo "[$(awk "BEGIN{printf \"%.0f\", $EPOCHREALTIME - $t0}") s] $*"; }
if [[ $steps == *" profile "* ]]; then
  # Nsight Compute, one launch each at 4096^3 (studies/gemm_best_profile.py), clocks as found
  stamp profile
  timeout "${PROFILE_S:-150}" ncu --profile-from-start off --clock-control none --import-source no \
      --section LaunchStats --section Occupancy --section SpeedOfLight --section WarpStateStats \
      --section SchedulerStats --section ComputeWorkloadAnalysis --section InstructionStats \
      --metrics "sm__cycles_elapsed.avg.per_second,smsp__inst_executed.sum,smsp__inst_executed_pipe_fma.sum,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio" \
      $py studies/gemm_best_profile.py ${PROFILE_SHAPE:-4096 4096 4096} \
      ${PROFILE_VARIANTS:-tuned pl_128x256x8_w64x64_i4_t4x4 cublas} > "$out/gemm-ncu.txt" 2>&1
  echo "exit $?" >> "$out/gemm-ncu.txt"
fi
if [[ $steps == *" sweep "* ]]; then
  stamp sweep
  timeout "${SWEEP_S:-200}" $py studies/gemm_best_sweep.py --out "$out/gemm_best_sweep.csv" \
      --budget-s "$(( ${SWEEP_S:-200} * 3 / 4 ))" ${SWEEP_ARGS:-} 2>&1 | tee "$out/gemm_best_sweep.log"
fi
if [[ $steps == *" tests "* ]]; then
  stamp tests
  timeout "${TESTS_S:-150}" $py -m pytest -q -m gpu tests/test_gemm.py 2>&1 | tee "$out/gemm-gpu-tests.txt"
fi
if [[ $steps == *" memcheck "* ]]; then
  stamp memcheck
  timeout "${MEMCHECK_S:-90}" compute-sanitizer --tool memcheck $py studies/gemm_best_sweep.py --edges-only \
      > "$out/gemm-best-memcheck.txt" 2>&1
  echo "exit $?" >> "$out/gemm-best-memcheck.txt"
fi
if [[ $steps == *" sizes "* ]]; then
  stamp sizes
  timeout "${SIZES_S:-150}" $py -m pmppbench all --config gemm_sizes --out "$out/gemm_sizes.csv" 2>&1 \
      | tee "$out/gemm_sizes.txt"
fi
stamp done
tar czf "$dest/gemm-best-run.tar.gz" -C "$out" .
ls "$out" | head -7 | while read -r f; do cp "$out/$f" "$dest/"; done
echo "== summary"
[[ -f $out/gemm-ncu.txt ]] && grep -E "^  [a-z_0-9]+.*\(|Registers Per|Grid Size|Block Size|Shared Memory Config|SM Frequency|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|stalled|Stall|^exit|Duration|Compute \(SM\) Throughput" "$out/gemm-ncu.txt" | cut -c1-150 | head -90
[[ -f $out/gemm_best_sweep.log ]] && grep -E "^== |edge checks|budget" "$out/gemm_best_sweep.log" | cut -c1-230
[[ -f $out/gemm-gpu-tests.txt ]] && tail -3 "$out/gemm-gpu-tests.txt"
[[ -f $out/gemm-best-memcheck.txt ]] && grep -E "ERROR SUMMARY|edge checks|^exit" "$out/gemm-best-memcheck.txt"
[[ -f $out/gemm_sizes.txt ]] && grep -E "best|cublas|tuned" "$out/gemm_sizes.txt" | grep -v "^┃" | cut -c1-140 | tail -40
true
