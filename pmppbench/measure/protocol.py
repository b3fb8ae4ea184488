"""The timing protocol: how a variant is timed. Each workload declares its numbers
(`Workload.protocol`, README "The protocol"); this module carries them out.

For every variant: `warmup` untimed calls, then `batches` batches of `reps` calls. With the
"events" timer a batch is timed between two CUDA events recorded around only the repeated
launches, and divided by `reps` (the per-call mean of that batch); a `hold` kernel queued
before the start event lets the host queue the whole batch first, so the events see the
calls back to back on the GPU (EventTimer). The reported time is the
median over batches of those means, with min, max and spread = (max - min) / median.
With `alternate`, variants are measured batch by batch, the order reversed every other
batch, so slow drift (clocks, temperature) does not favour whichever variant runs first.
The "host" timer is for work that includes host transfers (the stream workload): each call
is one complete run that synchronizes itself, timed alone with the host's monotonic clock,
and a batch's value is its median call (robust to a stall of the host thread).
Python's cyclic garbage collector is paused while batches run (as `timeit` does): a
collection in the middle of a host-timed batch would be counted as GPU time.

Two opt-in rules change how many batches count (the course's fixed count stays the default):
`until_stable` (--until-stable) takes batches past `batches` until the relative noise of the
batch means (their standard deviation over their mean, nvbench's noise) is below the target,
or the variant's batches have taken `stable_limit_s`; `discard_on_throttle`
(--discard-on-throttle) throws away a batch at whose end NVML reported a thermal or power
slowdown, or an SM clock below MIN_CLOCK_FRACTION of its maximum, and times it again.
"""

from __future__ import annotations

import contextlib
import gc
import math
import statistics
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace

import numpy as np

from pmppbench.hardware import device
from pmppbench.hardware.compile import load_kernels
from pmppbench.errors import UsageError
from pmppbench.hardware.gpu import cupy, reset_persisting_l2


@dataclass(frozen=True)
class Protocol:
    warmup: int
    batches: int
    reps: int
    alternate: bool = False
    timer: str = "events"  # "events" (hot: back-to-back calls), "cold" (L2 flushed per call) or "host"
    counters: bool = False  # --counters: after the batches, one untimed run per variant under ncu (counters.py)
    settle: bool = True  # the L2 cache refilled with scratch before each variant's warmup (`measure`)
    until_stable: float | None = None  # --until-stable: batches until the relative noise is below this (a fraction)
    stable_limit_s: float = 10.0  # ... or until a variant's batches have taken this long
    discard_on_throttle: bool = False  # --discard-on-throttle: a batch the GPU throttled in is timed again

    def with_reps(self, reps: int | None) -> "Protocol":
        return self if reps is None else replace(self, reps=reps)

    def describe(self) -> str:
        order = ", order alternated" if self.alternate else ""
        batch = "medians" if self.timer == "host" else "means"  # see HostTimer
        counters = "; hardware counters from 1 more untimed run (ncu)" if self.counters else ""
        settle = "L2 settled, " if self.settle and self.timer == "events" else ""
        count = f"{self.batches} batches" if self.until_stable is None else \
            f"{self.batches}+ batches until noise < {100 * self.until_stable:g}% (at most {self.stable_limit_s:g} s)"
        throttle = (f", batches with a throttle or SM clock < {100 * MIN_CLOCK_FRACTION:g}% of max retimed"
                    if self.discard_on_throttle else "")
        return (f"{settle}{self.warmup} warmup, {count} x {self.reps} calls{order}{throttle}, "
                f"median of batch {batch} ({self.timer} timer){counters}")


MIN_CLOCK_FRACTION = 0.90  # --discard-on-throttle: an SM clock below this fraction of its maximum is a throttle
MAX_BATCHES = 10_000  # --until-stable never takes more batches than this per variant
DEFAULT_NOISE = 0.005  # --until-stable without a value: 0.5%, nvbench's default --max-noise


def relative_noise(means) -> float:
    """Standard deviation of the batch means over their mean (nvbench's noise); inf for fewer than 2."""
    if len(means) < 2:
        return math.inf
    mean = statistics.fmean(means)
    return statistics.stdev(means) / mean if mean > 0 else math.inf


