"""Supervision on the CPU: fake workers that return rows, die, hang or hit a sticky CUDA
error. Only the variant that caused it gets an ERROR row (with the sanitizer command), a fresh
worker runs the rest, and nothing that finished is lost."""

from __future__ import annotations

import os
import threading
import time

import numpy as np
import pytest

from fake_workload import Copy2D
from pmppbench.engine.driver import session
from pmppbench.errors import CompileError, UsageError
from pmppbench.engine.plan import Plan, Step
from pmppbench.row import Result
from pmppbench.workloads.base import Prebuilds, Variant
from pmppbench.engine.messages import At, Failed, Rows, Sticky, Stop, WorkerFault
from pmppbench.engine.driver.supervisor import Supervisor, sanitizer_command


@pytest.fixture(autouse=True)
def _registered(monkeypatch):
    """Steps reach a worker by their workload's name: the fake one is registered (and the
    spawned workers inherit the variable)."""
    monkeypatch.setenv("PMPPBENCH_WORKLOADS", "copy2d=fake_workload")


class Faulty(Copy2D):
    name = "copy2d"
    variants = tuple(Variant(n, None, n) for n in ("rows", "crash", "hang", "sticky", "whole"))


def fake_serve(conn, quiet_stderr=True):
    """A worker that acts out each variant's name: crash -> the process dies, hang -> silence,
    sticky -> a poisoned context; the others PASS. It records its pid in each row."""
    while True:
        step = conn.recv()
        if isinstance(step, Stop):
            return
        rows = []
        for v in (variant.name for variant in step.variants):
            conn.send(At(v, "check"))
            if v == "crash":
                os._exit(1)
            if v == "hang":
                time.sleep(60)
            if v == "sticky":
                conn.send(Sticky(v, "cudaErrorIllegalAddress", "CUDARuntimeError: cudaErrorIllegalAddress: an "
                                 "illegal memory access was encountered"))
                os._exit(70)
            rows.append(Result(step.workload.name, v, "16x8", check="PASS", median_ms=1.0, error=str(os.getpid())))
        conn.send(Rows(rows, {}))


def run(variants, timeout_s=3.0):
    w = Faulty()
    with Supervisor(timeout_s=timeout_s, target=fake_serve) as sup:
        rows = sup.run(Step(w, w.default_shape(), w.protocol, 0, [w.variant(v) for v in variants]))
        return {r.variant: r for r in rows}, sup.started


def test_rows_come_back_from_one_worker():
    rows, started = run(["rows", "whole"])
    assert [r.check for r in rows.values()] == ["PASS", "PASS"] and started == 1
    assert rows["rows"].error == rows["whole"].error  # the same process ran both


def test_a_crash_costs_only_its_variant():
    rows, started = run(["rows", "crash", "whole"])
    assert list(rows) == ["rows", "crash", "whole"]
    assert rows["rows"].check == rows["whole"].check == "PASS"
    assert rows["crash"].check == "ERROR" and "worker process died (exit code 1) during crash: check" in rows["crash"].error
    assert started == 2


def test_a_hang_is_killed_after_the_limit():
    t0 = time.monotonic()
    rows, started = run(["hang", "rows"], timeout_s=1.5)
    assert time.monotonic() - t0 < 20
    assert rows["hang"].check == "ERROR" and rows["hang"].error.startswith("timed out after 2 s (hang: check)")
    assert rows["rows"].check == "PASS" and started == 2


def test_a_sticky_error_names_the_cuda_error_and_the_sanitizer_command():
    rows, _ = run(["sticky", "rows", "whole"])
    err = rows["sticky"].error
    assert err.startswith("cudaErrorIllegalAddress (cudaErrorIllegalAddress: an illegal memory access")
    assert "compute-sanitizer --tool memcheck pmppbench copy2d 16 8 --variants sticky --check-only" in err
    assert rows["rows"].check == rows["whole"].check == "PASS"


