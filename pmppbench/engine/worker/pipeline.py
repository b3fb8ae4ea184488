"""compile -> check -> measure -> rows, written once for every workload.

For each shape: fresh random inputs, every variant checked against the CPU reference with
its output poisoned first, then (unless check-only) every passing variant timed under the
workload's protocol. `run_shape` sets the shape up on the GPU; `evaluate` keeps the
promises and needs no GPU itself (the CPU tests drive it with a NumPy workload). The seed's order holds: first see PASS, then compare median_ms; a
variant that fails its check is never timed. One variant's failure (compile error, launch
failure, wrong result) is recorded in its row and the others go on. (--counters' extra run
comes after the runner's, from the worker: worker.run_step.)
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from pmppbench.measure import clocks, roofline
from pmppbench.results import derive
from pmppbench.hardware import device
from pmppbench.hardware.archs import precision_of
from pmppbench.measure.check import compare, device_copy, on_device
from pmppbench.measure.clocks import ClockObserver
from pmppbench.hardware.compile import load_kernels
from pmppbench.errors import CompileError, PmppError, UsageError
from pmppbench.hardware.gpu import cupy, require_device
from pmppbench.measure.noise import Limits, beyond_ceilings, diagnose
from pmppbench.measure.protocol import EventTimer, Protocol, measure
from pmppbench.row import Result, now_iso
from pmppbench.workloads.base import (
    Context, Job, Shape, Unavailable, Variant, Workload, arch_meets, unique_kernels,
)
from pmppbench.workloads import learner
from pmppbench.workloads.helpers import POISON_INT, SAMPLE

Progress = Callable[[str, str, str], None]  # (workload, variant, shape label)


def _gib(n: int) -> str:
    return f"{n / 2**30:.2f} GiB"


# ---- where the time goes (`all` prints it; the run metadata records it) ---------------------

SPENT: dict[str, float] = {}  # phase -> seconds in this process, since take_spent() last ran
PHASES = ("timed", "checks", "references", "inputs", "compile", "counters")  # the rest of the wall time is "other"


@contextmanager
def spent(phase: str) -> Iterator[None]:
    t0 = time.perf_counter()
    try:
        yield
    finally:
        SPENT[phase] = SPENT.get(phase, 0.0) + time.perf_counter() - t0


def take_spent() -> dict[str, float]:
    """This process's phase seconds so far, and start again from zero."""
    out = dict(SPENT)
    SPENT.clear()
    return out


def memory_shortfall(workload: Workload, shape: Shape, free: int) -> str | None:
    """Why `shape` cannot run in `free` bytes of device memory (None when it fits): the
    workload's estimate (device_bytes: its inputs and outputs) against what is free."""
    need = workload.device_bytes(shape)
    if need <= free:
        return None
    return f"needs {_gib(need)} of device memory, {_gib(free)} free on this GPU"


def free_for_shape() -> int:
    """Device memory free for the next shape: the previous shape's buffers released first."""
    gc.collect()  # the previous shape's buffers may still sit in reference cycles
    cupy().get_default_memory_pool().free_all_blocks()
    return device.free_memory_bytes()[0]


def ensure_memory(workload: Workload, shape: Shape) -> None:
    """Refuse, before allocating, a shape that cannot fit in free device memory (`resources`;
    a run makes such a shape SKIP rows instead: run_shape)."""
    short = memory_shortfall(workload, shape, free_for_shape())
    if short:
        raise UsageError(f"{workload.name} {workload.label(shape)} {short}; choose a smaller size")


def skipped_rows(workload: Workload, shape: Shape, variants: list[Variant], why: str, *, seed: int = 0,
                 run_id: str = "", device_name: str = "") -> list[Result]:
    """A SKIP row per variant, each with the reason: a shape this GPU cannot hold (an 8 GB
    laptop GPU and a 16 GiB check shape) is left out of the run and the rows say why."""
    label = workload.label(shape)
    return [Result(workload.name, v.name, label, dims=dict(shape), seed=seed, device=device_name, run_id=run_id,
                   timestamp=now_iso(), check="SKIP", check_detail=why) for v in variants]


def kernel_unit(workload: Workload, shape: Shape, variants: list[Variant]) -> tuple[str, tuple[str, ...], tuple]:
    """What one shape compiles: (workload, kernel names, sorted defines), for load_kernels and
    compile.Prefetch. A learner's kernel (--kernel) compiles from its own file, in its job; the
    variant it runs --like is set up with the shape, so that variant's kernel is compiled too
    (its job is the learner's, with the kernel swapped), whether or not --variants names it."""
    names = tuple(unique_kernels([modelled(workload, v) if v.source else v for v in variants]))
    return workload.name, names, tuple(sorted(workload.defines(shape).items()))


