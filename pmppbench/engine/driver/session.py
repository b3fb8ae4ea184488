"""The one orchestration behind every workload command and `all`.

A Plan is a list of Steps (planning.py: one workload on one shape, with its variants,
protocol and seed). `run` hands each step to a lane (a GPU and its supervised worker, a Ray
actor, or this process), streams every finished row to the sinks the moment it exists,
turns a step that fails as a whole (a compile error, a device fault) into ERROR rows for its
variants and goes on, and stops cleanly on Ctrl-C with every finished row already in the
sinks. `run_and_report` is what the commands call: --out checked first, the run, then the
tables and the exit code, which follows from the rows and the types of the steps' errors
(`exit_problem`).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol as TypingProtocol

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from pmppbench.hardware import device, inventory
from pmppbench.engine.driver import fleet
from pmppbench.results import metadata
from pmppbench import workloads
from pmppbench.measure.check import CHECK_KERNELS
from pmppbench.hardware.compile import Prefetch, cache_dir
from pmppbench.errors import CheckFailed, EnvironmentProblem, PmppError, UsageError
from pmppbench.results.export import files, terminal
from pmppbench.results.health import print_health
from pmppbench.engine.plan import Plan, Step
from pmppbench.measure.protocol import Protocol
from pmppbench.row import Result, error_row
from pmppbench.engine.worker.pipeline import PHASES, kernel_unit, take_spent
from pmppbench.engine.driver.supervisor import Lane, RunStep, Supervisor, in_process
from pmppbench.workloads.base import arch_meets

__all__ = ["Plan", "Step", "Lane", "Outcome", "run", "exit_problem", "run_and_report", "error_rows"]


@dataclass
class Outcome:
    rows: list[Result] = field(default_factory=list)
    interrupted: bool = False
    failed: list[tuple[Exception, list[Result]]] = field(default_factory=list)  # steps that failed as a whole: the error, its ERROR rows


class Sink(TypingProtocol):
    def add(self, row: Result) -> None: ...


Says = Callable[[str], None]  # a line saying what runs now


def error_rows(step: Step, exc: BaseException) -> list[Result]:
    """One ERROR row per variant of a step that failed as a whole."""
    message = f"{type(exc).__name__}: {exc}".splitlines()[0] if not isinstance(exc, PmppError) \
        else str(exc).splitlines()[0]
    w = step.workload
    return [error_row(w.name, v.name, w.label(step.shape), step.shape, message, step.seed, step.run_id)
            for v in step.variants]


def run(plan: Plan, sinks: Iterable[Sink] = (), *, progress: Says | None = None,
        advance: Callable[[], None] | None = None, debug: bool = False,
        run_step: RunStep = in_process, lanes: list[Lane] | None = None,
        host_link_parallel: bool = False) -> Outcome:
    """Run every step; see the module doc. Without `lanes`, one lane runs `run_step` (this
    process by default; a seam for tests).

    With several `lanes` (--devices) every GPU runs the whole plan, with the same seeds,
    concurrently, one thread per GPU; steps of a workload that `shares_host_link` (the
    stream workload's PCIe copies) run one GPU at a time unless `host_link_parallel`."""
    sinks = list(sinks)
    lanes = lanes or [Lane(run_step)]
    out = Outcome()
    lock, host_link, stop = threading.Lock(), threading.Lock(), threading.Event()

    def keep(row: Result) -> None:
        with lock:
            if stop.is_set():
                return  # after Ctrl-C: what a killed worker reports is not a result
            out.rows.append(row)
            for s in sinks:
                s.add(row)

    def one(step: Step, lane: Lane) -> list[Result]:
        says = (lambda w, v, s: progress(f"{w} {s}: {v}")) if progress else None
        try:
            shared = step.workload.shares_host_link and len(lanes) > 1 and not host_link_parallel
            with host_link if shared else contextlib.nullcontext():
                return tag(lane.run(step, says), lane)
        except KeyboardInterrupt:
            raise
        except Exception as exc:  # the step's rows say what went wrong; the run goes on
            if isinstance(exc, EnvironmentProblem) and len(lanes) == 1:
                raise  # nothing can run on this machine (exit 3); with several GPUs only this one's rows
            if debug and not isinstance(exc, PmppError):
                raise
            rows = tag(error_rows(step, exc), lane)
            with lock:
                out.failed.append((exc, rows))
            return rows

    def tag(rows: list[Result], lane: Lane) -> list[Result]:
        if lane.device is not None:
            for row in rows:
                row.device_uuid, row.device_pci = lane.device.uuid, lane.device.pci_bus_id
                row.device = row.device or lane.device.name
        return rows

    def walk(lane: Lane, failure: list) -> None:
        try:
            for step in plan.steps:
                if stop.is_set():
                    return
                for row in one(step, lane):
                    keep(row)
                if advance:
                    advance()
        except BaseException as exc:  # noqa: BLE001 -- handed to the main thread
            failure.append(exc)

    try:
        if len(lanes) == 1:
            failure: list = []
            walk(lanes[0], failure)
            if failure:
                raise failure[0]
        else:
            failures: list = []
            threads = [threading.Thread(target=walk, args=(lane, failures), daemon=True) for lane in lanes]
            for t in threads:
                t.start()
            for t in threads:
                while t.is_alive():
                    t.join(timeout=0.2)
            if failures:
                raise failures[0]
    except KeyboardInterrupt:
        stop.set()
        out.interrupted = True
    return out


def exit_problem(out: Outcome) -> PmppError | None:
    """What the run's exit says: None when every row passed (or was skipped); the bad input
    (a UsageError: exit 2) when every row that did not pass is a step's refused as bad input;
    otherwise a failed check (exit 1)."""
    bad = [r for r in out.rows if not r.ok]
    if not bad:
        return None
    refused = [exc for exc, _ in out.failed if isinstance(exc, UsageError)]
    theirs = {id(r) for exc, rows in out.failed if isinstance(exc, UsageError) for r in rows}
    if refused and all(id(r) in theirs for r in bad):
        return refused[0]
    return CheckFailed(f"{len(bad)} of {len(out.rows)} rows did not PASS: "
                       + "; ".join(f"{r.workload} {r.variant} {r.shape}: {r.error or r.check_detail}"
                                   for r in bad[:3]))


# ---- a run with its files and tables (what the commands call) ----------------------------

def run_and_report(plan: Plan, *, out: list | None, force: bool, quiet: bool, protocols: dict, console, err_console,
                   debug: bool = False, timeout_s: float | None = None, devices: str | None = None,
                   host_link_parallel: bool = False, ray: str | None = None, **meta_extra: Any) -> None:
    """Every --out checked before any work, the steps run by a supervised worker process
    (pmppbench/engine/driver/supervisor.py), rows streamed to each --out file as they finish, a progress bar on stderr,
    then the tables, warnings, repeatability and summary on stdout; raises what the exit
    should say (nothing when every row passed)."""
    if ray and devices:
        raise UsageError("--devices and --ray: choose one (with --ray every GPU of the cluster runs the plan)")
    started = time.perf_counter()
    outs = files.check_outputs(list(out or []), force)
    supervisors, lanes = [], []
    if ray:  # every GPU of a Ray cluster, each through its actor (pmppbench/engine/driver/fleet.py)
        lanes = fleet.lanes(ray, timeout_s)
        chosen = [lane.device for lane in lanes]
    else:
        visible = inventory.visible()
        chosen = [visible[i] for i in inventory.parse(devices, len(visible))] if devices else [visible[0]]
    if not quiet:
        for d in chosen:
            line = inventory.first_run_line(d, arch_skips(plan, d.arch), cache_dir() / "gpus-seen.json")
            if line:
                console.print(line, highlight=False, markup=False)
    meta = metadata.run_meta(plan.steps[0].seed if plan.steps else 0, run_id=plan.run_id, check_only=plan.check_only,
                             protocol={k: v.__dict__ for k, v in protocols.items()},
                             devices=[d.__dict__ for d in chosen], ray=ray or "", gpu_required=not ray, **meta_extra)
    sinks = files.open_sinks(outs, meta)
    bar = Progress(TextColumn("{task.description:<48}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                   console=err_console, disable=quiet, transient=True)
    prefetch = None
    if debug and not ray:  # in this process, for tracebacks (the current GPU only)
        lanes = [Lane(in_process, chosen[0])]
    elif not ray:  # one supervised worker per GPU, pinned to it when --devices names GPUs
        supervisors = [Supervisor(timeout_s, pin=d.pin if devices else None) for d in chosen]
        lanes = [Lane(s.run, d, spent=lambda s=s: s.spent, start=s.start) for s, d in zip(supervisors, chosen)]
    for lane in lanes:
        if lane.start:
            lane.start(list(plan.steps))  # each worker makes its context and the first inputs while the kernels compile
    if not ray:
        prefetch = _prefetch(plan, {d.arch for d in chosen})
    try:
        with bar:
            task = bar.add_task("starting", total=len(plan.steps) * len(lanes))
            outcome = run(plan, sinks, debug=debug, lanes=lanes, host_link_parallel=host_link_parallel,
                          progress=lambda text: bar.update(task, description=text), advance=lambda: bar.advance(task))
    finally:
        if prefetch:
            prefetch.close(wait=False)
        for sup in supervisors:
            sup.close()
        where = wall_time(time.perf_counter() - started, [_spent(lane) for lane in lanes] + [take_spent()],
                          len(lanes))
        meta["wall_s"] = where
        for sink in sinks:
            sink.close(meta)
    rows = outcome.rows
    several = len(lanes) > 1
    titles = {s.workload.name: s.workload.title for s in plan.steps}
    if not quiet:
        for name in dict.fromkeys(r.workload for r in rows):
            for d in (chosen if several else [None]):
                mine = [r for r in rows if r.workload == name and (d is None or r.device_uuid == d.uuid)]
                if mine:
                    title = titles[name] + (f" · {d.label}" if d else "")
                    terminal.print_table(console, mine, title=title, caption=caption(mine, protocols[name], plan.check_only))
        terminal.print_warnings(console, rows)
    if several:
        print_health(console, rows)
    terminal.print_stability(console, rows)
    console.print(wall_line(meta["wall_s"]), highlight=False)
    passed = sum(r.check == "PASS" for r in rows)
    console.print(f"{len(rows)} rows, {passed} PASS" + (f"; written to {', '.join(map(str, outs))}" if outs and rows else "")
                  + (" (interrupted: finished rows kept)" if outcome.interrupted else ""), highlight=False)
    if outcome.interrupted:
        raise KeyboardInterrupt
    problem = exit_problem(outcome)
    if problem:
        raise problem


def arch_skips(plan: Plan, arch: str) -> list[str]:
    """The plan's variants a GPU of `arch` ("sm_75") cannot run, each once, with the arch it needs."""
    return list(dict.fromkeys(f"{s.workload.name} {v.name} (needs {v.needs})" for s in plan.steps for v in s.variants
                              if arch_skips_variant(arch, v)))


def arch_skips_variant(arch: str, variant) -> bool:
    """Whether a GPU of `arch` ("sm_75"; "" when unknown: no) makes `variant` a SKIP row."""
    if not arch:
        return False
    return not arch_meets(arch, variant.needs)


def _prefetch(plan: Plan, archs: set[str]):
    """Every unit the plan compiles, compiled ahead in a pool of processes (compile.Prefetch)."""
    units = [("check", CHECK_KERNELS, ())] + ([("timing", ("hold",), ())] if not plan.check_only else [])
    archs = {a for a in archs if a}
    arch = next(iter(archs)) if len(archs) == 1 else ""
    for step in plan.steps:
        try:  # what the runner compiles: without the variants this GPU skips (runner.prepared)
            unit = kernel_unit(step.workload, step.shape, [v for v in step.variants if not arch_skips_variant(arch, v)])
        except PmppError:
            continue  # the step itself will say what is wrong
        if unit[1]:
            units.append(unit)
    if len(archs) != 1 or len(units) < 2:
        return None  # one unit gains nothing from a pool; GPUs of several architectures compile in their steps
    return Prefetch.for_gpu(units, archs.pop())


def _spent(lane: Lane) -> dict[str, float]:
    try:
        return lane.spent() if lane.spent else {}
    except Exception:  # noqa: BLE001 -- a dead Ray actor: its share shows as "other"
        return {}


def wall_time(wall: float, reports: list[dict[str, float]], gpus: int) -> dict[str, float]:
    """Where the run's wall time went: each runner phase (summed over the workers' reports,
    averaged over the GPUs that ran at once), and `other` (worker start-up, transfers,
    printing) for the rest."""
    out = {"wall": wall}
    for phase in PHASES:
        out[phase] = sum(r.get(phase, 0.0) for r in reports) / max(gpus, 1)
    out["other"] = max(0.0, wall - sum(out[p] for p in PHASES))
    return out


def wall_line(w: dict[str, float]) -> str:
    names = {"timed": "timed GPU work", "checks": "checks", "references": "references", "inputs": "inputs",
             "compile": "compile", "counters": "counters", "other": "other"}
    return f"wall time {w['wall']:.1f} s: " + ", ".join(f"{label} {w[k]:.1f} s" for k, label in names.items()
                                                        if k != "counters" or w.get(k))  # --counters only


def caption(rows: list[Result], protocol: Protocol, check_only: bool) -> str:
    """The table's caption: the device, then the protocol (or the check rules)."""
    try:
        d = device.current()
        where = f"{d.name} ({d.arch})"
    except EnvironmentProblem:  # a Ray driver without a GPU: the rows name theirs
        where = ", ".join(dict.fromkeys(r.device for r in rows if r.device)) or "?"
    tolerances = "; ".join(dict.fromkeys(r.tolerance for r in rows if r.tolerance))
    what = f"check only · {tolerances}" if check_only else protocol.describe()
    note = ""
    if rows and not check_only:
        note = workloads.get(rows[0].workload).call_note(rows[0].dims)
    return f"{where} · {what}" + (f" · {note}" if note else "")
