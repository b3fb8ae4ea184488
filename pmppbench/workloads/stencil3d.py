"""3D seven-point stencil (PMPP ch. 8), FP32, on an N^3 grid.

out = c0*in + c1*in[k-1] + c2*in[k+1] + c3*in[j-1] + c4*in[j+1] + c5*in[i-1] + c6*in[i+1] at
the interior cells, out = in at the boundary cells (any index 0 or N-1). The coefficients are
the problem's constants (COEFFICIENTS, the same numbers as kernels_cu/stencil3d.cu).

The rungs are the book's naive (§8.2), shared (input tiling, §8.3), coarsened (thread
coarsening in z, §8.4) and register (register tiling, §8.5), then `best` (float4 columns
marching in z, x neighbours by warp shuffle, y neighbours through L1, no shared memory) and
`memcpy`, the device-to-device copy of the grid: the same 8 bytes per cell, the roof row.
docs/stencil3d.md has the ladder and its numbers.

Tolerance. An interior output is a sum of 7 products; every rung adds them in the book's
order, one rounding per product or fused product-add and one per add: at most 7 roundings on
each term, so |out - exact| <= gamma_7 * sum |c_k| |in_k| (Higham §3.1). With |in| < 1 and
sum |c| = 1 the check allows gamma_7 = 7u/(1-7u) = 4.2e-7 per element; the boundary copies
are exact. A neighbour read from the wrong cell moves an output by c_k |in_a - in_b|, about
0.07 * 2/3 = 0.05 on average.

Large grids: above SAMPLE_ABOVE cells the check compares sampled cells (helpers.checked_indices
over the flat index, the first and last cells and those around 2^31 and 2^32 among them) with
the float64 reference at those cells; above 2^30 cells the grid is a repeated random block.
"""

from __future__ import annotations

import numpy as np

from pmppbench.errors import UsageError
from pmppbench.hardware.gpu import cupy
from pmppbench.measure.check import Tolerance
from pmppbench.measure.protocol import Protocol
from pmppbench.workloads.base import Launch, Sizes, Starter, Traffic, Variant, Workload
from pmppbench.workloads.helpers import (
    SAMPLE, UNIT_ROUNDOFF, checked_indices, device_context, grid_1d, index_arg, index_type, indexed_kernel,
    launch_job, loaded, output_job, random_array, repeated_random, uniform32, upload_sample,
)

COEFFICIENTS = (0.40, 0.11, 0.09, 0.12, 0.08, 0.13, 0.07)  # c0..c6, as FP32 in stencil3d.cu
NAIVE_BLOCK = (32, 8, 2)  # naive: x, y, z threads, one cell each
IN_TILE_DIM = 8  # shared: 8^3 threads load the tile, the inner 6^3 compute
IN_TILE_DIM_C = 32  # coarsened and register: 32 x 32 threads, 30 x 30 outputs, 30 planes
BEST_Y = 4  # best: warps (rows) per block
BEST_ZCHUNK = 32  # best: planes a thread marches through
SCALAR_BEST = f"best<{BEST_Y}, {BEST_ZCHUNK}, false>"  # best where N % 4 != 0 (rows not 16-byte aligned)
MAX_N = 65535 * NAIVE_BLOCK[2]  # naive's gridDim.z limit (every other rung allows more)
CHECK_NS = (1, 2, 3, 4, 5, 7, 8, 9, 31, 32, 33, 61, 64, 127, 130, 258)
LARGE_CHECK = {"n": 1291}  # 1291^3 = 2^31 + 4,130,523 cells: the 64-bit path
SAMPLE_ABOVE = 1 << 24  # more cells: sampled cells are checked
REPEAT_ABOVE = 1 << 30  # more cells: the grid is a repeated random block
SAMPLES = 1 << 16

# A learner's kernel --like a rung (docs/your-own-kernel.md): the course's int N (long long past 2^31
# cells; best's always int), in[i][j][k] at (i * N + j) * N + k, i the plane (z), k the column (x).
LEAVES = ("out = c0 in + c1 in[k-1] + c2 in[k+1] + c3 in[j-1] + c4 in[j+1] + c5 in[i-1] + c6 in[i+1] at the interior "
          "cells, in that order (c0..c6 = " + ", ".join(f"{c:.2f}" for c in COEFFICIENTS) + "), out = in at the "
          "boundary cells (FP32, within gamma_7)")