HostWork = tuple[dict, dict, list]  # (inputs, references by reference_key, the other input sets)
CYCLE_STREAM = 2  # a learner's other input sets: default_rng((seed, 2, i)), apart from the re-check's


def input_sets(protocol: Protocol) -> int:
    """How many input sets a learner's kernel cycles through (time_learners_on_changing_inputs):
    two; three where the protocol interleaves the variants' batches, since a variant's next call
    must then differ both from its own last set and from the set of the call just before it
    (another variant's, which may have left its answer in a shared output)."""
    return 3 if protocol.alternate else 2


def sets_for(variants: list[Variant], protocol: Protocol, check_only: bool) -> int:
    """The input sets a step's host work makes: more than one only where a learner's kernel is timed."""
    return input_sets(protocol) if not check_only and any(v.source for v in variants) else 1


def host_work(workload: Workload, shape: Shape, variants: list[Variant], seed: int, sets: int = 2) -> HostWork:
    """What a shape needs from the host alone: its seeded inputs, every CPU reference its
    variants compare with, and the other `sets - 1` input sets a learner's kernel is timed on
    (other_inputs; sets_for). No GPU, so a worker can do it for the next steps
    while the GPU runs this one (worker.Ahead)."""
    inputs = workload.make_inputs(shape, np.random.default_rng(seed))
    references: dict = {}
    for v in variants:
        reference_for(workload, shape, inputs, v, references)
    return inputs, references, other_inputs(workload, shape, seed, sets)


def other_inputs(workload: Workload, shape: Shape, seed: int, sets: int) -> list[dict]:
    """`sets - 1` more input sets of the same shape and distribution, each from its own seed stream."""
    return [workload.make_inputs(shape, np.random.default_rng((seed, CYCLE_STREAM, i))) for i in range(1, sets)]


def reference_for(workload: Workload, shape: Shape, inputs: dict, variant: Variant, references: dict):
    """The CPU reference `variant` is checked against, made once per reference_key into
    `references` (variants that compute the same thing share one)."""
    model = modelled(workload, variant)
    key = workload.reference_key(model)
    if key not in references:
        references[key] = workload.reference(shape, inputs, model)
    return key, references[key]


@contextmanager
def prepared(workload: Workload, shape: Shape, variants: list[Variant], seed: int = 0,
             inputs: dict | None = None, memory_checked: bool = False) -> Iterator[tuple[dict, Any]]:
    """One shape made ready for its variants' jobs: memory checked, the kernels they launch
    compiled and loaded, seeded inputs made (unless given) and set up on the device. Yields
    (inputs, ctx) and tears the setup down on the way out, whatever happened inside.
    `memory_checked`: the caller has just compared the shape with the free memory (run_shape)."""
    if not memory_checked:
        ensure_memory(workload, shape)
    cc = device.current().compute_capability  # a variant this GPU cannot run is a SKIP row: not compiled
    _, names, defines = kernel_unit(workload, shape, [v for v in variants if arch_meets(cc, v.needs)])
    with spent("compile"):
        kernels = load_kernels(workload.name, list(names), dict(defines)) if names else {}
    with spent("inputs"):
        if inputs is None:
            inputs = workload.make_inputs(shape, np.random.default_rng(seed))
        ctx = workload.setup(shape, inputs, kernels)
    try:
        yield inputs, ctx
    finally:
        release(ctx)


