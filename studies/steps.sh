# Sourced by the studies' device scripts: `step NAME LIMIT_S CMD...` runs CMD under its own time
# limit (SIGINT first: a pmppbench session keeps its finished rows), logs it to $STEPS_DIR/NAME.txt,
# appends "NAME rc=.. S s (at T s)" to $STEPS_DIR/steps.txt (T from $start) and prints the log's
# last $TAIL lines (default 8). The sourcing script sets STEPS_DIR and start=$SECONDS.
step() {
    local name=$1 limit=$2; shift 2
    local t0=$SECONDS
    echo "== $*" >"$STEPS_DIR/$name.txt"
    timeout -s INT -k 5 "$limit" "$@" >>"$STEPS_DIR/$name.txt" 2>&1
    local rc=$?
    echo "$name rc=$rc $((SECONDS - t0)) s (at $((SECONDS - start)) s)" | tee -a "$STEPS_DIR/steps.txt"
    tail -n "${TAIL:-8}" "$STEPS_DIR/$name.txt"
}

# The device scripts' start and end (results/h200/*/call*/run.sh, run with $OUT set and .whl/ carried):
# device_begin installs cuda-cccl's wheels from .whl/ into /tmp/cccl (cuda-core and cuda-pathfinder from
# .whl/extra/ where the image's do not import it) (the device has no network) and
# puts them and the checkout on PYTHONPATH, sets STEPS_DIR=$OUT/logs and start, and writes the GPU's
# clocks, temperature and power to gpu.txt; pack tars the logs to $OUT/logs.tgz (only 8 files come back
# from the device, so a script packs after every step: a cut call still returns what ran); device_end
# appends the GPU's state after the run and packs.
device_begin() {
    export PYTHONUNBUFFERED=1
    python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/cccl .whl/*.whl || echo "cccl install failed"
    export PYTHONPATH=$PWD:/tmp/cccl
    # the image's cuda-core / cuda-pathfinder serve where they import cuda.compute; else .whl/extra/'s
    python3 -c "import cuda.compute" 2>/dev/null || { ls .whl/extra/*.whl >/dev/null 2>&1 &&
        python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/cccl .whl/extra/*.whl; }
    python3 -c "import cuda.compute, cuda.core; print('cuda.compute', cuda.core.__version__)" || echo "cuda.compute does not import"
    STEPS_DIR=$OUT/logs
    mkdir -p "$STEPS_DIR"
    start=$SECONDS
    gpu_state >"$STEPS_DIR/gpu.txt"
}
gpu_state() { nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv 2>&1; }
pack() { tar czf "$OUT/logs.tgz" -C "$OUT" logs; }
device_end() {
    gpu_state >>"$STEPS_DIR/gpu.txt"
    pack
}