COEFFS = ("constexpr float c0 = " + ", ".join(f"c{i} = {c:.2f}f" for i, c in enumerate(COEFFICIENTS))[len("c0 = "):]
          + ";  // the problem's\n")


def tile_body(tx: str, ty: str, tz: str) -> str:
    """Every cell of the block's tx x ty x tz tile, shared out over the block's threads."""
    return (f"    // the block's {tx} x {ty} x {tz} tile of cells (x, y, z), each thread a strided share of it\n"
            f"    const long long cells = (long long)({tx}) * ({ty}) * ({tz});\n"
            "    const int threads = blockDim.x * blockDim.y * blockDim.z;\n"
            "    for (long long e = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x; e < cells; "
            "e += threads) {\n"
            f"        long long k = blockIdx.x * (long long)({tx}) + e % ({tx});  // x\n"
            f"        long long j = blockIdx.y * (long long)({ty}) + e / ({tx}) % ({ty});  // y\n"
            f"        long long i = blockIdx.z * (long long)({tz}) + e / ((long long)({tx}) * ({ty}));  // z\n"
            "        if (i >= N || j >= N || k >= N) continue;\n"
            "        long long c = (i * N + j) * N + k;\n"
            "        if (i == 0 || j == 0 || k == 0 || i == N - 1 || j == N - 1 || k == N - 1) out[c] = in[c];\n"
            "        else out[c] = c0 * in[c] + c1 * in[c - 1] + c2 * in[c + 1] + c3 * in[c - N] + c4 * in[c + N]\n"
            "                    + c5 * in[c - (long long)N * N] + c6 * in[c + (long long)N * N];\n"
            "    }\n")


NAIVE = Starter("const float* in, float* out, int N", "ceil(N / NAIVE_X) x ceil(N / NAIVE_Y) x ceil(N / NAIVE_Z) "
                "blocks: one thread per cell", LEAVES, tile_body("NAIVE_X", "NAIVE_Y", "NAIVE_Z"),
                block=("NAIVE_X", "NAIVE_Y", "NAIVE_Z"), helpers=COEFFS)
SHARED = Starter("const float* in, float* out, int N", "ceil(N / (IN_TILE_DIM - 2)) blocks each way: one per "
                 "(IN_TILE_DIM - 2)^3 outputs, a thread per cell of its input tile", LEAVES,
                 tile_body("IN_TILE_DIM - 2", "IN_TILE_DIM - 2", "IN_TILE_DIM - 2"),
                 block=("IN_TILE_DIM", "IN_TILE_DIM", "IN_TILE_DIM"), helpers=COEFFS)
MARCHING = Starter("const float* in, float* out, int N", "ceil(N / (IN_TILE_DIM_C - 2)) blocks each way: one per "
                   "(IN_TILE_DIM_C - 2)^3 outputs, its 2D block marching through the planes", LEAVES,
                   tile_body("IN_TILE_DIM_C - 2", "IN_TILE_DIM_C - 2", "IN_TILE_DIM_C - 2"),
                   block=("IN_TILE_DIM_C", "IN_TILE_DIM_C"), helpers=COEFFS)
BEST = Starter("const float* in, float* out, int N", "ceil(N / 128) x ceil(N / BEST_Y) x ceil(N / BEST_ZCHUNK) "
               "blocks of 32 x BEST_Y threads: 4 columns, one row and BEST_ZCHUNK planes per thread", LEAVES,
               tile_body("128", "BEST_Y", "BEST_ZCHUNK"), helpers=COEFFS)


def error_bound() -> float:
    """gamma_7 times sum |c| = 1 (module docstring)."""
    return 7 * UNIT_ROUNDOFF / (1 - 7 * UNIT_ROUNDOFF)


def stencil3d_reference(grid: np.ndarray) -> np.ndarray:
    """The seven-point stencil of an N x N x N grid in float64, boundary cells copied."""
    x = np.asarray(grid, dtype=np.float64)
    out = x.copy()
    if min(x.shape) >= 3:
        c = COEFFICIENTS
        s = slice(1, -1)
        out[s, s, s] = (c[0] * x[s, s, s] + c[1] * x[s, s, :-2] + c[2] * x[s, s, 2:] + c[3] * x[s, :-2, s]
                        + c[4] * x[s, 2:, s] + c[5] * x[:-2, s, s] + c[6] * x[2:, s, s])
    return out