def run_shape(
    workload: Workload,
    shape: Shape,
    *,
    protocol: Protocol,
    check_only: bool = False,
    seed: int = 0,
    variants: list[Variant] | None = None,
    progress: Progress | None = None,
    run_id: str = "",
    at: Callable[[str, str], None] | None = None,
    host: HostWork | None = None,
) -> list[Result]:
    """Check (and time) every variant of one workload on one shape on the GPU; return its rows.
    `at(variant, phase)` hears what runs next (the worker's heartbeat to its supervisor);
    `host` is the shape's host_work() when it was done ahead (worker.Ahead)."""
    require_device()
    cp = cupy()
    variants = list(variants or workload.variants_for(shape))
    dev = device.current()
    short = memory_shortfall(workload, shape, free_for_shape())
    if short:  # does not fit this GPU: SKIP rows with the reason, and the run goes on
        return skipped_rows(workload, shape, variants, short, seed=seed, run_id=run_id, device_name=dev.name)
    with prepared(workload, shape, variants, seed, inputs=host[0] if host else None,
                  memory_checked=True) as (inputs, ctx):
        rows = evaluate(workload, shape, variants, inputs, ctx, protocol=protocol, check_only=check_only,
                        references=dict(host[1]) if host else None, others=host[2] if host else None,
                        seed=seed, run_id=run_id, progress=progress, device_name=dev.name, device=dev,
                        synchronize=cp.cuda.Device().synchronize, ceilings=roofline.ceilings_for(dev),
                        observer=clock_observer, at=at)
    return rows


@dataclass
class ShapeRun:
    """What the stages of one shape's pipeline share: the shape set up, its rows, and the jobs
    of the variants that passed their check (the only ones timed)."""

    workload: Workload
    shape: Shape
    variants: list[Variant]
    inputs: dict[str, np.ndarray]
    ctx: Any
    protocol: Protocol
    seed: int = 0
    device: Any = None  # the facts of the GPU the jobs run on; None in the CPU tests
    synchronize: Callable[[], None] = lambda: None
    ceilings: list | None = None
    timer: Any = None  # a test's scripted timer; None: the protocol's event timer
    at: Callable[[str, str], None] | None = None  # the worker's heartbeat: (variant, phase)
    progress: Progress | None = None
    references: dict = field(default_factory=dict)  # reference_key -> CPU reference, made at first use
    rows: dict[str, Result] = field(default_factory=dict)
    jobs: dict[str, Job] = field(default_factory=dict)
    tolerances: dict = field(default_factory=dict)
    clocks: ClockObserver | None = None
    others: list | None = None  # the other input sets a learner's kernel is timed on (None: made when needed)

    @property
    def label(self) -> str:
        return self.workload.label(self.shape)

    def heartbeat(self, variant: str, phase: str) -> None:
        if self.at:
            self.at(variant, phase)


def evaluate(
    workload: Workload,
    shape: Shape,
    variants: list[Variant],
    inputs: dict[str, np.ndarray],
    ctx: Any,
    *,
    protocol: Protocol,
    check_only: bool = False,
    seed: int = 0,
    run_id: str = "",
    progress: Progress | None = None,
    device_name: str = "",
    synchronize: Callable[[], None] = lambda: None,
    ceilings: list | None = None,
    observer: Callable[[], ClockObserver | None] = lambda: None,
    timer: Any = None,
    at: Callable[[str, str], None] | None = None,
    references: dict | None = None,
    device: Any = None,
    others: list | None = None,
) -> list[Result]:
    """One shape's pipeline, on a shape already set up (`prepared`; no GPU needed by this
    function, so the CPU tests drive it with a NumPy workload): check every variant with its
    output poisoned, model its traffic, time only the variants that PASS, time a learner's
    kernel again with its inputs changing every call (beside the variant it is like), re-check it
    on fresh inputs, derive the rates, and judge each row against the ceilings."""
    run = ShapeRun(workload, shape, list(variants), inputs, ctx, protocol, seed=seed, device=device,
                   synchronize=synchronize, ceilings=ceilings, timer=timer, at=at, progress=progress,
                   references=references if references is not None else {}, others=others)
    start_rows(run, device_name, run_id)
    check_variants(run)
    model_traffic(run)
    if check_only or not run.jobs:
        return list(run.rows.values())
    run.clocks = observer()
    time_variants(run)
    time_learners_on_changing_inputs(run)
    recheck_learners(run)
    derive_values(run)
    judge(run)
    return list(run.rows.values())


def start_rows(run: ShapeRun, device_name: str, run_id: str) -> None:
    """One row per variant, with its check rule; nothing measured yet."""
    run.tolerances = {v.name: run.workload.tolerance_of(run.shape, modelled(run.workload, v), run.device)
                      for v in run.variants}
    run.rows = {v.name: Result(run.workload.name, v.name, run.label, dims=dict(run.shape), seed=run.seed,
                               device=device_name, run_id=run_id, timestamp=now_iso(),
                               tolerance=run.tolerances[v.name].describe())
                for v in run.variants}


