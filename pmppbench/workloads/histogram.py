"""Histogram (PMPP chapter 9): the book's letter histogram and a byte histogram, beside CUB.

Shapes: N bytes of text, `--bins 7,256` (7: a-z in bins of four, the book's; 256: every byte
value) and `--input uniform,one_letter` (uniform: every byte drawn uniformly from the bins'
domain, a-z for 7 bins and 0-255 for 256; one_letter: every byte 'a', where every atomic of
the grid meets the same bin). Every axis value is its own shape and all four are the default.

Rungs, as the book writes them: `global_atomic` (Fig. 9.6), `privatized` (Fig. 9.9, a copy per
block in global memory), `shared_private` (Fig. 9.10), `coarsened_contiguous` (Fig. 9.12) and
`coarsened_interleaved` (Fig. 9.14), `aggregated` (Fig. 9.15, runs counted in a register);
beyond the book, `warp_vec` (16-byte loads; for 7 bins, counts in the byte lanes of a 64-bit
register, no atomic per byte; for 256 bins, runs aggregated per thread and a sub-histogram per
warp) and `thread_private` (a private histogram per thread: 7 bins as one-hot bytes added in
bit-sliced counters, four bytes at a time; 256 bins in a column of 16-bit counters in shared
memory that only its lane touches, so no bank conflict and no contention on any input). Peer:
`cub` (DeviceHistogram::HistogramEven through cuda.compute). Roof: `read`, the same bytes read
once in 16-byte loads. Counts are exact: the check is bit for bit. Every call zeroes the
histogram first (the variant's reset, inside the timed call; CUB's call zeroes its own
histogram too).
"""

from __future__ import annotations

import numpy as np

from pmppbench.measure.check import Tolerance
from pmppbench.errors import UsageError
from pmppbench.hardware.gpu import cupy
from pmppbench.measure.protocol import Protocol
from pmppbench.workloads import cub
from pmppbench.workloads.base import (Axis, Launch, Prebuilds, Sizes, Starter, Traffic, Unavailable, Variant,
                                      Workload)
from pmppbench.workloads.helpers import (
    INT_MAX, REPEAT_PERIOD, device_context, index_arg, index_type, indexed_kernel, library_job, staged_job,
    with_wide_paths,
)

BLOCK = 256
CFACTOR = 32  # inputs per thread in the coarsened kernels (CFACTOR in histogram.cu)
FAST_BLOCKS_PER_SM = 8  # warp_vec's and read's fixed grid
# thread_private (PRIVATE_THREADS, PRIVATE_WARPS in histogram.cu): 7 bins, blocks of BLOCK threads as
# warp_vec; 256 bins, 3 warps of 16 KB of private columns (48 KB), 4 blocks per SM.
PRIVATE_THREADS = {7: BLOCK, 256: 96}
PRIVATE_BLOCKS_PER_SM = {7: 5, 256: 4}  # 7 bins: PRIVATE_MIN_BLOCKS, the kernel's launch bound
BINS = (7, 256)
INPUTS = ("uniform", "one_letter")
LETTER = ord("a")
# A learner's kernel --like the book's rungs, warp_vec or thread_private (docs/your-own-kernel.md):
# BINS is the shape's (7 or 256); the book's rungs take the course's int length (long long past 2^31 bytes).
LEAVES = ("histo[b] = how many bytes of data[0 .. length) fall in bin b, for b < BINS: 7 bins the letters a-d, "
          "e-h, ..., y-z (other bytes in none), 256 bins the byte's value (exact)")
ZEROED = "histo zeroed (add your counts to it with atomicAdd)"
BIN_OF = ("__device__ unsigned bin_of(unsigned char c) {  // PMPP 9.1: the byte's bin, or BINS for none\n"
          "#if BINS == 256\n"
          "    return c;\n"
          "#else\n"
          "    unsigned pos = unsigned(c) - 'a';\n"
          "    return pos < 26 ? pos / 4 : BINS;  // a-d, e-h, ..., y-z\n"
          "#endif\n"
          "}\n")
