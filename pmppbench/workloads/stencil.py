"""1D stencil y[i] = mean(x[i-R..i+R]) (the course lab "Stencil").

Neighbours outside the array count as 0 and the divisor stays 2R+1 (y[0] of x = [1..7] at
R = 2 is (0+0+1+2+3)/5 = 1.2). The radius R is a compile-time constant: `defines` passes
RADIUS to NVRTC, so every radius is its own module (compile.py caches each).

Variants (kernels_cu/stencil.cu): `naive` (2R+1 global reads per output), `shared` (the
course's halo tile, B = 256), `coarsened` (the memory-roof kernel: for R <= 4 a register
window of 4 outputs per thread, otherwise C = 9 outputs per thread with a running sum over a
shared tile that cp.async fills), and `memcpy`, a device-to-device copy of the same 8N bytes: the roof of the
"% of memcpy" column (docs/stencil.md).

Index paths: naive and shared are templates on their index type. The host picks
`int`, the course's, while n + B + 2R fits in 31 bits and `long long` beyond (index_type;
the 64-bit loop is much slower than the course's listing, docs/measurement.md). The check
shapes include n = 2^31 + 4101, on the 64-bit path; above SAMPLE_ABOVE outputs the input is
a repeated random block (helpers.repeated_random) and the check is exact on a sample of the
outputs (helpers' sampled check), whose windows the float64 reference sums directly.

Tolerance (tolerance_for, per radius). Inputs are uniform in [-1, 1), so a partial sum of k
terms is at most k in magnitude and each FP32 operation rounds by at most u*|result|, with
u = 2^-24. A direct sum of the m = 2R+1 terms (naive, shared, and coarsened for R <= 4) is
then off by at most u*(2 + 3 + ... + m) < u*m^2/2 + u*m/2, which is u*(m+1)/2 after dividing
by m. For R > 4 `coarsened` starts each thread's running sum from a first window built of
Q = m // C chunk sums of C terms each (when Q >= 2) plus the remaining r = m - Q*C terms:
the chunks are off by at most Q*u*(2 + ... + C) <= Q*C*u*(C+1)/2 <= m*u*(C+1)/2 together,
and the Q-1 + r additions that join them by at most (Q-1+r)*m*u, so the first window's mean
is off by at most ((C+1)/2 + Q - 1 + r)*u (below the direct sum's u*(m+1)/2 for large R;
with Q < 2 the first window is summed directly). Each of the C-1 later outputs of a thread
rounds once for (entering - leaving), |.| <= 2, and once for the new sum, |.| <= m+2:
(C-1)*(m+4)*u more in the sum, (C-1)*(m+4)/m*u on the mean. The multiply by the rounded
1/m adds 2u, and the margin of the check's +3 covers it and the 1/2 (the check compares
with the float64 reference itself), so for every variant

    |out - ref| <= (max(m/2, first + (C-1)*(m+4)/m) + 3) * u      (first: the coarsened
                   first window's bound above; R <= 4: the direct sum, m/2 alone)

which is 5.5u at R = 2, 35.5u at R = 32 and 67.5u at R = 64, without assuming anything about
the inputs but their range. Observed errors on random inputs are 1-3u. The bound stays far
below what a wrong window does: an off-by-one moves an output by |x[j] - x[k]|/m, e.g. ~1e-2
at R = 32 (the tests check that such a shift fails). The float64 reference (prefix sums) is
exact to ~1e-13 here.
"""

from __future__ import annotations

import numpy as np

from pmppbench.measure.check import Tolerance
from pmppbench.errors import UsageError
from pmppbench.hardware.gpu import cupy
from pmppbench.measure.protocol import Protocol
from pmppbench.workloads.base import Axis, Launch, Sizes, Starter, Traffic, Variant, Workload, is_int
from pmppbench.workloads.helpers import (
    SAMPLE, checked_indices, device_context, grid_1d, index_arg, index_type, indexed_kernel, launch_job, output_job,
    per_thread, random_array, repeated_random, uniform32, upload_sample,
)

