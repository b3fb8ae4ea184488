"""GPU work in a supervised worker process, so a kernel that faults or hangs costs only its row.

Students edit kernels, so kernels fault (an illegal address poisons the whole CUDA context:
every later call in that process fails) and hang (a `while (true)`). The session therefore
never runs kernels itself: a worker process owns the GPU and lives until something goes
wrong, and the Supervisor

- sends it one step at a time (a workload on a shape, the variants to run) and hears a
  heartbeat before every check, warmup and batch (which variant runs, in which phase);
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
import signal
import threading
from dataclasses import dataclass

from pmppbench.errors import CheckFailed, CompileError, EnvironmentProblem, PmppError, UsageError
from pmppbench.protocol import Protocol
from pmppbench.results import Result, error_row

_ENV_LOCK = threading.Lock()
DEFAULT_PHASE_S = 60.0  # no check, warmup or batch of the bundled workloads comes near this
SLOW_FRACTION = 0.01  # a variant at 1% of the device's peaks still finishes a batch in time


@dataclass
class StepSpec:
    """What a worker needs to run one step (pickled; variants are plain data)."""

    workload: str
    shape: dict
    variants: list  # Variant objects: a learner's kernel (--kernel) exists only here
    protocol: Protocol
    check_only: bool
    seed: int
    run_id: str

    @property
    def key(self) -> tuple:
        return step_key(self.workload, self.shape, self.variants, self.seed)


def step_key(workload: str, shape: dict, variants, seed: int) -> tuple:
    names = tuple(v.name for v in variants) if variants else None
    return workload, tuple(sorted((k, repr(v)) for k, v in shape.items())), names, seed


@dataclass
class PlanAhead:
    """The steps a worker will be sent, in order, as (workload, shape, variants, seed): sent
    once when it starts (Supervisor.start), so that it can make their host work ahead."""

    steps: list

    def index(self, name: str, shape: dict, seed: int) -> int | None:
        """Where the step (workload, shape, seed) stands in the plan; None when it is not in it."""
        return next((i for i, (n, s, _, sd) in enumerate(self.steps) if (n, dict(s), sd) == (name, dict(shape), seed)),
                    None)


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
    nothing new starts until it is done."""

    def __init__(self, budget_bytes: int = AHEAD_BYTES, lookup=None):
        """`lookup`: workload name -> Workload (the registry's; a seam for tests)."""
        from concurrent.futures import ThreadPoolExecutor  # noqa: PLC0415

        from pmppbench import workloads  # noqa: PLC0415

        self.pool = ThreadPoolExecutor(1, thread_name_prefix="pmppbench-ahead")
        self.jobs: dict[tuple, tuple[object, int]] = {}  # step key -> (future, estimated bytes)
        self.budget, self.lookup = budget_bytes, lookup or workloads.get
        self.expected = PlanAhead([])  # the plan, followed step by step

    def expect(self, plan: PlanAhead) -> None:
        """The plan: start the host work of its first steps (as much as the budget holds)."""
        self.expected = plan
        self.plan(plan.steps)

    def after(self, spec: StepSpec) -> None:
        """`spec` is running: start the host work of the plan's steps after it."""
        i = self.expected.index(spec.workload, spec.shape, spec.seed)
        if i is not None:
            self.plan(self.expected.steps[i + 1:])

    def take(self, spec: StepSpec):
        """The step's host work if it was done ahead (waiting for it if still running), else None."""
        job = self.jobs.pop(spec.key, None)
        if job is None:
            return None
        try:
            return job[0].result()
        except Exception:  # noqa: BLE001 -- made again in the step, where its error gets its rows
            return None

    def plan(self, ahead: list) -> None:
        """Start the host work of the steps in `ahead`, in order, while the estimates fit."""
        from pmppbench.runner import host_work  # noqa: PLC0415

        held = sum(size for _, size in self.jobs.values())
        for name, shape, variants, seed in ahead:
            try:
                w = self.lookup(name)
                chosen = list(variants or w.variants_for(shape))
                size = 2 * int(w.device_bytes(shape))  # inputs and references, about the device's share
            except Exception:  # noqa: BLE001 -- a step refused as bad input says so itself
                continue
            key = step_key(name, shape, chosen, seed)
            if key in self.jobs:
                continue
            if held + size > self.budget:
                return
            held += size
            self.jobs[key] = (self.pool.submit(host_work, w, shape, chosen, seed), size)

    def drain(self) -> None:
        """Finish the work in flight (before a step that shares the host link)."""
        for future, _ in list(self.jobs.values()):
            try:
                future.result()
            except Exception:  # noqa: BLE001
                pass