COUNT = ("    // every byte, whatever the grid: a grid-stride loop, one global atomicAdd per counted byte\n"
         "    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;\n"
         "    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < length; "
         "i += stride) {\n"
         "        unsigned b = bin_of(data[i]);\n"
         "        if (b < BINS) atomicAdd(&histo[b], 1u);\n"
         "    }\n")
BOOK = "const unsigned char* data, int length, unsigned* histo"
ONE_PER_BYTE = Starter(BOOK, "ceil(length / BLOCK) blocks: one thread per byte", LEAVES, COUNT, reset=ZEROED,
                       block=("BLOCK",), helpers=BIN_OF)
PRIVATIZED = Starter(BOOK + ", unsigned* copies", "ceil(length / BLOCK) blocks: one thread per byte; copies: BINS "
                     "counters per block, yours to use (zero them before use: the harness does not)", LEAVES, COUNT,
                     reset=ZEROED, block=("BLOCK",), helpers=BIN_OF)
COARSE_BYTES = Starter(BOOK, "ceil(length / (BLOCK * CFACTOR)) blocks: CFACTOR bytes per thread", LEAVES, COUNT,
                       reset=ZEROED, block=("BLOCK",), helpers=BIN_OF)
FIXED = "const unsigned char* data, unsigned long long length, unsigned* histo"
WARP_VEC = Starter(FIXED, "min(ceil(length / 16 / BLOCK), 8 per SM) blocks: a fixed grid, 16 bytes per thread and step",
                   LEAVES, COUNT, reset=ZEROED, block=("BLOCK",), helpers=BIN_OF)
THREAD_PRIVATE = Starter(FIXED, "min(ceil(length / 16 / T), K per SM) blocks of T threads: a fixed grid, 7 bins "
                         "T = 256 and K = 5, 256 bins T = 96 and K = 4",
                         LEAVES, COUNT, reset=ZEROED, helpers=BIN_OF)
INDEXED = {"global_atomic<int>", "privatized<int>", "shared_private<int>", "coarsened_contiguous<int>",
           "coarsened_interleaved<int>", "aggregated<int>"}
COARSE = {"coarsened_contiguous", "coarsened_interleaved", "aggregated"}
LARGE_CHECK = (1 << 31) + 5  # bytes: the 64-bit path


