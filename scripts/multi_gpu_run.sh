#!/usr/bin/env bash
# Every GPU of one node in one call: the evidence `--devices` and `--ray` need on a machine with
# two or more GPUs (results/h200x2/ for an nvidia-h200-x2). From the checkout's root:
#
#     bash scripts/multi_gpu_run.sh            # logs and result files in $OUT/multi-gpu (or out/)
#
# Steps, each with its own time limit so one that hangs cannot take the others' time:
#   single    pmppbench all on the current GPU only: the reference each GPU is compared with
#   devices   pmppbench all --devices all: every GPU runs the same plan at once
#   ray       pmppbench all --ray auto: the same plan through a local Ray cluster, one actor a GPU
#   ray-kill  the same, with one actor's process killed (SIGKILL) KILL_AFTER_S seconds in: its
#             GPU's remaining steps must come back as ERROR rows, the other GPUs' rows complete
# Ray comes from wheels in .whl/ when the machine has none (installed under /tmp/site). A
# summary is printed last: rows, PASS and ERROR per GPU, wall time, and each GPU against the
# single-GPU run.
set -uo pipefail
dest=${OUT:-out}/multi-gpu
mkdir -p "$dest"
export PYTHONUNBUFFERED=1
if ! python3 -c "import ray" 2>/dev/null && compgen -G ".whl/*.whl" > /dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
  export PYTHONPATH="/tmp/site${PYTHONPATH:+:$PYTHONPATH}"
fi
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,clocks.sm,clocks.mem,temperature.gpu --format=csv > "$dest/nvidia-smi.txt" 2>&1
nvidia-smi topo -m > "$dest/topology.txt" 2>&1
t0=$EPOCHREALTIME
step() {  # step NAME LIMIT_S ARGS...: one pmppbench run, its output and shell wall time logged
  local name=$1 limit=$2; shift 2
  local s=$EPOCHREALTIME
  timeout "$limit" python3 -m pmppbench all "$@" --out "$dest/$name.csv" > "$dest/$name.txt" 2>&1
  local rc=$?
  echo "$name: exit $rc, $(awk "BEGIN{printf \"%.1f\", $EPOCHREALTIME - $s}") s wall" | tee -a "$dest/summary.txt"
}
step single "${SINGLE_S:-120}"
step devices "${DEVICES_S:-150}" --devices all
step ray "${RAY_S:-200}" --ray auto

# ray-kill: the run in the background, one FleetWorker actor killed while it works.
s=$EPOCHREALTIME
timeout "${RAY_S:-200}" python3 -m pmppbench all --ray auto --out "$dest/ray-kill.csv" > "$dest/ray-kill.txt" 2>&1 &
run=$!
sleep "${KILL_AFTER_S:-15}"
victim=$(pgrep -f "ray::FleetWorker" | head -1)
if [[ -n $victim ]]; then
  gpu=$(tr '\0' '\n' < "/proc/$victim/environ" 2>/dev/null | grep '^CUDA_VISIBLE_DEVICES=' || true)
  echo "killed actor pid $victim ($gpu) at $(awk "BEGIN{printf \"%.1f\", $EPOCHREALTIME - $s}") s" | tee -a "$dest/summary.txt"
  kill -9 "$victim"
else
  echo "no ray::FleetWorker process found to kill" | tee -a "$dest/summary.txt"
fi
wait "$run"
echo "ray-kill: exit $?, $(awk "BEGIN{printf \"%.1f\", $EPOCHREALTIME - $s}") s wall" | tee -a "$dest/summary.txt"

for name in devices ray; do
  python3 -m pmppbench compare "$dest/single.csv" "$dest/$name.csv" > "$dest/compare-single-$name.txt" 2>&1
done
python3 - "$dest" <<'PY' | tee -a "$dest/summary.txt"
import collections, statistics, sys
from pmppbench import resultfile
dest = sys.argv[1]
ref = {}
for name in ("single", "devices", "ray", "ray-kill"):
    try:
        rows, meta = resultfile.load(f"{dest}/{name}.csv")
    except Exception as exc:  # a run that wrote nothing says so here
        print(f"{name}: no result file ({exc})")
        continue
    per = collections.defaultdict(collections.Counter)
    for r in rows:
        per[r.device_uuid or "?"][r.check] += 1
    wall = (meta.get("wall_s") or {}).get("wall")
    print(f"{name}: {len(rows)} rows, wall {wall:.1f} s" if wall else f"{name}: {len(rows)} rows")
    for uuid, counts in per.items():
        print(f"  {uuid}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    if name == "single":
        ref = {(r.workload, r.variant, r.shape): r.median_ms for r in rows if r.median_ms}
        continue
    for uuid in per:  # each GPU against the single-GPU run, row by row
        ratios = sorted(r.median_ms / ref[k] for r in rows
                        if r.device_uuid == uuid and r.median_ms and (k := (r.workload, r.variant, r.shape)) in ref)
        if ratios:
            print(f"  {uuid} vs single: {len(ratios)} rows, median ratio {statistics.median(ratios):.4f}, "
                  f"range {ratios[0]:.3f}-{ratios[-1]:.3f}")
PY
for name in devices ray; do
  echo "single vs $name: $(tail -n 1 "$dest/compare-single-$name.txt")" | tee -a "$dest/summary.txt"
done
echo "done in $(awk "BEGIN{printf \"%.0f\", $EPOCHREALTIME - $t0}") s" >> "$dest/summary.txt"
tar czf "${OUT:-out}/multi-gpu.tar.gz" -C "$dest" .
