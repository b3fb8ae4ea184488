"""Protocol statistics and batch ordering, on synthetic timers (no GPU)."""

from __future__ import annotations

import gc

import pytest

from pmppbench.measure.protocol import (HOLD_MARGIN, HOLD_MAX_US, HOLD_US, Holds, HostTimer, Protocol, Timing, hold_for,
                                longer_hold_us, measure)


def test_timing_median_min_max_spread():
    t = Timing.from_batches([2.0, 1.0, 4.0, 3.0, 2.0])
    assert t.median_ms == 2.0
    assert (t.min_ms, t.max_ms) == (1.0, 4.0)
    assert t.spread == pytest.approx((4.0 - 1.0) / 2.0)


def test_timing_needs_batches():
    with pytest.raises(ValueError):
        Timing.from_batches([])


class ScriptedTimer:
    """Returns preset batch means and records the order variants were timed in."""

    def __init__(self):
        self.order = []

    def batch_ms(self, fn, reps):
        fn()
        self.order.append((fn.name, reps))
        return float(len(self.order))


class Fn:
    def __init__(self, name):
        self.name, self.calls = name, 0

    def __call__(self):
        self.calls += 1


def test_measure_runs_warmup_then_batches_in_order():
    p = Protocol(warmup=3, batches=5, reps=7)
    fns = {"a": Fn("a"), "b": Fn("b")}
    timer = ScriptedTimer()
    timings = measure(fns, p, timer=timer)
    assert [n for n, _ in timer.order] == ["a"] * 5 + ["b"] * 5
    assert all(reps == 7 for _, reps in timer.order)
    assert fns["a"].calls == 3 + 5  # warmup + one call per scripted batch
    assert timings["a"].batch_means_ms == (1.0, 2.0, 3.0, 4.0, 5.0)
    assert timings["b"].median_ms == 8.0


def test_measure_alternates_order_between_batches():
    p = Protocol(warmup=0, batches=4, reps=1, alternate=True)
    fns = {"naive": Fn("naive"), "shared": Fn("shared")}
    timer = ScriptedTimer()
    measure(fns, p, timer=timer)
    assert [n for n, _ in timer.order] == ["naive", "shared", "shared", "naive", "naive", "shared", "shared", "naive"]


def test_measure_pauses_gc_while_timing_and_restores_it():
    seen = []

    class Probe:
        name = "probe"

        def __call__(self):
            seen.append(gc.isenabled())

    assert gc.isenabled()
    measure({"probe": Probe()}, Protocol(warmup=2, batches=3, reps=1), timer=ScriptedTimer())
    assert seen and not any(seen)  # no collection can land inside warmup or a batch
    assert gc.isenabled()

    gc.disable()  # a caller that had it off keeps it off
    try:
        measure({"probe": Probe()}, Protocol(warmup=0, batches=1, reps=1), timer=ScriptedTimer())
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_host_timer_takes_the_median_call_of_a_batch():
    # Five calls of 1, 1, 9 (a stall), 1 and 2 ms: the batch is its median call, 1 ms.
    durations = [0.001, 0.001, 0.009, 0.001, 0.002]
    ticks, now = [], 0.0
    for d in durations:
        ticks += [now, now + d]
        now += d + 0.5
    clock = iter(ticks)
    timer = HostTimer(clock=lambda: next(clock))
    assert timer.batch_ms(lambda: None, len(durations)) == pytest.approx(1.0)


def test_defaults_match_the_documented_protocol():
    from pmppbench import workloads

    DEFAULTS = {name: workloads.get(name).protocol for name in workloads.names()}
    assert (DEFAULTS["transpose"].warmup, DEFAULTS["transpose"].batches, DEFAULTS["transpose"].reps) == (3, 5, 20)
    assert DEFAULTS["gemm"].reps == 20 and DEFAULTS["vecadd"].reps == 100
    s = DEFAULTS["stencil"]
    assert (s.warmup, s.batches, s.reps, s.alternate) == (20, 5, 100, True)
    st = DEFAULTS["stream"]
    assert (st.warmup, st.batches, st.timer, st.alternate) == (5, 9, "host", True)
    assert st.reps == 10  # README explains why the stream batches are 10 runs, not the course's 1


def test_a_hold_that_covered_the_submission_is_kept():
    assert longer_hold_us(200, 100) is None
    assert longer_hold_us(200, HOLD_MARGIN * 200) is None


def test_a_hold_the_host_outran_grows_past_the_submission_up_to_the_cap():
    longer = longer_hold_us(200, 600)  # 0.6 ms to queue the batch: the 0.2 ms hold ended first
    assert longer is not None and HOLD_MARGIN * longer >= 600
    assert longer_hold_us(200, 10 * HOLD_MAX_US) == HOLD_MAX_US
    assert longer_hold_us(HOLD_MAX_US, 10 * HOLD_MAX_US) is None  # at the cap: timed as it is


def test_a_hold_covers_twice_the_submission_within_its_bounds():
    assert hold_for(0) == HOLD_US
    assert hold_for(400) == pytest.approx(2 * 400 / HOLD_MARGIN)
    assert hold_for(10 * HOLD_MAX_US) == HOLD_MAX_US


def test_the_first_hold_is_guessed_from_the_fastest_warmup_call():
    fn, other = Fn("a"), Fn("b")
    holds = Holds()
    holds.expect(fn, 8e-6)  # 8 us a call on the host
    assert holds.next(fn, 100) == pytest.approx(hold_for(8 * 101))  # the batch and the hold's own launch
    assert holds.next(other, 100) == HOLD_US  # nothing known: the shortest hold


