"""2D convolution (PMPP ch. 7): P = F (*) N, FP32, zeros outside the image.

The book's convention (§7.1): P[i][j] = sum F[fr][fc] * N[i-r+fr][j-r+fc] over the
(2r+1)^2 filter cells, N read as 0 outside the image (the ghost cells); the filter is not
flipped (a correlation, as the book and cupyx.scipy.ndimage.correlate both compute). The mask
width 2r+1 is a compile-time FILTER_RADIUS r: one NVRTC module per width.

The rungs are the book's naive (Fig. 7.7), constant_mask (§7.3), tiled (§7.4) and
cached_halo (§7.5), then `best` (register tiling in y, 4 columns per thread, the filter as
constant-bank FFMA operands: kernels_cu/conv2d.cu), `cupyx` (cupyx.scipy.ndimage.correlate,
what a CuPy user calls) and `memcpy` (a device-to-device copy of the image: the same 8 bytes
per output, the roof row). docs/conv2d.md has the ladder and its numbers.

The filter is the problem's, not an input: FP32 values uniform in [-1, 1) / m (m = (2r+1)^2
cells), drawn from a generator seeded by the width, so sum |F| < 1 and every loaded module's
constant memory is written once (FilterLaunch). The re-check on fresh inputs redraws the image.

Tolerance. Every rung sums the m products of an output one at a time (the book's rungs and
best fuse each product into its add, an FFMA: one rounding per term; cupyx and the CPU
emulation of the tests round the product too). Any such recursive sum of m terms is within
gamma_m * sum |F[.]| * |N[.]| of the exact value (Higham, Accuracy and Stability, §3.1), with
gamma_m = m u / (1 - m u), u = 2^-24. With |N| < 1 and sum |F| < 1 that is below gamma_m, and
one more rounding (a sum kept in higher precision, then stored as FP32) adds u: the check
allows gamma_(m+1) per element, 6.0e-7 at 3x3 and 4.9e-6 at 9x9. A filter cell that misses
its input moves an output by |F * N|, 1/(4m) on average: at 9x9 3.1e-3.

Large images: above SAMPLE_ABOVE outputs the check compares sampled whole rows and columns of
P (helpers.take) with the float64 reference computed for those rows and columns only; above
2^30 cells the image is a repeated random block (helpers.repeated_random).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pmppbench.errors import UsageError
from pmppbench.hardware.gpu import cupy
from pmppbench.measure.check import Tolerance
from pmppbench.measure.protocol import Protocol
from pmppbench.workloads.base import (Axis, Launch, Sizes, Starter, Traffic, Unavailable, Variant, Workload,
                                      is_int)
from pmppbench.workloads.helpers import (
    SAMPLE, UNIT_ROUNDOFF, check_row_tiles, checked_indices, device_context, grid_2d, index_arg, index_type,
    indexed_kernel, launch_job, loaded, on_cores, output_job, random_array, repeated_random, take, uniform32, upload_sample,
)

BLOCK_DIM = 32  # naive, constant_mask and cached_halo: 32 x 32 threads, one output each (conv2d.cu)
IN_TILE_DIM = 32  # tiled: the input tile's edge = its block's
BEST_THREADS = 128  # best: threads per block, all along x
BEST_TX = 4  # best: columns per thread (one float4)
BEST_ROWS = 32  # best: output rows per thread (the strip it walks down)
MASKS = (3, 5, 7, 9)  # the widths `pmppbench compile` builds and the command sweeps by default
MAX_MASK = 11  # FILTER_RADIUS 5 (the kernel's static_assert): best unrolls (2r+1)^3 * 4 FFMAs, 13 s of NVRTC at 11
CHECK_SIZES = ((1, 1), (1, 7), (7, 1), (32, 32), (33, 31), (18, 50), (129, 513), (1000, 1003), (2048, 3001))
LARGE_CHECK = {"height": 46341, "width": 46341, "mask": 5}  # 2^31 + 4633 outputs: the 64-bit path
SAMPLE_ABOVE = 1 << 24  # more outputs: sampled whole rows and columns of P are checked
REPEAT_ABOVE = 1 << 30  # more cells: the image is a repeated random block
SAMPLES = 48  # sampled rows and columns each way
BAND = 32  # rows per piece of the CPU reference
SCALAR_BEST = f"best<{BEST_TX}, {BEST_ROWS}, false>"  # best where W % 4 != 0 (rows not 16-byte aligned)
FILTER = "F_c"  # the constant-memory filter's symbol in conv2d.cu


# A learner's kernel --like a rung (docs/your-own-kernel.md): the course's int sizes (long long past 2^31
# outputs; best's always int); the rungs after naive read the filter from a `__constant__ float F_c`
# the learner's file declares, which the harness fills before the module's first launch (FilterLaunch).
LEAVES = ("P[i][j] = sum over fr, fc < 2 FILTER_RADIUS + 1 of F[fr][fc] * N[i - r + fr][j - r + fc], N read as 0 "
          "outside the image, not flipped (FP32, within gamma_(m+1) for m filter cells)")
F_C = ("F_c holds the filter: a __constant__ float F_c[2 FILTER_RADIUS + 1][2 FILTER_RADIUS + 1] your file declares, "
       "written before its module's first launch")
CONSTANT_FILTER = ("__constant__ float F_c[2 * FILTER_RADIUS + 1][2 * FILTER_RADIUS + 1];  // the filter: the harness "
                   "writes it\n")


def tile_body(tile_w: str, tile_h: str, filter_at: str) -> str:
    """Every output of the block's tile_w x tile_h tile of P, shared out over the block's threads."""
    return (f"    // the block's {tile_w} x {tile_h} tile of P, each thread a strided share of it\n"
            f"    for (int e = threadIdx.y * blockDim.x + threadIdx.x; e < {tile_w} * {tile_h}; "
            "e += blockDim.x * blockDim.y) {\n"
            f"        int col = blockIdx.x * {tile_w} + e % {tile_w}, row = blockIdx.y * {tile_h} + e / {tile_w};\n"
            "        if (row >= height || col >= width) continue;\n"
            "        float sum = 0.0f;\n"
            "        for (int fr = 0; fr < 2 * FILTER_RADIUS + 1; ++fr)\n"
            "            for (int fc = 0; fc < 2 * FILTER_RADIUS + 1; ++fc) {\n"
            "                int r = row - FILTER_RADIUS + fr, c = col - FILTER_RADIUS + fc;\n"
            "                if (r >= 0 && r < height && c >= 0 && c < width)  // ghost cells add nothing\n"
            f"                    sum = fmaf({filter_at}, N[(size_t)r * width + c], sum);\n"
            "            }\n"
            "        P[(size_t)row * width + col] = sum;\n"
            "    }\n")


BOOK_GRID = "ceil(width / 32) x ceil(height / 32) blocks: one per 32 x 32 tile of P"
NAIVE = Starter("const float* N, const float* F, float* P, int width, int height", BOOK_GRID + "; F in global memory, "
                "row-major", LEAVES, tile_body("BLOCK_DIM", "BLOCK_DIM", "F[fr * (2 * FILTER_RADIUS + 1) + fc]"),
                block=("BLOCK_DIM", "BLOCK_DIM"))
CONSTANT = Starter("const float* N, float* P, int width, int height", BOOK_GRID, LEAVES,
                   tile_body("BLOCK_DIM", "BLOCK_DIM", "F_c[fr][fc]"), block=("BLOCK_DIM", "BLOCK_DIM"),
                   reset=F_C, helpers=CONSTANT_FILTER)
TILED = Starter("const float* N, float* P, int width, int height",
                "ceil(width / OUT) x ceil(height / OUT) blocks, OUT = IN_TILE_DIM - 2 FILTER_RADIUS: one per OUT x OUT "
                "tile of P, a thread per cell of its input tile", LEAVES,
                tile_body("(IN_TILE_DIM - 2 * FILTER_RADIUS)", "(IN_TILE_DIM - 2 * FILTER_RADIUS)", "F_c[fr][fc]"),
                block=("IN_TILE_DIM", "IN_TILE_DIM"), reset=F_C, helpers=CONSTANT_FILTER)
CACHED = Starter("const float* N, float* P, int width, int height", BOOK_GRID, LEAVES,
                 tile_body("TILE_DIM", "TILE_DIM", "F_c[fr][fc]"), block=("TILE_DIM", "TILE_DIM"),
                 reset=F_C, helpers=CONSTANT_FILTER)
BEST = Starter("const float* N, float* P, int width, int height",
               "ceil(width / (BEST_THREADS * BEST_TX)) x ceil(height / BEST_ROWS) blocks: BEST_TX columns x BEST_ROWS "
               "rows of P per thread", LEAVES, tile_body("(BEST_THREADS * BEST_TX)", "BEST_ROWS", "F_c[fr][fc]"),
               block=("BEST_THREADS",),
               reset=F_C, helpers=CONSTANT_FILTER)


def radius(mask: int) -> int:
    return (mask - 1) // 2


def out_tile_dim(mask: int) -> int:
    """tiled's outputs per tile edge: IN_TILE_DIM - 2r (§7.4)."""
    return IN_TILE_DIM - 2 * radius(mask)