def stop_options(until_stable: str | None, limit: str | None, discard_on_throttle: bool) -> dict:
    """The Protocol fields --until-stable [NOISE%], --stable-limit SECONDS and --discard-on-throttle
    ask for ({} when none was given), checked: NOISE a percentage > 0 and < 100, SECONDS > 0."""
    out: dict = {}
    if until_stable is not None:
        text = until_stable.strip()
        try:
            pct = float(text[:-1] if text.endswith("%") else text)
        except ValueError:
            pct = math.nan
        if not (0 < pct < 100):
            raise UsageError(f"--until-stable takes the noise to reach as a percentage such as 0.5%, got {until_stable!r}")
        out["until_stable"] = pct / 100
    if limit is not None:
        if until_stable is None:
            raise UsageError("--stable-limit goes with --until-stable (the time it may take to reach its noise)")
        try:
            seconds = float(limit)
        except ValueError:
            seconds = math.nan
        if not (math.isfinite(seconds) and seconds > 0):
            raise UsageError(f"--stable-limit takes seconds > 0 such as 10, got {limit!r}")
        out["stable_limit_s"] = seconds
    if discard_on_throttle:
        out["discard_on_throttle"] = True
    return out


@dataclass(frozen=True)
class Timing:
    """Summary of one variant's batches, all in milliseconds per call."""

    batch_means_ms: tuple[float, ...]
    median_ms: float
    min_ms: float
    max_ms: float
    spread: float  # (max - min) / median, a fraction
    stopped: str = ""  # --until-stable: why the batches stopped
    retimed: int = 0  # --discard-on-throttle: batches thrown away and timed again

    @classmethod
    def from_batches(cls, batch_means_ms, stopped: str = "", retimed: int = 0) -> "Timing":
        means = tuple(float(x) for x in batch_means_ms)
        if not means:
            raise ValueError("no batches to summarize")
        median = statistics.median(means)
        lo, hi = min(means), max(means)
        spread = (hi - lo) / median if median > 0 else 0.0
        return cls(means, median, lo, hi, spread, stopped, retimed)


# The hold before each hot batch (kernels_cu/timing.cu): never timed.
HOLD_US = 200  # the shortest hold
HOLD_MAX_US = 50_000  # the longest; a batch the host cannot queue in this time is timed as it is
HOLD_MARGIN = 0.8  # the host must finish queueing the batch within this fraction of the hold


def hold_for(submit_us: float) -> float:
    """The hold for a batch the host takes submit_us to queue: twice that over the margin, so
    a batch queued up to twice as slowly is still covered (HOLD_US at least, HOLD_MAX_US at most)."""
    return min(HOLD_MAX_US, max(HOLD_US, 2.0 * submit_us / HOLD_MARGIN))


def longer_hold_us(hold_us: float, submit_us: float) -> float | None:
    """None when a hold of hold_us covered the host's submission of the batch (submit_us);
    otherwise the longer hold to time the batch again with (at most HOLD_MAX_US)."""
    if submit_us <= HOLD_MARGIN * hold_us or hold_us >= HOLD_MAX_US:
        return None
    return hold_for(submit_us)


class Holds:
    """Which hold each launcher's next batch gets (EventTimer's bookkeeping, no GPU needed).

    A batch whose submission outran its hold is timed again with a longer one, a whole batch
    of GPU work thrown away; guessing the first hold from the warmup avoids that. The warmup
    calls are timed on the host (`expect`: the fastest call, since the first one may also
    load the module), and the first batch gets the hold for reps + 1 such calls (the hold's
    own launch included). After each batch the launcher keeps the hold its measured submission
    asks for, so a hold that was guessed too long shrinks back.
    """

    def __init__(self, first_us: float = HOLD_US):
        self.first_us = first_us
        self._us: dict[int, float] = {}  # id(launcher) -> the hold for its next batch
        self._call_us: dict[int, float] = {}  # id(launcher) -> its fastest warmup call on the host
        self.retimed = 0  # batches timed again with a longer hold

    def expect(self, fn: Callable[[], None], call_s: float) -> None:
        self._call_us[id(fn)] = call_s * 1e6

    def next(self, fn: Callable[[], None], reps: int) -> float:
        if id(fn) in self._us:
            return self._us[id(fn)]
        if id(fn) in self._call_us:
            return max(self.first_us, hold_for(self._call_us[id(fn)] * (reps + 1)))
        return self.first_us

    def after(self, fn: Callable[[], None], hold_us: float, submit_us: float) -> float | None:
        """The batch ran under hold_us and took submit_us to queue: None when it stands,
        else the hold to time it again with."""
        longer = longer_hold_us(hold_us, submit_us)
        if longer is None:
            self._us[id(fn)] = max(self.first_us, hold_for(submit_us))
        else:
            self.retimed += 1
        return longer


