#!/usr/bin/env bash
# The reference run behind README's numbers, on a GPU machine:
#   bash scripts/reference_run.sh results/h200            # both phases
#   PHASE=run bash scripts/reference_run.sh results/h200    # the measurements (a few minutes)
#   PHASE=tests bash scripts/reference_run.sh results/h200  # GPU tests and compute-sanitizer
#   PHASE=sanitize bash scripts/reference_run.sh results/h200  # compute-sanitizer alone
# "run": measured ceilings, the default run cold and warm with wall times (CSV and the HTML
# page), the comparison with BASE (a result file, if given), plots, resources and single
# commands. "tests": the GPU tests and compute-sanitizer (memcheck, racecheck) over the
# sanitize config (SKIP_SANITIZER=1 leaves them out, SANITIZE_ONLY=w1,w2 narrows them).
# COMMANDS="a; b" replaces the single commands; SKIP_WARM=1 leaves the warm `all` out;
# TEST_LIMIT=S stops the GPU tests after S seconds (what ran is kept); TEST_WORKERS=N runs the
# tests that time nothing in N processes (pytest-xdist); COMMIT=rev is written
# to build.txt (the device's copy of the tree has no git history).
set -uo pipefail
dest=${1:-out}
phase=${PHASE:-all}
mkdir -p "$dest/commands"
[ -n "${COMMIT:-}" ] && echo "build $COMMIT" > "$dest/build.txt"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
py=${PYTHON:-python3}
stamp() { awk "BEGIN{printf \"%.1f\", $EPOCHREALTIME - $1}"; }
if [ "$phase" = all ] || [ "$phase" = run ]; then
  # Nothing else on the GPU while the ceilings and `all` are measured: a GPU test's process
  # outlived its pytest once and held the copy ceiling 18% low on an H200.
  for _ in $(seq 120); do
    [ -z "$(nvidia-smi --query-compute-apps=pid --format=csv,noheader 2>/dev/null)" ] && break
    sleep 1
  done
  nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv > "$dest/other-gpu-processes.txt" 2>&1
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > "$dest/nvidia-smi.txt"
  $py -m pmppbench info --measure > "$dest/info.txt" 2>&1
  kernel_cache="${PMPPBENCH_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/pmppbench}/kernels"
  rm -rf "$kernel_cache" "$(dirname "$kernel_cache")/cub"  # and the CUB objects cuda.compute built
  # Cold as on a machine's first run: CuPy's own kernel cache (the kernels of its array
  # operations, compiled at their first use) starts empty too.
  cupy_cold=$(mktemp -d)
  start=$EPOCHREALTIME
  CUPY_CACHE_DIR=$cupy_cold $py -m pmppbench all --out "$dest/default.csv" --out "$dest/default.html" --force > "$dest/all.txt" 2>&1
  echo "exit $?; cold compile cache: $(stamp "$start") s wall" | tee -a "$dest/all.txt"
  if [ -z "${SKIP_WARM:-}" ]; then
    start=$EPOCHREALTIME
    CUPY_CACHE_DIR=$cupy_cold $py -m pmppbench all --out "$dest/warm.csv" --force --quiet > "$dest/all-warm.txt" 2>&1
    echo "exit $?; warm compile cache: $(stamp "$start") s wall" | tee -a "$dest/all-warm.txt" "$dest/all.txt"
    rm -f "$dest/warm.csv" "$dest/warm.csv.meta.json"
  fi
  if [ -n "${BASE:-}" ]; then
    $py -m pmppbench compare "$BASE" "$dest/default.csv" > "$dest/compare.txt" 2>&1
    echo "exit $?" >> "$dest/compare.txt"
  fi
  $py -m pmppbench plot "$dest/default.csv" --outdir "$dest" --force > "$dest/plot.txt" 2>&1
  $py -m pmppbench resources > "$dest/resources.txt" 2>&1; echo "resources exit $?" | tee -a "$dest/resources.txt"
  commands=${COMMANDS:-"transpose 8192 8192 20; stream 4194304 64 --streams 1,2,3,4 --chunks 8; all --check-only --quiet; compile; vecadd 0; vecadd --out /proc/x.csv"}
  IFS=';' read -ra list <<< "$commands"
  for cmd in "${list[@]}"; do
    echo "== pmppbench $cmd" >> "$dest/commands/commands.txt"
    start=$EPOCHREALTIME
    # shellcheck disable=SC2086
    $py -m pmppbench $cmd >> "$dest/commands/commands.txt" 2>&1
    echo "exit $?, $(stamp "$start") s wall" | tee -a "$dest/commands/commands.txt"
  done
fi
if [ "$phase" = all ] || [ "$phase" = tests ]; then
  if [ -n "${TEST_WORKERS:-}" ]; then
    # Alone on the GPU first: the tests that time something. Then, three at a time, those that
    # hold many GB on the host and the device (the 64-bit paths, the shape past free memory, the
    # occupancy of every check shape): six at once ran the host out of memory. The rest share the
    # GPU over TEST_WORKERS pytest-xdist processes.
    # test_roofline times a memcpy and a matmul against `info --measure`: six workers beside it
    # read its ceiling at 1,904 against 4,180 GB/s on an H200.
    serial="tests/test_fidelity.py tests/test_first_variant.py tests/test_stream.py tests/test_counters.py tests/test_roofline.py"
    big="64_bit_path or larger_than_the_free_memory or hand_and_occupancy"
    ignore=$(for f in $serial; do printf -- '--ignore=%s ' "$f"; done)
    # shellcheck disable=SC2086
    { timeout "${TEST_LIMIT:-0}" $py -m pytest -q -rA --durations=15 -m gpu $serial;
      timeout "${TEST_LIMIT:-0}" $py -m pytest -q -rA --durations=15 -n 3 -m gpu -k "$big" $ignore tests; } > "$dest/gpu-tests-serial.txt" 2>&1
    echo "gpu tests exit $?" >> "$dest/gpu-tests-serial.txt"; tail -n 2 "$dest/gpu-tests-serial.txt"
    # shellcheck disable=SC2086
    timeout "${TEST_LIMIT:-0}" $py -m pytest -q -rA --durations=25 -n "$TEST_WORKERS" -m gpu -k "not ($big)" $ignore tests > "$dest/gpu-tests.txt" 2>&1
  else
    timeout "${TEST_LIMIT:-0}" $py -m pytest -q -rA --durations=25 -m gpu tests > "$dest/gpu-tests.txt" 2>&1
  fi
  echo "gpu tests exit $?" >> "$dest/gpu-tests.txt"; tail -n 2 "$dest/gpu-tests.txt"
fi
if [ "$phase" = all ] || [ "$phase" = tests ] || [ "$phase" = sanitize ]; then
  if [ -z "${SKIP_SANITIZER:-}" ] && command -v compute-sanitizer >/dev/null; then
    for tool in memcheck racecheck; do
      compute-sanitizer --tool "$tool" $py -m pmppbench all --config sanitize --check-only --quiet \
        ${SANITIZE_ONLY:+--only "$SANITIZE_ONLY"} \
        > "$dest/sanitizer-$tool.txt" 2>&1
      echo "exit $?" >> "$dest/sanitizer-$tool.txt"
      tail -3 "$dest/sanitizer-$tool.txt"
    done
  fi
fi
