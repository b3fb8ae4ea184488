#!/usr/bin/env bash
# The reference run behind the numbers in README.md and docs/, on a GPU machine. It writes
# exactly the files a board's folder keeps, and its logs elsewhere:
#   bash scripts/reference_run.sh results/h100 LOGS            # the results: about 4 minutes (each
#                                                              # command's wall time is in its log)
#   PHASE=tests bash scripts/reference_run.sh results/h100 LOGS  # GPU tests and compute-sanitizer, logs only
#   PHASE=all bash scripts/reference_run.sh results/h100 LOGS    # both
# RESULTS (results/<board>) gets: default.csv and its meta.json (`pmppbench all`, cold compile
# cache), default.html, the PNG plots, and the sweeps docs/ quotes: scan-sizes.csv,
# transpose-shapes.csv, gemm-sizes.csv, gemm-tensor.csv, stream-overlap-3.csv, stream-overlap-8.csv
# (each with its meta.json); with COUNTERS=1 also hardware.json (`--counters`, needs ncu, a few
# minutes more). Files of an earlier run there are replaced (--force); others are left alone.
# LOGS (default: a new temporary folder) gets every command's terminal output, the measured
# ceilings, nvidia-smi, the warm `all` and the tests. COMMIT=rev is written into each meta.json
# whose git_revision is empty (a copy of the tree without its .git). TEST_WORKERS=N, TEST_LIMIT=S,
# SKIP_SANITIZER=1 and SANITIZE_ONLY=w1,w2 shape the tests phase. Then, on any machine:
#   python scripts/results_tables.py   # results/<board>/README.md and the tables README and docs/ quote
set -uo pipefail
dest=${1:?usage: scripts/reference_run.sh RESULTS [LOGS]}
logs=${2:-$(mktemp -d)}
phase=${PHASE:-run}
mkdir -p "$dest" "$logs"
echo "results: $dest; logs: $logs"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
py=${PYTHON:-python3}
stamp() { awk "BEGIN{printf \"%.1f\", $EPOCHREALTIME - $1}"; }
bench() {  # bench LOG ARGS...: one pmppbench command, its output and wall time in LOGS/LOG
  local log=$1 start=$EPOCHREALTIME; shift
  $py -m pmppbench "$@" > "$logs/$log" 2>&1
  echo "exit $?, $(stamp "$start") s wall: pmppbench $*" | tee -a "$logs/$log"
}
if [ "$phase" = all ] || [ "$phase" = run ]; then
  # Nothing else on the GPU while the ceilings and `all` are measured: a GPU test's process
  # outlived its pytest once and held the copy ceiling 18% low on an H200.
  for _ in $(seq 120); do
    [ -z "$(nvidia-smi --query-compute-apps=pid --format=csv,noheader 2>/dev/null)" ] && break
    sleep 1
  done
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > "$logs/nvidia-smi.txt"
  bench info.txt info --measure
  kernel_cache="${PMPPBENCH_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/pmppbench}/kernels"
  rm -rf "$kernel_cache" "$(dirname "$kernel_cache")/cub"  # and the CUB objects cuda.compute built
  # Cold as on a machine's first run: CuPy's own kernel cache (the kernels of its array
  # operations, compiled at their first use) starts empty too.
  cupy_cold=$(mktemp -d)
  CUPY_CACHE_DIR=$cupy_cold bench all.txt all --out "$dest/default.csv" --out "$dest/default.html" --force
  CUPY_CACHE_DIR=$cupy_cold bench all-warm.txt all --out "$logs/warm.csv" --force --quiet
  bench plot.txt plot "$dest/default.csv" --outdir "$dest" --force
  bench scan-sizes.txt all --config patterns_sizes --only scan --out "$dest/scan-sizes.csv" --force
  bench transpose-shapes.txt all --config transpose_shapes --out "$dest/transpose-shapes.csv" --force
  bench gemm-sizes.txt all --config gemm_sizes --out "$dest/gemm-sizes.csv" --force
  bench gemm-tensor.txt all --config gemm_tensor --out "$dest/gemm-tensor.csv" --force
  for chunks in 3 8; do
    streams=$([ "$chunks" = 3 ] && echo 1,2,3,4 || echo 1,2,3,4,8)
    bench "stream-overlap-$chunks.txt" stream 4194304 64 --chunks "$chunks" --streams "$streams" \
      --out "$dest/stream-overlap-$chunks.csv" --force
  done
  [ -n "${COUNTERS:-}" ] && bench hardware.txt all --config hardware --counters --out "$dest/hardware.json" --force
  bench resources.txt resources
  if [ -n "${COMMIT:-}" ]; then
    COMMIT=$COMMIT $py - "$dest" <<'EOF'
import json, os, sys
from pathlib import Path
for p in Path(sys.argv[1]).glob("*.meta.json"):
    meta = json.loads(p.read_text())
    if not meta.get("git_revision"):
        meta["git_revision"] = os.environ["COMMIT"]
        p.write_text(json.dumps(meta, indent=2) + "\n")
EOF
  fi
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
      timeout "${TEST_LIMIT:-0}" $py -m pytest -q -rA --durations=15 -n 3 -m gpu -k "$big" $ignore tests; } > "$logs/gpu-tests-serial.txt" 2>&1
    echo "gpu tests exit $?" >> "$logs/gpu-tests-serial.txt"; tail -n 2 "$logs/gpu-tests-serial.txt"
    # shellcheck disable=SC2086
    timeout "${TEST_LIMIT:-0}" $py -m pytest -q -rA --durations=25 -n "$TEST_WORKERS" -m gpu -k "not ($big)" $ignore tests > "$logs/gpu-tests.txt" 2>&1
  else
    timeout "${TEST_LIMIT:-0}" $py -m pytest -q -rA --durations=25 -m gpu tests > "$logs/gpu-tests.txt" 2>&1
  fi
  echo "gpu tests exit $?" >> "$logs/gpu-tests.txt"; tail -n 2 "$logs/gpu-tests.txt"
  if [ -z "${SKIP_SANITIZER:-}" ] && command -v compute-sanitizer >/dev/null; then
    for tool in memcheck racecheck; do
      compute-sanitizer --tool "$tool" $py -m pmppbench all --config sanitize --check-only --quiet \
        ${SANITIZE_ONLY:+--only "$SANITIZE_ONLY"} > "$logs/sanitizer-$tool.txt" 2>&1
      echo "exit $?" >> "$logs/sanitizer-$tool.txt"; tail -3 "$logs/sanitizer-$tool.txt"
    done
  fi
fi
