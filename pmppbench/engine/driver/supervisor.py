"""Driver side: GPU work in a supervised worker process, so a kernel that faults or hangs costs only its row.

Students edit kernels, so kernels fault (an illegal address poisons the whole CUDA context:
every later call in that process fails) and hang (a `while (true)`). The session therefore
never runs kernels itself: a worker process owns the GPU and lives until something goes
wrong, and the Supervisor

- sends it one step at a time (a plan.Step: a workload on a shape, the variants to run)
  and hears a heartbeat before every check, warmup and batch (which variant runs, in which
  phase); what the two say to each other are the small frozen messages below;
- on a sticky CUDA error, a crash of the process, or silence past the phase's time limit,
  kills the worker, gives the variant that was running an ERROR row saying what happened and
  what to run next (the compute-sanitizer command line), starts a fresh worker and runs the
  step again without that variant: every other variant still gets its PASS/FAIL and numbers.

A fresh worker costs about a second (importing CuPy, the first launch), paid once per
session and once per fault. `--debug` runs steps in-process instead, for tracebacks.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pmppbench.engine.messages import At, Failed, PlanAhead, Rows, Sticky, Stop, WorkerFault
from pmppbench.engine.plan import Step
from pmppbench.engine.worker.process import Progress, run_step, serve
from pmppbench.hardware import device
from pmppbench.hardware.inventory import DeviceId
from pmppbench.row import Result, error_row

_ENV_LOCK = threading.Lock()
DEFAULT_PHASE_S = 60.0  # no check, warmup or batch of the bundled workloads comes near this
SLOW_FRACTION = 0.01  # a variant at 1% of the device's peaks still finishes a batch in time

RunStep = Callable[["Step", "Progress | None"], "list[Result]"]  # a Lane's way to run a step


@dataclass
class Lane:
    """One GPU of a run and how a step reaches it: `run(step, progress)` gives the step's rows,
    through a supervised worker (Supervisor.run), a Ray actor (fleet.py) or this process
    (run_step, for --debug)."""

    run: RunStep
    device: DeviceId | None = None  # None: the current device, untagged
    actor: Any = None  # a Ray fleet's actor behind `run` (fleet.py), for whoever must stop it
    spent: Callable[[], dict[str, float]] | None = None  # its worker's runner phases so far (wall-time line)
    start: Callable[[list[Step]], None] | None = None  # start its worker with the plan (Supervisor.start)


def in_process(step: Step, progress: Progress | None = None) -> list[Result]:
    """A lane's `run` in this process (--debug: tracebacks; tests)."""
    return run_step(step, progress=progress)


# ---- the supervisor -------------------------------------------------------------------------

