"""Hardware counters beside the model (`--counters`): what the GPU measured while each variant
ran once more, untimed, under NVIDIA Nsight Compute (`ncu`).

Every explanation pmppbench prints is a model: logical bytes, "32-way bank conflicts",
occupancy worked out by hand (PMPP 5.6). With --counters each PASS row also gets what the
hardware counted for one run of that variant on the same shape and seed:

    DRAM bytes read and written     dram__bytes_read.sum, dram__bytes_write.sum
    L2 and L1 sector hit rates      lts__t_sector_hit_rate.pct, l1tex__t_sector_hit_rate.pct
    bytes the SMs requested         l1tex__t_bytes_pipe_lsu_mem_global_op_{ld,st}.sum
    shared-memory wavefronts        l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{ld,st}.sum
      per request (warp instruction) smsp__inst_executed_op_shared_{ld,st}.sum
      and bank conflicts            l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{ld,st}.sum
    achieved occupancy              sm__warps_active.avg.pct_of_peak_sustained_active

and fill_counters puts each beside its model: DRAM bytes / the model's bytes, requested
bytes / the modelled requests, achieved / theoretical occupancy.

Why ncu and not CUPTI in the worker: cupti-python 13.4 (PyPI) binds CUPTI's Profiler Host
API (metric configuration and evaluation) and PM sampling, but not the Range Profiler that
collects per-kernel counters, and PM sampling reads counters at a time interval in one pass,
which cannot give exact per-kernel shared-memory wavefronts or DRAM bytes. Nsight Compute
is the tool NVIDIA maintains for exactly these counters: it replays each kernel as often as
its metrics need, saving and restoring device memory between passes, and flushes the caches
before every pass (--cache-control all), so DRAM bytes are those of a cold run, the same
start the logical model assumes. It is on PATH wherever the CUDA toolkit is.

How it runs: after a step's checks and timed batches, and after its buffers are freed, the
worker starts `ncu ... python -m pmppbench.engine.worker.counters STEP MANIFEST`. That child gets the
step (plan.Step, pickled), sets the same shape up with the same seed and runs each
passing variant once, inside an NVTX range named after it
(ncu names the kernels by their range) and between cudaProfilerStart/Stop, so nothing
else it launches (uploads, fills) is profiled. Clocks are left as found (--clock-control
none). The timed batches never run under the profiler: counters come from this extra
run alone. A machine without ncu, or one where counters are refused (ERR_NVGPUCTRPERM),
gets one line saying how to fix it, and the run goes on without counters; a metric this GPU
lacks is dropped, with one line, and the rest are read.
"""

from __future__ import annotations

import csv
import gc
import io
import json
import os
import pickle
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pmppbench.hardware import occupancy
from pmppbench.hardware.gpu import cupy
from pmppbench.engine.plan import Step
from pmppbench.row import Result
from pmppbench.engine.worker.pipeline import job_for, prepared

# ---- what is counted -----------------------------------------------------------------------

DRAM_READ = "dram__bytes_read.sum"
DRAM_WRITE = "dram__bytes_write.sum"
L2_HIT = "lts__t_sector_hit_rate.pct"
L1_HIT = "l1tex__t_sector_hit_rate.pct"
GLOBAL_LD = "l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum"
GLOBAL_ST = "l1tex__t_bytes_pipe_lsu_mem_global_op_st.sum"
SMEM_LD_REQ = "smsp__inst_executed_op_shared_ld.sum"
SMEM_ST_REQ = "smsp__inst_executed_op_shared_st.sum"
SMEM_LD_WF = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"
SMEM_ST_WF = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"
SMEM_LD_CONFLICTS = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"
SMEM_ST_CONFLICTS = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"
# Control divergence (PMPP 4.5): the threads that executed each warp instruction, of 32.
THREAD_INST = "smsp__thread_inst_executed.sum"
WARP_INST = "smsp__inst_executed.sum"
# Atomics (PMPP 9.3): warp-level requests to global memory (atomics that return a value, and
# reductions, which do not), and shared-memory atomic instructions.
GLOBAL_ATOM = "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum"
GLOBAL_RED = "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum"
SHARED_ATOM = "smsp__inst_executed_op_shared_atom.sum"
# Tensor cores: the cycles their pipe was busy, of the peak. This HMMA pipe's count covers Hopper's
# wgmma (HGMMA) too, for which ncu has no cycles metric of its own (docs/hardware_counters.md).
TENSOR_PIPE = "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"
OCCUPANCY = "sm__warps_active.avg.pct_of_peak_sustained_active"
OCCUPANCY_LIMIT = "sm__maximum_warps_per_active_cycle_pct"  # ncu's own theoretical occupancy
DURATION = "gpu__time_duration.sum"  # weights a variant's percentages when it launches several kernels