BLOCK = 256  # naive and shared: threads = outputs per block (constexpr B in stencil.cu)
COARSE_THREADS = 128  # coarsened, R > 4: threads per block on the shared-tile path
COARSE_C = 9  # coarsened, R > 4: consecutive outputs per thread (odd: conflict-free shared accesses)
COARSE_OUT = COARSE_THREADS * COARSE_C  # 1152 outputs per block on the shared-tile path
REGISTER_MAX_R = 4  # coarsened: up to this R the register window (REGISTER_MAX_R in stencil.cu)
REGISTER_THREADS = 256  # coarsened, R <= 4: threads per block on the register-window path
REGISTER_OUT = 4 * REGISTER_THREADS  # 1024 outputs per block on the register-window path
STATIC_SMEM = 48 * 1024  # CUDA's cap on a block's static __shared__ arrays
LEAVES = ("y[i] = (x[i - RADIUS] + ... + x[i + RADIUS]) / (2 * RADIUS + 1) for every i < n, a neighbour outside "
          "[0, n) counted as 0 (FP32, within the bound of the sum's order)")
WINDOW_SUM = ("        float sum = 0.0f;\n"
              "        for (int d = -RADIUS; d <= RADIUS; ++d) {  // 2R + 1 reads, each bounds-checked\n"
              "            long long j = (long long)i + d;\n"
              "            if (j >= 0 && j < n) sum += x[j];  // a missing neighbour adds nothing\n"
              "        }\n"
              "        y[i] = sum / float(2 * RADIUS + 1);\n")
# A learner's kernel --like naive and shared (their int index, long long past 2^31 outputs) and
# coarsened (docs/your-own-kernel.md); B, the course's 256, is given as BLOCK_DIM, coarsened's C as
# COARSE_C (a one-letter define would rename every B or C in the learner's file and the headers).
ONE_PER_THREAD = Starter(
    "const float* x, float* y, int n", "ceil(n / BLOCK_DIM) blocks: one thread per output", LEAVES,
    "    int i = blockIdx.x * BLOCK_DIM + threadIdx.x;  // one output per thread\n"
    "    if (i < n) {\n" + WINDOW_SUM + "    }\n", block=("BLOCK_DIM",))
COARSENED = Starter(
    "const float* x, float* y, long long n",
    f"RADIUS <= {REGISTER_MAX_R}: ceil(n / {REGISTER_OUT}) blocks of REGISTER_THREADS (4 outputs per thread); else "
    f"ceil(n / (THREADS * COARSE_C)) blocks of THREADS (COARSE_C consecutive outputs per thread)", LEAVES,
    "    // every output, whatever the grid: a grid-stride loop\n"
    "    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; "
    "i += (long long)gridDim.x * blockDim.x) {\n" + WINDOW_SUM + "    }\n")
RADII = (1, 2, 32, 64)  # the modules `pmppbench compile` builds and --check-only checks
CHECK_NS = (1, 2, 255, 257, 4194304, 16777216 + 3)
LARGE_CHECK = {"n": (1 << 31) + 4101, "radius": 64}  # past 2^31 outputs: the 64-bit path
SAMPLE_ABOVE = 1 << 30  # larger n: repeated-block input, exact check on SAMPLES sampled outputs
SAMPLES = 1 << 14
U = 2.0**-24  # FP32 unit roundoff


def halo(radius: int) -> int:
    """The coarsened tile's halo: R rounded up to whole float4s, so every load stays aligned."""
    return (radius + 3) // 4 * 4


def shared_smem_bytes(radius: int) -> int:
    """`shared`'s tile: B outputs' inputs plus R halo on each side."""
    return 4 * (BLOCK + 2 * radius)


def chunks(radius: int) -> int:
    """Q: whole chunks of C in one window; coarsened builds its first windows from them when Q >= 2."""
    return (2 * radius + 1) // COARSE_C


def coarsened_outputs_per_block(radius: int) -> int:
    return REGISTER_OUT if radius <= REGISTER_MAX_R else COARSE_OUT