class Supervisor:
    """Runs steps in a worker process; `run` is a Lane's (session.run's seam)."""

    def __init__(self, timeout_s: float | None = None, target=serve, quiet_stderr: bool = True,
                 pin: str | None = None):
        """`pin`: the CUDA_VISIBLE_DEVICES value the worker starts with (one GPU of --devices)."""
        self.timeout_s, self.target, self.quiet_stderr, self.pin = timeout_s, target, quiet_stderr, pin
        self._ctx = multiprocessing.get_context("spawn")  # CUDA does not survive fork
        self._proc = self._conn = None
        self._plan: PlanAhead | None = None  # what start() was given, for every worker started
        self._busy = False  # inside run, waiting on the worker
        self.spent: dict[str, float] = {}  # phase -> seconds its workers reported (pipeline.spent)
        self.started = 0  # workers started so far (tests and the summary read it)

    def __enter__(self) -> "Supervisor":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Let an idle worker exit; kill one still inside a step (after Ctrl-C) at once."""
        if self._conn is not None and not self._busy:
            try:
                self._conn.send(Stop())
            except (OSError, ValueError):
                pass
        self._stop(graceful=not self._busy)
        self._busy = False

    def start(self, steps: list[Step] | None = None) -> None:
        """Start the worker now rather than at the first step: it gets its CUDA context ready
        while the session does other work. `steps` (the plan) go to this worker and to every
        fresh one after a fault, which make their host work ahead."""
        if steps is not None:
            self._plan = PlanAhead(tuple(steps))
        if self._proc is None or not self._proc.is_alive():
            self._stop()
            self._start()

    def _plan_from(self, step: Step) -> None:
        """Drop the plan's steps before this one: a fresh worker is sent only what is left."""
        i = self._plan.index(step) if self._plan is not None else None
        if i:
            self._plan = PlanAhead(self._plan.steps[i:])

    def _start(self) -> None:
        parent, child = self._ctx.Pipe()
        self._proc = self._ctx.Process(target=self.target, args=(child, self.quiet_stderr), daemon=True)
        with _ENV_LOCK:  # a spawned child copies os.environ when it starts: pin it there, then restore
            before = os.environ.get("CUDA_VISIBLE_DEVICES")
            if self.pin is not None:
                os.environ["CUDA_VISIBLE_DEVICES"] = self.pin
            try:
                self._proc.start()
            finally:
                if self.pin is not None:
                    if before is None:
                        os.environ.pop("CUDA_VISIBLE_DEVICES", None)
                    else:
                        os.environ["CUDA_VISIBLE_DEVICES"] = before
        child.close()
        self._conn = parent
        self.started += 1
        if self._plan is not None:
            self._conn.send(self._plan)

    def _stop(self, graceful: bool = False) -> None:
        if self._proc is not None:
            self._proc.join(timeout=5 if graceful else 0.1)
            if self._proc.is_alive():
                self._proc.kill()
                self._proc.join(timeout=10)
        if self._conn is not None:
            self._conn.close()
        self._proc = self._conn = None

    def phase_limit_s(self, step: Step) -> float:
        """How long one phase (a check, a warmup, a batch) may go without a heartbeat: --timeout,
        or the floor, or what `reps` calls of the step's slowest variant would take at
        SLOW_FRACTION of the device's datasheet peaks, with 10x room."""
        if self.timeout_s:
            return self.timeout_s
        try:
            d = device.current()
            bw, fl = d.peak_bandwidth_gbs * 1e9, (d.peak_fp32_gflops or 1e4) * 1e9
        except PmppError:
            bw, fl = 1e12, 1e13
        worst = 0.0
        for v in step.workload.variants_for(step.shape):
            t = step.workload.traffic(step.shape, v)
            worst = max(worst, t.bytes / (SLOW_FRACTION * bw), (t.flops or 0) / (SLOW_FRACTION * fl))
        protocol = step.protocol
        return max(DEFAULT_PHASE_S, 10 * max(protocol.reps, protocol.warmup, 1) * worst)

    def run(self, step: Step, progress: Progress | None = None) -> list[Result]:
        """The step's rows from the worker; a variant that crashed, hung or poisoned the
        context gets an ERROR row and the rest run again in a fresh worker."""
        self._busy = True
        try:
            rows = self._run(step, progress)
        except KeyboardInterrupt:
            raise  # still busy: close() kills the worker rather than waiting for its step
        except Exception:
            self._busy = False  # the step failed as a whole; the worker itself is idle again
            raise
        self._busy = False
        return rows

    def _run(self, step: Step, progress: Progress | None) -> list[Result]:
        w, variants = step.workload, list(step.variants)
        faults: dict[str, Result] = {}
        remaining = list(variants)
        limit = self.phase_limit_s(step)
        self._plan_from(step)
        while remaining:
            if self._proc is None or not self._proc.is_alive():
                self._stop()
                self._start()
            self._conn.send(step.only(remaining))
            culprit, phase, reason = None, "starting", ""
            while True:
                if not self._conn.poll(limit):
                    reason = f"timed out after {limit:.0f} s ({phase}); the worker was killed"
                    break
                try:
                    message = self._conn.recv()
                except (EOFError, OSError):
                    self._proc.join(timeout=5)
                    reason = f"the worker process died (exit code {self._proc.exitcode}) during {phase}"
                    break
                if isinstance(message, At):
                    culprit, phase = message.variant, f"{message.variant}: {message.phase}"
                    if progress and message.phase == "check":
                        progress(w.name, message.variant, w.label(step.shape))
                    continue
                if isinstance(message, Rows):
                    for name, seconds in message.spent.items():
                        self.spent[name] = self.spent.get(name, 0.0) + seconds
                    return self._merge(variants, message.rows, faults)
                if isinstance(message, Sticky):
                    culprit = message.variant or culprit
                    reason = f"{message.error} ({message.detail.split(': ', 1)[-1]})"
                    break
                if isinstance(message, Failed):  # the step failed as a whole, the worker is fine
                    raise message.error
                raise WorkerFault(f"the worker sent {type(message).__name__}, which the supervisor does not know")
            self._stop()  # killed, crashed or poisoned: the next try gets a fresh worker
            names = [v.name for v in remaining]
            if culprit not in names:  # before any variant ran (compile, setup): the step's rows say so
                for v in remaining:
                    faults[v.name] = _fault_row(step, v, reason, hint=False)
                break
            guilty = next(v for v in remaining if v.name == culprit)
            faults[culprit] = _fault_row(step, guilty, reason)
            remaining = [v for v in remaining if v.name != culprit]
        return self._merge(variants, [], faults)

    @staticmethod
    def _merge(variants, rows: list[Result], faults: dict[str, Result]) -> list[Result]:
        by_name = {r.variant: r for r in rows}
        by_name.update(faults)
        return [by_name[v.name] for v in variants if v.name in by_name]


def _fault_row(step: Step, variant, reason: str, hint: bool = True) -> Result:
    w = step.workload
    advice = f"; to find it: {sanitizer_command(w, step.shape, variant)}" if hint else ""
    return error_row(w.name, variant.name, w.label(step.shape), step.shape, reason + advice, step.seed, step.run_id)


def sanitizer_command(workload, shape: dict, variant) -> str:
    """The command line that reruns one variant's check under compute-sanitizer's memcheck."""
    sizes = " ".join(str(shape[d]) for d in workload.dims)
    options = []
    for axis in workload.axes:
        if axis.name in shape:
            value = shape[axis.name]
            options.append(f"{axis.option} {','.join(map(str, value)) if isinstance(value, (tuple, list)) else value}")
    if getattr(variant, "source", None):  # a learner's kernel: the same --kernel and --like
        options += [f"--kernel {variant.source}:{variant.kernel}", f"--like {variant.like}",
                    f"--variants {variant.like}"]
    else:
        options.append(f"--variants {getattr(variant, 'name', variant)}")
    return (f"compute-sanitizer --tool memcheck pmppbench {workload.name} {sizes} "
            + " ".join(options + ["--check-only"])).replace("  ", " ")