METRICS = (DRAM_READ, DRAM_WRITE, L2_HIT, L1_HIT, GLOBAL_LD, GLOBAL_ST, SMEM_LD_REQ, SMEM_ST_REQ, SMEM_LD_WF,
           SMEM_ST_WF, SMEM_LD_CONFLICTS, SMEM_ST_CONFLICTS, THREAD_INST, WARP_INST, GLOBAL_ATOM, GLOBAL_RED,
           SHARED_ATOM, TENSOR_PIPE, OCCUPANCY, OCCUPANCY_LIMIT, DURATION)
WARP_SIZE = 32
KERNELS = "kernels"  # how many kernels the variant's run launched (a key of Result.counters)

RANGE_PREFIX = "pmpp:"  # the NVTX range around one variant's run: pmpp:<variant>
TIMEOUT_S = 900.0  # one step's profiling; the worker keeps its supervisor informed meanwhile
HEARTBEAT_S = 5.0

NO_NCU = ("--counters: Nsight Compute (ncu) is not on PATH, so no hardware counters were read; install Nsight "
          "Compute or the CUDA toolkit (or set PMPPBENCH_NCU to the ncu binary); the run went on without them")
NO_PERMISSION = ("--counters: the driver refused access to the GPU performance counters (ERR_NVGPUCTRPERM); "
                 "run as root, or allow every user with `options nvidia NVreg_RestrictProfilingToAdminUsers=0` in "
                 "/etc/modprobe.d/ and a reboot (https://developer.nvidia.com/ERR_NVGPUCTRPERM); the run went on "
                 "without counters")


def ncu_path() -> str | None:
    return os.environ.get("PMPPBENCH_NCU") or shutil.which("ncu")


def ncu_command(ncu: str, log: Path, spec: Path, manifest: Path, metrics=METRICS, rename: bool = True) -> list[str]:
    """The profiler's command line around the child that reruns one step's variants (`spec`:
    the pickled Step; the child writes its `manifest` there)."""
    return [ncu, "--csv", "--page", "details", "--print-units", "base", "--metrics", ",".join(metrics),
            "--nvtx", *(["--print-nvtx-rename", "kernel"] if rename else []), "--profile-from-start", "off",
            "--cache-control", "all", "--clock-control", "none", "--target-processes", "all",
            "--log-file", str(log), sys.executable, "-m", "pmppbench.engine.worker.counters", str(spec), str(manifest)]


# ---- reading ncu's CSV ------------------------------------------------------------------------

def number(text: str) -> float | None:
    """One metric value as ncu prints it ('67,108,864', '91.47', 'n/a'); None if none."""
    text = text.strip().replace(",", "")
    if not text or text.lower() in ("n/a", "nan", "-"):
        return None
    try:
        return float(text)
    except ValueError:
        return None


def parse_csv(text: str) -> list[dict[str, Any]]:
    """ncu's details page as CSV -> one dict per profiled kernel, in launch order:
    {"id", "name" (the kernel's NVTX range with --print-nvtx-rename kernel), metric -> value}.
    ncu's own lines (==PROF==, ==WARNING==) are skipped."""
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("==")]
    start = next((i for i, ln in enumerate(lines) if ln.startswith('"ID"')), None)
    if start is None:
        return []
    kernels: dict[str, dict[str, Any]] = {}
    for rec in csv.DictReader(io.StringIO("\n".join(lines[start:]))):
        kid = rec.get("ID")
        if kid is None or rec.get("Metric Name") is None:
            continue
        k = kernels.setdefault(kid, {"id": int(kid), "name": rec.get("Kernel Name", "")})
        k[rec["Metric Name"]] = number(rec.get("Metric Value") or "")
    return sorted(kernels.values(), key=lambda k: k["id"])


def variant_of(kernel_name: str) -> str | None:
    """The variant a profiled kernel ran for: the NVTX range pmpp:<variant> ncu renamed it to."""
    m = re.search(re.escape(RANGE_PREFIX) + r"([^\s/]+)", kernel_name)
    return m.group(1) if m else None