def checker(run: ShapeRun, inputs: dict, references: dict) -> Callable[[Variant, Any], Any]:
    """check(variant, output): the output against the variant's CPU reference for `inputs`
    (on the GPU when the output is there, the reference uploaded once per key)."""
    uploaded: dict[str, Any] = {}

    def check(v: Variant, out):
        with spent("references"):  # ~0 when it was made ahead
            key, ref = reference_for(run.workload, run.shape, inputs, v, references)
        with spent("checks"):
            if on_device(out):
                if key not in uploaded:
                    uploaded[key] = device_copy(ref)
                ref = uploaded[key]
            return compare(out, ref, run.tolerances[v.name])

    return check


def check_variants(run: ShapeRun) -> None:
    """Every variant's one call, output poisoned first, against its reference: PASS keeps the
    job for timing; a failure of any kind stays in that variant's row and the others go on."""
    check = checker(run, run.inputs, run.references)
    for v in run.variants:
        row = run.rows[v.name]
        if run.progress:
            run.progress(run.workload.name, v.name, run.label)
        run.heartbeat(v.name, "check")
        if run.device is not None and not arch_meets(run.device.compute_capability, v.needs):
            row.check, row.check_detail = "SKIP", f"needs {v.needs} (this GPU is {run.device.arch})"
            continue
        job = first_call(run, v, row)
        if job is None:
            continue
        out, job = job
        result = check(v, out)
        row.check = result.status
        row.max_abs_err, row.max_rel_err, row.check_detail = result.max_abs_err, result.max_rel_err, result.detail
        if result.passed and v.timed:
            run.jobs[v.name] = job


def first_call(run: ShapeRun, v: Variant, row: Result) -> tuple[Any, Job] | None:
    """(output, job) of the variant's first call, or None with the reason in its row."""
    try:
        job = job_for(run.workload, v, run.shape, run.ctx)
        _fill_resources(row, job)
        return fresh_output(job, run.synchronize), job
    except CompileError as exc:
        if not v.source:
            raise
        row.check, row.error = "ERROR", str(exc)  # a learner's kernel: NVRTC's message, file and line
    except Unavailable as exc:  # a peer whose library is missing here: SKIP, with the reason
        row.check, row.check_detail = "SKIP", str(exc)
    except PmppError:
        raise
    except Exception as exc:  # a launch failure belongs to this variant's row
        sticky = sticky_error(exc)
        if sticky:  # the context is poisoned: nothing after this can run in this process
            raise StickyCudaError(v.name, sticky, f"{type(exc).__name__}: {exc}") from exc
        if type(exc).__name__ == "OutOfMemoryError":
            raise UsageError(f"{run.workload.name} {run.label}: out of device memory ({exc}); "
                             "choose a smaller size") from exc
        row.check, row.error = "ERROR", f"{type(exc).__name__}: {exc}"
    return None


def model_traffic(run: ShapeRun) -> None:
    """Each row's model: the bytes and FLOPs its variant must move and do on this shape."""
    for v in run.variants:
        t = run.workload.traffic(run.shape, modelled(run.workload, v), run.device)
        row = run.rows[v.name]
        row.bytes, row.flops, row.model = t.bytes, t.flops, dict(t.extra)
        if t.bytes and t.flops:
            row.intensity_flop_per_byte = t.flops / t.bytes


def time_variants(run: ShapeRun) -> None:
    """The protocol over the variants that passed (measure alternates them), into their rows."""
    protocol, clocks = run.protocol, run.clocks
    runs = {n: j.run for n, j in run.jobs.items()}
    with spent("timed"):
        timings = measure(runs, protocol, timer=run.timer, observer=clocks, at=run.at)
    for name, timing in timings.items():
        row = run.rows[name]
        if clocks:
            row.clocks = clocks.summary(name)
        row.median_ms, row.min_ms, row.max_ms = timing.median_ms, timing.min_ms, timing.max_ms
        row.spread_pct = 100.0 * timing.spread
        row.batch_means_ms = list(timing.batch_means_ms)
        row.warmup, row.batches, row.reps = protocol.warmup, len(timing.batch_means_ms), protocol.reps
        row.timer, row.alternate = protocol.timer, protocol.alternate
        row.stop_rule = timing.stopped
        if protocol.discard_on_throttle:
            row.retimed_throttled = timing.retimed if clocks else None  # None: nothing could tell (no NVML)
        derive.fill_rates(row)


SKIP_RATIO = 1.5  # how much more a learner's kernel may slow on changing inputs than the variant it is like


