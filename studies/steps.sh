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