def group(kernels: list[dict[str, Any]], manifest: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Kernels by variant: by their NVTX names; if ncu did not rename them, by launch order,
    which is unambiguous only when every variant is one kernel launch (manifest says)."""
    out: dict[str, list[dict[str, Any]]] = {}
    named = [(variant_of(k["name"]), k) for k in kernels]
    if any(v for v, _ in named):
        for v, k in named:
            if v:
                out.setdefault(v, []).append(k)
        return out
    if manifest and all(m.get("launches") == 1 for m in manifest) and len(kernels) == len(manifest):
        return {m["variant"]: [k] for m, k in zip(manifest, kernels)}
    return out


def combine(kernels: list[dict[str, Any]]) -> dict[str, float]:
    """One variant's counters from its kernels: counts summed, percentages weighted by each
    kernel's duration (a variant of one kernel: that kernel's values). Metrics ncu could not
    give (n/a) are left out."""
    out: dict[str, float] = {KERNELS: float(len(kernels))}
    for name in METRICS:
        values = [(k.get(name), k.get(DURATION) or 0.0) for k in kernels]
        if not values or any(v is None for v, _ in values):
            continue
        if name.endswith((".pct", "_pct", ".pct_of_peak_sustained_active")):
            total = sum(w for _, w in values)
            out[name] = sum(v * w for v, w in values) / total if total else sum(v for v, _ in values) / len(values)
        else:
            out[name] = float(sum(v for v, _ in values))
    return out


def problem(log_text: str, returncode: int | None) -> str | None:
    """The one line to print when ncu gave no counters: the fix for a known refusal, else ncu's
    first error line; None when it ran."""
    if "ERR_NVGPUCTRPERM" in log_text:
        return NO_PERMISSION
    errors = [ln.split("==ERROR==", 1)[1].strip() for ln in log_text.splitlines() if "==ERROR==" in ln]
    if errors:
        return f"--counters: ncu failed: {errors[0]}; the run went on without counters"
    if returncode not in (0, None):
        return f"--counters: ncu exited with code {returncode}; the run went on without counters"
    return None


# ---- in the worker: one step's counters ----------------------------------------------------

def collect(step: Step, rows: list, *, at: Callable[[str, str], None] | None = None) -> None:
    """Fill the counters of every PASS row of one step (rows in place); see the module doc."""
    variants = step.variants
    by_name = {r.variant: r for r in rows}
    todo = [v for v in variants if v.name in by_name and by_name[v.name].check == "PASS"]
    for v in variants:
        row = by_name.get(v.name)
        if row is not None and row.check != "PASS":
            row.counters_note = f"not profiled: {row.check}"
    if not todo:
        return
    _theoretical_occupancy([by_name[v.name] for v in todo])
    ncu = ncu_path()
    if ncu is None:
        _fail([by_name[v.name] for v in todo], NO_NCU)
        return
    try:
        kernels, manifest, why, dropped = _profile(ncu, step.only(todo), at)
    except Exception as exc:  # noqa: BLE001 -- counters never cost a row
        kernels, manifest, dropped = [], [], []
        why = f"--counters: {type(exc).__name__}: {exc}; the run went on without counters"
    if dropped:  # the rows go on with the metrics ncu did give
        first = by_name[todo[0].name]
        first.warnings = [*first.warnings, f"--counters: ncu has no metric {', '.join(dropped)} on this GPU; the rows "
                                           "go on without it"]
    if why:
        _fail([by_name[v.name] for v in todo], why)
        return
    if not kernels:
        _fail([by_name[v.name] for v in todo], "--counters: ncu profiled no kernel of this step; the run went on "
                                                "without its counters")
        return
    grouped = group(kernels, manifest)
    for v in todo:
        row = by_name[v.name]
        mine = grouped.get(v.name)
        if not mine:
            launched = next((m.get("launches") for m in manifest if m["variant"] == v.name), None)
            row.counters_note = "no kernel ran (a copy)" if launched is None else "kernels not matched"
            continue
        row.counters = combine(mine)
        fill_counters(row)


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def fill_counters(row: Result) -> None:
    """The counter columns of a row from its raw counters (row.counters, ncu metric names) and
    its model: bytes (logical), model["model_bytes"] (a workload's modelled requests, GEMM's),
    occupancy_theoretical_pct (PMPP 5.6 by hand). A ratio whose model is missing stays None."""
    c = row.counters
    if not c:
        return
    rd, wr = c.get(DRAM_READ), c.get(DRAM_WRITE)
    row.dram_read_bytes = None if rd is None else int(rd)
    row.dram_write_bytes = None if wr is None else int(wr)
    if rd is not None and wr is not None:
        row.dram_vs_model = _ratio(rd + wr, row.bytes)
    row.l2_hit_pct, row.l1_hit_pct = c.get(L2_HIT), c.get(L1_HIT)
    ld, st = c.get(GLOBAL_LD), c.get(GLOBAL_ST)
    if ld is not None and st is not None:
        row.requested_bytes = int(ld + st)
        row.requested_vs_model = _ratio(ld + st, row.model.get("model_bytes") or row.bytes)
    row.smem_ld_wavefronts_per_request = _ratio(c.get(SMEM_LD_WF), c.get(SMEM_LD_REQ))
    row.smem_ld_conflicts_per_request = _ratio(c.get(SMEM_LD_CONFLICTS), c.get(SMEM_LD_REQ))
    row.smem_st_wavefronts_per_request = _ratio(c.get(SMEM_ST_WF), c.get(SMEM_ST_REQ))
    lanes = _ratio(c.get(THREAD_INST), c.get(WARP_INST))
    row.warp_efficiency_pct = None if lanes is None else 100.0 * lanes / WARP_SIZE
    atom, red = c.get(GLOBAL_ATOM), c.get(GLOBAL_RED)
    row.global_atomic_requests = None if atom is None and red is None else int((atom or 0) + (red or 0))
    shared = c.get(SHARED_ATOM)
    row.shared_atomic_instructions = None if shared is None else int(shared)
    row.tensor_pipe_pct = c.get(TENSOR_PIPE)
    row.occupancy_achieved_pct = c.get(OCCUPANCY)
    row.occupancy_vs_theoretical = _ratio(row.occupancy_achieved_pct, row.occupancy_theoretical_pct)


def _fail(rows: list, why: str) -> None:
    for row in rows:
        row.counters_note = why
    rows[0].warnings = [*rows[0].warnings, why]  # printed once per run (identical lines are merged)


def _theoretical_occupancy(rows: list) -> None:
    """PMPP 5.6's occupancy by hand (occupancy.py) for every row that launched one kernel."""
    try:
        limits = occupancy.limits_for_current_device()
    except Exception:  # noqa: BLE001 -- counters never cost a row
        return
    for row in rows:
        if row.registers is None or not row.threads_per_block:
            continue
        dynamic = row.dynamic_smem_bytes or 0
        occ = occupancy.occupancy(limits, row.threads_per_block, row.registers, (row.static_smem_bytes or 0) + dynamic,
                                  dynamic_smem=dynamic)
        row.occupancy_theoretical_pct = occ.occupancy_pct