def time_learners_on_changing_inputs(run: ShapeRun) -> None:
    """A learner's kernel that skips its work when its output already holds the answer (it
    recomputes a few elements and compares) would earn a time for work it did not do: the
    table's calls repeat one input set, as the course times every kernel, so from its second
    call on the answer is there. Here it is timed once more with every call on another input
    set than its last (InputCycle; the sets share the outputs, so the output always holds
    another set's answer), beside the variant it is like, timed both ways in the same call.
    An honest kernel slows on changing inputs about as much as that variant does (where one
    set fits in the L2 and two do not, both read from DRAM); one that slows more than
    SKIP_RATIO times as much did not do its work when the inputs repeated: FAIL, no times.
    The table's rows keep the one set, so what the course measures (L2-resident shapes
    included) is unchanged. A shape with no room for a second set, or a workload whose
    buffers are not named arrays (the stream's pinned pipeline), is not timed this way."""
    learners = [v for v in run.variants if v.source and v.like and v.name in run.jobs]
    if not learners or not _arrays(run.ctx):
        return
    peers = {v.like: run.workload.variant(v.like) for v in learners}
    jobs = {v.name: run.jobs[v.name] for v in learners}
    jobs.update({name: run.jobs.get(name) or job_for(run.workload, p, run.shape, run.ctx) for name, p in peers.items()})
    run.heartbeat(learners[0].name, "timing on changing inputs")
    for job in jobs.values():  # the outputs poisoned: what holds the poison alone is an output
        job.poison()
    run.synchronize()
    sets = input_sets(run.protocol)
    others = run.others if run.others and len(run.others) >= sets - 1 else \
        other_inputs(run.workload, run.shape, run.seed, sets)
    try:
        contexts = sharing_outputs(run.workload, run.shape, run.ctx, others[:sets - 1])
    except Exception as exc:  # no room for the other sets (a workload may say so as a UsageError)
        if type(exc).__name__ != "OutOfMemoryError" and not isinstance(exc, UsageError):
            raise
        return
    if not contexts:
        return
    variants = {v.name: v for v in learners} | peers
    cycle = InputCycle(1 + len(contexts))
    runs = {f"{name} changing": cycle.runs(name, [job.run] + [job_for(run.workload, variants[name], run.shape, c).run
                                                              for c in contexts])
            for name, job in jobs.items()}
    # a peer the table did not time: timed here on the first set, as the table would have
    runs.update({name: cycle.first_set(jobs[name].run) for name in peers if name not in run.jobs})
    with spent("timed"):
        timings = measure(runs, run.protocol, timer=run.timer, at=run.at)
    for v in learners:
        row = run.rows[v.name]
        repeated = timings[v.like].median_ms if v.like not in run.jobs else run.rows[v.like].median_ms
        mine = timings[f"{v.name} changing"].median_ms / row.median_ms
        like = timings[f"{v.like} changing"].median_ms / repeated
        if mine > SKIP_RATIO * like:
            unchecked(row, "FAIL", f"its calls took {mine:.2f}x as long when each call's inputs differed from the "
                                   f"last as when they repeated ({v.like}: {like:.2f}x): it skips work when its "
                                   "output already holds the answer")


def sharing_outputs(workload: Workload, shape: Shape, ctx: Any, others: list[dict]) -> list:
    """A context for each input set of `others` that shares `ctx`'s outputs (the buffers the
    timed jobs' poison filled) and its kernels, and takes every other buffer from its own
    setup; [] when ctx has no buffer besides its outputs. What these setups took is released
    with ctx (Context.on_close)."""
    old = _arrays(ctx)
    outputs = {k for k, v in old.items() if _poisoned(v)}
    if not any(_is_array(v) for k, v in old.items() if k not in outputs):
        return []
    contexts = []
    for second in others:
        now = workload.setup(shape, second, _kernels(ctx))
        arrays = {**old, **{k: v for k, v in _arrays(now).items()
                            if k in old and k not in outputs and _same_array(old[k], v)}}
        if isinstance(ctx, Context):  # the arrays as they are: a workload may key a buffer by a tuple
            other = Context(ctx.kernels, ctx.device)
            other.arrays, other.keep = arrays, ctx.keep
            ctx.on_close(lambda now=now: release(now))
        else:
            other = arrays
        contexts.append(other)
    return contexts


def _is_array(a) -> bool:
    return hasattr(a, "shape") and hasattr(a, "dtype") and getattr(a, "size", 0) > 0