# ---- the worker process -------------------------------------------------------------------

def serve(conn, quiet_stderr: bool = True) -> None:
    """The worker's main loop: run each StepSpec received, answer with its rows."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the session's to handle
    if quiet_stderr:  # no library noise from a dying context reaches the terminal
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)
    from pmppbench import workloads  # noqa: PLC0415
    from pmppbench.runner import StickyCudaError, run_shape, spent, sticky_error, take_spent  # noqa: PLC0415

    ahead = Ahead()
    queued = [conn.recv()] if conn.poll(0.1) else []
    if queued and isinstance(queued[0], PlanAhead):  # sent with the start (Supervisor.start):
        ahead.expect(queued.pop())  # the first steps' host work runs while CUDA starts
    _make_context()
    last = [""]

    def at(variant: str, phase: str) -> None:
        last[0] = variant
        conn.send(("at", variant, phase))

    while True:
        spec = queued.pop() if queued else conn.recv()
        if isinstance(spec, PlanAhead):
            ahead.expect(spec)
            continue
        if spec is None:
            return
        w = workloads.get(spec.workload)
        try:
            with spent("inputs"):  # what the step waits for of its host work (none when it was done ahead)
                host = ahead.take(spec)
                if w.shares_host_link:
                    ahead.drain()
            if not w.shares_host_link:
                ahead.after(spec)
            rows = run_shape(w, spec.shape, protocol=spec.protocol, check_only=spec.check_only, seed=spec.seed,
                             variants=spec.variants, run_id=spec.run_id, at=at, host=host)
            conn.send(("rows", rows, take_spent()))
        except StickyCudaError as exc:
            conn.send(("sticky", exc.variant, exc.name, exc.detail))
            os._exit(70)  # the context is gone; exit without running its destructors
        except PmppError as exc:
            conn.send(("failed", type(exc).__name__, str(exc)))
        except Exception as exc:
            name = sticky_error(exc)
            if name:  # a fault surfacing later (a batch's synchronize): the last variant that ran
                conn.send(("sticky", last[0], name, f"{type(exc).__name__}: {exc}"))
                os._exit(70)
            conn.send(("failed", type(exc).__name__, f"{type(exc).__name__}: {exc}"))


def _make_context() -> None:
    """Create this process's CUDA context before the first step arrives; a machine without a
    GPU says so in that step's rows instead."""
    try:
        from pmppbench.gpu import cupy, require_device  # noqa: PLC0415

        require_device()
        cupy().cuda.runtime.free(0)  # the first runtime call makes the primary context
    except Exception:  # noqa: BLE001
        pass


# ---- the supervisor -------------------------------------------------------------------------

_ERRORS = {"UsageError": UsageError, "EnvironmentProblem": EnvironmentProblem, "CompileError": CompileError,
           "CheckFailed": CheckFailed}


class WorkerFault(Exception):
    """A step that failed as a whole inside the worker with an error pmppbench does not name."""