def _profile(ncu: str, step: Step, at) -> tuple[list, list, str | None, list]:
    """Run the child under ncu: (kernels, manifest, None, metrics dropped) or ([], [], the
    one-line problem, metrics dropped).
    A metric this GPU or ncu does not know, or an option an older ncu lacks (the NVTX
    renaming), is dropped and the step profiled once more without it (the row's counters
    then lack that metric; without the renaming kernels are matched by launch order)."""
    workload, shape, variants = step.workload, step.shape, step.variants
    gc.collect()  # the step's buffers: the child needs the same memory again
    try:
        cupy().get_default_memory_pool().free_all_blocks()
    except Exception:  # noqa: BLE001 -- no pool to empty (no GPU in this process)
        pass
    metrics, rename = list(METRICS), True
    with tempfile.TemporaryDirectory(prefix="pmppbench-counters-") as tmp:
        spec, manifest_path = Path(tmp, "spec.pkl"), Path(tmp, "manifest.json")
        spec.write_bytes(pickle.dumps(step))
        for attempt in range(3):
            log = Path(tmp, f"ncu{attempt}.csv")
            cmd = ncu_command(ncu, log, spec, manifest_path, metrics, rename)
            log_text, child_text, code, timed_out = _run(cmd, Path(tmp, f"child{attempt}.txt"), variants, at)
            _keep(workload, shape, log_text, child_text)
            dropped = [m for m in METRICS if m not in metrics]
            if timed_out:
                return [], [], (f"--counters: ncu took over {TIMEOUT_S:.0f} s on {workload.name} "
                                f"{workload.label(shape)} and was stopped; the run went on without its counters"), dropped
            kernels = parse_csv(log_text)
            manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else []
            why = problem(log_text + "\n" + child_text, code)
            if kernels or not why:
                return kernels, manifest, None, dropped
            errors = "\n".join(ln for ln in (log_text + "\n" + child_text).splitlines() if "ERROR" in ln)
            unknown = [m for m in metrics if m in errors]
            if unknown and why != NO_PERMISSION:
                metrics = [m for m in metrics if m not in unknown]
                continue
            if rename and "print-nvtx-rename" in errors:
                rename = False
                continue
            tail = [ln for ln in child_text.splitlines() if ln.strip() and not ln.startswith("==")][-1:]
            if tail and code:  # the child's own last word (a traceback's last line)
                why += f" (the rerun said: {tail[0][:200]})"
            return [], [], why, dropped
    return [], [], "--counters: ncu refused every metric; the run went on without counters", list(METRICS)