def _poisoned(a) -> bool:
    """Whether every element of `a` is the harness's poison (helpers.poison): an output."""
    if not _is_array(a):
        return False
    xp = cupy() if on_device(a) else np
    kind = np.dtype(a.dtype).kind
    if kind == "f":
        return bool(xp.isnan(a).all())
    if kind in "iu":
        return bool((a == xp.asarray(np.array(POISON_INT).astype(a.dtype))).all())
    return False


class InputCycle:
    """Which input set each timed call runs on, across the variants of one shape: never the set
    of the variant's own last call (its output holds that set's answer) nor the set of the
    call just before (another variant's, whose answer may be in a shared output)."""

    def __init__(self, sets: int):
        self.sets, self.last, self.previous = sets, {}, None

    def runs(self, name: str, calls: list[Callable[[], None]]) -> Callable[[], None]:
        def run() -> None:
            own = self.last.get(name)
            i = next((i for i in range(self.sets) if i not in (own, self.previous)), None)
            if i is None:  # two sets and an interleaved order: the variant's own output comes first
                i = next(i for i in range(self.sets) if i != own)
            self.last[name] = self.previous = i
            calls[i]()
        return run

    def first_set(self, call: Callable[[], None]) -> Callable[[], None]:
        """`call` on the first set every time, known to the cycle: the next call of another
        variant then avoids the set whose answer it left in a shared output."""
        def run() -> None:
            self.previous = 0
            call()
        return run


def recheck_learners(run: ShapeRun) -> None:
    """A learner's timed kernel must still be right after its batches, on inputs it has not seen."""
    learners = [v for v in run.variants if v.source and v.name in run.jobs]
    if not learners:
        return
    run.heartbeat(learners[0].name, "check after timing")
    try:
        fresh = refill(run.workload, run.shape, run.ctx, run.inputs, run.seed)
    except Exception as exc:
        if type(exc).__name__ != "OutOfMemoryError":
            raise
        for v in learners:  # unverified is not PASS; the table's own rows stand
            unchecked(run.rows[v.name], "ERROR", f"the re-check on fresh inputs ran out of device memory (it sets "
                      f"the shape up twice more beside the timed one): {exc}; choose a smaller size")
        return
    check_fresh = checker(run, fresh, {})
    for v in learners:
        run.heartbeat(v.name, "check after timing")
        recheck(run.rows[v.name], job_for(run.workload, v, run.shape, run.ctx),
                lambda out, v=v: check_fresh(v, out), run.synchronize)


def derive_values(run: ShapeRun) -> None:
    """Speedups and % of the roof row; the workload's model runs and columns; speed of light."""
    w, rows = run.workload, list(run.rows.values())
    derive.fill_relative(rows, w.baseline, w.roof, w.rate)
    if w.model_columns is not None:
        extra = w.model_columns.model_runs(run.shape, run.ctx, rows)
        model_timings = {}
        if extra and extra.runs:
            with spent("timed"):
                model_timings = measure(extra.runs, extra.protocol,
                                        timer=run.timer or EventTimer(stream=extra.stream), at=run.at)
        w.model_columns.annotate(run.shape, run.ctx, rows, model_timings)
    if run.ceilings:
        for row in rows:
            derive.fill_speed_of_light(row, run.ceilings)


def judge(run: ShapeRun) -> None:
    """SUSPECT where a PASS row beats a ceiling of this GPU; the warnings the noise rules raise."""
    limits = None if run.device is None else limits_for(run.workload, run.shape, run.device, run.ceilings)
    for row in run.rows.values():
        why = beyond_ceilings(row, limits) if limits is not None and row.check == "PASS" else None
        if why:
            row.check, row.check_detail = "SUSPECT", why
        row.warnings = diagnose(row)
        if run.protocol.discard_on_throttle and row.median_ms is not None and not run.clocks:
            row.warnings.append(f"{row.workload} {row.variant} {row.shape}: --discard-on-throttle could not screen "
                                "the batches: NVML is not available here (install pmppbench[nvml])")


def limits_for(workload: Workload, shape: Shape, device: Any, ceilings: list | None) -> Limits:
    """The ceilings a row of `shape` is held to (SUSPECT beyond them): the compute peak of the
    shape's precision (GEMM's --precision axis; every other workload computes in FP32) and the
    memory bounds, with a measured copy rate where it is above the datasheet's."""
    precision = precision_of(shape)
    dram = max((c.bandwidth_gbs for c in ceilings or ()), default=None)
    # A workload whose model counts more FLOPs than a correct kernel must execute (the stencil's
    # running sum) says flops_are_a_floor = False: then only its bytes are held to a ceiling.
    floor = getattr(workload, "flops_are_a_floor", True)
    return Limits.of(device, precision, dram, compute=floor)


