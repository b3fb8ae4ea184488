"""GPU work in a supervised worker process, so a kernel that faults or hangs costs only its row.

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
import pickle
import signal
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from pmppbench.engine import counters, runner
from pmppbench.hardware import device
from pmppbench.hardware.inventory import DeviceId
from pmppbench.errors import PmppError
from pmppbench.hardware.gpu import cupy, require_device
from pmppbench.engine.plan import Step
from pmppbench.row import Result, error_row
from pmppbench.engine.runner import StickyCudaError, spent, sticky_error, take_spent

_ENV_LOCK = threading.Lock()
DEFAULT_PHASE_S = 60.0  # no check, warmup or batch of the bundled workloads comes near this
SLOW_FRACTION = 0.01  # a variant at 1% of the device's peaks still finishes a batch in time

Progress = Callable[[str, str, str], None]  # (workload, variant, shape label): the variant checked now
RunStep = Callable[["Step", "Progress | None"], "list[Result]"]  # a Lane's way to run a step


def run_step(step: Step, *, progress: Progress | None = None, at: Callable[[str, str], None] | None = None,
             host: runner.HostWork | None = None) -> list[Result]:
    """One step in this process: the runner's rows (compile, check, time, derive), then, with
    --counters, each passing variant once more under ncu (counters.collect)."""
    rows = runner.run_shape(step.workload, step.shape, protocol=step.protocol, check_only=step.check_only,
                            seed=step.seed, variants=list(step.variants), run_id=step.run_id, progress=progress,
                            at=at, host=host)
    if step.protocol.counters:  # after the batches and the teardown: one more, untimed run under ncu
        with spent("counters"):
            counters.collect(step, rows, at=at)
    return rows


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


# ---- what the supervisor and its worker say to each other (pickled through their Pipe) ----
#
# supervisor -> worker: PlanAhead (with the start), a Step to run, Stop.
# worker -> supervisor: At before every check, warmup and batch; then Rows, or Sticky (the
# worker exits next), or Failed (the step failed as a whole; the worker is fine).

@dataclass(frozen=True)
class PlanAhead:
    """The steps a worker will be sent, in order: sent once when it starts (Supervisor.start),
    so that it can make their host work ahead."""

    steps: tuple[Step, ...] = ()

    def index(self, step: Step) -> int | None:
        """Where `step` stands in the plan; None when it is not in it."""
        return next((i for i, s in enumerate(self.steps) if s.place == step.place), None)


@dataclass(frozen=True)
class Stop:
    """The session is done with this worker: exit."""


@dataclass(frozen=True)
class At:
    """The heartbeat: `variant` enters `phase` (check, warmup, batch, counters, ...)."""

    variant: str
    phase: str


@dataclass(frozen=True)
class Rows:
    """The step's rows, and the runner phases (runner.spent) the worker spent on it."""

    rows: list
    spent: dict


@dataclass(frozen=True)
class Sticky:
    """A sticky CUDA error (`error`, e.g. cudaErrorIllegalAddress) in `variant`: the worker exits."""

    variant: str
    error: str
    detail: str


@dataclass(frozen=True)
class Failed:
    """The step failed as a whole (a compile error, a shape too large); the worker is fine.
    `error` is the exception itself: a PmppError keeps its type (and so its exit code)."""

    error: Exception


class WorkerFault(Exception):
    """A step that failed as a whole inside the worker with an error pmppbench does not name."""


def _portable(exc: Exception) -> Exception:
    """The error as it can cross the pipe: a PmppError as it is, anything else as a WorkerFault
    with its type and message."""
    if isinstance(exc, PmppError):
        try:
            pickle.loads(pickle.dumps(exc))  # the supervisor must be able to unpickle it too
            return exc
        except Exception:  # noqa: BLE001 -- an error that will not pickle still says what happened
            return WorkerFault(str(exc))
    return WorkerFault(f"{type(exc).__name__}: {exc}")


# ---- host work ahead ------------------------------------------------------------------------

