"""Numbers no one can game (CPU side): the SUSPECT verdict against the ceilings, the re-check
on fresh inputs in the same buffers, and the cheats it must catch, on the NumPy workload of
tests/fake_workload.py. tests/test_learner.py runs the same cheats as CUDA kernels on the GPU."""

from __future__ import annotations

import numpy as np
import pytest

from fake_workload import Copy2D
from pmppbench.engine.worker import pipeline
from pmppbench.engine.driver import session
from pmppbench.hardware.device import DeviceInfo
from pmppbench.measure.noise import Limits, beyond_ceilings
from pmppbench.row import Result
from pmppbench.workloads.base import Job, Variant
from pmppbench.workloads.helpers import SAMPLE, checked_indices, take

# An H200-like GPU: 66,908 GFLOP/s FP32, 4,023 GB/s DRAM, 33,454 GB/s L2 bound, 50 MiB of L2.
GPU = DeviceInfo(name="Test GPU", compute_capability="9.0", arch="sm_90", sm_count=132, sm_clock_mhz=1980.0,
                 mem_clock_mhz=2619.0, bus_width_bits=6144, memory_bytes=141 << 30, l2_bytes=50 << 20,
                 smem_per_sm=228 << 10, smem_per_block=48 << 10, smem_per_block_optin=227 << 10, regs_per_sm=65536,
                 max_threads_per_sm=2048, max_blocks_per_sm=32, max_threads_per_block=1024, warp_size=32,
                 driver="test", cuda_runtime="test", cupy="test")


def test_the_limits_of_a_gpu():
    lim = Limits.of(GPU)
    assert (round(lim.compute_gflops, 2), round(lim.dram_gbs, 3), round(lim.l2_gbs, 2)) == (66908.16, 4022.784,
                                                                                          33454.08)
    assert Limits.of(GPU, dram_gbs=4500.0).dram_gbs == 4500.0 and Limits.of(GPU, dram_gbs=3000.0).dram_gbs == 4022.784
    assert Limits.of(GPU, "tf32").compute_gflops == 132 * 2048 * 1980e6 / 1e9
    # Fits in L2: the L2 bound. Twice the L2: half of it must cross DRAM.
    assert lim.memory_gbs(50 << 20)[0] == lim.l2_gbs
    assert lim.memory_gbs(100 << 20)[0] == pytest.approx(2 * lim.dram_gbs)
    assert lim.memory_gbs(1 << 40)[0] == pytest.approx(lim.dram_gbs / (1 - (50 << 20) / (1 << 40)))


def row(ms, flops=None, nbytes=None, slowest=None, timer="events"):
    return Result("gemm", "mine", "1024x1024x1024", check="PASS", median_ms=ms, min_ms=ms, max_ms=slowest or ms,
                  flops=flops, bytes=nbytes, timer=timer)


def test_a_rate_beyond_the_fp32_peak_is_suspect_and_names_it():
    gemm = 2 * 1024 ** 3
    # 389 TFLOP/s at 1024^3 (a cached answer): 5.5 us per call.
    why = beyond_ceilings(row(0.0055, gemm, 12 << 20), Limits.of(GPU))
    assert why == ("390,452 GFLOP/s in its slowest batch is 5.8x the FP32 peak of 66,908 GFLOP/s: no kernel doing "
                   "the model's work can be this fast; it may reuse an earlier answer or skip work the check does "
                   "not see")
    assert beyond_ceilings(row(0.040, gemm, 12 << 20), Limits.of(GPU)) is None  # 53.7 TFLOP/s: a fast kernel
    # Within the margin of the peak: not suspect (the ceiling is the driver's boost clock).
    at_peak = gemm / (1.04 * 66908.16e9) * 1e3
    assert beyond_ceilings(row(at_peak, gemm), Limits.of(GPU)) is None
    assert beyond_ceilings(row(at_peak / 1.02, gemm), Limits.of(GPU)) is not None


def test_flops_that_are_not_a_floor_of_the_work_meet_no_compute_ceiling():
    gemm = 2 * 1024 ** 3
    assert beyond_ceilings(row(0.0055, gemm, 12 << 20), Limits.of(GPU, compute=False)) is None
    from pmppbench import workloads
    assert workloads.get("stencil").flops_are_a_floor is False  # its running sum executes fewer than (2R+1)N
    assert not hasattr(workloads.get("gemm"), "flops_are_a_floor")  # 2MNK: every correct kernel does them


def test_a_noisy_row_is_judged_by_its_slowest_batch():
    gemm = 2 * 1024 ** 3
    assert beyond_ceilings(row(0.0055, gemm, slowest=0.040), Limits.of(GPU)) is None