RECHECK_STREAM = 1  # the re-check's inputs: default_rng((seed, 1)), a stream independent of the seed's own


def input_buffers(workload: Workload, shape: Shape, ctx: Any, inputs: dict) -> set[str]:
    """The buffers of `ctx` that still hold what setup() makes of `inputs`: the inputs, derived
    copies such as GEMM's column-major B, counters left at zero. Found by setting the shape up
    again from the same inputs and comparing bit for bit; an output holds an answer instead."""
    old = _arrays(ctx)
    was = workload.setup(shape, inputs, _kernels(ctx))
    try:
        return {k for k, v in _arrays(was).items() if _same_array(old.get(k), v) and _equal(old[k], v)}
    finally:
        release(was)
        del was


def refill(workload: Workload, shape: Shape, ctx: Any, inputs: dict, seed: int) -> dict:
    """New random inputs of the same shape (another seed), put into the device buffers the
    timed jobs use (input_buffers: each then overwritten with what a setup of the new inputs
    makes; an output keeps its answer); returns them, for new references. A sampled check's
    picks are drawn again. A kernel that keeps an answer from the inputs it was timed on,
    keyed by anything (a flag, a pointer), then gives that stale answer and FAILs."""
    made = input_buffers(workload, shape, ctx, inputs)
    old = _arrays(ctx)
    fresh = workload.make_inputs(shape, np.random.default_rng((seed, RECHECK_STREAM)))
    now = workload.setup(shape, fresh, _kernels(ctx))
    try:
        for key, value in _arrays(now).items():
            if key == SAMPLE:
                old[key] = value
            elif key in made and _same_array(old[key], value):
                _copy_into(old[key], value)
    finally:
        release(now)
    return fresh


def _kernels(ctx: Any) -> dict:
    return ctx.kernels if isinstance(ctx, Context) else _arrays(ctx).get("kernels", {})


def _arrays(ctx: Any) -> dict:
    return ctx.arrays if isinstance(ctx, Context) else ctx if isinstance(ctx, dict) else vars(ctx)


def release(ctx: Any) -> None:
    """What setup() took beyond ordinary device arrays, released (Context.close)."""
    if isinstance(ctx, Context):
        ctx.close()


def _same_array(a, b) -> bool:
    return (hasattr(a, "shape") and hasattr(b, "shape") and hasattr(a, "dtype") and a.shape == b.shape
            and a.dtype == b.dtype)


def _equal(a, b) -> bool:
    """Bit for bit the same values (NaN never equals: an output still poisoned is no input)."""
    if a is b:
        return True
    return bool(cupy().array_equal(a, b)) if on_device(a) else bool(np.array_equal(a, b))


def _copy_into(dst, src) -> None:
    """dst[...] = src, on the device when dst is there (same stream as the jobs)."""
    if dst is src:
        return
    if on_device(dst):
        cupy().copyto(dst, src)
    else:
        np.copyto(dst, src)


def modelled(workload: Workload, variant: Variant) -> Variant:
    """The variant whose reference and traffic model apply: a learner's kernel has its --like's."""
    return workload.variant(variant.like) if variant.like else variant


def job_for(workload: Workload, variant: Variant, shape: Shape, ctx: Any) -> Job:
    """The variant's job on a shape set up by `prepared`: the workload's own, or a learner's kernel in its --like's."""
    return learner_job(workload, variant, shape, ctx) if variant.source else workload.job(variant, shape, ctx)