class Histogram(Workload, Prebuilds):
    name = "histogram"
    title = "Histogram (PMPP ch. 9)"
    about = ("Histogram of N bytes: global atomics, privatized, shared, coarsened (contiguous, interleaved), "
             "aggregated, warp_vec, thread_private, CUB, and a read pass.")
    dims = ("n",)
    dim_help = {"n": "Bytes of text."}
    axes = (Axis("bins", "Bins, comma-separated: 7 (a-z in bins of four) and/or 256 (bytes); default both.",
                 many=True, sweep=True, minimum=7, default=BINS),
            Axis("input", "Inputs, comma-separated: uniform, one_letter (default both).", many=True, sweep=True,
                 choices=INPUTS, default=INPUTS))
    protocol = Protocol(warmup=3, batches=5, reps=20)
    variants = (
        Variant("global_atomic", "global_atomic<int>", "PMPP 9.6: one thread per byte, one global atomicAdd per letter",
                defines=(("BLOCK", BLOCK),), starter=ONE_PER_BYTE),
        Variant("privatized", "privatized<int>", "PMPP 9.9: a copy per block in global memory, merged by atomics",
                defines=(("BLOCK", BLOCK),), starter=PRIVATIZED),
        Variant("shared_private", "shared_private<int>", "PMPP 9.10: the block's copy in shared memory",
                defines=(("BLOCK", BLOCK),), starter=ONE_PER_BYTE),
        Variant("coarsened_contiguous", "coarsened_contiguous<int>",
                f"PMPP 9.12: {CFACTOR} consecutive bytes per thread (uncoalesced)",
                defines=(("BLOCK", BLOCK), ("CFACTOR", CFACTOR)), starter=COARSE_BYTES),
        Variant("coarsened_interleaved", "coarsened_interleaved<int>",
                f"PMPP 9.14: {CFACTOR} bytes per thread, striding by the grid (coalesced)",
                defines=(("BLOCK", BLOCK), ("CFACTOR", CFACTOR)), starter=COARSE_BYTES),
        Variant("aggregated", "aggregated<int>", "PMPP 9.15: interleaved, a run of one bin counted in a register",
                defines=(("BLOCK", BLOCK), ("CFACTOR", CFACTOR)), starter=COARSE_BYTES),
        Variant("warp_vec", "warp_vec", "16-byte loads 4 in flight; 7 bins: counts in a register's byte lanes, no "
                "atomic per byte; 256 bins: runs aggregated per thread, a sub-histogram per warp",
                defines=(("BLOCK", BLOCK),), starter=WARP_VEC),
        Variant("thread_private", "thread_private", "a private histogram per thread, no atomic contention: 7 bins "
                "as one-hot bytes in bit-sliced counters, 256 in a shared column per lane (conflict-free); 16-byte "
                "loads, 8 in flight", starter=THREAD_PRIVATE),
        Variant("cub", None, "CUB DeviceHistogram::HistogramEven through cuda.compute (zeroes its own histogram)"),
        Variant("read", "read_xor", "the roof: the same N bytes read once in 16-byte loads (XOR of the words)"),
    )
    tolerance = Tolerance("exact")  # counts: bit for bit
    baseline = "global_atomic"
    roof = "read"
    rate = "GB/s"
    call = "each call zeroes the histogram, then 1 launch (cub: HistogramEven, which zeroes its own)"

    sizes = Sizes(default={"n": 1 << 28, "bins": 7, "input": "uniform"}, checks=tuple(
        {"n": n, "bins": b, "input": i} for b in BINS for i in INPUTS for n in (1, 31, 1000003, (1 << 24) + 7)) + tuple(
        {"n": LARGE_CHECK, "bins": b, "input": "uniform"} for b in BINS))  # the last: the 64-bit path

    def validate(self, shape):
        super().validate(shape)
        if shape.get("bins") not in BINS:
            raise UsageError(f"histogram: --bins takes 7 or 256, got {shape.get('bins')!r}")

    def device_bytes(self, shape):
        return shape["n"] + 4 * shape["bins"] * (blocks(shape, "privatized") + 2)

    # ---- geometry --------------------------------------------------------------------
    def geometry(self, variant, shape, device=None):
        """One block of BLOCK threads per BLOCK bytes (coarsened: BLOCK * CFACTOR); warp_vec,
        thread_private and read: a grid sized by the SMs of `device`."""
        fixed = variant.name in ("warp_vec", "read", "thread_private")
        sms = device.sm_count if fixed else None
        threads = PRIVATE_THREADS[shape["bins"]] if variant.name == "thread_private" else BLOCK
        return (blocks(shape, variant.name, sms),), (threads,)

    # ---- kernels ---------------------------------------------------------------------
    def defines(self, shape):
        return {"BINS": shape["bins"]}

    def kernel_names(self):
        return with_wide_paths(super().kernel_names(), INDEXED)

    # ---- data ------------------------------------------------------------------------
    def make_inputs(self, shape, rng):
        n = shape["n"]
        if shape["input"] == "one_letter":
            return {"text": np.full(n, LETTER, dtype=np.uint8)}
        low, high = (LETTER, LETTER + 26) if shape["bins"] == 7 else (0, 256)
        block = rng.integers(low, high, size=min(n, REPEAT_PERIOD), dtype=np.uint8)
        return {"text": np.resize(block, n)}

    def reference_key(self, variant):
        return "xor" if variant.name == "read" else "histogram"

    def reference(self, shape, inputs, variant):
        text = inputs["text"]
        if variant.name == "read":
            padded = np.zeros(-(-text.size // 4) * 4, dtype=np.uint8)
            padded[:text.size] = text
            return np.array([np.bitwise_xor.reduce(padded.view("<u4"))], dtype=np.uint32)
        counts = np.bincount(text, minlength=256).astype(np.int64)
        if shape["bins"] == 7:
            letters = counts[LETTER:LETTER + 26]
            counts = np.add.reduceat(letters, np.arange(0, 26, 4))
        return counts.astype(np.uint32)

    def setup(self, shape, inputs, kernels):
        cp = cupy()
        bins = shape["bins"]
        return device_context(kernels, text=cp.asarray(inputs["text"]), histo=cp.empty(bins, dtype=cp.uint32),
                              # privatized's copies: its kernel leaves them zero after each call
                              copies=cp.zeros(blocks(shape, "privatized") * bins, dtype=cp.uint32),
                              xor=cp.empty(1, dtype=cp.uint32), peers={})

    def prebuild(self, shape, variants):
        """cuda.compute's histogram object for the shape's bins (CUB's JIT build), ahead of cub's job."""
        if any(v.name == "cub" for v in variants) and shape["n"] <= INT_MAX:
            cub.prebuild_histogram(cupy(), shape["bins"], *levels(shape), shape["n"])

    def job(self, variant, shape, ctx, index: str | None = None):
        cp = cupy()
        n, bins = shape["n"], shape["bins"]
        text, histo = ctx["text"], ctx["histo"]
        if variant.name == "cub":
            if n > INT_MAX:
                raise Unavailable(f"cuda.compute's HistogramEven counts its samples in a 32-bit int; N = {n} "
                                  f"is past {INT_MAX}")
            run, held = cub.histogram_even(cp, text, histo, bins, *levels(shape))
            ctx["peers"]["cub"] = held
            return library_job(run, histo)
        grid, block = self.geometry(variant, shape, ctx.device)
        kernels = ctx.kernels
        if variant.name == "read":
            out = ctx["xor"]
            launch = Launch(kernels[variant.kernel], grid, block, (text, np.uint64(n), out))
            return staged_job((launch,), out, reset=lambda: out.fill(0))
        if variant.name in ("warp_vec", "thread_private"):
            launch = Launch(kernels[variant.kernel], grid, block, (text, np.uint64(n), histo))
            return staged_job((launch,), histo, reset=lambda: histo.fill(0))
        index = index or index_type_of(shape)
        kernel = indexed_kernel(self, shape, ctx, variant.kernel, index)
        args = (text, index_arg(index, n), histo)
        if variant.name == "privatized":
            args += (ctx["copies"],)
        return staged_job((Launch(kernel, grid, block, args),), histo, reset=lambda: histo.fill(0))

    def traffic(self, shape, variant, device=None):
        return Traffic(bytes=shape["n"], flops=0)


def blocks(shape, variant: str, sms: int | None = None) -> int:
    """Blocks of `variant`'s launch: one thread per byte, CFACTOR bytes per thread for the
    coarsened rungs, or (warp_vec, read) FAST_BLOCKS_PER_SM per SM of a GPU of `sms` SMs."""
    n = shape["n"]
    if variant in COARSE:
        return max(1, -(-n // (BLOCK * CFACTOR)))
    if variant in ("warp_vec", "read"):
        return max(1, min(-(-max(n // 16, 1) // BLOCK), FAST_BLOCKS_PER_SM * sms))
    if variant == "thread_private":
        bins = shape["bins"]
        return max(1, min(-(-max(n // 16, 1) // PRIVATE_THREADS[bins]), PRIVATE_BLOCKS_PER_SM[bins] * sms))
    return max(1, -(-n // BLOCK))


def levels(shape) -> tuple[int, int]:
    """CUB's [lower, upper) for the shape's bins: a-z and two past it in 7 bins of four, or every byte."""
    return (LETTER, LETTER + 28) if shape["bins"] == 7 else (0, 256)


def index_type_of(shape) -> str:
    """The index type of the book's rungs on `shape` (helpers.index_type of its largest index)."""
    return index_type(blocks(shape, "global_atomic") * BLOCK + BLOCK * CFACTOR)


WORKLOAD = Histogram()