def test_memory_rates_against_l2_when_the_working_set_fits_and_dram_beyond_it():
    lim = Limits.of(GPU)
    small = 8 << 20  # 8.4 MB: may come from L2 on every call, so 20 TB/s is allowed
    assert beyond_ceilings(row(small / 20e12 * 1e3, nbytes=small), lim) is None
    why = beyond_ceilings(row(small / 80e12 * 1e3, nbytes=small), lim)
    assert why.startswith("80,000 GB/s in its slowest batch is 2.4x the L2 bound of 33,454 GB/s (its 8.4 MB working "
                          "set fits in the 52.4 MB L2): ")
    big = 1 << 30  # 1.07 GB: at most 52 MB of it from L2
    assert beyond_ceilings(row(big / 4.0e12 * 1e3, nbytes=big), lim) is None  # 99% of DRAM
    why = beyond_ceilings(row(big / 8.0e12 * 1e3, nbytes=big), lim)
    assert why.startswith("8,000 GB/s in its slowest batch is 1.9x the memory bound of 4,229 GB/s (of its 1,073.7 MB "
                          "working set, what does not fit in the 52.4 MB L2 comes from DRAM at 4,023 GB/s): ")


def test_host_timed_and_untimed_rows_are_never_suspect():
    lim = Limits.of(GPU)
    assert beyond_ceilings(row(1e-6, nbytes=1 << 30, timer="host"), lim) is None
    assert beyond_ceilings(Result("gemm", "x", "1", check="PASS", flops=10 ** 12), lim) is None


# ---- the runner: SUSPECT rows and their exit ---------------------------------------------

class FixedTimer:
    """Calls each run `reps` times and says every batch took `ms` per call."""

    def __init__(self, ms):
        self.ms = ms

    def batch_ms(self, fn, reps):
        for _ in range(reps):
            fn()
        return self.ms


def evaluate(w, shape, variants, ms, device=GPU, seed=0):
    inputs = w.make_inputs(shape, np.random.default_rng(seed))
    ctx = w.setup(shape, inputs, {})
    rows = pipeline.evaluate(w, shape, variants, inputs, ctx, protocol=w.protocol, timer=FixedTimer(ms), device=device,
                           seed=seed)
    return {r.variant: r for r in rows}, ctx


def test_the_runner_marks_a_row_beyond_the_l2_bound_suspect_and_it_exits_1():
    w = Copy2D()
    shape = {"m": 1024, "n": 1024}  # 8 MiB of traffic: within the L2
    rows, _ = evaluate(w, shape, [w.variant("whole")], ms=1e-4)
    r = rows["whole"]
    assert r.check == "SUSPECT" and r.median_ms == 1e-4 and not r.ok
    assert r.check_detail.startswith("83,886 GB/s in its slowest batch is 2.5x the L2 bound of 33,454 GB/s")
    problem = session.exit_problem(session.Outcome(rows=[r]))
    assert problem.exit_code == 1 and "copy2d whole 1024x1024: 83,886 GB/s" in str(problem)
    rows, _ = evaluate(w, shape, [w.variant("whole")], ms=1.0)
    assert rows["whole"].check == "PASS"
    rows, _ = evaluate(w, shape, [w.variant("whole")], ms=1e-4, device=None)  # no GPU facts, no ceilings
    assert rows["whole"].check == "PASS"


# ---- the re-check after timing: fresh inputs, the same buffers -------------------------------

class Sampled(Copy2D):
    """Copy2D checked on sampled whole rows and columns, as large transposes and GEMMs are."""

    def make_inputs(self, shape, rng):
        inputs = super().make_inputs(shape, rng)
        inputs[SAMPLE] = (checked_indices(shape["m"], 4, rng, 1), checked_indices(shape["n"], 4, rng, 1))
        return inputs

    def reference(self, shape, inputs, variant):
        return take(inputs["a"], inputs[SAMPLE])

    def setup(self, shape, inputs, kernels):
        return {**super().setup(shape, inputs, kernels), SAMPLE: inputs[SAMPLE]}

    def job(self, variant, shape, ctx):
        base = super().job(variant, shape, ctx)
        b = ctx["b"]
        return Job(run=base.run, output=lambda: take(b, ctx[SAMPLE]), poison=base.poison)


WORK = {"copies": 0}  # the calls that did their copy (WorkTimer)


def cheat(kind):
    """A learner's 'kernel' (a stand-in for pipeline.learner_job) that games the check."""
    state = {}

    def job(workload, variant, shape, ctx):
        a, b = ctx["a"], ctx["b"]

        def run():
            state["calls"] = state.get("calls", 0) + 1
            if kind == "caches":  # computes once, then copies its kept answer
                if "kept" not in state:
                    state["kept"] = a.copy()
                b[...] = state["kept"]
            elif kind == "skips":  # does the work on its first call only
                if state["calls"] == 1:
                    b[...] = a
            elif kind == "only_when_poisoned":  # works only when its output holds the check's poison
                if np.isnan(b).any():
                    b[...] = a
            elif kind == "skips_if_done":  # works only when its output is not already the answer
                if np.array_equal(b, a):
                    state["skipped"] = state.get("skipped", 0) + 1
                else:
                    b[...] = a
                    WORK["copies"] += 1
            elif kind == "sampled_only":  # writes only the rows and columns the check read the first time
                rows, cols = state.setdefault("picks", ctx[SAMPLE])
                b[rows, :] = a[rows, :]
                b[:, cols] = a[:, cols]
            else:  # honest
                b[...] = a
                WORK["copies"] += 1

        return Job(run=run, output=lambda: take(b, ctx[SAMPLE]) if SAMPLE in ctx else b.copy(),
                   poison=lambda: b.fill(np.nan))

    job.state = state  # what the cheat did, for the tests to read
    return job