def sampled_reference(flat: np.ndarray, n: int, cells: np.ndarray) -> np.ndarray:
    """stencil3d_reference at the flat indices `cells` of the grid `flat` (N^3 values)."""
    i, j, k = cells // (n * n), cells // n % n, cells % n
    x = lambda d: flat[cells + d].astype(np.float64)  # noqa: E731 (a neighbour's values)
    out = flat[cells].astype(np.float64)
    inner = (i >= 1) & (i < n - 1) & (j >= 1) & (j < n - 1) & (k >= 1) & (k < n - 1)
    cells = cells[inner]
    c = COEFFICIENTS
    out[inner] = (c[0] * x(0) + c[1] * x(-1) + c[2] * x(1) + c[3] * x(-n) + c[4] * x(n) + c[5] * x(-n * n)
                  + c[6] * x(n * n))
    return out


def interior(n: int) -> int:
    return max(n - 2, 0) ** 3


class Stencil3D(Workload):
    name = "stencil3d"
    title = "3D seven-point stencil (FP32, boundary copied)"
    about = "3D seven-point stencil (PMPP 8): naive, shared, coarsened, register, best, memcpy."
    dims = ("n",)
    dim_help = {"n": "Grid edge: an N x N x N grid."}
    protocol = Protocol(warmup=3, batches=5, reps=20)
    variants = (
        Variant("naive", "naive<int>", "§8.2: one thread per cell, seven global loads",
                wide=True, defines=tuple(zip(("NAIVE_X", "NAIVE_Y", "NAIVE_Z"), NAIVE_BLOCK)), starter=NAIVE),
        Variant("shared", "shared<int>", "§8.3: 8^3 input tiles with their halo in shared memory, 6^3 outputs",
                wide=True, defines=(("IN_TILE_DIM", IN_TILE_DIM),), starter=SHARED),
        Variant("coarsened", "coarsened<int>", "§8.4: 32x32 threads march through 30 planes, 3 planes in shared",
                wide=True, defines=(("IN_TILE_DIM_C", IN_TILE_DIM_C),), starter=MARCHING),
        Variant("register", "register_tiled<int>", "§8.5: coarsened with prev and next planes in registers",
                wide=True, defines=(("IN_TILE_DIM_C", IN_TILE_DIM_C),), starter=MARCHING),
        Variant("best", f"best<{BEST_Y}, {BEST_ZCHUNK}, true>",
                "float4 columns marching in z, x neighbours by shuffle, y through L1, no shared memory or barriers",
                defines=(("BEST_Y", BEST_Y), ("BEST_ZCHUNK", BEST_ZCHUNK)), starter=BEST),
        Variant("memcpy", None, "cudaMemcpyAsync device to device of in into out: the same 8 bytes per cell, the roof",
                computes="copy"),
    )
    baseline = "naive"
    roof = "memcpy"
    rate = "GB/s"
    tolerance = Tolerance("elementwise", atol=error_bound())

    sizes = Sizes(default={"n": 512}, checks=(*({"n": n} for n in CHECK_NS), {"n": 512}, LARGE_CHECK))

    def validate(self, shape):
        super().validate(shape)
        if shape["n"] > MAX_N:
            raise UsageError(f"stencil3d: N = {shape['n']} needs {grid_1d(shape['n'], NAIVE_BLOCK[2])[0]} blocks in "
                             f"naive's gridDim.z, above CUDA's limit of 65535; N must be at most {MAX_N}")

    def device_bytes(self, shape):
        return 8 * shape["n"] ** 3

    # ---- kernels ------------------------------------------------------------------
    def kernel_names(self):
        return super().kernel_names() + [SCALAR_BEST]

    # ---- data ---------------------------------------------------------------------
    def make_inputs(self, shape, rng):
        n = shape["n"]
        cells = n ** 3
        grid = repeated_random(cells, rng) if cells > REPEAT_ABOVE else random_array(cells, rng, uniform32(-1.0, 1.0))
        if cells <= SAMPLE_ABOVE:
            return {"x": grid}
        return {"x": grid, SAMPLE: (checked_indices(cells, SAMPLES, rng),)}

    def reference(self, shape, inputs, variant):
        n, x = shape["n"], inputs["x"]
        if variant.name == "memcpy":
            return x[inputs[SAMPLE][0]] if SAMPLE in inputs else x
        if SAMPLE in inputs:
            return sampled_reference(x, n, inputs[SAMPLE][0])
        return stencil3d_reference(x.reshape(n, n, n)).reshape(-1)

    def setup(self, shape, inputs, kernels):
        cp = cupy()
        ctx = device_context(kernels, x=cp.asarray(inputs["x"]), y=cp.empty(shape["n"] ** 3, dtype=cp.float32))
        assert ctx["x"].data.ptr % 16 == 0 and ctx["y"].data.ptr % 16 == 0  # best's float4s (CuPy gives 256 B)
        return upload_sample(inputs, ctx)

    def geometry(self, variant, shape, device=None):
        """naive: (32, 8, 2) threads, one cell each; shared: 8^3 threads per 6^3 outputs;
        coarsened and register: 32 x 32 threads per 30 x 30 x 30 outputs; best: 32 x 4
        threads, 4 cells in x each, BEST_ZCHUNK planes."""
        n = shape["n"]
        if variant.name == "naive":
            return tuple(grid_1d(n, b)[0] for b in NAIVE_BLOCK), NAIVE_BLOCK
        if variant.name == "shared":
            g = grid_1d(n, IN_TILE_DIM - 2)[0]
            return (g, g, g), (IN_TILE_DIM,) * 3
        if variant.name in ("coarsened", "register"):
            g = grid_1d(n, IN_TILE_DIM_C - 2)[0]
            return (g, g, g), (IN_TILE_DIM_C, IN_TILE_DIM_C)
        return (grid_1d(n, 128)[0], grid_1d(n, BEST_Y)[0], grid_1d(n, BEST_ZCHUNK)[0]), (32, BEST_Y)

    def job(self, variant, shape, ctx, index: str | None = None):
        """`index` forces the book rungs' int or long long path; by default the shape's own."""
        n = shape["n"]
        x, y = ctx["x"], ctx["y"]
        if variant.kernel is None:  # memcpy
            def copy():
                y.data.copy_from_device_async(x.data, x.nbytes)
            return output_job(copy, y, ctx)
        grid, block = self.geometry(variant, shape)
        if variant.wide:
            # the largest offset formed: (i + 1) * N * N + ... for i < N + the tile's overhang
            index = index or index_type((n + IN_TILE_DIM_C) * n * n + n * n)
            launch = Launch(indexed_kernel(self, shape, ctx, variant.kernel, index), grid, block,
                            (x, y, index_arg(index, n)))
        else:  # best: the float4 form when rows are 16-byte aligned
            name = variant.kernel if n % 4 == 0 else SCALAR_BEST
            launch = Launch(loaded(ctx, self.name, name), grid, block, (x, y, np.int32(n)))
        return launch_job(launch, y, ctx)

    # ---- model --------------------------------------------------------------------
    def traffic(self, shape, variant, device=None):
        """8 bytes per cell (in read once, out written once); 13 FLOPs per interior cell (7
        multiplies, 6 adds; memcpy none). Model column reads_per_output: cells requested from
        global memory per output, the book's count (§8.3-8.5): naive 7, shared (8/6)^3,
        coarsened and register (32/30)^2 (32/30 in z), best 1 + 2 rows (L1 hits) + 2/128 edge
        cells + 2 planes per ZCHUNK."""
        n = shape["n"]
        bytes_ = 8 * n ** 3
        if variant.name == "memcpy":
            return Traffic(bytes=bytes_, flops=0, extra={"reads_per_output": 1.0})
        reads = {
            "naive": 7.0,
            "shared": (IN_TILE_DIM / (IN_TILE_DIM - 2)) ** 3,
            "coarsened": (IN_TILE_DIM_C / (IN_TILE_DIM_C - 2)) ** 3,
            "register": (IN_TILE_DIM_C / (IN_TILE_DIM_C - 2)) ** 3,
            "best": 3 + 2 / 128 + 2 / BEST_ZCHUNK,
        }[variant.name]
        return Traffic(bytes=bytes_, flops=13 * interior(n), extra={"reads_per_output": reads})


WORKLOAD = Stencil3D()