def _ahead_bytes() -> int:
    """Host memory one worker may hold ahead (by the workloads' own estimates): 8 GiB, or a
    16th of the machine's memory where that is less (a node may run a worker per GPU)."""
    try:
        ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        ram = 16 << 30
    return min(8 << 30, ram // 16)


AHEAD_BYTES = _ahead_bytes()


class Ahead:
    """The next steps' host work (seeded inputs, CPU references: runner.host_work) done on a
    background thread while the GPU runs the current step, so a step finds it ready.

    Event-timed batches do not notice: the protocol's hold keeps the GPU busy until every
    call of a batch is queued, however long the host takes to queue them. A step that shares
    the host link (the stream workload's host-timed PCIe copies) does notice the host's
    memory and CPU being busy, so before one runs, the work in flight is finished first and
    nothing new starts until it is done. What is queued but not begun waits (the builds) or is
    dropped, to be planned again after the step (the host work), so such a step waits for one
    build and one step's host work at most (docs/architecture.md, "inputs and references")."""

    def __init__(self, budget_bytes: int = AHEAD_BYTES):
        self.pool = ThreadPoolExecutor(1, thread_name_prefix="pmppbench-ahead")
        self.jobs: dict[tuple, tuple[Any, int]] = {}  # Step.key -> (future, estimated bytes)
        self.budget = budget_bytes
        self.expected = PlanAhead()  # the plan, followed step by step
        # Workload.prebuild of every step of the plan (a library's JIT build: host time, no
        # memory held), on its own thread from the start: the builds finish while the GPU
        # runs the first steps, not when their own step comes.
        self.builds = ThreadPoolExecutor(1, thread_name_prefix="pmppbench-build")
        self.built: dict[tuple, Any] = {}  # Step.key -> future
        self.builds_open = threading.Event()  # cleared while a step that shares the host link runs
        self.builds_open.set()
        self.building = threading.Lock()  # held while a build runs
        self.closed = False

    def expect(self, plan: PlanAhead) -> None:
        """The plan: start every step's prebuild, and the host work of its first steps (as
        much as the budget holds)."""
        self.expected = plan
        for step in plan.steps:
            if step.key not in self.built:
                self.built[step.key] = self.builds.submit(self._build, step)
        self.plan(plan.steps)

    def _build(self, step: Step) -> None:
        """The step's prebuild, once no step that shares the host link is running."""
        while not self.closed:
            self.builds_open.wait()
            with self.building:
                if self.builds_open.is_set() and not self.closed:
                    _prebuild(step)
                    return

    def after(self, step: Step) -> None:
        """`step` is running: start the host work of the plan's steps after it (and the builds)."""
        self.builds_open.set()
        i = self.expected.index(step)
        if i is not None:
            self.plan(self.expected.steps[i + 1:])

    def take(self, step: Step) -> runner.HostWork | None:
        """The step's host work if it was done ahead (waiting for it if still running), else None."""
        job = self.jobs.pop(step.key, None)
        if job is None:
            return None
        try:
            return job[0].result()
        except Exception:  # noqa: BLE001 -- made again in the step, where its error gets its rows
            return None

    def plan(self, ahead) -> None:
        """Start the host work of the steps in `ahead`, in order, while the estimates fit."""
        held = sum(size for _, size in self.jobs.values())
        for step in ahead:
            if step.key in self.jobs:
                continue
            try:
                size = 2 * int(step.workload.device_bytes(step.shape))  # inputs and references, about the device's share
            except Exception:  # noqa: BLE001 -- a step refused as bad input says so itself
                continue
            if held + size > self.budget:
                return
            held += size
            self.jobs[step.key] = (self.pool.submit(runner.host_work, step.workload, step.shape, list(step.variants),
                                                    step.seed), size)

    def drain(self) -> None:
        """Before a step that shares the host link: finish the host work and the build running,
        drop the host work not begun (a step finds none and makes its own, or `after` plans it
        again) and start no other build until `after` a step that does not share the link."""
        self.builds_open.clear()
        with self.building:  # the build in flight, if any, ends
            pass
        for key in [k for k, (future, _) in self.jobs.items() if future.cancel()]:
            del self.jobs[key]  # all of them before waiting: the pool would start the next
        for future, _ in self.jobs.values():
            try:
                future.result()
            except Exception:  # noqa: BLE001
                pass

    def close(self) -> None:
        """Drop the work not yet started (the plan is over); what runs finishes."""
        self.closed = True
        self.builds_open.set()  # a build waiting for the gate returns
        self.pool.shutdown(wait=False, cancel_futures=True)
        self.builds.shutdown(wait=False, cancel_futures=True)


def _prebuild(step: Step) -> None:
    """The step's Workload.prebuild; its error is the step's job() to report, in its rows."""
    try:
        step.workload.prebuild(step.shape, list(step.variants))
    except Exception:  # noqa: BLE001
        pass


# ---- the worker process -------------------------------------------------------------------

def serve(conn, quiet_stderr: bool = True) -> None:
    """The worker's main loop: run each Step received, answer with its Rows."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the session's to handle
    if quiet_stderr:  # no library noise from a dying context reaches the terminal
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)
    ahead = Ahead()
    queued = [conn.recv()] if conn.poll(0.1) else []
    if queued and isinstance(queued[0], PlanAhead):  # sent with the start (Supervisor.start):
        ahead.expect(queued.pop())  # the first steps' host work runs while CUDA starts
    _make_context()
    last = [""]

    def at(variant: str, phase: str) -> None:
        last[0] = variant
        conn.send(At(variant, phase))

    while True:
        message = queued.pop() if queued else conn.recv()
        if isinstance(message, PlanAhead):
            ahead.expect(message)
            continue
        if not isinstance(message, Step):  # Stop
            ahead.close()
            return
        step = message
        shared = step.workload.shares_host_link
        try:
            with spent("inputs"):  # what the step waits for of its host work (none when it was done ahead)
                host = ahead.take(step)
                if shared:
                    ahead.drain()
            if not shared:
                ahead.after(step)
            rows = run_step(step, at=at, host=host)
            conn.send(Rows(rows, take_spent()))
        except StickyCudaError as exc:
            conn.send(Sticky(exc.variant, exc.name, exc.detail))
            os._exit(70)  # the context is gone; exit without running its destructors
        except PmppError as exc:
            conn.send(Failed(_portable(exc)))
        except Exception as exc:
            name = sticky_error(exc)
            if name:  # a fault surfacing later (a batch's synchronize): the last variant that ran
                conn.send(Sticky(last[0], name, f"{type(exc).__name__}: {exc}"))
                os._exit(70)
            conn.send(Failed(_portable(exc)))


def _make_context() -> None:
    """Create this process's CUDA context before the first step arrives; a machine without a
    GPU says so in that step's rows instead."""
    try:
        require_device()
        cupy().cuda.runtime.free(0)  # the first runtime call makes the primary context
    except Exception:  # noqa: BLE001
        pass


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
        self.spent: dict[str, float] = {}  # phase -> seconds its workers reported (runner.spent)
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


__all__ = ["Lane", "Supervisor", "WorkerFault", "run_step", "in_process", "serve", "sanitizer_command", "PlanAhead",
           "Stop", "At", "Rows", "Sticky", "Failed"]