def learner_job(workload: Workload, variant: Variant, shape: Shape, ctx: Any) -> Job:
    """A learner's kernel (--kernel FILE:NAME --like V) in V's job: the same buffers, arguments,
    grid and block, only the kernel swapped. Compiled with V's defines (BLOCK_DIM, tile sizes) and
    the shape's (e.g. RADIUS): learner.defines_for."""
    like = workload.variant(variant.like)
    base = workload.job(like, shape, ctx)
    one = base.launch is not None and (base.run is base.launch or base.launches == (base.launch,))
    if not one:
        raise UsageError(f"--like {like.name}: that variant's call is not one kernel launch; "
                         "choose a variant that launches one kernel")
    kernel = load_kernels(workload.name, [variant.kernel], learner.defines_for(workload, like, shape),
                          source=Path(variant.source))
    launch = replace(base.launch, kernel=kernel[variant.kernel])
    if launch.dynamic_smem > device.current().smem_per_block:  # the --like's opt-in, for this kernel too
        launch.kernel.allow_dynamic_smem(launch.dynamic_smem)
    reset = base.reset  # the --like variant's reset (a zeroed accumulator) stays part of the call

    def run() -> None:
        if reset is not None:
            reset()
        launch()

    return Job(run=launch if reset is None else run, output=base.output, poison=base.poison, launch=launch,
               launches=(launch,), reset=reset)


def fresh_output(job: Job, synchronize: Callable[[], None]):
    """The job's output from one call made after its output was poisoned."""
    job.poison()
    job.run()
    synchronize()
    return job.output()


def recheck(row: Result, job: Job, check: Callable[[Any], Any], synchronize: Callable[[], None]) -> None:
    """Check a timed learner kernel once more, on fresh inputs (`refill`): one that is right
    only on its first call, only on the inputs it saw (a cached answer) or only where the
    check looked, FAILs (and loses its times). The output is not poisoned this time: it still
    holds the timed calls' answer to the old inputs, so an element the call leaves unwritten
    is wrong for the new ones, and a kernel that does its work only when it finds the poison
    (the sign of a check) is caught too."""
    job.run()
    synchronize()
    again = check(job.output())
    if not again.passed:
        unchecked(row, "FAIL", f"after its timed batches, on fresh inputs: {again.detail}")


def unchecked(row: Result, status: str, why: str) -> None:
    """A timed row that did not pass its re-check: `status` and why, and no times."""
    if status == "ERROR":
        row.check, row.error = status, why
    else:
        row.check, row.check_detail = status, why
    row.median_ms = row.min_ms = row.max_ms = row.spread_pct = None
    row.batch_means_ms = []


# CUDA errors after which the context is unusable: every later call in the process fails too.
# The runtime API's name, then the driver API's (CuPy words an error either way).
STICKY_ERRORS = {
    "cudaErrorIllegalAddress": "CUDA_ERROR_ILLEGAL_ADDRESS",
    "cudaErrorMisalignedAddress": "CUDA_ERROR_MISALIGNED_ADDRESS",
    "cudaErrorLaunchFailure": "CUDA_ERROR_LAUNCH_FAILED",
    "cudaErrorECCUncorrectable": "CUDA_ERROR_ECC_UNCORRECTABLE",
    "cudaErrorIllegalInstruction": "CUDA_ERROR_ILLEGAL_INSTRUCTION",
    "cudaErrorHardwareStackError": "CUDA_ERROR_HARDWARE_STACK_ERROR",
    "cudaErrorInvalidPc": "CUDA_ERROR_INVALID_PC",
    "cudaErrorInvalidAddressSpace": "CUDA_ERROR_INVALID_ADDRESS_SPACE",
    "cudaErrorAssert": "CUDA_ERROR_ASSERT",
    "cudaErrorLaunchTimeout": "CUDA_ERROR_LAUNCH_TIMEOUT",
}


def sticky_error(exc: BaseException) -> str | None:
    """The runtime API name of a sticky CUDA error in `exc` (e.g. cudaErrorIllegalAddress), or None."""
    text = f"{type(exc).__name__}: {exc}"
    return next((name for name, driver in STICKY_ERRORS.items() if name in text or driver in text), None)


class StickyCudaError(Exception):
    """A variant left the CUDA context unusable; only a fresh process can go on."""

    def __init__(self, variant: str, name: str, detail: str):
        super().__init__(f"{name} in variant {variant}: {detail}")
        self.variant, self.name, self.detail = variant, name, detail


def clock_observer() -> ClockObserver | None:
    """A fresh clock sampler for one measure() call; None without NVML."""
    watch = clocks.watch()
    return ClockObserver(watch) if watch.available else None


def _fill_resources(row: Result, job) -> None:
    launch = job.launch
    if launch is None:
        return
    k = launch.kernel
    row.kernel = k.name
    row.registers, row.static_smem_bytes, row.local_bytes = k.registers, k.static_smem, k.local_bytes
    row.spill_bytes = k.spill_bytes
    row.dynamic_smem_bytes = launch.dynamic_smem
    row.threads_per_block = launch.threads_per_block