def test_several_faults_in_one_step():
    rows, started = run(["crash", "rows", "sticky", "hang", "whole"], timeout_s=1.5)
    assert {v: r.check for v, r in rows.items()} == {"crash": "ERROR", "rows": "PASS", "sticky": "ERROR",
                                                       "hang": "ERROR", "whole": "PASS"}
    assert started == 4


def test_finished_rows_reach_the_sink_and_are_never_rewritten():
    class Sink(list):
        add = list.append

    w, sink = Faulty(), Sink()
    steps = [Step(w, {"m": 16, "n": 8}, w.protocol, 0, [w.variant("rows")]),
             Step(w, {"m": 16, "n": 8}, w.protocol, 1, [w.variant("crash"), w.variant("whole")])]
    with Supervisor(timeout_s=3, target=fake_serve) as sup:
        out = session.run(Plan(steps), [sink], run_step=sup.run)
    assert [(r.variant, r.check) for r in sink] == [("rows", "PASS"), ("crash", "ERROR"), ("whole", "PASS")]
    assert sink == out.rows


def test_sanitizer_command_carries_the_options():
    from pmppbench import workloads

    st = workloads.get("stencil")
    assert sanitizer_command(st, {"n": 1000, "radius": 32}, "coarsened") == (
        "compute-sanitizer --tool memcheck pmppbench stencil 1000 --radius 32 --variants coarsened --check-only")


def test_close_after_ctrl_c_kills_a_busy_worker_at_once(monkeypatch):
    w = Faulty()
    sup = Supervisor(timeout_s=30, target=fake_serve)

    def interrupted_poll(self_conn, timeout):
        raise KeyboardInterrupt

    import multiprocessing.connection as mpc

    monkeypatch.setattr(mpc.Connection, "poll", interrupted_poll)
    with pytest.raises(KeyboardInterrupt):
        sup.run(Step(w, w.default_shape(), w.protocol, 0, [w.variant("hang")]))
    monkeypatch.undo()
    t0 = time.monotonic()
    sup.close()
    assert time.monotonic() - t0 < 3 and sup._proc is None


@pytest.mark.parametrize("text, name", [
    ("CUDARuntimeError: cudaErrorIllegalAddress: an illegal memory access was encountered", "cudaErrorIllegalAddress"),
    ("CUDADriverError: CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access", "cudaErrorIllegalAddress"),
    ("CUDADriverError: CUDA_ERROR_LAUNCH_FAILED: unspecified launch failure", "cudaErrorLaunchFailure"),
    ("CUDARuntimeError: cudaErrorMisalignedAddress: misaligned address", "cudaErrorMisalignedAddress"),
    ("CUDARuntimeError: cudaErrorMemoryAllocation: out of memory", None),  # not sticky: the context lives
    ("ValueError: bad shape", None),
])
def test_sticky_errors_are_told_from_the_others(text, name):
    from pmppbench.engine.worker.pipeline import sticky_error

    assert sticky_error(RuntimeError(text)) == name


# ---- host work ahead: the next steps' inputs and references, made while this one runs ------

from pmppbench.engine.worker.pipeline import evaluate, host_work  # noqa: E402
from pmppbench.engine.worker.process import Ahead  # noqa: E402
from pmppbench.engine.messages import PlanAhead  # noqa: E402


def _spec(w, shape, seed, variants=("rows", "whole")):
    return Step(w, shape, w.protocol, seed, [w.variant(v) for v in variants], run_id="r")


def test_host_work_made_ahead_is_what_the_step_would_make():
    w = Copy2D()
    ahead = Ahead()
    shapes = [({"m": 4, "n": 3}, 7), ({"m": 5, "n": 2}, 8)]
    ahead.plan([_spec(w, s, seed) for s, seed in shapes])
    for s, seed in shapes:
        inputs, refs, second = ahead.take(_spec(w, s, seed))
        want_inputs, want_refs, want_second = host_work(w, s, [w.variant("rows"), w.variant("whole")], seed, 1)
        np.testing.assert_array_equal(inputs["a"], want_inputs["a"])  # the same seed, the same input
        assert second == want_second == []  # no learner's kernel: no other input set
        assert refs.keys() == want_refs.keys()
        for k in refs:
            np.testing.assert_array_equal(refs[k], want_refs[k])
    assert ahead.take(_spec(w, {"m": 4, "n": 3}, 7)) is None  # taken once; a step never made ahead: None
    mine = Variant("mine", "mine", "a learner's kernel", source="mine.cu", like="whole")
    step = Step(w, {"m": 4, "n": 3}, w.protocol, 7, [w.variant("whole"), mine], run_id="r")
    ahead.plan([step])
    inputs, _, second = ahead.take(step)
    want = host_work(w, {"m": 4, "n": 3}, [w.variant("whole"), mine], 7)[2]
    np.testing.assert_array_equal(second[0]["a"], want[0]["a"])  # a learner's step: the other set too
    assert len(second) == 1 and not np.array_equal(second[0]["a"], inputs["a"])