def halo(mask: int) -> int:
    """best's halo columns per side: r rounded up to whole float4s."""
    return (radius(mask) + 3) // 4 * 4


def filter_mask(mask: int) -> np.ndarray:
    """The problem's filter for a width: FP32, uniform in [-1, 1) / m, the same on every run."""
    m = mask * mask
    f = np.random.default_rng(1000 + mask).random((mask, mask), dtype=np.float32) * np.float32(2) - np.float32(1)
    return (f / np.float32(m)).astype(np.float32)


def error_bound(mask: int) -> float:
    """gamma_(m+1) for m = mask^2 products (module docstring)."""
    k = mask * mask + 1
    return k * UNIT_ROUNDOFF / (1 - k * UNIT_ROUNDOFF)


def padded(image: np.ndarray, r: int) -> np.ndarray:
    return np.pad(np.asarray(image, dtype=np.float64), r)


def conv2d_reference(image: np.ndarray, f: np.ndarray) -> np.ndarray:
    """P = F (*) N in float64, zeros outside N: one shifted slice of the padded image per filter
    cell, summed over bands of BAND rows on the host's cores (a band's (2r+1)^2 passes stay in
    its cache)."""
    h, w = image.shape
    r = radius(f.shape[0])
    src = padded(image, r)
    out = np.zeros((h, w))

    def band(top: int) -> None:
        rows = slice(top, min(top + BAND, h))
        acc = out[rows]
        for fr in range(f.shape[0]):
            for fc in range(f.shape[1]):
                acc += float(f[fr, fc]) * src[rows.start + fr:rows.stop + fr, fc:fc + w]

    on_cores(band, range(0, h, BAND))
    return out


