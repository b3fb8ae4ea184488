#!/usr/bin/env bash
# The reference run behind README's results section, on a GPU machine:
#   bash scripts/reference_run.sh results/h200
# Measures the ceilings, runs the default config twice (cold compile cache, then warm) with
# wall times, plots, measures the stream spread study, runs the GPU tests (with the timer
# agreement numbers) and compute-sanitizer (memcheck, racecheck) over the sanitize config.
set -uo pipefail
dest=${1:?usage: reference_run.sh DEST_DIR}
mkdir -p "$dest"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
py=${PYTHON:-python3}
# Only the kernel cache is cleared for the cold run; the measured ceilings stay.
kernel_cache="${PMPPBENCH_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/pmppbench}/kernels"

stamp() { awk "BEGIN{printf \"%.1f\", $EPOCHREALTIME - $1}"; }

$py -m pmppbench info --measure 2>&1 | tee "$dest/info.txt"

rm -rf "$kernel_cache"
start=$EPOCHREALTIME
$py -m pmppbench all --out "$dest/default.csv" --force > "$dest/all.txt" 2>&1
echo "exit $?; cold compile cache: $(stamp "$start") s wall" | tee -a "$dest/all.txt"

start=$EPOCHREALTIME
$py -m pmppbench all --out "$dest/warm.csv" --force --quiet > "$dest/all-warm.txt" 2>&1
echo "exit $?; warm compile cache: $(stamp "$start") s wall" | tee -a "$dest/all-warm.txt" "$dest/all.txt"
rm -f "$dest/warm.csv" "$dest/warm.csv.meta.json"  # only its wall time is kept

$py -m pmppbench plot "$dest/default.csv" --outdir "$dest" 2>&1 | tee "$dest/plot.txt"
$py scripts/spread_study.py 6 > "$dest/stream-spread.txt" 2>&1
$py -m pytest -q -rA -m gpu tests > "$dest/gpu-tests.txt" 2>&1; tail -n 1 "$dest/gpu-tests.txt"
$py -m pmppbench resources > "$dest/resources.txt" 2>&1; echo "resources exit $?" | tee -a "$dest/resources.txt"

if [ -z "${SKIP_SANITIZER:-}" ] && command -v compute-sanitizer >/dev/null; then
  for tool in memcheck racecheck; do
    compute-sanitizer --tool "$tool" $py -m pmppbench all --config sanitize --check-only --quiet \
      > "$dest/sanitizer-$tool.txt" 2>&1
    echo "exit $?" >> "$dest/sanitizer-$tool.txt"
    tail -3 "$dest/sanitizer-$tool.txt"
  done
fi