def test_host_work_ahead_stays_inside_its_memory_budget():
    w = Copy2D()
    ahead = Ahead(budget_bytes=4 * w.device_bytes({"m": 4, "n": 4}) * 2)
    later = [Step(w, {"m": 4, "n": 4}, w.protocol, seed) for seed in range(5)]
    ahead.plan(later)
    assert len(ahead.jobs) == 2  # two steps' estimates fit; the rest wait for a later plan()
    ahead.drain()
    assert all(future.done() for future, _ in ahead.jobs.values())


def test_the_step_uses_the_references_it_is_given():
    """evaluate() compares with the host work handed in (made ahead), not with its own."""
    w = Copy2D()
    shape = w.default_shape()
    inputs, refs, _ = host_work(w, shape, [w.variant("whole")], 0)
    wrong = {k: v + 1 for k, v in refs.items()}
    rows = evaluate(w, shape, [w.variant("whole")], inputs, w.setup(shape, inputs, {}), protocol=w.protocol,
                    check_only=True, references=wrong)
    assert rows[0].check == "FAIL"


def test_every_step_reaches_a_worker_whole():
    """Steps travel by pickle, by their workload's name: each arrives with the registry's
    workload and every variant as declared (whatever the variant carries)."""
    import pickle

    from pmppbench import workloads

    for name in workloads.names():
        w = workloads.get(name)
        for shape in [w.default_shape(), *w.check_shapes()[:1]]:
            sent = Step(w, shape, w.protocol, 3, check_only=True, run_id="r")
            arrived = pickle.loads(pickle.dumps(sent))
            assert arrived.workload is w and arrived.shape == shape and arrived.key == sent.key
            assert (arrived.protocol, arrived.seed, arrived.check_only, arrived.run_id) == (w.protocol, 3, True, "r")
            assert arrived.variants == sent.variants
            for before, after in zip(sent.variants, arrived.variants):
                assert vars(after) == vars(before), (name, before.name)


def failing_serve(conn, quiet_stderr=True):
    """A worker whose steps fail as a whole, one error type after another."""
    errors = [UsageError("copy2d 16x8 needs 9 GiB"), CompileError("kernels_cu/x.cu(3): error"),
              WorkerFault("ValueError: bad shape")]
    while True:
        step = conn.recv()
        if isinstance(step, Stop):
            return
        conn.send(Failed(errors.pop(0)))


def test_a_step_that_fails_as_a_whole_keeps_its_error_type():
    """Failed carries the error itself: a UsageError stays a UsageError (exit 2), a compile
    error a CompileError; anything else is a WorkerFault with its type and message."""
    w = Faulty()
    with Supervisor(timeout_s=3, target=failing_serve) as sup:
        step = Step(w, w.default_shape(), w.protocol, 0, [w.variant("rows")])
        with pytest.raises(UsageError, match="needs 9 GiB"):
            sup.run(step)
        with pytest.raises(CompileError, match=r"x.cu\(3\)"):
            sup.run(step)
        with pytest.raises(WorkerFault, match="ValueError: bad shape"):
            sup.run(step)
        assert sup.started == 1  # the worker was fine throughout