MINE = Variant("mine", "mine", "a learner's kernel", source="mine.cu", like="whole")


@pytest.mark.parametrize("workload", [Copy2D, Sampled])
@pytest.mark.parametrize("kind", ["caches", "skips", "only_when_poisoned", "sampled_only"])
def test_a_kernel_that_games_the_check_fails_the_recheck_on_fresh_inputs(monkeypatch, workload, kind):
    if kind == "sampled_only" and workload is Copy2D:
        pytest.skip("a full check reads every element")
    monkeypatch.setattr(pipeline, "learner_job", cheat(kind))
    w = workload()
    rows, _ = evaluate(w, {"m": 64, "n": 32}, [w.variant("whole"), MINE], ms=1.0)
    assert rows["whole"].check == "PASS" and rows["whole"].median_ms == 1.0
    mine = rows["mine"]
    assert mine.check == "FAIL" and mine.median_ms is None and mine.batch_means_ms == []
    assert mine.check_detail.startswith("after its timed batches, on fresh inputs: ")


@pytest.mark.parametrize("workload", [Copy2D, Sampled])
def test_an_honest_kernel_passes_the_recheck_and_it_ran_in_the_same_buffers(monkeypatch, workload):
    monkeypatch.setattr(pipeline, "learner_job", cheat("honest"))
    w = workload()
    shape = {"m": 64, "n": 32}
    inputs = w.make_inputs(shape, np.random.default_rng(0))
    first = inputs["a"].copy()
    ctx = w.setup(shape, inputs, {})
    a, b = ctx["a"], ctx["b"]
    rows = pipeline.evaluate(w, shape, [MINE], inputs, ctx, protocol=w.protocol, timer=FixedTimer(1.0), seed=0)
    assert rows[0].check == "PASS" and rows[0].median_ms == 1.0
    fresh = w.make_inputs(shape, np.random.default_rng((0, pipeline.RECHECK_STREAM)))
    assert ctx["a"] is a and ctx["b"] is b  # the same buffers ...
    assert np.array_equal(a, fresh["a"]) and not np.array_equal(a, first)  # ... holding new inputs
    assert np.array_equal(b, fresh["a"])  # the kernel's last output is of them
    if SAMPLE in inputs:
        assert all(np.array_equal(p, q) for p, q in zip(ctx[SAMPLE], fresh[SAMPLE]))


class WorkTimer:
    """Says a batch took `ms` for each call in it that did the copy (WORK counts them): a
    call that skipped its work is nearly free, as on a GPU."""

    def __init__(self, ms):
        self.ms = ms

    def batch_ms(self, fn, reps):
        before = WORK["copies"]
        for _ in range(reps):
            fn()
        return max(self.ms * (WORK["copies"] - before), 1e-3) / reps


class Working(Copy2D):
    """Copy2D whose own variants count their copies (WORK), for WorkTimer."""

    def job(self, variant, shape, ctx):
        base = super().job(variant, shape, ctx)

        def run():
            WORK["copies"] += 1
            base.run()

        return Job(run=run, output=base.output, poison=base.poison)


@pytest.mark.parametrize("kind, verdict", [("skips_if_done", "FAIL"), ("honest", "PASS")])
def test_a_kernel_that_skips_its_work_when_the_output_is_right_fails(monkeypatch, kind, verdict):
    """The table times every call on one input set, as the course does, so a kernel that finds
    its answer already in its output and returns early is fast there. Timed again with each
    call on another set than its last (the sets share the output), it must work every call:
    it slows far more than the variant it is like, and FAILs without times. An honest kernel
    slows as that variant does and keeps its PASS and its time."""
    job = cheat(kind)
    monkeypatch.setattr(pipeline, "learner_job", job)
    w = Working()
    shape = {"m": 64, "n": 32}
    inputs = w.make_inputs(shape, np.random.default_rng(0))
    ctx = w.setup(shape, inputs, {})
    rows = {r.variant: r for r in pipeline.evaluate(w, shape, [w.variant("whole"), MINE], inputs, ctx,
                                                   protocol=w.protocol, timer=WorkTimer(1.0), device=GPU)}
    assert rows["whole"].check == "PASS" and rows["whole"].median_ms == pytest.approx(1.0)
    mine = rows["mine"]
    assert mine.check == verdict
    if verdict == "FAIL":
        assert mine.median_ms is None and mine.batch_means_ms == [] and job.state["skipped"] > 0
        assert mine.check_detail.startswith("its calls took ") and mine.check_detail.endswith(
            "as when they repeated (whole: 1.00x): it skips work when its output already holds the answer")
    else:
        assert mine.median_ms == pytest.approx(1.0) and not job.state.get("skipped")


