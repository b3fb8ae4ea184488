"""Why pmppbench reads short kernels 1-2% faster than nvbench: the same launches, timed five ways.

Run on a GPU machine from the checkout's root: python3 studies/short_kernel_gap.py OUTDIR [ROUNDS] [CASES]
(CASES: indices into CASES, comma-separated; all by default).
For each case (the workload's own job, built by the runner as `pmppbench` builds it) it
records, interleaved over ROUNDS rounds so that slow drift affects every method alike:

  protocol     pmppbench's protocol (protocol.measure with EventTimer: L2 settled, hold,
               warmup, batches of REPS calls between two events), at the workload's REPS
               and at 10x REPS (does the per-batch event cost matter?)
  bare         the same batches between two events with no hold before them (the host's
               launches may then be on the critical path)
  graph        a CUDA graph of REPS captured calls, launched between two events: no host
               launch cost inside the timed region at all, and no hold needed
  nvbench      cuda.bench (nvbench's Python API, `pip install cuda-bench[cu13]`; carried as
               a wheel to an offline machine) on the same launcher: its batch GPU mean and
               its cold GPU mean (L2 flushed before each call), with its SM clock mean; each
               measurement in a child process that sets the case up again (cuda.bench takes no
               new benchmark after its first run)
  child        pmppbench's protocol again inside that child, on its buffers, just before and
               just after nvbench: whether a gap is the timing method's or the process's
               (another process's buffers lie elsewhere in the GPU's memory)
  clock        NVML's SM clock and throttle reasons after each method (none if no NVML)

Each line of OUTDIR/short_kernel_gap.jsonl is one (case, round, method) with ms per call.
The summary table gives every method's median over rounds as a ratio to nvbench's batch
time. docs/measurement.md ("Short kernels against nvbench") states the hypotheses that each
method tells apart, and what the first run on the H200 showed.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the checkout's pmppbench (run from anywhere)

from pmppbench import workloads  # noqa: E402
from pmppbench.hardware.gpu import cupy  # noqa: E402
from pmppbench.measure.protocol import EventTimer, measure  # noqa: E402
from pmppbench.engine.worker.pipeline import clock_observer, job_for, prepared  # noqa: E402

# (workload, shape, variant): the two short cases and a long control (>= 50 us,
# where the two agreed within 0.4%).
CASES = (
    ("stencil", {"n": 1 << 24, "radius": 32}, "coarsened"),  # ~35 us per call
    ("transpose", {"m": 8192, "n": 8192}, "coarsened"),  # ~130 us
    ("transpose", {"m": 16384, "n": 16384}, "coarsened"),  # ~0.5 ms: the control
)
ROUNDS = 3  # default; each round of the three cases is ~30 s, nvbench's share at most 5 s a case


def events_ms(stream, fn, reps: int) -> float:
    """ms per call of `reps` calls of fn between two events on `stream`, no hold."""
    cp = cupy()
    start, end = cp.cuda.Event(), cp.cuda.Event()
    start.record(stream)
    for _ in range(reps):
        fn()
    end.record(stream)
    end.synchronize()
    return cp.cuda.get_elapsed_time(start, end) / reps


def graph_ms(fn, reps: int, batches: int = 5) -> float:
    """Median over batches of ms per call of a CUDA graph of `reps` captured calls."""
    cp = cupy()
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        stream.begin_capture()
        for _ in range(reps):
            fn()
        graph = stream.end_capture()
    graph.launch(stream)  # warm: the first launch uploads the graph
    stream.synchronize()
    start, end = cp.cuda.Event(), cp.cuda.Event()
    out = []
    for _ in range(batches):
        start.record(stream)
        graph.launch(stream)
        end.record(stream)
        end.synchronize()
        out.append(cp.cuda.get_elapsed_time(start, end) / reps)
    return statistics.median(out)


def nvbench_ms(fn, name: str, json_path: Path) -> dict:
    """nvbench's batch and cold GPU means (ms) and its SM clock for `fn` (benchmark `name`),
    or why not. Once per process: cuda.bench takes no registration after its first run (seen
    on the H200 with cuda-bench 0.3.0: "Can not register more benchmarks after benchmark was
    run"), so main() calls it through nvbench_in_child."""
    try:
        import cuda.bench as bench  # noqa: PLC0415 (optional: carried as a wheel)
    except ImportError as exc:
        return {"error": f"cuda.bench not importable: {exc}"}
    cp = cupy()

    def benchmark(state):
        def launcher(launch):
            with cp.cuda.ExternalStream(launch.get_stream().addressof()):
                fn()

        state.exec(launcher)

    bench.register(benchmark).set_name(name)
    try:
        bench.run_all_benchmarks(["nvbench", "--json", str(json_path), "--timeout", "5", "--quiet",
                                  "--benchmark", name])
    except SystemExit:
        pass
    except Exception as exc:  # a second run_all_benchmarks in one process, an nvbench error: say which
        return {"error": f"{type(exc).__name__}: {exc}"}
    if not json_path.exists():
        return {"error": "nvbench wrote no JSON"}
    data = json.loads(json_path.read_text())
    summaries = {}
    for b in data.get("benchmarks", []):
        if b.get("name") != name:
            continue
        for state in b.get("states", []):
            for s in state.get("summaries", []):
                value = next((d.get("value") for d in s.get("data", []) if d.get("name") == "value"), None)
                summaries[s.get("tag")] = value
    pick = {"batch_ms": "nv/batch/time/gpu/mean", "cold_ms": "nv/cold/time/gpu/mean",
            "cold_sm_hz": "nv/cold/sm_clock_rate/mean", "batch_samples": "nv/batch/sample_size"}
    out = {k: (float(summaries[t]) * (1e3 if k.endswith("_ms") else 1)) if summaries.get(t) is not None else None
           for k, t in pick.items()}
    out["tags"] = sorted(t for t in summaries if t)  # for a reader when a tag above moved
    return out


def case_name(index: int) -> str:
    workload_name, shape, variant_name = CASES[index]
    return f"{workload_name}-{variant_name}-{workloads.get(workload_name).label(shape).replace(' ', '_')}"


def nvbench_child(index: int, json_path: Path) -> None:
    """The child's side: case `index` set up as main() sets it up, nvbench run once on its
    job, the summary printed as the last line of stdout."""
    workload_name, shape, variant_name = CASES[index]
    w = workloads.get(workload_name)
    v = w.variant(variant_name)
    with prepared(w, shape, [v]) as (_inputs, ctx):
        fn = job_for(w, v, shape, ctx).run
        before = measure({"v": fn}, w.protocol, timer=EventTimer())["v"].median_ms
        out = nvbench_ms(fn, case_name(index), json_path)
        out["protocol_before_ms"] = before
        out["protocol_after_ms"] = measure({"v": fn}, w.protocol, timer=EventTimer())["v"].median_ms
    print(json.dumps(out), flush=True)


def nvbench_in_child(index: int, json_path: Path) -> dict:
    """nvbench on case `index` in a process of its own (nvbench_ms says why), interleaved
    with the parent's methods as before; the parent keeps its own setup of the case meanwhile."""
    try:
        done = subprocess.run([sys.executable, __file__, "--nvbench", str(index), str(json_path)],
                              capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return {"error": "the nvbench child ran past 120 s"}
    for line in reversed(done.stdout.strip().splitlines()):
        try:
            return json.loads(line)
        except ValueError:
            continue
    return {"error": f"the nvbench child (exit {done.returncode}) printed no summary: {done.stderr.strip()[-400:]}"}


def clock_now() -> dict:
    obs = clock_observer()
    if obs is None:
        return {}
    obs.after("x")
    return {"sm_mhz": obs.samples["x"][-1]["sm_mhz"], "throttle": obs.throttled("x", 0.9)}


def main(outdir: Path, rounds: int = ROUNDS, cases: list[int] | None = None) -> None:
    outdir.mkdir(parents=True, exist_ok=True)
    log = (outdir / "short_kernel_gap.jsonl").open("w")
    table = []
    for index, (workload_name, shape, variant_name) in enumerate(CASES):
        if cases is not None and index not in cases:
            continue
        w = workloads.get(workload_name)
        v = w.variant(variant_name)
        label = f"{workload_name} {variant_name} {w.label(shape)}"
        with prepared(w, shape, [v]) as (_inputs, ctx):
            fn = job_for(w, v, shape, ctx).run
            reps = w.protocol.reps
            results: dict[str, list[float]] = {}
            for r in range(rounds):
                row = {}
                row["protocol"] = measure({"v": fn}, w.protocol, timer=EventTimer())["v"].median_ms
                row["protocol_10x"] = measure({"v": fn}, replace(w.protocol, reps=10 * reps),
                                              timer=EventTimer())["v"].median_ms
                stream = cupy().cuda.get_current_stream()
                row["bare"] = statistics.median(events_ms(stream, fn, reps) for _ in range(5))
                row["graph"] = graph_ms(fn, reps)
                nv = nvbench_in_child(index, outdir / f"nvbench-{case_name(index)}-round{r}.json")
                row["nvbench_batch"], row["nvbench_cold"] = nv.get("batch_ms"), nv.get("cold_ms")
                row["child_protocol"] = nv.get("protocol_before_ms")
                row["child_protocol_after"] = nv.get("protocol_after_ms")
                for method, ms in row.items():
                    if ms is not None:
                        results.setdefault(method, []).append(ms)
                print(json.dumps({"case": label, "round": r, **row, "nvbench": nv, "clock": clock_now(),
                                  "time": time.time()}), file=log, flush=True)
            table.append((label, {m: statistics.median(x) for m, x in results.items()}))
    log.close()
    methods = ("protocol", "protocol_10x", "bare", "graph", "nvbench_batch", "nvbench_cold", "child_protocol",
               "child_protocol_after")
    lines = [f"{'case':<40} " + " ".join(f"{m:>14}" for m in methods) + "   (ms per call, median of rounds)"]
    for label, med in table:
        lines.append(f"{label:<40} " + " ".join(f"{med[m]:14.5f}" if m in med else f"{'-':>14}" for m in methods))
        ref = med.get("nvbench_batch")
        if ref:
            lines.append(f"{'  / nvbench batch':<40} " + " ".join(
                f"{med[m] / ref:14.4f}" if m in med else f"{'-':>14}" for m in methods))
    text = "\n".join(lines) + "\n"
    (outdir / "short_kernel_gap.txt").write_text(text)
    print(text)


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--nvbench":  # the child of nvbench_in_child
        nvbench_child(int(sys.argv[2]), Path(sys.argv[3]))
        sys.exit(0)
    if len(sys.argv) not in (2, 3, 4):
        raise SystemExit("usage: python3 studies/short_kernel_gap.py OUTDIR [ROUNDS] [CASES, e.g. 1,2]")
    main(Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) >= 3 else ROUNDS,
         [int(c) for c in sys.argv[3].split(",")] if len(sys.argv) == 4 else None)