def test_the_plan_sent_with_the_start_begins_its_host_work_before_the_first_step(monkeypatch):
    """Supervisor.start(steps) sends the plan first; serve() hands it to Ahead before it
    makes its CUDA context, then runs steps as usual."""
    from pmppbench.engine.worker import process as worker

    planned, order = [], []

    class Recording(worker.Ahead):
        def plan(self, ahead):
            planned.append(list(ahead))
            order.append("plan")

    class Conn:
        def __init__(self, messages):
            self.messages = list(messages)

        def poll(self, timeout=None):
            return bool(self.messages)

        def recv(self):
            return self.messages.pop(0)

        def send(self, msg):
            pass

    monkeypatch.setattr(worker, "Ahead", Recording)
    monkeypatch.setattr(worker, "_make_context", lambda: order.append("context"))
    monkeypatch.setattr(worker.signal, "signal", lambda *a: None)  # this process keeps its Ctrl-C
    from pmppbench import workloads

    v = workloads.get("vecadd")
    steps = (Step(v, {"n": 5}, v.protocol, 0), Step(v, {"n": 7}, v.protocol, 1))
    worker.serve(Conn([PlanAhead(steps), Stop()]), quiet_stderr=False)
    assert planned == [list(steps)] and order == ["plan", "context"]


def plan_serve(conn, quiet_stderr=True):
    """A worker that reports, in each row, the seeds of the plan it was started with."""
    from pmppbench.engine.messages import PlanAhead

    plan = []
    while True:
        step = conn.recv()
        if isinstance(step, Stop):
            return
        if isinstance(step, PlanAhead):
            plan = [s.seed for s in step.steps]
            continue
        rows = []
        for v in step.variants:
            conn.send(At(v.name, "check"))
            if v.name == "crash":
                os._exit(1)
            rows.append(Result(step.workload.name, v.name, "16x8", check="PASS", error=repr(plan)))
        conn.send(Rows(rows, {}))


def test_every_worker_is_started_with_the_rest_of_the_plan():
    w = Faulty()
    shapes = [{"m": 16, "n": 8}, {"m": 8, "n": 4}, {"m": 4, "n": 2}]
    with Supervisor(timeout_s=5.0, target=plan_serve) as sup:
        sup.start([Step(w, s, w.protocol, seed) for seed, s in enumerate(shapes)])
        first = sup.run(Step(w, shapes[0], w.protocol, 0, [w.variant("rows")]))
        second = sup.run(Step(w, shapes[1], w.protocol, 1, [w.variant("crash"), w.variant("rows")]))
        assert sup.started == 2
    assert first[0].error == "[0, 1, 2]"
    rows = {r.variant: r for r in second}
    assert rows["crash"].check == "ERROR" and rows["rows"].error == "[1, 2]"  # the fresh worker: from here on


def test_ahead_follows_the_plan_step_by_step():
    w = Copy2D()
    one_step = 4 * w.device_bytes({"m": 4, "n": 4})
    ahead = Ahead(budget_bytes=one_step)
    plan = tuple(Step(w, {"m": 4, "n": 4}, w.protocol, seed) for seed in range(3))
    ahead.expect(PlanAhead(plan))
    assert [key[2] for key in ahead.jobs] == [0]  # the budget holds one step
    spec = _spec(w, {"m": 4, "n": 4}, 0, variants=w.variant_names())
    assert ahead.take(spec) is not None
    ahead.after(spec)
    assert [key[2] for key in ahead.jobs] == [1]  # the next one, and not the one just taken


class Prebuilt(Copy2D, Prebuilds):
    """Copy2D whose prebuild records the shape it built for and the thread it ran on."""

    def __init__(self, fail: bool = False):
        self.built, self.fail = [], fail

    def prebuild(self, shape, variants):
        self.built.append((shape["m"], threading.current_thread().name, tuple(v.name for v in variants)))
        if self.fail:
            raise RuntimeError("a library's build failed")


class SlowPrebuilt(Prebuilt):
    """Prebuilt whose builds each say they started, then wait for `release`."""

    def __init__(self):
        super().__init__()
        self.started, self.release = threading.Event(), threading.Event()

    def prebuild(self, shape, variants):
        self.started.set()
        self.release.wait(5)
        super().prebuild(shape, variants)