def test_a_batch_the_host_outran_is_timed_again_and_counted():
    fn = Fn("a")
    holds = Holds()
    assert holds.after(fn, HOLD_US, 3 * HOLD_US) == longer_hold_us(HOLD_US, 3 * HOLD_US)
    assert holds.retimed == 1
    assert holds.next(fn, 20) == HOLD_US  # nothing kept from a batch that did not stand


def test_the_kept_hold_follows_the_last_submission_both_ways():
    fn = Fn("a")
    holds = Holds()
    assert holds.after(fn, 10_000, 300) is None  # a generous guess covered it ...
    assert holds.next(fn, 20) == pytest.approx(hold_for(300))  # ... and shrinks to what 300 us asks
    assert holds.after(fn, hold_for(300), 600) is None  # twice as slow still fits
    assert holds.next(fn, 20) == pytest.approx(hold_for(600))
    assert holds.retimed == 0


class ExpectingTimer(ScriptedTimer):
    def __init__(self):
        super().__init__()
        self.expected = {}

    def expect(self, fn, seconds):
        self.expected[fn.name] = seconds


def test_measure_tells_the_timer_the_fastest_warmup_call():
    ticks = iter([0.0, 0.005, 1.0, 1.000010, 2.0, 2.000020])  # warmup calls of 5 ms, 10 us, 20 us
    timer = ExpectingTimer()
    measure({"a": Fn("a")}, Protocol(warmup=3, batches=1, reps=1), timer=timer, clock=lambda: next(ticks))
    assert timer.expected == {"a": pytest.approx(10e-6)}


def test_measure_without_warmup_tells_the_timer_nothing():
    timer = ExpectingTimer()
    measure({"a": Fn("a")}, Protocol(warmup=0, batches=2, reps=1), timer=timer)
    assert timer.expected == {}


class SettlingTimer(ScriptedTimer):
    """A scripted timer that records, at each settle(), how many calls each variant had seen."""

    def __init__(self, fns):
        super().__init__()
        self.fns, self.settled = fns, []

    def settle(self):
        self.settled.append({n: f.calls for n, f in self.fns.items()})


def test_measure_settles_the_cache_before_each_variants_warmup():
    fns = {"a": Fn("a"), "b": Fn("b")}
    timer = SettlingTimer(fns)
    measure(fns, Protocol(warmup=3, batches=2, reps=1), timer=timer)
    # before a's warmup (nothing ran yet), and before b's (a's 3 warmup calls and 2 batches done)
    assert timer.settled == [{"a": 0, "b": 0}, {"a": 5, "b": 0}]


def test_evicting_the_l2_makes_persisting_lines_ordinary_before_the_fill(monkeypatch):
    """Ordinary stores do not evict lines marked evict-last: the reset must come first."""
    from pmppbench.measure import protocol

    steps = []

    class Scratch:
        def fill(self, value):
            steps.append(("fill", value))

    monkeypatch.setattr(protocol, "reset_persisting_l2", lambda: steps.append("reset"))
    protocol.evict_l2(Scratch())
    assert steps == ["reset", ("fill", 1.0)]


def test_the_persisting_reset_waits_for_the_gpu_and_says_when_the_driver_refuses(monkeypatch):
    import types

    from pmppbench.hardware import gpu
    from pmppbench.errors import EnvironmentProblem

    steps, result = [], [0]
    runtime = types.SimpleNamespace(deviceSynchronize=lambda: steps.append("sync"))
    monkeypatch.setattr(gpu, "cupy", lambda: types.SimpleNamespace(cuda=types.SimpleNamespace(runtime=runtime)))
    monkeypatch.setattr(gpu, "driver_function", lambda name, argtypes: {
        "cuCtxResetPersistingL2Cache": lambda: steps.append("reset") or result[0]}.get(name))
    gpu.reset_persisting_l2()
    assert steps == ["sync", "reset"]  # not stream-ordered: nothing may still run when it acts
    result[0] = 801  # CUDA_ERROR_NOT_SUPPORTED: a GPU before sm_80 has no persisting lines
    gpu.reset_persisting_l2()
    result[0] = 201  # CUDA_ERROR_INVALID_CONTEXT
    with pytest.raises(EnvironmentProblem, match=r"cuCtxResetPersistingL2Cache failed \(CUresult 201\)"):
        gpu.reset_persisting_l2()


def test_measure_alternating_settles_before_each_warmup_only():
    fns = {"a": Fn("a"), "b": Fn("b")}
    timer = SettlingTimer(fns)
    measure(fns, Protocol(warmup=2, batches=4, reps=1, alternate=True), timer=timer)
    assert timer.settled == [{"a": 0, "b": 0}, {"a": 2, "b": 0}]  # the batches alternate unsettled


def test_measure_without_settle_leaves_the_cache_alone():
    fns = {"a": Fn("a")}
    timer = SettlingTimer(fns)
    measure(fns, Protocol(warmup=1, batches=1, reps=1, settle=False), timer=timer)
    assert timer.settled == []


def test_protocol_caption_says_the_cache_is_settled_for_event_timing_only():
    assert Protocol(3, 5, 20).describe().startswith("L2 settled, 3 warmup, 5 batches x 20 calls")
    assert Protocol(3, 5, 20, settle=False).describe().startswith("3 warmup, 5 batches")
    assert Protocol(5, 9, 10, alternate=True, timer="host").describe().startswith("5 warmup, 9 batches")