class EventTimer:
    """Times a batch of calls between two CUDA events on `stream` (default: the current stream).

    Before the start event the stream gets a `hold` kernel that keeps the GPU busy while the
    host queues the whole batch, so the GPU reaches the start event with every call already
    queued and the events time the calls back to back: GPU time, never the host's launches
    (nvbench's blocking kernel does the same). The hold's length comes from `Holds`: guessed
    from the warmup, then what the last batch's submission asked for; when the host still took
    longer than HOLD_MARGIN of it to queue a batch (a stall, or calls with a slow host side
    such as cupy.matmul), that batch is timed again with a longer hold.
    """

    def __init__(self, stream=None, hold_us: float = HOLD_US, l2_bytes: int | None = None):
        cp = cupy()
        self._cp = cp
        self._stream = stream
        self._start = cp.cuda.Event()
        self._end = cp.cuda.Event()
        self._hold = _hold_launcher()
        self.holds = Holds(hold_us)
        self._l2_bytes = l2_bytes
        self._scratch = None

    def settle(self) -> None:
        """Fill the whole L2 with a scratch buffer (twice its size, ordinary stores), untimed.

        Why: a kernel whose loads and stores are marked evict-first (`.cs`, the coarsened
        transpose) leaves the L2's other lines in place, so lines that the variant timed
        before it had read (the same input, through ordinary loads) stay resident and serve
        part of its reads: the same kernel read 1.6-2.2% faster after memcpy than first on a
        shape (docs/measurement.md). After this, every variant starts from one state,
        whatever ran before it; a variant that caches normally refills the L2 in its warmup.
        Lines a variant marked evict-last are made ordinary first (`evict_l2`).
        """
        cp = self._cp
        if self._scratch is None:
            if self._l2_bytes is None:
                self._l2_bytes = device.current().l2_bytes
            self._scratch = cp.empty(max(2 * self._l2_bytes, 1 << 20) // 4, dtype="float32")
        with self._stream if self._stream is not None else contextlib.nullcontext():  # a CuPy stream is a context
            evict_l2(self._scratch)

    def expect(self, fn: Callable[[], None], call_s: float) -> None:
        """`fn`'s fastest warmup call took call_s on the host (measure tells every timer that has this)."""
        self.holds.expect(fn, call_s)

    def batch_ms(self, fn: Callable[[], None], reps: int) -> float:
        hold_us = self.holds.next(fn, reps)
        while True:
            t0 = time.perf_counter()
            self._hold(self._stream, hold_us)
            ms, queued_at = self._timed(fn, reps)
            longer = self.holds.after(fn, hold_us, (queued_at - t0) * 1e6)
            if longer is None:
                return ms
            hold_us = longer

    def _timed(self, fn: Callable[[], None], reps: int) -> tuple[float, float]:
        """(ms per call between the events, host clock when the last call was queued)."""
        self._start.record(self._stream)
        for _ in range(reps):
            fn()
        self._end.record(self._stream)
        queued_at = time.perf_counter()
        self._end.synchronize()
        return self._cp.cuda.get_elapsed_time(self._start, self._end) / reps, queued_at


def evict_l2(scratch) -> None:
    """Leave the L2 holding only `scratch` (at least twice the L2's size), written with ordinary
    stores on the current stream: lines marked persisting are made ordinary first, since the
    fill alone would not evict them (gpu.reset_persisting_l2)."""
    reset_persisting_l2()
    scratch.fill(1.0)


def _hold_launcher() -> Callable[[object, float], None]:
    """(stream, microseconds) -> queue one `hold` that long on the stream."""
    kernel = load_kernels("timing", ["hold"])["hold"]
    return lambda stream, us: kernel((1,), (1,), (np.uint64(int(us * 1000)),), stream=stream)


class ColdTimer:
    """nvbench-style "cold" timing: L2 is flushed before every call, each call has its own events.

    The flush writes a buffer twice the L2 size (outside the timed region), so every call
    starts with its inputs in device memory rather than cache. Each call is then timed as a
    hot batch of one (the hold before its start event touches no memory, so L2 stays
    flushed). Reported per-call times are the mean of the call times of the batch.
    """

    def __init__(self, l2_bytes: int):
        self._scratch = cupy().empty(max(2 * l2_bytes, 1 << 20) // 4, dtype="float32")
        self._one_call = EventTimer()

    def expect(self, fn: Callable[[], None], call_s: float) -> None:
        self._one_call.expect(fn, call_s)

    def batch_ms(self, fn: Callable[[], None], reps: int) -> float:
        total = 0.0
        for _ in range(reps):
            evict_l2(self._scratch)  # whatever the previous call left in L2, evict-last lines too
            total += self._one_call.batch_ms(fn, 1)
        return total / reps


class HostTimer:
    """Times self-synchronizing calls one by one with the host's monotonic clock.

    A batch's value is its median call, not the mean: host-clock times carry the host's own
    scheduling, and a rare stall (the thread descheduled for ~0.4 ms, seen about once in
    50 batches on the H200's host) would otherwise move one batch mean of a 0.46 ms stream
    pipeline by 8%. The median of each batch, and the median over batches, ignore it.
    """

    def __init__(self, clock: Callable[[], float] = time.perf_counter):
        self._clock = clock

    def batch_ms(self, fn: Callable[[], None], reps: int) -> float:
        clock = self._clock
        calls = []
        for _ in range(reps):
            t0 = clock()
            fn()
            calls.append(clock() - t0)
        return statistics.median(calls) * 1e3


def make_timer(protocol: Protocol):
    if protocol.timer == "host":
        return HostTimer()
    if protocol.timer == "cold":
        return ColdTimer(device.current().l2_bytes)
    return EventTimer()


@contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic garbage collection inside; the previous state is restored after."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def measure(runs: Mapping[str, Callable[[], None]], protocol: Protocol, timer=None,
            observer=None, at: Callable[[str, str], None] | None = None,
            clock: Callable[[], float] = time.perf_counter) -> dict[str, Timing]:
    """Run the protocol over every variant in `runs` (name -> zero-argument launcher).

    Warmup runs for every variant before the first timed batch. Without alternation each
    variant's batches run back to back in the given order; with it, round b visits the
    variants in order when b is even and in reverse when b is odd (a variant that has its
    batches sits the later rounds out). An `observer`, if given,
    has `before(name)` called once the variant's warmup is queued and
    `after(name)` after every timed batch (clock sampling; outside the timed region); with
    `protocol.discard_on_throttle` its `throttled(name)` ('' or why) judges the batch just timed,
    and `discard_last(name)` drops the sample of a batch that is timed again.
    `at(name, phase)`, if given, is told before each warmup and each batch what runs next
    (the supervisor's heartbeat: which variant a fault or a hang belongs to). A timer with
    `expect(fn, seconds)` is told the fastest warmup call's host time (`clock`), from which
    EventTimer sizes its first hold. With `protocol.settle`, a timer with `settle()` is asked
    to put the GPU's cache in one state before each variant's warmup (EventTimer.settle says why).
    With --until-stable, `clock` also times each batch on the host, for its time limit.
    """
    timer = timer or make_timer(protocol)
    names = list(runs)
    batches: dict[str, list[float]] = {n: [] for n in names}
    took_s = dict.fromkeys(names, 0.0)  # host time of each variant's batches
    retimed = dict.fromkeys(names, 0)
    screen = protocol.discard_on_throttle and observer is not None and hasattr(observer, "throttled")
    target = protocol.until_stable

    def warm(name):
        if at:
            at(name, "warmup")
        if protocol.settle and hasattr(timer, "settle"):
            timer.settle()
        fastest = None
        for _ in range(protocol.warmup):
            t0 = clock()
            runs[name]()
            took = clock() - t0
            fastest = took if fastest is None else min(fastest, took)
        if fastest is not None and hasattr(timer, "expect"):
            timer.expect(runs[name], fastest)
        if observer:
            observer.before(name)  # right after the warmup was queued: normally a busy GPU

    def timed_batch(name):
        if at:
            of = protocol.batches if target is None else f"{protocol.batches}+"
            at(name, f"batch {len(batches[name]) + 1} of {of}")
        t0 = clock() if target is not None else 0.0
        ms = timer.batch_ms(runs[name], protocol.reps)
        if target is not None:
            took_s[name] += clock() - t0
        if observer:
            observer.after(name)
        # A throttled batch is timed again, at most `batches` times per variant: a GPU that
        # throttles all along keeps its batches (and the throttle warning says so).
        if screen and retimed[name] < protocol.batches and observer.throttled(name, MIN_CLOCK_FRACTION):
            retimed[name] += 1
            observer.discard_last(name)  # the retimed batch's clock sample goes with its time
            return
        batches[name].append(ms)

    def done(name) -> bool:
        n = len(batches[name])
        if n < protocol.batches:
            return False
        if target is None:
            return True
        return (relative_noise(batches[name]) < target or took_s[name] >= protocol.stable_limit_s
                or n >= MAX_BATCHES)

    def stopped(name) -> str:
        if target is None:
            return ""
        means = batches[name]
        noise, n = relative_noise(means), len(means)
        if noise < target:
            return f"noise {100 * noise:.2f}% < {100 * target:g}% after {n} batches"
        why = f"{MAX_BATCHES} batches" if n >= MAX_BATCHES else f"time limit {protocol.stable_limit_s:g} s"
        return f"{why} reached at noise {100 * noise:.2f}% (target {100 * target:g}%) after {n} batches"

    with gc_paused():
        if protocol.alternate:
            for name in names:
                warm(name)
            b = 0
            while not all(done(n) for n in names):
                for name in (names if b % 2 == 0 else reversed(names)):
                    if not done(name):
                        timed_batch(name)
                b += 1
        else:
            for name in names:
                warm(name)
                while not done(name):
                    timed_batch(name)
    return {n: Timing.from_batches(batches[n], stopped(n), retimed[n]) for n in names}