def test_only_a_learners_kernel_and_its_like_run_on_changing_inputs():
    """The table's rows repeat one input set; a learner's kernel and the variant it is like are
    timed once more alternating between two sets that share one output."""
    w = Copy2D()
    shape = {"m": 8, "n": 4}
    inputs = w.make_inputs(shape, np.random.default_rng(0))
    ctx = w.setup(shape, inputs, {})
    seen = []

    class Watching(Copy2D):
        def job(self, variant, shape, ctx_):
            base = super().job(variant, shape, ctx_)

            def run():
                seen.append((id(ctx_["a"]), id(ctx_["b"])))
                base.run()

            return Job(run=run, output=base.output, poison=base.poison)

    watched = Watching()
    rows = pipeline.evaluate(watched, shape, [watched.variant("whole")], inputs, ctx, protocol=w.protocol,
                             timer=FixedTimer(1.0), seed=0)
    assert rows[0].check == "PASS"
    assert set(seen) == {(id(ctx["a"]), id(ctx["b"]))}  # no learner: every call on the one set
    seen.clear()
    mine = Variant("mine", "mine", "a learner's kernel", source="mine.cu", like="whole")
    original = pipeline.learner_job
    try:
        pipeline.learner_job = lambda workload, variant, shape_, ctx_: watched.job(watched.variant("whole"), shape_,
                                                                                  ctx_)
        ctx = watched.setup(shape, inputs, {})
        rows = pipeline.evaluate(watched, shape, [watched.variant("whole"), mine], inputs, ctx, protocol=w.protocol,
                                 timer=FixedTimer(1.0), seed=0)
    finally:
        pipeline.learner_job = original
    assert [r.check for r in rows] == ["PASS", "PASS"]
    inputs_seen = [a for a, _ in seen]
    assert {b for _, b in seen} == {id(ctx["b"])}  # one output
    assert len(set(inputs_seen)) == 2 and id(ctx["a"]) in inputs_seen
    second = w.make_inputs(shape, np.random.default_rng((0, pipeline.CYCLE_STREAM, 1)))
    assert not np.array_equal(second["a"], inputs["a"])


def test_each_call_runs_on_a_set_other_than_its_own_last_and_the_call_before():
    cycle = pipeline.InputCycle(3)
    order = []
    runs = {name: cycle.runs(name, [lambda name=name, i=i: order.append((name, i)) for i in range(3)])
            for name in ("x", "y")}
    for name in ["x", "x", "y", "y", "x", "y", "x"]:  # interleaved batches, as with --alternate
        runs[name]()
    assert order == [("x", 0), ("x", 1), ("y", 0), ("y", 1), ("x", 0), ("y", 2), ("x", 1)]
    two = pipeline.InputCycle(2)
    x, y = (two.runs(n, [lambda: None, lambda: None]) for n in "xy")
    x(), y(), x()  # x's own last is 0 and y's was 1: x goes to 1, its own output's other set
    assert two.last == {"x": 1, "y": 1}
    three = pipeline.InputCycle(3)
    order.clear()
    x = three.runs("x", [lambda i=i: order.append(i) for i in range(3)])
    peer = three.first_set(lambda: order.append("peer on 0"))
    x(), peer(), x()  # after the peer's call on set 0, x takes neither 0 nor its own last
    assert order == [0, "peer on 0", 1]
    assert pipeline.input_sets(Protocol(3, 5, 20, alternate=True)) == 3 and pipeline.input_sets(Protocol(3, 5, 20)) == 2


def test_a_recheck_without_room_is_an_error_row_and_the_others_stand(monkeypatch):
    class OutOfMemoryError(MemoryError):
        pass

    def no_room(*args):
        raise OutOfMemoryError("out of memory allocating 1,073,741,824 bytes")

    monkeypatch.setattr(pipeline, "learner_job", cheat("honest"))
    monkeypatch.setattr(pipeline, "refill", no_room)
    w = Copy2D()
    rows, _ = evaluate(w, {"m": 8, "n": 4}, [w.variant("whole"), MINE], ms=1.0)
    assert rows["whole"].check == "PASS" and rows["whole"].median_ms == 1.0
    assert rows["mine"].check == "ERROR" and rows["mine"].median_ms is None and rows["mine"].error == (
        "the re-check on fresh inputs ran out of device memory (it sets the shape up twice more beside the timed "
        "one): out of memory allocating 1,073,741,824 bytes; choose a smaller size")


def test_the_variants_of_the_table_are_not_rechecked():
    """Only a learner's kernel gets the fresh inputs: the table's own rows keep their inputs."""
    w = Copy2D()
    rows, ctx = evaluate(w, {"m": 8, "n": 4}, [w.variant("whole")], ms=1.0)
    assert rows["whole"].check == "PASS"
    assert np.array_equal(ctx["a"], w.make_inputs({"m": 8, "n": 4}, np.random.default_rng(0))["a"])