class Supervisor:
    """Runs steps in a worker process; `run_shape` has the runner's signature (session.run's seam)."""

    def __init__(self, timeout_s: float | None = None, target=serve, quiet_stderr: bool = True,
                 pin: str | None = None):
        """`pin`: the CUDA_VISIBLE_DEVICES value the worker starts with (one GPU of --devices)."""
        self.timeout_s, self.target, self.quiet_stderr, self.pin = timeout_s, target, quiet_stderr, pin
        self._ctx = multiprocessing.get_context("spawn")  # CUDA does not survive fork
        self._proc = self._conn = None
        self._plan: PlanAhead | None = None  # what start() was given, for every worker started
        self._busy = False  # inside run_shape, waiting on the worker
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
                self._conn.send(None)
            except (OSError, ValueError):
                pass
        self._stop(graceful=not self._busy)
        self._busy = False

    def start(self, steps: list | None = None) -> None:
        """Start the worker now rather than at the first step: it gets its CUDA context ready
        while the session does other work. `steps` (the plan, as PlanAhead holds it) go to
        this worker and to every fresh one after a fault, which make their host work ahead."""
        if steps is not None:
            self._plan = PlanAhead(list(steps))
        if self._proc is None or not self._proc.is_alive():
            self._stop()
            self._start()

    def _plan_from(self, name: str, shape: dict, seed: int) -> None:
        """Drop the plan's steps before this one: a fresh worker is sent only what is left."""
        i = self._plan.index(name, shape, seed) if self._plan is not None else None
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

    def phase_limit_s(self, workload, shape: dict, protocol: Protocol) -> float:
        """How long one phase (a check, a warmup, a batch) may go without a heartbeat: --timeout,
        or the floor, or what `reps` calls of the workload's slowest variant would take at
        SLOW_FRACTION of the device's datasheet peaks, with 10x room."""
        if self.timeout_s:
            return self.timeout_s
        try:
            from pmppbench import device  # noqa: PLC0415

            d = device.current()
            bw, fl = d.peak_bandwidth_gbs * 1e9, (d.peak_fp32_gflops or 1e4) * 1e9
        except PmppError:
            bw, fl = 1e12, 1e13
        worst = 0.0
        for v in workload.variants_for(shape):
            t = workload.traffic(shape, v)
            worst = max(worst, t.bytes / (SLOW_FRACTION * bw), (t.flops or 0) / (SLOW_FRACTION * fl))
        return max(DEFAULT_PHASE_S, 10 * max(protocol.reps, protocol.warmup, 1) * worst)

    def run_shape(self, workload, shape, *, protocol, check_only=False, seed=0, variants=None, run_id="",
                  progress=None) -> list[Result]:
        self._busy = True
        try:
            rows = self._run_shape(workload, shape, protocol, check_only, seed, variants, run_id, progress)
        except KeyboardInterrupt:
            raise  # still busy: close() kills the worker rather than waiting for its step
        except Exception:
            self._busy = False  # the step failed as a whole; the worker itself is idle again
            raise
        self._busy = False
        return rows

    def _run_shape(self, workload, shape, protocol, check_only, seed, variants, run_id, progress) -> list[Result]:
        variants = list(variants or workload.variants_for(shape))
        faults: dict[str, Result] = {}
        remaining = list(variants)
        limit = self.phase_limit_s(workload, shape, protocol)
        self._plan_from(workload.name, shape, seed)
        while remaining:
            if self._proc is None or not self._proc.is_alive():
                self._stop()
                self._start()
            self._conn.send(StepSpec(workload.name, dict(shape), remaining, protocol, check_only, seed, run_id))
            culprit, phase, reason = None, "starting", ""
            while True:
                if not self._conn.poll(limit):
                    reason = f"timed out after {limit:.0f} s ({phase}); the worker was killed"
                    break
                try:
                    msg = self._conn.recv()
                except (EOFError, OSError):
                    self._proc.join(timeout=5)
                    reason = f"the worker process died (exit code {self._proc.exitcode}) during {phase}"
                    break
                if msg[0] == "at":
                    culprit, phase = msg[1], f"{msg[1]}: {msg[2]}"
                    if progress and msg[2] == "check":
                        progress(workload.name, msg[1], workload.label(shape))
                    continue
                if msg[0] == "rows":
                    for name, seconds in (msg[2] if len(msg) > 2 else {}).items():
                        self.spent[name] = self.spent.get(name, 0.0) + seconds
                    return self._merge(variants, msg[1], faults)
                if msg[0] == "sticky":
                    culprit = msg[1] or culprit
                    reason = f"{msg[2]} ({msg[3].split(': ', 1)[-1]})"
                    break
                if msg[0] == "failed":  # the step failed as a whole, the worker is fine
                    error = _ERRORS.get(msg[1])
                    raise error(msg[2]) if error else WorkerFault(msg[2])
            self._stop()  # killed, crashed or poisoned: the next try gets a fresh worker
            names = [v.name for v in remaining]
            if culprit not in names:  # before any variant ran (compile, setup): the step's rows say so
                for v in remaining:
                    faults[v.name] = self._fault_row(workload, shape, v, reason, seed, run_id, hint=False)
                break
            guilty = next(v for v in remaining if v.name == culprit)
            faults[culprit] = self._fault_row(workload, shape, guilty, reason, seed, run_id)
            remaining = [v for v in remaining if v.name != culprit]
        return self._merge(variants, [], faults)

    @staticmethod
    def _merge(variants, rows: list[Result], faults: dict[str, Result]) -> list[Result]:
        by_name = {r.variant: r for r in rows}
        by_name.update(faults)
        return [by_name[v.name] for v in variants if v.name in by_name]

    @staticmethod
    def _fault_row(workload, shape, variant, reason: str, seed: int, run_id: str, hint: bool = True) -> Result:
        advice = f"; to find it: {sanitizer_command(workload, shape, variant)}" if hint else ""
        return error_row(workload.name, variant.name, workload.label(shape), shape, reason + advice, seed, run_id)


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


__all__ = ["Supervisor", "StepSpec", "WorkerFault", "serve", "sanitizer_command"]
