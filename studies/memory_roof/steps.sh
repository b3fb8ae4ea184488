# Sourced by the memory-roof device scripts: `step SECONDS LOG CMD...` runs CMD for at most SECONDS
# and never past $deadline (seconds of the script's SECONDS), its output appended to $out/LOG, and
# records each step's limit, exit status and time in $out/steps.txt; a step with under 5 s left is
# skipped and said so. The scripts run Python as $py (PYTHON, default python3), unbuffered.
export PYTHONUNBUFFERED=1
py=${PYTHON:-python3}

step() {
  local limit=$1 log=$2; shift 2
  local left=$((deadline - SECONDS))
  (( left < limit )) && limit=$left
  if (( limit < 5 )); then echo "== skipped (deadline): $*" | tee -a "$out/steps.txt"; return; fi
  echo "== $* (limit ${limit} s)" | tee -a "$out/steps.txt" >> "$out/$log"
  local t0=$SECONDS
  timeout "$limit" "$@" >> "$out/$log" 2>&1
  local rc=$?
  echo "   rc=$rc $((SECONDS - t0)) s" | tee -a "$out/steps.txt" >> "$out/$log"
}

# `begin`: $out made, the run's build (./BUILD) as the first line of $out/steps.txt and the GPU's
# clocks, temperature and power at the start in $out/nvidia-smi.txt. `finish`: the same read at
# the end, then every step's line.
begin() {
  mkdir -p "$out"
  echo "build $(cat BUILD 2>/dev/null || echo unknown)" > "$out/steps.txt"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv \
    > "$out/nvidia-smi.txt" 2>&1
}

finish() {
  nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv >> "$out/nvidia-smi.txt" 2>&1
  cat "$out/steps.txt"
}