# ---- --until-stable and --discard-on-throttle: scripted timers, clocks and observers ---------

from pmppbench.cli import app as cli  # noqa: E402
from pmppbench.measure.clocks import ClockObserver  # noqa: E402
from pmppbench.measure.protocol import Protocol, measure, relative_noise, stop_options  # noqa: E402


class ListTimer:
    """Each batch takes the next value of a list (ms per call); counts the batches it timed."""

    def __init__(self, values):
        self.values, self.n = list(values), 0

    def batch_ms(self, fn, reps):
        self.n += 1
        return self.values[self.n - 1]


def test_until_stable_takes_batches_until_the_noise_is_below_the_target():
    timer = ListTimer([1.0, 1.1, 1.0] + [1.0] * 100)
    t = measure({"a": lambda: None}, Protocol(warmup=0, batches=3, reps=1, until_stable=0.02), timer=timer)["a"]
    assert len(t.batch_means_ms) == 25 == timer.n
    assert relative_noise(t.batch_means_ms) < 0.02 <= relative_noise(t.batch_means_ms[:-1])
    assert t.stopped == "noise 1.99% < 2% after 25 batches"


def test_until_stable_takes_at_least_the_protocols_batches():
    timer = ListTimer([1.0] * 10)
    t = measure({"a": lambda: None}, Protocol(warmup=0, batches=5, reps=1, until_stable=0.005), timer=timer)["a"]
    assert len(t.batch_means_ms) == 5 and t.stopped == "noise 0.00% < 0.5% after 5 batches"


def test_until_stable_stops_at_its_time_limit_and_says_so():
    ticks = iter(range(1000))  # every clock reading one second later: each batch takes 1 s
    timer = ListTimer([1.0, 1.2] * 50)
    t = measure({"a": lambda: None}, Protocol(warmup=0, batches=2, reps=1, until_stable=0.005, stable_limit_s=2.5),
                timer=timer, clock=lambda: float(next(ticks)))["a"]
    assert t.batch_means_ms == (1.0, 1.2, 1.0)
    assert t.stopped == "time limit 2.5 s reached at noise 10.83% (target 0.5%) after 3 batches"


def test_until_stable_with_alternation_visits_only_the_variants_still_unstable():
    order = []
    values = {"a": iter([1.0] * 50), "b": iter([1.0, 1.1, 1.0] + [1.0] * 100)}

    class Timer:
        def batch_ms(self, fn, reps):
            order.append(fn.__name__)
            return next(values[fn.__name__])

    def a():
        pass

    def b():
        pass

    t = measure({"a": a, "b": b}, Protocol(warmup=0, batches=3, reps=1, alternate=True, until_stable=0.02), timer=Timer())
    assert order[:6] == ["a", "b", "b", "a", "a", "b"] and order[6:] == ["b"] * 22
    assert len(t["a"].batch_means_ms) == 3 and len(t["b"].batch_means_ms) == 25


class ScriptedObserver:
    """A clock observer whose batches are throttled as scripted (by the batch's number)."""

    def __init__(self, throttled=(), always=False):
        self.batches, self.throttled_at, self.always = 0, set(throttled), always

    def before(self, name):
        pass

    def after(self, name):
        self.batches += 1

    def discard_last(self, name):
        pass

    def throttled(self, name, min_fraction):
        assert min_fraction == 0.9
        return "hardware thermal slowdown" if self.always or self.batches in self.throttled_at else ""

    def summary(self, name):
        return {}


def test_discard_on_throttle_retimes_the_throttled_batches():
    timer = ListTimer([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0])
    p = Protocol(warmup=0, batches=5, reps=1, discard_on_throttle=True)
    t = measure({"a": lambda: None}, p, timer=timer, observer=ScriptedObserver(throttled={2, 3}))["a"]
    assert t.batch_means_ms == (1.0, 4.0, 5.0, 6.0, 7.0) and t.retimed == 2
    # Without the option the same observer changes nothing.
    t = measure({"a": lambda: None}, Protocol(warmup=0, batches=5, reps=1), timer=ListTimer(range(1, 8)),
                observer=ScriptedObserver(throttled={2, 3}))["a"]
    assert t.batch_means_ms == (1.0, 2.0, 3.0, 4.0, 5.0) and t.retimed == 0


def test_a_gpu_that_throttles_all_along_keeps_its_batches_after_as_many_retimes():
    timer = ListTimer(range(1, 20))
    p = Protocol(warmup=0, batches=3, reps=1, discard_on_throttle=True)
    t = measure({"a": lambda: None}, p, timer=timer, observer=ScriptedObserver(always=True))["a"]
    assert t.retimed == 3 and t.batch_means_ms == (4.0, 5.0, 6.0) and timer.n == 6


class Watch:
    max_sm_mhz = 1980.0

    def __init__(self, samples):
        self.samples = iter(samples)

    def sample(self):
        return next(self.samples)


