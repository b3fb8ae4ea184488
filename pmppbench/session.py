"""The one orchestration behind every workload command and `all`.

A Plan is a list of Steps (one workload on one shape, with its variants, protocol and
seed). `run` hands each step to the runner, streams every finished row to the sinks the
moment it exists, turns a step that fails as a whole (a compile error, a device fault) into
ERROR rows for its variants and goes on, and stops cleanly on Ctrl-C with every finished
row already in the sinks. `run_and_report` is what the commands call: --out checked first,
the run, then the tables and the exit code from the rows (`exit_problem`).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol as TypingProtocol

from pmppbench.errors import CheckFailed, EnvironmentProblem, PmppError, UsageError
from pmppbench.protocol import Protocol
from pmppbench.results import Result, error_row
from pmppbench.workloads.base import Shape, Variant, Workload


@dataclass
class Step:
    workload: Workload
    shape: Shape
    protocol: Protocol
    seed: int
    variants: list[Variant] | None = None  # None: the workload's own choice for the shape

    @property
    def label(self) -> str:
        return f"{self.workload.name} {self.workload.label(self.shape)}"


@dataclass
class Plan:
    steps: list[Step]
    check_only: bool = False
    run_id: str = ""


@dataclass
class Outcome:
    rows: list[Result] = field(default_factory=list)
    interrupted: bool = False
    usage_errors: list[str] = field(default_factory=list)  # steps refused as bad input (e.g. too large)


class Sink(TypingProtocol):
    def add(self, row: Result) -> None: ...


RunShape = Callable[..., list[Result]]
Progress = Callable[[str], None]  # a line saying what runs now


def _default_run_shape(*args: Any, **kwargs: Any) -> list[Result]:
    from pmppbench.runner import run_shape  # noqa: PLC0415 (imports the GPU stack lazily)

    return run_shape(*args, **kwargs)


def error_rows(step: Step, exc: BaseException, run_id: str) -> list[Result]:
    """One ERROR row per variant of a step that failed as a whole."""
    message = f"{type(exc).__name__}: {exc}".splitlines()[0] if not isinstance(exc, PmppError) \
        else str(exc).splitlines()[0]
    w = step.workload
    return [error_row(w.name, v.name, w.label(step.shape), step.shape, message, step.seed, run_id)
            for v in (step.variants or w.variants_for(step.shape))]


@dataclass
class Lane:
    """One GPU of the run and the run_shape that reaches it (its supervised worker)."""

    run_shape: RunShape
    device: Any = None  # devices.DeviceId; None: the current device, untagged
    actor: Any = None  # a Ray fleet's actor behind run_shape (fleet.py), for whoever must stop it
    spent: Callable[[], dict[str, float]] | None = None  # its worker's runner phases so far (wall-time line)
    start: Callable[[list], None] | None = None  # start its worker with the plan (worker.PlanAhead's steps)


def run(plan: Plan, sinks: Iterable[Sink] = (), *, progress: Progress | None = None,
        advance: Callable[[], None] | None = None, debug: bool = False,
        run_shape: RunShape = _default_run_shape, lanes: list[Lane] | None = None,
        host_link_parallel: bool = False) -> Outcome:
    """Run every step; see the module doc. `run_shape` is the runner's (a seam for tests).

    With several `lanes` (--devices) every GPU runs the whole plan, with the same seeds,
    concurrently, one thread per GPU; steps of a workload that `shares_host_link` (the
    stream workload's PCIe copies) run one GPU at a time unless `host_link_parallel`."""
    sinks = list(sinks)
    lanes = lanes or [Lane(run_shape)]
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
        try:
            shared = step.workload.shares_host_link and len(lanes) > 1 and not host_link_parallel
            with host_link if shared else contextlib.nullcontext():
                rows = lane.run_shape(step.workload, step.shape, protocol=step.protocol, check_only=plan.check_only,
                                      seed=step.seed, variants=step.variants, run_id=plan.run_id,
                                      progress=(lambda w, v, s: progress(f"{w} {s}: {v}")) if progress else None)
        except KeyboardInterrupt:
            raise
        except EnvironmentProblem as exc:
            if len(lanes) == 1:
                raise  # nothing can run on this machine (exit 3); with several GPUs only this one's rows
            return tag(error_rows(step, exc, plan.run_id), lane)
        except Exception as exc:  # the step's rows say what went wrong; the run goes on
            if debug and not isinstance(exc, PmppError):
                raise
            if isinstance(exc, UsageError):
                with lock:
                    out.usage_errors.append(str(exc))
            rows = error_rows(step, exc, plan.run_id)
        return tag(rows, lane)

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
    (exit 2) when only refused steps failed; otherwise a failed check (exit 1)."""
    bad = [r for r in out.rows if not r.ok]
    if not bad:
        return None
    if out.usage_errors and all(r.check == "ERROR" and r.error in out.usage_errors for r in bad):
        return UsageError(out.usage_errors[0])
    return CheckFailed(f"{len(bad)} of {len(out.rows)} rows did not PASS: "
                       + "; ".join(f"{r.workload} {r.variant} {r.shape}: {r.error or r.check_detail}"
                                   for r in bad[:3]))


# ---- a run with its files and tables (what the commands call) ----------------------------

def run_and_report(plan: Plan, *, out, force: bool, quiet: bool, protocols: dict, console, err_console,
                   debug: bool = False, timeout_s: float | None = None, devices: str | None = None,
                   host_link_parallel: bool = False, ray: str | None = None, **meta_extra: Any) -> None:
    """--out checked before any work, the steps run by a supervised worker process
    (pmppbench/worker.py), rows streamed to --out as they finish, a progress bar on stderr,
    then the tables, warnings, repeatability and summary on stdout; raises what the exit
    should say (nothing when every row passed)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn  # noqa: PLC0415

    from pmppbench import metadata, resultfile, workloads  # noqa: PLC0415
    from pmppbench.export import terminal  # noqa: PLC0415

    from pmppbench import devices as gpus  # noqa: PLC0415

    if ray and devices:
        raise UsageError("--devices and --ray: choose one (with --ray every GPU of the cluster runs the plan)")
    started = time.perf_counter()
    out = resultfile.check_writable(out, force) if out else None
    supervisors, lanes = [], []
    if ray:  # every GPU of a Ray cluster, each through its actor (pmppbench/fleet.py)
        from pmppbench import fleet  # noqa: PLC0415

        lanes = fleet.lanes(ray, timeout_s)
        chosen = [lane.device for lane in lanes]
    else:
        visible = gpus.visible()
        chosen = [visible[i] for i in gpus.parse(devices, len(visible))] if devices else [visible[0]]
    meta = metadata.run_meta(plan.steps[0].seed if plan.steps else 0, run_id=plan.run_id, check_only=plan.check_only,
                             protocol={k: v.__dict__ for k, v in protocols.items()},
                             devices=[d.__dict__ for d in chosen], ray=ray or "", gpu_required=not ray, **meta_extra)
    sink = resultfile.open_sink(out, meta) if out else None
    bar = Progress(TextColumn("{task.description:<48}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                   console=err_console, disable=quiet, transient=True)
    from pmppbench.runner import take_spent  # noqa: PLC0415 (the in-process phases, --debug)
    from pmppbench.worker import Supervisor  # noqa: PLC0415

    prefetch = None
    if debug and not ray:  # in this process, for tracebacks (the current GPU only)
        lanes = [Lane(_default_run_shape, chosen[0])]
    elif not ray:  # one supervised worker per GPU, pinned to it when --devices names GPUs
        supervisors = [Supervisor(timeout_s, pin=d.pin if devices else None) for d in chosen]
        lanes = [Lane(s.run_shape, d, spent=lambda s=s: s.spent, start=s.start) for s, d in zip(supervisors, chosen)]
    steps = [(s.workload.name, dict(s.shape), s.variants, s.seed) for s in plan.steps]
    for lane in lanes:
        if lane.start:
            lane.start(steps)  # each worker makes its context and the first inputs while the kernels compile
    if not ray:
        prefetch = _prefetch(plan, {d.arch for d in chosen})
    try:
        with bar:
            task = bar.add_task("starting", total=len(plan.steps) * len(lanes))
            outcome = run(plan, [sink] if sink else [], debug=debug, lanes=lanes, host_link_parallel=host_link_parallel,
                          progress=lambda text: bar.update(task, description=text), advance=lambda: bar.advance(task))
    finally:
        if prefetch:
            prefetch.close(wait=False)
        for sup in supervisors:
            sup.close()
        where = wall_time(time.perf_counter() - started, [_spent(lane) for lane in lanes] + [take_spent()],
                          len(lanes))
        meta["wall_s"] = where
        if sink:
            sink.close(meta)
    rows = outcome.rows
    several = len(lanes) > 1
    if not quiet:
        for name in dict.fromkeys(r.workload for r in rows):
            for d in (chosen if several else [None]):
                mine = [r for r in rows if r.workload == name and (d is None or r.device_uuid == d.uuid)]
                if mine:
                    title = workloads.get(name).title + (f" · {d.label}" if d else "")
                    terminal.print_table(console, mine, title=title, caption=caption(mine, protocols[name], plan.check_only))
        terminal.print_warnings(console, rows)
    if several:
        from pmppbench.health import print_health  # noqa: PLC0415

        print_health(console, rows)
    terminal.print_stability(console, rows)
    console.print(wall_line(meta["wall_s"]), highlight=False)
    passed = sum(r.check == "PASS" for r in rows)
    console.print(f"{len(rows)} rows, {passed} PASS" + (f"; written to {out}" if out and rows else "")
                  + (" (interrupted: finished rows kept)" if outcome.interrupted else ""), highlight=False)
    if outcome.interrupted:
        raise KeyboardInterrupt
    problem = exit_problem(outcome)
    if problem:
        raise problem


def _prefetch(plan: Plan, archs: set[str]):
    """Every unit the plan compiles, compiled ahead in a pool of processes (compile.Prefetch)."""
    from pmppbench.check import CHECK_KERNELS  # noqa: PLC0415
    from pmppbench.compile import Prefetch  # noqa: PLC0415
    from pmppbench.runner import kernel_unit  # noqa: PLC0415

    units = [("check", CHECK_KERNELS, ())] + ([("timing", ("hold",), ())] if not plan.check_only else [])
    for step in plan.steps:
        try:
            unit = kernel_unit(step.workload, step.shape, list(step.variants or step.workload.variants_for(step.shape)))
        except PmppError:
            continue  # the step itself will say what is wrong
        if unit[1]:
            units.append(unit)
    archs = {a for a in archs if a}
    if len(archs) != 1 or len(units) < 2:
        return None  # one unit gains nothing from a pool; GPUs of several architectures compile in their steps
    return Prefetch(units, archs.pop())


def _spent(lane: Lane) -> dict[str, float]:
    try:
        return lane.spent() if lane.spent else {}
    except Exception:  # noqa: BLE001 -- a dead Ray actor: its share shows as "other"
        return {}


def wall_time(wall: float, reports: list[dict[str, float]], gpus: int) -> dict[str, float]:
    """Where the run's wall time went: each runner phase (summed over the workers' reports,
    averaged over the GPUs that ran at once), and `other` (worker start-up, transfers,
    printing) for the rest."""
    from pmppbench.runner import PHASES  # noqa: PLC0415

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
    from pmppbench import device  # noqa: PLC0415

    try:
        d = device.current()
        where = f"{d.name} ({d.arch})"
    except EnvironmentProblem:  # a Ray driver without a GPU: the rows name theirs
        where = ", ".join(dict.fromkeys(r.device for r in rows if r.device)) or "?"
    tolerances = "; ".join(dict.fromkeys(r.tolerance for r in rows if r.tolerance))
    what = f"check only · {tolerances}" if check_only else protocol.describe()
    from pmppbench import workloads  # noqa: PLC0415

    note = ""
    if rows and not check_only:
        note = workloads.get(rows[0].workload).call_note(rows[0].dims)
    return f"{where} · {what}" + (f" · {note}" if note else "")