def coarsened_threads(radius: int) -> int:
    """coarsened's block: the register path's (R <= 4) or the shared-tile path's."""
    return REGISTER_THREADS if radius <= REGISTER_MAX_R else COARSE_THREADS


def coarsened_smem_bytes(radius: int) -> int:
    """`coarsened`'s shared memory: none on the register path (R <= 4); else the input tile
    (outputs plus float4-rounded halo), the output stage and, when Q >= 2, the chunk sums of
    the block's threads and of the Q-1 chunks past its end."""
    if radius <= REGISTER_MAX_R:
        return 0
    q = chunks(radius)
    chunk_sums = COARSE_THREADS + q - 1 if q >= 2 else 0
    return 4 * ((COARSE_OUT + 2 * halo(radius)) + COARSE_OUT + chunk_sums)


def smem_max_radius() -> int:
    """The largest R whose tiles fit in static shared memory for every variant: 4436, set by
    coarsened's 2*1152 + 2*halo + 128 + Q - 1 floats (shared alone would allow
    (12288 - 256)/2 = 6016)."""
    r = (STATIC_SMEM // 4 - BLOCK) // 2  # shared's limit
    while coarsened_smem_bytes(r) > STATIC_SMEM:  # grows with R: the first R that fits
        r -= 1
    return r


def max_radius() -> int:
    """The largest R the workload takes: its tiles fit (smem_max_radius) and the check can still
    tell a window off by one from the right one. A shift by one moves an output by
    |x[i+R] - x[i-R-1]|/m, up to 2/m, while the bound grows like m/2 * u; keeping the bound at
    most half that largest shift, 1/m, allows R <= 2894."""
    r = smem_max_radius()
    while error_bound(r) > 1 / (2 * r + 1):
        r -= 1
    return r


def stencil_reference(x: np.ndarray, radius: int) -> np.ndarray:
    """y[i] = sum(x[i-R..i+R]) / (2R+1) with zeros outside x, in float64 via prefix sums.

    Pad R zeros on each side; with p[k] = sum of the first k padded values, the window of
    y[i] is padded[i .. i+2R], so its sum is p[i+2R+1] - p[i].
    """
    m = 2 * radius + 1
    padded = np.concatenate([np.zeros(radius), np.asarray(x, dtype=np.float64), np.zeros(radius)])
    p = np.concatenate([[0.0], np.cumsum(padded)])
    return (p[m:] - p[:-m]) / m


def sampled_reference(x: np.ndarray, radius: int, samples: np.ndarray) -> np.ndarray:
    """stencil_reference at the indices `samples` only, each window summed directly in float64."""
    window = samples[:, None] + np.arange(-radius, radius + 1)[None, :]
    inside = (window >= 0) & (window < len(x))
    values = np.where(inside, x[np.clip(window, 0, len(x) - 1)].astype(np.float64), 0.0)
    return values.sum(axis=1) / (2 * radius + 1)


def stencil_index(shape) -> str:
    """int while every index naive and shared form fits: j = i + d < n + R in naive,
    g = base + j - R < n + B + R in shared's halo load."""
    return index_type(shape["n"] + BLOCK + 2 * shape["radius"])


def error_bound(radius: int) -> float:
    """The worst |out - ref| of any variant for inputs in [-1, 1) (derived in the module docstring)."""
    m = 2 * radius + 1
    if radius <= REGISTER_MAX_R:
        return (m / 2 + 3) * U  # every variant sums directly
    q = chunks(radius)
    first = (COARSE_C + 1) / 2 + q - 1 + (m - q * COARSE_C) if q >= 2 else m / 2
    return (max(m / 2, first + (COARSE_C - 1) * (m + 4) / m) + 3) * U


MAX_RADIUS = max_radius()


class Stencil(Workload):
    name = "stencil"
    title = "1D stencil y[i] = mean(x[i-R..i+R]) (FP32)"
    about = "1D stencil y[i] = mean(x[i-R..i+R]): naive, shared (halo tile), coarsened."
    dims = ("n",)
    dim_help = {"n": "Elements."}
    axes = (Axis("radius", "Stencil radius R, or a list such as 2,32 (one set of rows per radius).",
                 many=True, sweep=True, minimum=0),)
    # The course's stencil protocol: more warmup, and the variants' batches interleaved.
    protocol = Protocol(warmup=20, batches=5, reps=100, alternate=True)
    variants = (
        Variant("naive", "naive<int>", "one thread per output, 2R+1 bounds-checked global reads", wide=True,
                defines=(("BLOCK_DIM", BLOCK),), starter=ONE_PER_THREAD),
        Variant("shared", "shared<int>", "256 outputs per block; B+2R inputs (halo) loaded once into shared memory",
                wide=True, defines=(("BLOCK_DIM", BLOCK),), starter=ONE_PER_THREAD),
        Variant("coarsened", f"coarsened<{COARSE_THREADS}, {COARSE_C}, {REGISTER_THREADS}>",
                f"R <= {REGISTER_MAX_R}: 4 outputs per thread from a float4 register window ({REGISTER_THREADS} "
                f"threads); else {COARSE_C} per thread ({COARSE_THREADS} threads) by running sum over a shared tile "
                "filled by cp.async; float4 loads, streaming float4 stores",
                needs="sm_80",  # cp.async (R > 4); one variant for every R, so declared for all
                defines=(("THREADS", COARSE_THREADS), ("COARSE_C", COARSE_C), ("REGISTER_THREADS", REGISTER_THREADS)),
                starter=COARSENED),
        Variant("memcpy", None, "cudaMemcpyAsync device to device of x into y: the same 8N bytes, the roof",
                computes="copy"),
    )
    baseline = "naive"
    roof = "memcpy"  # "% of memcpy": the ceiling for moving these bytes, timed in the same run
    rate = "GB/s"
    # The model's (2R+1)N FLOPs are the algorithm's count, and coarsened's running sum executes
    # fewer: the compute peak does not bound these rows' time (runner: SUSPECT).
    flops_are_a_floor = False

    def tolerance_for(self, shape):
        return Tolerance("elementwise", atol=error_bound(shape["radius"]))

    # ---- shapes -------------------------------------------------------------------
    sizes = Sizes(default={"n": 16777216, "radius": 32},
                  checks=tuple({"n": n, "radius": r} for r in RADII for n in CHECK_NS) + (LARGE_CHECK,))

    def validate(self, shape):
        super().validate(shape)
        r = shape.get("radius")
        if not is_int(r, 0):
            raise UsageError(f"stencil: radius R must be an integer >= 0, got {r!r}")
        if r > MAX_RADIUS and coarsened_smem_bytes(r) <= STATIC_SMEM:
            raise UsageError(
                f"stencil: radius {r} is too large: the check's bound {error_bound(r):.3g} would exceed 1/(2R+1), "
                f"so a window off by one could pass; use --radius {MAX_RADIUS} or less")
        if r > MAX_RADIUS:
            raise UsageError(
                f"stencil: radius {r} is too large: the coarsened tile ({COARSE_OUT} outputs + 2x{halo(r)} halo "
                f"+ {COARSE_OUT} staged + chunk sums) needs {coarsened_smem_bytes(r)} B of shared memory, over the "
                f"{STATIC_SMEM} B static limit; use --radius {MAX_RADIUS} or less"
            )

    def device_bytes(self, shape):
        return 8 * shape["n"]  # x and y, FP32

    # ---- kernels ------------------------------------------------------------------
    def defines(self, shape):
        return {"RADIUS": shape["radius"]}

    def compile_sets(self):
        return [{"RADIUS": r} for r in RADII]

    # ---- data ---------------------------------------------------------------------
    def make_inputs(self, shape, rng):
        # Uniform in [-1, 1): signed, never all zero, and bounded, which the tolerance needs.
        n = shape["n"]
        if not sampled(shape):
            return {"x": random_array(n, rng, uniform32(-1.0, 1.0))}
        return {"x": repeated_random(n, rng), SAMPLE: (checked_indices(n, SAMPLES, rng),)}

    def reference(self, shape, inputs, variant):
        if variant.name == "memcpy":  # a copy: y = x, bit for bit
            return inputs["x"][inputs[SAMPLE][0]] if SAMPLE in inputs else inputs["x"]
        if SAMPLE in inputs:
            return sampled_reference(inputs["x"], shape["radius"], inputs[SAMPLE][0])
        return stencil_reference(inputs["x"], shape["radius"])

    def setup(self, shape, inputs, kernels):
        cp = cupy()
        x = cp.asarray(inputs["x"])
        y = cp.empty(shape["n"], dtype=cp.float32)
        # coarsened's float4 loads and stores need 16-byte aligned arrays (CuPy gives 256 B).
        assert x.data.ptr % 16 == 0 and y.data.ptr % 16 == 0
        return upload_sample(inputs, device_context(kernels, x=x, y=y))

    def geometry(self, variant, shape, device=None):
        """naive and shared: one thread per output in blocks of B; coarsened: the block and
        the outputs per block of its register path (R <= 4) or its shared-tile path."""
        n, r = shape["n"], shape["radius"]
        if variant.name == "coarsened":
            return grid_1d(n, coarsened_outputs_per_block(r)), (coarsened_threads(r),)
        return per_thread(n, BLOCK)

    def job(self, variant, shape, ctx, index: str | None = None):
        """`index` forces an instantiation of naive / shared (studies/baselines.py times both
        at one shape); by default the shape's own (stencil_index)."""
        n = shape["n"]
        x, y = ctx["x"], ctx["y"]
        if variant.kernel is None:  # memcpy: the driver's device-to-device copy, on the current stream
            def copy():
                y.data.copy_from_device_async(x.data, 4 * n)

            return output_job(copy, y, ctx)
        grid, block = self.geometry(variant, shape)
        if variant.wide:  # an int or a long long index, chosen on the host
            index = index or stencil_index(shape)
            kernel = indexed_kernel(self, shape, ctx, variant.kernel, index)
            launch = Launch(kernel, grid, block, (x, y, index_arg(index, n)))
        else:
            launch = Launch(ctx.kernels[variant.kernel], grid, block, (x, y, np.int64(n)))
        return launch_job(launch, y, ctx)

    # ---- model --------------------------------------------------------------------
    def traffic(self, shape, variant, device=None):
        """Logical traffic 8N bytes (x read once, y written once); (2R+1)N flops: per output
        2R adds for the window sum and 1 multiply by 1/(2R+1) -- the algorithm's count, not
        what the running sum executes (memcpy: none). Model columns, per output: elements
        requested from global memory (the course's count: the halo is read by two blocks;
        coarsened for R <= 4: the 3 float4s of each thread's window, two of them L1 hits)
        and elements read from shared memory (coarsened: each of a thread's span elements
        once, its neighbours' chunk sums, then the staged output)."""
        n, r = shape["n"], shape["radius"]
        m = 2 * r + 1
        if variant.name == "memcpy":
            return Traffic(bytes=8 * n, flops=0, extra={"reads_per_output": 1, "smem_reads_per_output": 0.0})
        if variant.name == "naive":
            reads, smem = m, 0.0
        elif variant.name == "shared":
            reads, smem = (BLOCK + 2 * r) / BLOCK, m
        elif r <= REGISTER_MAX_R:
            reads, smem = 2 * halo(r) / 4 + 1, 0.0
        else:
            reads = (COARSE_OUT + 2 * halo(r)) / COARSE_OUT
            c, q = COARSE_C, chunks(r)
            if q >= 2:  # C-1 leaving + 1 + Q-1 chunk sums + the r remaining + C-1 entering, ghosts
                per_thread = 2 * c + q + (m - q * c) - 2
                smem = per_thread / c + (q - 1) * c / COARSE_OUT + 1
            else:
                smem = (2 * r + c) / c + 1
        return Traffic(bytes=8 * n, flops=m * n, extra={"reads_per_output": reads, "smem_reads_per_output": smem})


def sampled(shape) -> bool:
    return shape["n"] > SAMPLE_ABOVE


WORKLOAD = Stencil()