def test_the_clock_observer_names_what_throttled_a_batch():
    obs = ClockObserver(Watch([{"sm_mhz": 1980.0, "mem_mhz": 2619.0, "temp_c": 50.0, "reasons": 0},
                               {"sm_mhz": 1700.0, "mem_mhz": 2619.0, "temp_c": 80.0, "reasons": 0x40 | 0x1},
                               {"sm_mhz": 1790.0, "mem_mhz": 2619.0, "temp_c": 80.0, "reasons": 0x1}]))
    assert obs.throttled("a") == ""  # nothing sampled yet
    obs.after("a")
    assert obs.throttled("a", 0.9) == ""
    obs.after("a")
    assert obs.throttled("a", 0.9) == "hardware thermal slowdown, SM clock 1700 MHz < 90% of 1980"
    obs.after("a")
    assert obs.throttled("a", 0.9) == ""  # 1790 >= 1782; bit 0x1 is the GPU idling, not a slowdown


def test_a_retimed_batchs_clock_sample_leaves_the_rows_clocks_with_it():
    cool = {"sm_mhz": 1980.0, "mem_mhz": 2619.0, "temp_c": 50.0, "reasons": 0}
    hot = {"sm_mhz": 1500.0, "mem_mhz": 2619.0, "temp_c": 85.0, "reasons": 0x40}
    obs = ClockObserver(Watch([cool, cool, hot, cool, cool]))
    p = Protocol(warmup=0, batches=3, reps=1, discard_on_throttle=True)
    t = measure({"a": lambda: None}, p, timer=ListTimer([1.0, 9.0, 2.0, 3.0]), observer=obs)["a"]  # start: sample 1
    assert t.batch_means_ms == (1.0, 2.0, 3.0) and t.retimed == 1
    assert obs.samples["a"] == [cool, cool, cool]  # the throttled batch's sample went with its time
    assert obs.summary("a")["sm_mhz_min"] == 1980.0 and obs.summary("a")["throttle_reasons"] == ""


def test_the_row_records_the_stop_rule_the_batch_count_and_the_retimed_batches():
    w = Copy2D()
    shape = {"m": 4, "n": 4}
    inputs = w.make_inputs(shape, np.random.default_rng(0))
    p = Protocol(warmup=0, batches=3, reps=1, until_stable=0.02, discard_on_throttle=True)
    rows = pipeline.evaluate(w, shape, [w.variant("whole")], inputs, w.setup(shape, inputs, {}), protocol=p,
                           timer=ListTimer([1.0, 1.0, 1.1, 1.0] + [1.0] * 100),
                           observer=lambda: ScriptedObserver(throttled={1}))
    r = rows[0]
    assert (r.batches, r.retimed_throttled, r.stop_rule) == (25, 1, "noise 1.99% < 2% after 25 batches")
    assert r.batch_means_ms[:3] == [1.0, 1.1, 1.0]
    rows = pipeline.evaluate(w, shape, [w.variant("whole")], inputs, w.setup(shape, inputs, {}),
                           protocol=Protocol(warmup=0, batches=3, reps=1, discard_on_throttle=True),
                           timer=ListTimer([1.0] * 3))
    assert rows[0].retimed_throttled is None and rows[0].stop_rule == ""
    assert rows[0].warnings == ["copy2d whole 4x4: --discard-on-throttle could not screen the batches: NVML is not "
                                "available here (install pmppbench[nvml])"]


def test_the_protocol_says_its_stop_rules():
    p = Protocol(warmup=3, batches=5, reps=20)
    assert p.describe() == "L2 settled, 3 warmup, 5 batches x 20 calls, median of batch means (events timer)"
    p = Protocol(warmup=3, batches=5, reps=20, until_stable=0.005, discard_on_throttle=True)
    assert p.describe() == ("L2 settled, 3 warmup, 5+ batches until noise < 0.5% (at most 10 s) x 20 calls, batches "
                            "with a throttle or SM clock < 90% of max retimed, median of batch means (events timer)")


def test_stop_options_are_checked():
    assert stop_options(None, None, False) == {}
    assert stop_options("0.5%", None, False) == {"until_stable": 0.005}
    assert stop_options("2", "30", True) == {"until_stable": 0.02, "stable_limit_s": 30.0, "discard_on_throttle": True}


def test_until_stable_may_leave_its_noise_out():
    assert cli.optional_noise(["gemm", "--until-stable"]) == ["gemm", "--until-stable", "0.5%"]
    assert cli.optional_noise(["gemm", "--until-stable", "1024", "1024"]) == ["gemm", "--until-stable", "0.5%",
                                                                              "1024", "1024"]
    assert cli.optional_noise(["gemm", "--until-stable", "1%"]) == ["gemm", "--until-stable", "1%"]