def builds_done(ahead: Ahead) -> None:
    """Wait for every build the plan started (each future ends, its error caught in _prebuild)."""
    for future in ahead.built.values():
        future.result(timeout=10)


def test_every_step_of_the_plan_is_prebuilt_once_on_the_build_thread():
    """Builds are not held to the memory budget (they hold no inputs): every step of the plan
    starts building at once, each once however often the plan is sent."""
    w = Prebuilt()
    ahead = Ahead(budget_bytes=4 * w.device_bytes({"m": 4, "n": 4}))
    plan = tuple(Step(w, {"m": m, "n": 4}, w.protocol, m) for m in (4, 5, 6))
    ahead.expect(PlanAhead(plan))
    ahead.expect(PlanAhead(plan[1:]))  # a restarted worker's plan: the rest of it
    builds_done(ahead)
    assert sorted(m for m, _, _ in w.built) == [4, 5, 6]
    assert {thread for _, thread, _ in w.built} == {"pmppbench-build_0"}
    assert {names for _, _, names in w.built} == {tuple(w.variant_names())}
    assert [key[2] for key in ahead.jobs] == [4]  # host work still follows the budget: one step


def test_a_failed_prebuild_is_left_for_the_job():
    w = Prebuilt(fail=True)
    ahead = Ahead()
    step = Step(w, {"m": 4, "n": 4}, w.protocol, 0)
    ahead.expect(PlanAhead((step,)))
    builds_done(ahead)  # the build's error is not raised here
    ahead.drain()  # nor here
    assert len(w.built) == 1 and ahead.take(step) is not None  # and the step's host work is there


def test_a_step_that_shares_the_host_link_waits_for_the_build_running_not_the_queue():
    """drain (before a stream step): the build in flight ends and the queued ones wait until
    `after` a step that does not share the link, instead of every build of the plan first."""
    w = SlowPrebuilt()
    ahead = Ahead()
    plan = tuple(Step(w, {"m": m, "n": 4}, w.protocol, m) for m in (4, 5, 6))
    ahead.expect(PlanAhead(plan))
    w.started.wait(5)
    threading.Timer(0.2, w.release.set).start()
    ahead.drain()  # returns once the build of m = 4 has ended
    assert [m for m, _, _ in w.built] == [4]
    time.sleep(0.3)
    assert [m for m, _, _ in w.built] == [4]  # nothing started while the shared step runs
    ahead.after(plan[0])
    builds_done(ahead)
    assert [m for m, _, _ in w.built] == [4, 5, 6]


def test_a_step_that_shares_the_host_link_drops_the_host_work_not_begun():
    """drain finishes the host work running and drops what has not begun: the next steps make
    theirs, or `after` plans it again."""
    started, release = threading.Event(), threading.Event()

    class Slow(Copy2D):
        def make_inputs(self, shape, rng):
            if shape["m"] == 4:
                started.set()
                release.wait(5)
            return super().make_inputs(shape, rng)

    w = Slow()
    ahead = Ahead()
    plan = tuple(Step(w, {"m": m, "n": 4}, w.protocol, m) for m in (4, 5, 6))
    ahead.expect(PlanAhead(plan))
    started.wait(5)
    threading.Timer(0.2, release.set).start()
    ahead.drain()
    assert [key[2] for key in ahead.jobs] == [4] and ahead.jobs[plan[0].key][0].done()
    assert ahead.take(plan[1]) is None  # dropped: made in its step
    ahead.after(plan[0])
    assert ahead.take(plan[2]) is not None  # planned again


def test_stop_drops_the_builds_not_yet_started():
    """At Stop the worker exits without building for steps that will not come."""
    w = SlowPrebuilt()
    ahead = Ahead()
    ahead.expect(PlanAhead(tuple(Step(w, {"m": m, "n": 4}, w.protocol, m) for m in (4, 5, 6))))
    w.started.wait(5)
    ahead.close()
    w.release.set()
    ahead.builds.shutdown(wait=True)
    assert [m for m, _, _ in w.built] == [4]  # the one that had started; 5 and 6 were dropped