def own_group() -> dict:
    """Popen's options that start ncu in a process group of its own, so that a stop takes ncu
    and the rerun it started together: a new session on POSIX, a new process group on Windows."""
    if os.name == "nt":
        return {"creationflags": getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0x200)}
    return {"start_new_session": True}


def kill_group(pid: int) -> None:
    """Stop the process `pid` and every process it started (own_group's)."""
    if os.name == "nt":  # no process groups to signal: taskkill ends the tree
        subprocess.run(["taskkill", "/F", "/T", "/PID", str(pid)], capture_output=True, check=False)
    else:
        os.killpg(pid, signal.SIGKILL)


def _run(cmd: list[str], out_path: Path, variants: list, at) -> tuple[str, str, int | None, bool]:
    """Run ncu (its own process group), telling the supervisor the worker is alive; (ncu's log,
    the child's output, exit code, whether it was stopped at TIMEOUT_S)."""
    log = Path(cmd[cmd.index("--log-file") + 1])
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parent.parent)  # the child imports this same pmppbench
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    timed_out = False
    with open(out_path, "wb") as out:
        try:
            proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, **own_group())
        except OSError as exc:
            return "", f"==ERROR== could not start ncu: {exc}", 1, False
        started = time.monotonic()
        while True:
            try:
                proc.wait(timeout=HEARTBEAT_S)
                break
            except subprocess.TimeoutExpired:
                pass
            if time.monotonic() - started > TIMEOUT_S:
                kill_group(proc.pid)
                proc.wait()
                timed_out = True
                break
            if at:
                at(variants[0].name, "counters")
    log_text = log.read_text(errors="replace") if log.exists() else ""
    return log_text, out_path.read_text(errors="replace"), proc.returncode, timed_out


def _keep(workload, shape: dict, log_text: str, child_text: str) -> None:
    """With PMPPBENCH_COUNTERS_LOGS=DIR, ncu's own output is kept there for a look by hand."""
    keep = os.environ.get("PMPPBENCH_COUNTERS_LOGS")
    if not keep:
        return
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{workload.name}_{workload.label(shape)}")
    Path(keep).mkdir(parents=True, exist_ok=True)
    Path(keep, f"{stem}.ncu.csv").write_text(log_text)
    Path(keep, f"{stem}.child.txt").write_text(child_text)


# ---- the child, under ncu ---------------------------------------------------------------------

def child(spec_path: str, manifest_path: str) -> int:
    """Set the step's shape up again (same seed) and run each variant once in its NVTX range,
    between cudaProfilerStart and cudaProfilerStop."""
    import cupy.cuda.nvtx as nvtx  # noqa: PLC0415 (CuPy: only where a GPU runs)
    import cupy.cuda.profiler as profiler  # noqa: PLC0415 (CuPy: only where a GPU runs)

    step: Step = pickle.loads(Path(spec_path).read_bytes())
    w, shape, variants = step.workload, step.shape, list(step.variants)
    sync = cupy().cuda.Device().synchronize
    with prepared(w, shape, variants, step.seed) as (_inputs, ctx):
        jobs = [(v, job_for(w, v, shape, ctx)) for v in variants]
        manifest = [{"variant": v.name, "launches": launch_count(job)} for v, job in jobs]
        Path(manifest_path).write_text(json.dumps(manifest))
        sync()
        profiler.start()
        try:
            for v, job in jobs:
                nvtx.RangePush(RANGE_PREFIX + v.name)
                try:
                    job.run()
                    sync()
                finally:
                    nvtx.RangePop()
        finally:
            profiler.stop()
    return 0


def launch_count(job) -> int | None:
    """Kernel launches in one call of `job` (None: a library call, launches unknown)."""
    if job.launches:
        return len(job.launches)
    return 1 if job.launch is not None and job.run is job.launch else None


if __name__ == "__main__":
    raise SystemExit(child(sys.argv[1], sys.argv[2]))