@pytest.mark.parametrize("args, line", [
    (["--until-stable", "abc%"], "--until-stable takes the noise to reach as a percentage such as 0.5%, got 'abc%'"),
    (["--until-stable", "0%"], "--until-stable takes the noise to reach as a percentage such as 0.5%, got '0%'"),
    (["--stable-limit", "5"], "--stable-limit goes with --until-stable (the time it may take to reach its noise)"),
    (["--until-stable", "--stable-limit", "-1"], "--stable-limit takes seconds > 0 such as 10, got '-1'"),
])
def test_bad_stop_options_are_one_line_exit_2(run_cli, args, line):
    code, _, err = run_cli("vecadd", "1000", *args)
    assert code == 2 and err == f"pmppbench: {line}\n", err


def test_the_new_row_fields_survive_a_result_file(tmp_path):
    from pmppbench.results.export.files import save
    from pmppbench.results.resultfile import load

    r = Result("vecadd", "scalar", "1000", dims={"n": 1000}, check="PASS", median_ms=1.0, min_ms=1.0, max_ms=1.0,
               spread_pct=0.0, batch_means_ms=[1.0], warmup=1, batches=1, reps=1, timer="events",
               stop_rule="noise 0.10% < 0.5% after 7 batches", retimed_throttled=2)
    for ext in ("csv", "json"):
        path = tmp_path / f"r.{ext}"
        save(path, [r], {})
        (back,), _ = load(path)
        assert (back.stop_rule, back.retimed_throttled) == (r.stop_rule, 2)


# ---- the same cheats as CUDA kernels (tests/learner/gemm_cheats.cu) ---------------------------

from pathlib import Path  # noqa: E402

LEARNER = Path(__file__).resolve().parent / "learner"
SAMPLED_SHAPE = (4096, 4096, 4100)  # above 4096^3 multiply-adds: C is checked on sampled rows and columns

SAMPLED_ONLY = """\
// Writes only the rows and columns of C that the sampled check of seed 0 reads (tests/test_gaming.py).
__device__ const unsigned char row_picked[{m}] = {{{rows}}};
__device__ const unsigned char col_picked[{n}] = {{{cols}}};

extern "C" __global__ void sampled_only(const float* A, const float* B, float* C, int M, int N, int K) {{
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < M && col < N && (row_picked[row] || col_picked[col])) {{
        float acc = 0.0f;
        for (int k = 0; k < K; ++k)
            acc = fmaf(A[size_t(row) * K + k], B[size_t(k) * N + col], acc);
        C[size_t(row) * N + col] = acc;
    }}
}}
"""


def sampled_only_source(tmp_path, seed=0) -> Path:
    """The kernel that knows seed 0's sample: its picks drawn exactly as the GEMM workload draws them."""
    from pmppbench.workloads.gemm.workload import WORKLOAD as gemm

    m, n, k = SAMPLED_SHAPE
    rows, cols = gemm.make_inputs({"m": m, "n": n, "k": k}, np.random.default_rng(seed))[SAMPLE]

    def flags(size, picks):
        f = np.zeros(size, dtype=np.uint8)
        f[picks] = 1
        return ",".join(map(str, f))

    path = tmp_path / "sampled_only.cu"
    path.write_text(SAMPLED_ONLY.format(m=m, n=n, rows=flags(m, rows), cols=flags(n, cols)))
    return path


def test_the_cheating_kernels_compile(tmp_path):
    from pmppbench.hardware.compile import compile_unit

    names = ["caches_c", "skips_after_first", "only_when_poisoned", "skips_if_done", "honest_naive", "fp16_products"]
    unit = compile_unit("gemm", names, "sm_90", source=LEARNER / "gemm_cheats.cu")
    assert set(unit.lowered) == set(names)
    unit = compile_unit("gemm", ["sampled_only"], "sm_90", source=sampled_only_source(tmp_path))
    assert set(unit.lowered) == {"sampled_only"}


@pytest.mark.gpu
@pytest.mark.parametrize("kernel, shape", [
    ("caches_c", (1024, 1024, 1024)),  # PASS at 389 TFLOP/s before the re-check had fresh inputs
    ("skips_after_first", (1024, 1024, 1024)),
    ("only_when_poisoned", (1024, 1024, 1024)),
    ("sampled_only", SAMPLED_SHAPE),
])
def test_a_cheating_gemm_kernel_does_not_pass(run_cli, tmp_path, kernel, shape):
    from pmppbench.results.resultfile import load

    source = sampled_only_source(tmp_path) if kernel == "sampled_only" else LEARNER / "gemm_cheats.cu"
    out = tmp_path / "cheat.csv"
    code, _, err = run_cli("gemm", *map(str, shape), "2", "--variants", "cublas", "--kernel", f"{source}:{kernel}",
                           "--like", "naive", "--out", str(out))
    rows = {r.variant: r for r in load(out)[0]}
    assert code == 1, err
    assert rows["cublas"].check == "PASS" and rows["cublas"].median_ms
    assert rows[kernel].check == "FAIL" and rows[kernel].median_ms is None
    assert rows[kernel].check_detail.startswith("after its timed batches, on fresh inputs: "), rows[kernel].check_detail


