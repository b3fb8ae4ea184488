"""Worker side: the process that owns one GPU and runs the steps its supervisor sends.

It runs each step's pipeline (pipeline.run_shape: compile, check, time, derive), then, with
--counters, each passing variant once more under ncu (counters.collect), and answers with the
step's rows. Meanwhile a background thread makes the next steps' host work (Ahead). Ctrl-C is
the driver's to handle; a sticky CUDA error ends the process (the supervisor starts another).
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from pmppbench.engine.messages import At, Failed, PlanAhead, Rows, Sticky, portable
from pmppbench.engine.plan import Step
from pmppbench.engine.worker import counters, pipeline
from pmppbench.engine.worker.pipeline import StickyCudaError, spent, sticky_error, take_spent
from pmppbench.errors import PmppError
from pmppbench.hardware.gpu import cupy, require_device
from pmppbench.row import Result
from pmppbench.workloads.base import Prebuilds

Progress = Callable[[str, str, str], None]  # (workload, variant, shape label): the variant checked now


def run_step(step: Step, *, progress: Progress | None = None, at: Callable[[str, str], None] | None = None,
             host: pipeline.HostWork | None = None) -> list[Result]:
    """One step in this process: the runner's rows (compile, check, time, derive), then, with
    --counters, each passing variant once more under ncu (counters.collect)."""
    rows = pipeline.run_shape(step.workload, step.shape, protocol=step.protocol, check_only=step.check_only,
                            seed=step.seed, variants=list(step.variants), run_id=step.run_id, progress=progress,
                            at=at, host=host)
    if step.protocol.counters:  # after the batches and the teardown: one more, untimed run under ncu
        with spent("counters"):
            counters.collect(step, rows, at=at)
    return rows


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
    """The next steps' host work (seeded inputs, CPU references: pipeline.host_work) done on a
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

    def take(self, step: Step) -> pipeline.HostWork | None:
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
                size = 4 * int(step.workload.device_bytes(step.shape))  # up to three input sets and references
            except Exception:  # noqa: BLE001 -- a step refused as bad input says so itself
                continue
            if held + size > self.budget:
                return
            held += size
            self.jobs[step.key] = (self.pool.submit(pipeline.host_work, step.workload, step.shape, list(step.variants),
                                                    step.seed, pipeline.sets_for(step.variants, step.protocol,
                                                                                 step.check_only)),
                                   size)

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
        if isinstance(step.workload, Prebuilds):
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
            conn.send(Failed(portable(exc)))
        except Exception as exc:
            name = sticky_error(exc)
            if name:  # a fault surfacing later (a batch's synchronize): the last variant that ran
                conn.send(Sticky(last[0], name, f"{type(exc).__name__}: {exc}"))
                os._exit(70)
            conn.send(Failed(portable(exc)))


def _make_context() -> None:
    """Create this process's CUDA context before the first step arrives; a machine without a
    GPU says so in that step's rows instead."""
    try:
        require_device()
        cupy().cuda.runtime.free(0)  # the first runtime call makes the primary context
    except Exception:  # noqa: BLE001
        pass
