"""CUDA streams (the course's 06_stream.cu, "CUDA stream" to "Stream 实测").

An array of CHUNKS x CHUNK input phases goes through upload -> `synthesize` -> download,
chunk by chunk. Chunks are independent, so on several streams one chunk's copies can run
while another chunk computes: H2D copies, kernels and D2H copies use different engines.
Every configuration does the same work; only the stream a chunk is queued on changes:

    streams=S         chunk c on stream c % S, submitted in the course's order: all
                      uploads, then all kernels, then all downloads, then one wait per stream.
    event_dependency  add_one on s0, an event recorded on s0, s1 waits on it
                      (cudaStreamWaitEvent), add_one on s1: the result is input + 2.

Unlike the other workloads, one timed call (Job.run) is a complete pipeline that ends
synchronized, timed with the host clock (protocol "host"): transfers are the point here.
Pinned host buffers, device buffers, streams and the event are made outside the timed call
(setup/job) and released when the engine closes the context. After timing, the runner times each stage's work
alone (every chunk's upload, every kernel, every download, on the configuration's streams
with nothing else queued) and adds two numbers to each row (docs/stream.md):

    bound_ms      a lower bound no schedule can beat: the busiest engine's total work plus
                  the fill before it can start and the drain after it (pipeline_bound_ms).
    predicted_ms  what the course's schedule would take if every engine served one
                  operation at a time, a copy engine going through a stream's run of
                  queued copies before taking another stream's, as the H200 does
                  (predicted_pipeline_ms). A prediction under that assumption; not a bound.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from pmppbench.measure.check import Tolerance
from pmppbench.errors import UsageError
from pmppbench.hardware.gpu import cupy
from pmppbench.measure.protocol import Protocol
from pmppbench.workloads.base import (
    Axis, Context, Job, Launch, ModelColumns, ModelRuns, Sizes, Traffic, Variant, Workload, is_int,
)
from pmppbench.workloads.helpers import grid_1d, on_cores, random_array, uniform32

BLOCK = 256
DEFAULT_CHUNK, DEFAULT_TERMS, DEFAULT_CHUNKS, DEFAULT_STREAMS = 1 << 20, 64, 3, (1, 3)
DEFAULT_SHAPE = {"chunk": DEFAULT_CHUNK, "terms": DEFAULT_TERMS, "chunks": DEFAULT_CHUNKS, "streams": DEFAULT_STREAMS}
STAGE_REPEATS = 5  # model_runs(): timed repeats of each stage's work alone, after one warmup

# The check's error model. Per term k the FP32 kernel loses at most (u = 2^-24):
#   rounding k*x            -> an argument error <= u*k*|x|, i.e. <= u*|x| <= 2*pi*u after /k
#   sinf (2 ulp, |sin| < 1) -> <= 2u;   the division by k -> <= u/2;
#   adding to |sum| < 1.86  -> <= u (the partial sums of this series stay below 1.852).
# That is <= 9.8u per term, so |out - ref| <= TERMS * 10u = TERMS * 6e-7. The observed
# error is about TERMS * 1.1u (simulated in FP32 on the CPU), well inside the bound.
ATOL_PER_TERM = 6e-7
# A missing (or extra) last term changes y by sin(TERMS*x)/TERMS, up to 1/TERMS over random
# phases. The check can only tell that apart from rounding while 1/TERMS > TERMS * 6e-7,
# i.e. TERMS < ~1290; 1024 keeps a margin, and TERMS beyond it are refused.
MAX_TERMS = 1024
# FLOPs per term: the multiply k*x, the sinf (counted as one operation, though it is a
# short polynomial after range reduction), the division by k and the add.
FLOPS_PER_TERM = 4

EVENT = Variant("event_dependency", "add_one",
                "add_one on s0, event recorded, s1 waits on it (cudaStreamWaitEvent), add_one on s1",
                timed=False, computes="x + 2")  # a correctness demonstration: checked, never timed
_PREFIX = "streams="


def pipeline_variant(count: int) -> Variant:
    """The configuration that queues chunk c on stream c % count."""
    how = "one stream: every copy and kernel in one queue" if count == 1 else \
        f"chunk c on stream c % {count}: one chunk's copies can overlap another's kernel"
    return Variant(f"{_PREFIX}{count}", "synthesize", how, computes="synthesize")


def stream_count(name: str) -> int | None:
    """The S of a "streams=S" variant name; None for any other name."""
    digits = name[len(_PREFIX):] if name.startswith(_PREFIX) else ""
    return int(digits) if digits.isascii() and digits.isdigit() and int(digits) > 0 else None


@dataclass(frozen=True)
class PipelineShape:
    """A stream shape with the defaults filled in: CHUNKS chunks of CHUNK elements, TERMS
    sine terms each, compared on the listed stream counts."""

    chunk: int
    terms: int
    chunks: int
    streams: tuple[int, ...]

    @classmethod
    def of(cls, shape) -> "PipelineShape":
        return cls(shape["chunk"], shape["terms"], shape.get("chunks", DEFAULT_CHUNKS),
                   tuple(shape.get("streams", DEFAULT_STREAMS)))

    @property
    def n(self) -> int:
        return self.chunk * self.chunks


# ---- the CPU side: reference and overlap model ----------------------------------------

def synthesize_reference(x: np.ndarray, terms: int, block: int = 1 << 17) -> np.ndarray:
    """y = sum_{k=1..terms} sin(k*x)/k in float64.

    sin(k*x) comes from z^k with z = e^{ix} (one complex multiply per term instead of a
    sine; the rounding grows like k * 1e-16, far below the FP32 error being checked).
    Processed in blocks of 128K elements (2 MB temporaries each), shared out over one thread
    per core (helpers.on_cores; NumPy's loops release the GIL); every element's sum is the same
    sequence of operations whichever thread does it.
    """
    x = np.asarray(x)
    out = np.empty(x.size, dtype=np.float64)

    def one_block(lo: int) -> None:
        xb = x[lo:lo + block].astype(np.float64)
        step = np.exp(1j * xb)
        z = np.ones_like(step)
        acc = out[lo:lo + xb.size]
        acc[:] = 0.0
        t = np.empty(xb.size)
        for k in range(1, terms + 1):
            z *= step  # e^{ikx}
            np.divide(z.imag, k, out=t)
            acc += t

    on_cores(one_block, range(0, x.size, block))
    return out.reshape(x.shape)


def pipeline_bound_ms(chunks: int, h2d_ms: float, kernel_ms: float, d2h_ms: float) -> float:
    """A lower bound on the time of any schedule of `chunks` upload -> kernel -> download chains.

    The stage times are per chunk and must themselves be lower bounds (the runner times
    model_runs() and annotate() takes the smallest per-chunk time any of them showed). Each engine has to do every
    chunk's stage of its kind, and nothing lets it start before, or finish after, part of a
    chain:
        uploads:   chunks * h2d, then the last uploaded chunk's kernel and download;
        kernels:   the first upload, chunks * kernel, then the last chunk's download;
        downloads: the first upload and kernel, then chunks * d2h.
    The largest is h2d + kernel + d2h + (chunks - 1) * max(stage). It holds whether or not
    H2D and D2H share the host link (sharing only makes the copies slower) and for any
    number of streams or submission order; it ignores that a stream runs its operations
    one after another, so with few streams the hardware cannot reach it.
    """
    return h2d_ms + kernel_ms + d2h_ms + (chunks - 1) * max(h2d_ms, kernel_ms, d2h_ms)


def predicted_pipeline_ms(chunks: int, streams: int, h2d_ms: float, kernel_ms: float, d2h_ms: float,
                          copy_runs: bool = True) -> float:
    """The course's submission order replayed on a model of the GPU: a prediction, not a bound.

    Each chunk is an upload, a kernel and a download; a stage may start once the previous
    operation queued on its stream has finished (streams keep order) and its engine is
    free: one H2D copy engine, the SMs running one chunk's kernel at a time, and one D2H
    copy engine (separate from the H2D one on H200). When an engine frees, the streams'
    next operations that could start earliest go first, ties to the one submitted first.
    With `copy_runs` (the H200's behaviour, docs/stream.md) a copy engine that
    has just served a stream first carries on with that stream's next operation if it is
    a copy in the same direction, so a stream's run of queued copies goes back to back;
    without it (the course's assumption) the copy engines interleave the streams in
    submission order. No submission or launch overhead is counted, and no slowdown of
    the copies when H2D and D2H overlap (they share the host link; docs/stream.md
    measures it).
    One stream gives chunks * (h2d + kernel + d2h); with a stream per chunk it is
    pipeline_bound_ms.
    """
    stage_ms = {"h2d": h2d_ms, "kernel": kernel_ms, "d2h": d2h_ms}
    queues: list[list[tuple[int, str]]] = [[] for _ in range(streams)]  # (submission index, stage)
    order = [(stage, c) for stage in stage_ms for c in range(chunks)]  # uploads, kernels, downloads
    for i, (stage, c) in enumerate(order):
        queues[c % streams].append((i, stage))
    stream_free = [0.0] * streams
    engine_free = dict.fromkeys(stage_ms, 0.0)
    last_served: dict[str, int | None] = dict.fromkeys(stage_ms)  # the stream each engine served last
    end = 0.0

    def rank(t: int, q: list[tuple[int, str]]) -> tuple[float, bool, int, int]:
        index, stage = q[0]
        start = max(stream_free[t], engine_free[stage])
        other_stream = copy_runs and stage != "kernel" and t != last_served[stage]
        return start, other_stream, index, t

    while any(queues):
        start, _, _, s = min(rank(t, q) for t, q in enumerate(queues) if q)
        _, stage = queues[s].pop(0)
        stream_free[s] = engine_free[stage] = finish = start + stage_ms[stage]
        last_served[stage] = s
        end = max(end, finish)
    return end


def stage_layouts(chunks: int, counts) -> list[int]:
    """The stream counts model_runs() times each stage's work on: 1 and every count of the
    shape, capped at `chunks` (chunk c goes to stream c % S, so more streams than chunks
    lay the work out as a stream per chunk)."""
    return sorted({1, *(min(s, chunks) for s in counts)})


# ---- device resources ---------------------------------------------------------------

def alloc_pinned(n: int) -> np.ndarray:
    """n float32 in page-locked host memory (cudaHostAlloc), as a numpy array.

    Page-locked memory is what lets cudaMemcpyAsync run on a copy engine while the host
    goes on (pageable memory is staged through a driver buffer, and the copy may wait).
    Taken directly, not from CuPy's pinned pool, so dropping the array really frees it.
    """
    cp = cupy()
    mem = cp.cuda.PinnedMemory(4 * n)
    return np.ndarray((n,), dtype=np.float32, buffer=cp.cuda.PinnedMemoryPointer(mem, 0))


def new_stream():
    """cudaStreamCreateWithFlags(cudaStreamNonBlocking): no implicit sync with the legacy stream."""
    return cupy().cuda.Stream(non_blocking=True)


class StreamContext(Context):
    """Everything setup() takes: pinned host buffers, device buffers, the streams and the
    event; close() drops it all."""

    def __init__(self, kernels: dict):
        super().__init__(kernels)
        self.h_in: np.ndarray | None = None  # pinned, all chunks
        self.h_out: np.ndarray | None = None  # pinned
        self.d_in: Any = None
        self.d_out: Any = None
        self.demo_in: Any = None  # event_dependency: one chunk, x -> tmp -> out
        self.demo_tmp: Any = None
        self.demo_out: Any = None
        self.streams: list = []
        self.ready: Any = None  # the event s1 waits on

    def grow_streams(self, count: int) -> None:
        while len(self.streams) < count:
            self.streams.append(new_stream())

    def close(self) -> None:
        """Drop the streams, the event and the pinned buffers.

        CuPy's Stream and Event and the PinnedMemory behind h_in/h_out free their handle
        (cudaStreamDestroy, cudaEventDestroy, cudaFreeHost) when the last reference goes.
        The pinned buffers are reached only through this context, so clearing it frees them; a
        pipeline job's closure also holds its streams (looked up once, outside the timed
        call), which go when the engine drops the jobs at the end of the shape. Streams are
        drained first so no copy is still writing into pinned memory being freed.
        """
        cp = cupy()
        for s in self.streams:
            try:
                s.synchronize()
            except cp.cuda.runtime.CUDARuntimeError:
                pass  # a device in an error state must not stop the release; the run reports the error
        self.streams.clear()
        self.ready = None
        self.h_in = self.h_out = None
        self.d_in = self.d_out = self.demo_in = self.demo_tmp = self.demo_out = None
        super().close()


def _mib(nbytes: int) -> str:
    return f"{nbytes / 2**20:.1f} MiB"


def pinned(n: int, what: str, label: str) -> np.ndarray:
    cp = cupy()
    try:
        return alloc_pinned(n)
    except (cp.cuda.runtime.CUDARuntimeError, MemoryError) as exc:
        raise UsageError(f"stream {label}: could not allocate {4 * n} bytes ({_mib(4 * n)}) "
                         f"of pinned host memory for the {what} ({exc}); choose a smaller CHUNK or --chunks"
                         ) from exc

def chunk_launches(cfg: PipelineShape, ctx: StreamContext) -> list[Launch]:
    """synthesize on each chunk: the kernel gets the chunk's start, indices 0..chunk-1."""
    kernel, n = ctx.kernels["synthesize"], cfg.chunk
    return [Launch(kernel, grid_1d(n, BLOCK), (BLOCK,),
                   (ctx.d_in[c * n:(c + 1) * n], ctx.d_out[c * n:(c + 1) * n], np.uint64(n), np.int32(cfg.terms)))
            for c in range(cfg.chunks)]

def pipeline_job(cfg: PipelineShape, count: int, ctx: StreamContext) -> Job:
    cp = cupy()
    rt = cp.cuda.runtime
    ctx.grow_streams(count)
    nbytes = 4 * cfg.chunk
    # Raw addresses, so the timed call does no array slicing (the course passes h_in + offset).
    offsets = [c * nbytes for c in range(cfg.chunks)]
    h_in, h_out = ctx.h_in.ctypes.data, ctx.h_out.ctypes.data
    d_in, d_out = ctx.d_in.data.ptr, ctx.d_out.data.ptr
    launches = chunk_launches(cfg, ctx)
    used = ctx.streams[:count]
    queue = [used[c % count] for c in range(cfg.chunks)]  # chunk c's stream
    copies = [(off, s.ptr) for off, s in zip(offsets, queue)]  # looked up once, not per timed run

    def run():  # the course's run_pipeline
        for off, ptr in copies:  # all uploads first
            rt.memcpyAsync(d_in + off, h_in + off, nbytes, rt.memcpyHostToDevice, ptr)
        for launch, s in zip(launches, queue):  # then all kernels
            launch(s)
        for off, ptr in copies:  # then all downloads
            rt.memcpyAsync(h_out + off, d_out + off, nbytes, rt.memcpyDeviceToHost, ptr)
        for s in used:  # everything is queued: now wait, once per stream
            s.synchronize()

    def poison():
        # Both ends: a chunk never computed downloads NaN, a chunk never downloaded stays NaN.
        ctx.d_out.fill(np.nan)
        ctx.h_out.fill(np.nan)
        cp.cuda.Device().synchronize()  # the fill ran on the legacy stream; the streams won't wait for it

    # The bytes that came back to the host are what is checked; they go up once more
    # (pinned, a few ms) to be compared on the GPU, as every other output is.
    return Job(run=run, output=lambda: cp.asarray(ctx.h_out), poison=poison, launch=launches[0])

def event_job(cfg: PipelineShape, ctx: StreamContext) -> Job:
    cp = cupy()
    kernel, n = ctx.kernels["add_one"], cfg.chunk
    grid = grid_1d(n, BLOCK)
    first = Launch(kernel, grid, (BLOCK,), (ctx.demo_in, ctx.demo_tmp, np.uint64(n)))
    second = Launch(kernel, grid, (BLOCK,), (ctx.demo_tmp, ctx.demo_out, np.uint64(n)))

    def run():
        s0, s1 = ctx.streams[0], ctx.streams[1]
        first(s0)
        ctx.ready.record(s0)  # cudaEventRecord(ready, s0): marks the end of the first add_one
        s1.wait_event(ctx.ready)  # cudaStreamWaitEvent(s1, ready, 0): the GPU waits, the host goes on
        second(s1)
        s1.synchronize()

    def poison():
        # tmp too: without the wait, the second add_one could read it before the first
        # wrote it, and NaN + 1 fails the check.
        ctx.demo_tmp.fill(np.nan)
        ctx.demo_out.fill(np.nan)
        cp.cuda.Device().synchronize()

    return Job(run=run, output=lambda: ctx.demo_out, poison=poison, launch=first)

def stage_ops(cfg: PipelineShape, ctx: StreamContext) -> dict[str, list[Any]]:
    """stage -> one callable per chunk that queues that chunk's stage on a given stream
    (raw addresses, as the pipeline job uses)."""
    rt = cupy().cuda.runtime
    nbytes = 4 * cfg.chunk
    h_in, h_out = ctx.h_in.ctypes.data, ctx.h_out.ctypes.data
    d_in, d_out = ctx.d_in.data.ptr, ctx.d_out.data.ptr
    offsets = [c * nbytes for c in range(cfg.chunks)]
    return {
        "h2d": [lambda s, o=o: rt.memcpyAsync(d_in + o, h_in + o, nbytes, rt.memcpyHostToDevice, s.ptr)
                for o in offsets],
        "kernel": [lambda s, launch=launch: launch(s) for launch in chunk_launches(cfg, ctx)],
        "d2h": [lambda s, o=o: rt.memcpyAsync(h_out + o, d_out + o, nbytes, rt.memcpyDeviceToHost, s.ptr)
                for o in offsets],
    }

def stage_runs(cfg: PipelineShape, ctx: StreamContext, layouts) -> dict[str, Any]:
    """"<stage> x<S>" -> a run queueing every chunk's stage alone, chunk c on stream c % S.

    Meant for the event timer on stream 0: with S > 1 the other streams wait on an event
    stream 0 records first and stream 0 waits on an event each of them records last, so
    the two timing events enclose every stream's work.
    """
    cp = cupy()
    ctx.grow_streams(max(layouts))
    s0 = ctx.streams[0]
    ops = stage_ops(cfg, ctx)

    def spread(stage: str, count: int):
        used = ctx.streams[:count]
        queue = [(op, used[c % count]) for c, op in enumerate(ops[stage])]
        fork = cp.cuda.Event(block=False, disable_timing=True)
        joins = [cp.cuda.Event(block=False, disable_timing=True) for _ in used[1:]]

        def run():
            if count > 1:
                fork.record(s0)
                for s in used[1:]:
                    s.wait_event(fork)
            for op, s in queue:
                op(s)
            for s, join in zip(used[1:], joins):
                join.record(s)
                s0.wait_event(join)
        return run

    return {f"{stage} x{count}": spread(stage, count) for stage in ("h2d", "kernel", "d2h") for count in layouts}


class StageModel(ModelColumns):
    """The bound and prediction columns: each stage's work timed alone, after the variants."""

    def model_runs(self, shape, ctx, rows):
        """Each stage's work alone (every chunk's upload, kernel or download, nothing else
        queued), on 1 stream and on each stream count of the shape (stage_layouts), timed by
        the engine between CUDA events on stream 0, STAGE_REPEATS batches of one run."""
        if not any(r.median_ms and stream_count(r.variant) for r in rows):
            return None
        cfg = PipelineShape.of(shape)
        runs = stage_runs(cfg, ctx, stage_layouts(cfg.chunks, cfg.streams))
        return ModelRuns(runs, Protocol(warmup=1, batches=STAGE_REPEATS, reps=1), stream=ctx.streams[0])

    def annotate(self, shape, ctx, rows, timings):
        """The bound and the prediction, from each stage's work timed alone.

        h2d_ms, kernel_ms and d2h_ms are per chunk: the smallest, over STAGE_REPEATS repeats
        and over the stream layouts of stage_layouts(), of the time every chunk's stage of
        that kind takes alone (nothing else queued), divided by the chunks. Back to back
        on one stream the per-operation cost of the events is shared by all chunks; on
        several streams, copies may use several copy engines and one kernel's last blocks
        overlap the next kernel's first ones. The smallest value is what the bound needs
        (it must not exceed what the stage costs inside any pipeline); the prediction
        uses the same values, so both columns follow from the row's own stage columns.
        """
        timed = [r for r in rows if r.median_ms and stream_count(r.variant)]
        if not timed or not timings:
            return
        cfg = PipelineShape.of(shape)
        h2d, kernel, d2h = (min(t.min_ms for name, t in timings.items() if name.split(" ")[0] == stage) / cfg.chunks
                            for stage in ("h2d", "kernel", "d2h"))
        bound = pipeline_bound_ms(cfg.chunks, h2d, kernel, d2h)
        for row in timed:
            predicted = predicted_pipeline_ms(cfg.chunks, stream_count(row.variant), h2d, kernel, d2h)
            row.model.update({"h2d_ms": h2d, "kernel_ms": kernel, "d2h_ms": d2h,
                              "bound_ms": bound, "pct_of_bound": 100.0 * row.median_ms / bound,
                              "predicted_ms": predicted, "pct_of_predicted": 100.0 * row.median_ms / predicted})


class Streams(Workload):
    name = "stream"
    title = "CUDA streams: chunked upload / synthesize / download, 1 vs 3 streams (FP32)"
    about = "CUDA streams: upload / kernel / download of chunks on 1 vs 3 streams, plus an event dependency."
    dims = ("chunk", "terms")
    dim_help = {"chunk": "Elements per chunk.", "terms": "Sine terms per element."}
    axes = (Axis("streams", "Stream counts to compare, e.g. 1,3.", many=True),
            Axis("chunks", "Number of chunks."))
    # The course times 9 single runs. A pipeline timed on the host clock moves between single
    # runs (host wake-up and submission jitter), which single-run batches carry straight into
    # the spread, so each of the 9 batches is the median of 10 runs instead (docs/stream.md:
    # `pmppbench stream 1048576 64 1` against `... 10`). REPS 1 gives the course's protocol back.
    protocol = Protocol(warmup=5, batches=9, reps=10, alternate=True, timer="host")
    shares_host_link = True  # GPUs of one host share its PCIe links and memory bandwidth
    variants = (*map(pipeline_variant, DEFAULT_STREAMS), EVENT)  # those of the default shape
    model_columns = StageModel()
    baseline = "streams=1"
    rate = "GB/s"  # host <-> device bytes (upload + download) over the whole pipeline time

    def tolerance_for(self, shape) -> Tolerance:
        """The error bound of this shape's TERMS (see ATOL_PER_TERM)."""
        return Tolerance("elementwise", atol=ATOL_PER_TERM * PipelineShape.of(shape).terms)

    # ---- shapes -----------------------------------------------------------------
    # Chunk sizes that are not multiples of the 256-thread block, a 1-element chunk, one term
    # (the output is sin x), 5 chunks on 2 and 3 streams, where c % S wraps unevenly and one
    # stream carries two chunks, and 8 chunks on 1 to 4 streams (the reference run's layout,
    # where a stream queues chunk c + S's upload before chunk c's kernel).
    sizes = Sizes(default=DEFAULT_SHAPE, checks=tuple({**DEFAULT_SHAPE, "chunk": c} for c in (1, 1000, 65537, 1 << 20)) + (
        {**DEFAULT_SHAPE, "chunk": 1000, "terms": 1},
        {**DEFAULT_SHAPE, "chunk": 65537, "chunks": 5, "streams": (1, 2, 3)},
        {**DEFAULT_SHAPE, "chunk": 4099, "chunks": 8, "streams": (1, 2, 3, 4)}))

    def label(self, shape):
        cfg = PipelineShape.of(shape)
        return f"{cfg.chunk}x{cfg.terms} chunks={cfg.chunks}"

    def validate(self, shape):
        super().validate(shape)  # CHUNK and TERMS positive integers
        if shape["terms"] > MAX_TERMS:
            raise UsageError(f"stream: TERMS must be at most {MAX_TERMS}, got {shape['terms']} (beyond it the "
                             "FP32 rounding of the sum approaches the size of the last term and the check "
                             "could not tell a missing term)")
        chunks = shape.get("chunks", DEFAULT_CHUNKS)
        if not is_int(chunks, 1):
            raise UsageError(f"stream: --chunks must be a positive integer, got {chunks!r}")
        streams = shape.get("streams", DEFAULT_STREAMS)
        if isinstance(streams, (str, bytes)) or not hasattr(streams, "__iter__") \
                or not streams or not all(is_int(s, 1) for s in streams):
            raise UsageError(f"stream: --streams must list positive integers such as 1,3, got {streams!r}")
        if max(streams) > chunks:  # chunk c goes to stream c % S: a stream past the chunk count carries nothing
            raise UsageError(f"stream: --streams {max(streams)} is more streams than chunks ({chunks}), and a "
                             f"stream past the chunk count carries no chunk; choose at most {chunks} or more --chunks")

    def device_bytes(self, shape):
        cfg = PipelineShape.of(shape)
        return 4 * (2 * cfg.n + 3 * cfg.chunk)  # d_in, d_out; the demo's in, tmp, out

    # ---- variants ---------------------------------------------------------------
    def variants_for(self, shape):
        counts = dict.fromkeys(PipelineShape.of(shape).streams)  # in order, without repeats
        return (*(pipeline_variant(s) for s in counts), EVENT)

    def variant(self, name):
        if name == EVENT.name:
            return EVENT
        count = stream_count(name)
        if count is None:
            raise UsageError(f"stream: unknown variant {name!r}; choose streams=S (S >= 1) or {EVENT.name}")
        return pipeline_variant(count)

    # ---- data -------------------------------------------------------------------
    def make_inputs(self, shape, rng):
        # Phases in [0, 2*pi] (FP32): k*x stays below TERMS * 2*pi, where sinf is accurate and the
        # error bound above holds (the seed used (i % 1024) * 0.006, i.e. [0, 6.14)).
        cfg = PipelineShape.of(shape)
        return {"x": random_array(cfg.n, rng, uniform32(0.0, 2 * math.pi))}

    def reference(self, shape, inputs, variant):
        cfg = PipelineShape.of(shape)
        if variant.name == EVENT.name:  # two FP32 adds, rounded exactly as on the GPU
            one = np.float32(1)
            return (inputs["x"][:cfg.chunk] + one) + one
        return synthesize_reference(inputs["x"], cfg.terms)  # float64: the error model covers the kernel's FP32

    def setup(self, shape, inputs, kernels):
        """Pinned host buffers, device buffers, the streams and the event: all outside the timing.

        The engine closes only a context that setup returned, so a failure halfway releases
        what was already taken here before it propagates.
        """
        cp = cupy()
        cfg = PipelineShape.of(shape)
        ctx = StreamContext(kernels=kernels)
        try:
            ctx.h_in = pinned(cfg.n, "input", self.label(shape))
            ctx.h_out = pinned(cfg.n, "output", self.label(shape))
            ctx.h_in[:] = inputs["x"]
            try:
                ctx.d_in = cp.empty(cfg.n, dtype=cp.float32)
                ctx.d_out = cp.empty(cfg.n, dtype=cp.float32)
                ctx.demo_in = cp.asarray(inputs["x"][:cfg.chunk])
                ctx.demo_tmp = cp.empty(cfg.chunk, dtype=cp.float32)
                ctx.demo_out = cp.empty(cfg.chunk, dtype=cp.float32)
            except cp.cuda.memory.OutOfMemoryError as exc:
                raise UsageError(f"stream {self.label(shape)}: out of device memory ({exc}); "
                                 "choose a smaller CHUNK or --chunks") from exc
            ctx.grow_streams(max(*cfg.streams, 2))  # the event demo needs s0 and s1
            ctx.ready = cp.cuda.Event(block=False, disable_timing=True)  # a marker, not a timer
            # demo_in was uploaded on the legacy default stream, which non-blocking streams
            # do not wait for: finish it before any of them reads the buffer.
            cp.cuda.Device().synchronize()
        except BaseException:
            ctx.close()
            raise
        return ctx

    # ---- jobs -------------------------------------------------------------------
    def job(self, variant, shape, ctx):
        cfg = PipelineShape.of(shape)
        if variant.name == EVENT.name:
            return event_job(cfg, ctx)
        count = stream_count(variant.name)
        if count is None:
            raise UsageError(f"stream: unknown variant {variant.name!r}")
        return pipeline_job(cfg, count, ctx)

    # ---- model ------------------------------------------------------------------
    def traffic(self, shape, variant, device=None):
        cfg = PipelineShape.of(shape)
        if variant.name == EVENT.name:  # two passes, each reading and writing 4 bytes per element
            return Traffic(bytes=16 * cfg.chunk, flops=2 * cfg.chunk)
        # Every element is uploaded and downloaded once: 4 + 4 bytes over the host link.
        return Traffic(bytes=8 * cfg.n, flops=FLOPS_PER_TERM * cfg.terms * cfg.n)



WORKLOAD = Streams()
