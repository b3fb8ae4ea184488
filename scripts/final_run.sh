#!/usr/bin/env bash
# One device call for a merged build: the reference run's measurements (cold and warm `all`,
# ceilings, plots), then the GPU tests, each phase under its own time limit so the logs of
# the phases before always come back. Usage: bash scripts/final_run.sh OUTDIR [TEST_LIMIT_S]
set -uo pipefail
dest=${1:?usage: final_run.sh OUTDIR [TEST_LIMIT_S]}
mkdir -p "$dest"
git_rev=${COMMIT:-unknown}
echo "build $git_rev" > "$dest/build.txt"
COMMANDS=${COMMANDS:-"compile"} PHASE=run bash scripts/reference_run.sh "$dest"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
timeout "${2:-240}" python3 -m pytest -q -rfE -m gpu tests > "$dest/gpu-tests.txt" 2>&1
echo "gpu tests exit $?" >> "$dest/gpu-tests.txt"; tail -n 3 "$dest/gpu-tests.txt"
