#!/usr/bin/env bash
# The commands a user runs without a GPU, from an installed pmppbench, outside any checkout:
#   bash scripts/wheel_smoke.sh PATH/TO/pmppbench tests/data
set -euo pipefail
exe=${1:?usage: wheel_smoke.sh PMPPBENCH DATA_DIR}
data=$(cd "${2:?usage: wheel_smoke.sh PMPPBENCH DATA_DIR}" && pwd)
work=$(mktemp -d)
cd "$work"
expect() {  # expect CODE COMMAND...: run it, fail unless it exits CODE
  local want=$1; shift
  set +e; "$@" >"$work/out.txt" 2>&1; local got=$?; set -e
  if [ "$got" != "$want" ]; then echo "FAIL (exit $got, wanted $want): $*"; cat "$work/out.txt"; exit 1; fi
  echo "ok (exit $got): ${*#$exe }"
}
expect 0 "$exe" --help
expect 0 "$exe" compile --arch sm_90
grep -q "NVRTC" "$work/out.txt"
grep -q "coarsened" "$work/out.txt"
expect 0 "$exe" compile vecadd --arch sm_80 --no-cache  # NVRTC itself, from this install (the line above may read a cache)
grep -q "float4" "$work/out.txt"
expect 0 "$exe" report "$data/sample.csv"
grep -q "#### transpose" "$work/out.txt"
expect 0 "$exe" report "$data/sample.csv" --html "$work/report.html"
grep -q "<svg" "$work/report.html"
expect 0 "$exe" compare "$data/sample.csv" "$data/sample.csv" --fail-on-slower 5
expect 0 "$exe" compare "$data/sample.csv" "$data/sample.csv" --html "$work/diff.html"
grep -q "class=\"compare\"" "$work/diff.html"
expect 2 "$exe" compare "$data/sample.csv" "$data/garbage.csv" --fail-on-slower 5
expect 0 "$exe" plot "$data/sample.csv" --outdir "$work/plots"
ls "$work/plots"/roofline.png >/dev/null
expect 2 "$exe" all --config quick --out "$work/plots"   # a folder: refused before any GPU work
expect 3 "$exe" all --config quick --check-only          # the bundled config is found; no GPU here
expect 3 "$exe" transpose 64 64 2
grep -q "no NVIDIA driver" "$work/out.txt"
echo "wheel smoke test passed"