def sampled_reference(image: np.ndarray, f: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """conv2d_reference's picked rows (each whole) then picked columns (each whole), flattened
    as helpers.take lays out a sampled P; only the 2r+1 input lines around each pick are read."""
    h, w = image.shape
    m = f.shape[0]
    r = radius(m)
    parts = []
    for i in rows:  # P[i, :] = sum F[fr, fc] * N[i - r + fr, j - r + fc]
        lines = np.zeros((m, w + 2 * r))
        for fr in range(m):
            if 0 <= i - r + fr < h:
                lines[fr, r:r + w] = image[i - r + fr]
        parts.append(sum(float(f[fr, fc]) * lines[fr, fc:fc + w] for fr in range(m) for fc in range(m)))
    for j in cols:  # P[:, j], the same with the axes' roles swapped
        lines = np.zeros((m, h + 2 * r))
        for fc in range(m):
            if 0 <= j - r + fc < w:
                lines[fc, r:r + h] = image[:, j - r + fc]
        parts.append(sum(float(f[fr, fc]) * lines[fc, fr:fr + h] for fr in range(m) for fc in range(m)))
    return np.concatenate(parts) if parts else np.zeros(0)


def terms(length: int, r: int) -> int:
    """Filter cells inside [0, length) summed over the outputs of one axis: sum over i of
    #{fr : 0 <= i - r + fr < length}."""
    i = np.arange(length)
    return int((np.minimum(i + r, length - 1) - np.maximum(i - r, 0) + 1).sum())


@dataclass(frozen=True)
class FilterLaunch(Launch):
    """A launch of a kernel that reads the filter from constant memory (F_c): before its
    module's first launch the filter is copied into the module's F_c, as the book's
    cudaMemcpyToSymbol does (§7.3). The filter is the problem's constant, so it is written
    once per loaded module (also a learner's module, run --like one of these rungs)."""

    filter: object = None  # the filter on the device, FP32 (2r+1)^2

    def __call__(self, stream=None) -> None:
        module = self.kernel.function.module
        if id(module) not in _WRITTEN:
            try:
                symbol = module.get_global_var(FILTER)
            except Exception:  # noqa: BLE001 (CuPy raises the driver's error for a missing symbol)
                raise UsageError(f"conv2d: {self.kernel.name} reads the filter from constant memory, but its "
                                 f"file declares no `__constant__ float {FILTER}[2r+1][2r+1]`") from None
            rt = cupy().cuda.runtime  # the symbol's address (get_global_var): cudaMemcpyToSymbol's copy
            rt.memcpy(symbol, self.filter.data.ptr, self.filter.nbytes, rt.memcpyDeviceToDevice)
            cupy().cuda.Device().synchronize()
            _WRITTEN[id(module)] = module
        super().__call__(stream)


_WRITTEN: dict[int, object] = {}  # id -> module whose F_c holds the filter (kept, so the id stays its own)


class Conv2D(Workload):
    name = "conv2d"
    title = "2D convolution P = F (*) N (FP32, zeros outside)"
    about = "2D convolution (PMPP 7): naive, constant_mask, tiled, cached_halo, best, cupyx, memcpy."
    dims = ("height", "width")
    dim_help = {"height": "Image rows.", "width": "Image columns."}
    axes = (Axis("mask", "Filter width 2r+1 (odd, 1-11), or a list such as 3,5,7,9 (one set of rows per width).",
                 many=True, sweep=True, minimum=1, default=MASKS),)
    protocol = Protocol(warmup=3, batches=5, reps=20)
    variants = (
        Variant("naive", "naive<int>", "Fig. 7.7: one thread per output; F and N from global memory",
                wide=True, defines=(("BLOCK_DIM", BLOCK_DIM),), starter=NAIVE),
        Variant("constant_mask", "constant_mask<int>", "§7.3: the filter in constant memory (F_c), broadcast",
                wide=True, defines=(("BLOCK_DIM", BLOCK_DIM),), starter=CONSTANT),
        Variant("tiled", "tiled<int>", "§7.4: 32x32 input tiles with their halo in shared memory",
                wide=True, defines=(("IN_TILE_DIM", IN_TILE_DIM),), starter=TILED),
        Variant("cached_halo", "cached_halo<int>", "§7.5: 32x32 output tiles in shared memory, the halo from L1/L2",
                wide=True, defines=(("TILE_DIM", BLOCK_DIM),), starter=CACHED),
        Variant("best", f"best<{BEST_TX}, {BEST_ROWS}, true>",
                f"register tiling: {BEST_TX} columns x {BEST_ROWS} rows per thread walked row by row, float4 loads, "
                "the filter as FFMA constant operands, no shared memory",
                defines=(("BEST_THREADS", BEST_THREADS), ("BEST_TX", BEST_TX), ("BEST_ROWS", BEST_ROWS)), starter=BEST),
        Variant("cupyx", None, "cupyx.scipy.ndimage.correlate(mode='constant'): CuPy's generated kernel"),
        Variant("memcpy", None, "cudaMemcpyAsync device to device of N into P: the same 8 bytes per output, the roof",
                computes="copy"),
    )
    baseline = "naive"
    roof = "memcpy"
    rate = "GB/s"

    # the command sweeps --mask's default, 3,5,7,9; `default` is one shape of it
    sizes = Sizes(default={"height": 8192, "width": 8192, "mask": 5},
                  checks=(*({"height": h, "width": w, "mask": m} for m in MASKS for h, w in CHECK_SIZES),
                          {"height": 5, "width": 3, "mask": MAX_MASK}, {"height": 300, "width": 301, "mask": 1},
                          LARGE_CHECK))

    def tolerance_for(self, shape):
        return Tolerance("elementwise", atol=error_bound(shape["mask"]))

    def validate(self, shape):
        super().validate(shape)
        m = shape.get("mask")
        if not is_int(m, 1) or m % 2 == 0 or m > MAX_MASK:
            raise UsageError(f"conv2d: mask must be an odd width 1..{MAX_MASK} (2r+1), got {m!r}")
        if shape["width"] >= 2**31:
            raise UsageError(f"conv2d: W = {shape['width']} must be below 2^31 (best's int column index)")
        check_row_tiles("conv2d", shape["height"], min(out_tile_dim(m), BEST_ROWS))  # tiled's rows are the fewest

    def device_bytes(self, shape):
        return 8 * shape["height"] * shape["width"]

    # ---- kernels ------------------------------------------------------------------
    def defines(self, shape):
        return {"FILTER_RADIUS": radius(shape["mask"])}

    def compile_sets(self):
        return [{"FILTER_RADIUS": radius(m)} for m in MASKS]

    def kernel_names(self):
        return super().kernel_names() + [SCALAR_BEST]

    # ---- data ---------------------------------------------------------------------
    def make_inputs(self, shape, rng):
        # Uniform in [-1, 1): signed, never all zero, bounded (the tolerance needs |N| < 1).
        h, w = shape["height"], shape["width"]
        if h * w > REPEAT_ABOVE:
            image = repeated_random(h * w, rng).reshape(h, w)
        else:
            image = random_array((h, w), rng, uniform32(-1.0, 1.0))
        if h * w <= SAMPLE_ABOVE:
            return {"n": image}
        return {"n": image, SAMPLE: (checked_indices(h, SAMPLES, rng), checked_indices(w, SAMPLES, rng))}

    def reference(self, shape, inputs, variant):
        image = inputs["n"]
        if variant.name == "memcpy":  # a copy: P = N, bit for bit
            return take(image, inputs[SAMPLE], np) if SAMPLE in inputs else image
        f = filter_mask(shape["mask"])
        if SAMPLE in inputs:
            return sampled_reference(image, f, *inputs[SAMPLE])
        return conv2d_reference(image, f)

    def setup(self, shape, inputs, kernels):
        cp = cupy()
        ctx = device_context(kernels, n=cp.asarray(inputs["n"]), f=cp.asarray(filter_mask(shape["mask"])),
                             p=cp.empty((shape["height"], shape["width"]), dtype=cp.float32))
        assert ctx["n"].data.ptr % 16 == 0 and ctx["p"].data.ptr % 16 == 0  # best's float4s (CuPy gives 256 B)
        return upload_sample(inputs, ctx)

    def geometry(self, variant, shape, device=None):
        """The book's rungs: 32 x 32 threads, one output (tiled: one input cell) each; best:
        128 threads along x, each 4 columns of a strip of BEST_ROWS rows."""
        h, w = shape["height"], shape["width"]
        if variant.name == "best":
            return grid_2d(w, h, BEST_THREADS * BEST_TX, BEST_ROWS), (BEST_THREADS,)
        step = out_tile_dim(shape["mask"]) if variant.name == "tiled" else BLOCK_DIM
        return grid_2d(w, h, step, step), (BLOCK_DIM, BLOCK_DIM)

    def job(self, variant, shape, ctx, index: str | None = None):
        """`index` forces the book rungs' int or long long path; by default the shape's own."""
        h, w = shape["height"], shape["width"]
        n, f, p = ctx["n"], ctx["f"], ctx["p"]
        if variant.name == "memcpy":
            def copy():
                p.data.copy_from_device_async(n.data, n.nbytes)
            return output_job(copy, p, ctx)
        if variant.name == "cupyx":
            return output_job(_correlate(n, f, p), p, ctx)
        grid, block = self.geometry(variant, shape)
        if variant.wide:
            index = index or index_type(h * w + BLOCK_DIM * w + 2 * BLOCK_DIM)
            kernel = indexed_kernel(self, shape, ctx, variant.kernel, index)
            args = (n, f, p) if variant.name == "naive" else (n, p)
            launch_type = Launch if variant.name == "naive" else FilterLaunch
            extra = {} if variant.name == "naive" else {"filter": f}
            launch = launch_type(kernel, grid, block, (*args, index_arg(index, w), index_arg(index, h)), **extra)
        else:  # best: the float4 form when rows are 16-byte aligned
            name = variant.kernel if w % 4 == 0 else SCALAR_BEST
            kernel = loaded(ctx, self.name, name, self.defines(shape))
            launch = FilterLaunch(kernel, grid, block, (n, p, np.int32(w), np.int32(h)), filter=f)
        return launch_job(launch, p, ctx)

    # ---- model --------------------------------------------------------------------
    def traffic(self, shape, variant, device=None):
        """8 bytes per output (N read once, P written once; the filter's bytes are noise);
        2 FLOPs per filter cell whose input lies inside the image (memcpy: none). Model column
        reads_per_output: input cells requested from global memory per output (the book's
        count; caches not counted): naive 2m (F and N), constant_mask m, tiled IN^2/OUT^2,
        cached_halo 1 + the halo terms, best the rows and float4 columns each thread loads."""
        h, w, mask = shape["height"], shape["width"], shape["mask"]
        r, m = radius(mask), mask * mask
        bytes_ = 8 * h * w
        if variant.name == "memcpy":
            return Traffic(bytes=bytes_, flops=0, extra={"reads_per_output": 1.0})
        flops = 2 * terms(h, r) * terms(w, r)
        reads = {
            "naive": 2.0 * m,
            "constant_mask": float(m),
            "tiled": IN_TILE_DIM ** 2 / out_tile_dim(mask) ** 2,
            "cached_halo": 1 + ((BLOCK_DIM * mask) ** 2 - (BLOCK_DIM * mask - r * (r + 1)) ** 2) / BLOCK_DIM ** 2,
            "best": (BEST_TX + 2 * halo(mask)) / BEST_TX * (BEST_ROWS + 2 * r) / BEST_ROWS,
            "cupyx": float(m),
        }[variant.name]
        return Traffic(bytes=bytes_, flops=flops, extra={"reads_per_output": reads})


def _correlate(n, f, p):
    """cupyx.scipy.ndimage.correlate of N by F into P, or Unavailable where CuPy lacks it."""
    try:
        from cupyx.scipy import ndimage  # noqa: PLC0415 (optional: imported when the row runs)
    except ImportError as exc:
        raise Unavailable(f"cupyx.scipy.ndimage is not importable: {exc}") from None

    def run() -> None:
        ndimage.correlate(n, f, output=p, mode="constant", cval=0.0)

    return run


WORKLOAD = Conv2D()
