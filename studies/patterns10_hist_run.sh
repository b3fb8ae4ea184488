#!/usr/bin/env bash
# Session 10's device calls of the 7-bin histogram work (README "Histogram"; their logs:
# results/h200/patterns10/ and its verify/):   bash studies/patterns10_hist_run.sh OUT [verify]
# The first call:
# 1. studies/histogram_private.py at 2^26 and 2^28, 7 bins: the thread_private candidates beside CUB;
# 2. studies/histogram_pick.py: the candidate with the best worst ratio to CUB becomes the kernel
#    file's default (pick.txt has the ranking and the sha256 of the file every later step built);
# 3. `pmppbench histogram 268435456` (every rung, both bin counts and inputs, CUB);
# 4. `pmppbench histogram 67108864 3 --counters`, with the GPU tests of the histogram beside it (they
#    time nothing; the counters come from ncu's replays, whose times are not quoted).
# Every step has its own time limit inside the call's (steps.txt says which ran how long); the logs
# are packed into OUT/r.tgz after each step, so a cut call still brings back the finished ones.
set -o pipefail
out=$1 r=$1/r phase=${2:-first}
mkdir -p "$r"
export PYTHONUNBUFFERED=1 COLUMNS=400
start=$SECONDS
STEPS_DIR=$r
source "$(dirname "$0")/steps.sh"  # step NAME LIMIT_S CMD...
pack() { tar czf "$out/r.tgz" -C "$out" r; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv \
    >"$r/nvidia-smi.txt" 2>&1
{ cat BUILD 2>/dev/null || git log -1 --format='%H %s' 2>/dev/null; } | sed 's/^/build /' >>"$r/steps.txt"
if [ "$phase" = verify ]; then  # the second call: the study's candidates, the shipped rows, the GPU tests
    step study "${STUDY_S:-40}" python3 studies/histogram_private.py --n 67108864,268435456 --bins 7 --json "$r/study.json"
    sha256sum kernels_cu/histogram.cu >>"$r/steps.txt"
    pack
    step histogram "${HIST_S:-25}" python3 -m pmppbench histogram 268435456 --bins 7 \
        --variants thread_private,cub,read --out "$r/histogram-7.csv"
    pack
    step gpu-tests "${TESTS_S:-45}" python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_histogram.py
    echo "total $((SECONDS - start)) s" >>"$r/steps.txt"
    pack
    exit 0
fi
step study "${STUDY_S:-50}" python3 studies/histogram_private.py --n 67108864,268435456 --bins 7 --json "$r/study.json"
step pick 10 python3 studies/histogram_pick.py "$r/study.json" kernels_cu/histogram.cu
sha256sum kernels_cu/histogram.cu >>"$r/pick.txt"
pack
step histogram "${HIST_S:-80}" python3 -m pmppbench histogram 268435456 --out "$r/histogram.csv"
pack
step gpu-tests "${TESTS_S:-75}" python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_histogram.py &
step counters "${COUNTERS_S:-85}" python3 -m pmppbench histogram 67108864 3 --counters --out "$r/counters.csv"
wait
echo "total $((SECONDS - start)) s" >>"$r/steps.txt"
pack