@pytest.mark.gpu
def test_a_kernel_that_skips_its_work_when_done_earns_no_time(run_cli, tmp_path):
    """skips_if_done is naive's work plus a check of one element per tile: right on every call,
    and 2.3 times naive's rate at 2048^3 when its calls repeat one input set. Timed again with
    each call on another set than its last it never finds its answer and takes naive's time:
    it slows far more than naive does, and FAILs (exit 1) without times; naive's row stands."""
    from pmppbench.results.resultfile import load

    out = tmp_path / "skips.csv"
    code, _, err = run_cli("gemm", "2048", "2048", "2048", "5", "--variants", "naive", "--kernel",
                           f"{LEARNER / 'gemm_cheats.cu'}:skips_if_done", "--like", "naive", "--out", str(out))
    rows = {r.variant: r for r in load(out)[0]}
    assert code == 1, err
    assert rows["naive"].check == "PASS" and rows["naive"].median_ms > 0
    mine = rows["skips_if_done"]
    assert mine.check == "FAIL" and mine.median_ms is None, mine.check_detail
    assert "it skips work when its output already holds the answer" in mine.check_detail


@pytest.mark.gpu
def test_an_honest_learners_copy_of_naive_keeps_its_pass_and_time(run_cli, tmp_path):
    """The same timing on changing inputs leaves an honest kernel alone: naive's own source as
    a learner's, at an L2-resident shape too (where both slow alike when the inputs change)."""
    from pmppbench.results.resultfile import load

    for size in ("2048", "512"):
        out = tmp_path / f"honest{size}.csv"
        code, _, err = run_cli("gemm", size, size, size, "5", "--variants", "naive", "--kernel",
                               f"{LEARNER / 'gemm_cheats.cu'}:honest_naive", "--like", "naive", "--out", str(out))
        rows = {r.variant: r for r in load(out)[0]}
        assert code == 0, err
        assert rows["honest_naive"].check == "PASS"
        assert 0.9 < rows["honest_naive"].median_ms / rows["naive"].median_ms < 1.1


@pytest.mark.gpu
def test_a_kernel_with_fp16_products_fails_the_fp32_check(run_cli, tmp_path):
    from pmppbench.results.resultfile import load

    out = tmp_path / "fp16.csv"
    code, _, err = run_cli("gemm", "1024", "1024", "1024", "2", "--variants", "naive", "--kernel",
                           f"{LEARNER / 'gemm_cheats.cu'}:fp16_products", "--like", "naive", "--out", str(out))
    rows = {r.variant: r for r in load(out)[0]}
    assert code == 1, err
    assert rows["naive"].check == "PASS" and rows["fp16_products"].check == "FAIL"


def test_fp16_products_are_outside_the_fp32_gemm_bound():
    """The CPU side of the same: products rounded to FP16 (11 bits) and summed in FP32 miss
    the 16 u sqrt(K) bound of FP32 by orders of magnitude."""
    from pmppbench.measure.check import compare
    from pmppbench.workloads.gemm.workload import WORKLOAD as gemm

    shape = {"m": 32, "n": 32, "k": 1024}
    inputs = gemm.make_inputs(shape, np.random.default_rng(0))
    a, b = inputs["a"].astype(np.float16), inputs["b"].astype(np.float16)
    products = (a[:, :, None].astype(np.float32) * b[None, :, :].astype(np.float32)).astype(np.float16)
    c = products.astype(np.float32).sum(axis=1, dtype=np.float32)
    reference = gemm.reference(shape, inputs, gemm.variant("naive"))
    assert not compare(c, reference, gemm.tolerance_for(shape)).passed
    exact = (inputs["a"].astype(np.float64) @ inputs["b"].astype(np.float64)).astype(np.float32)  # FP32 inputs
    assert compare(exact, reference, gemm.tolerance_for(shape)).passed


def test_a_tensor_core_row_is_held_to_its_precisions_peak_not_fp32s():
    """The H200 run of the merged build: every BF16/FP16/TF32 GEMM row (cuBLAS too) was SUSPECT
    against the FP32 peak, since the limits ignored the shape's precision."""
    from pmppbench.workloads import gemm as gemm_pkg  # noqa: F401  (registers the workload)
    from pmppbench import workloads

    w = workloads.get("gemm")
    bf16 = pipeline.limits_for(w, {"m": 4096, "n": 4096, "k": 4096, "precision": "bf16"}, GPU, None)
    fp32 = pipeline.limits_for(w, {"m": 4096, "n": 4096, "k": 4096}, GPU, None)
    assert (bf16.precision, fp32.precision) == ("bf16", "fp32")
    assert bf16.compute_gflops == GPU.peak_gflops("bf16") and fp32.compute_gflops == GPU.peak_gflops("fp32")
    flops = 2 * 4096 ** 3
    cublas_bf16 = row(flops / 753e12 * 1e3, flops, 3 * 4096 * 4096 * 2)  # 753 TFLOP/s, as measured
    assert beyond_ceilings(cublas_bf16, bf16) is None
    assert "FP32 peak" in beyond_ceilings(cublas_bf16, fp32)
