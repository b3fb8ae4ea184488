"""Matrix transpose B = A^T (PMPP 5.x-6.x, the course lab "矩阵转置").

A is M x N FP32 row-major, B is N x M row-major. The course's four kernels (copy, naive,
tiled<32>, tiled<33>), all with block (32, 32) and one element per thread, plus `coarsened`,
a 32 x 8 block moving a padded 64 x 64 tile with float4 loads and streaming float4 stores,
the tiles taken column by column over A (B's row by row; the grid stays one block per tile),
and `memcpy`, the driver's device-to-device copy of A into B: the ceiling for moving these
bytes and the roof of the "% of memcpy" column (docs/transpose.md). Every variant moves
8*M*N logical bytes.

`copy` and `memcpy` write A unchanged, so they have their own reference (A itself, M x N)
and can never pass as a transpose; the transposes share the reference A^T (N x M).

Index paths: copy, naive and tiled are templates on their index type, `int` (the
course's) while M*N and the rounded-up edges fit in 31 bits, `long long` beyond; the host
picks per shape (index_type). The check shapes include a 32771 x 65537 matrix, 2^31 + 229,379
elements, on the 64-bit path. Above SAMPLE_ABOVE elements the input is a repeated random block
(helpers.repeated_random) and the check is exact on sampled whole rows and columns of the output
(as GEMM's), the last ones always among them: there a 32-bit offset would have wrapped.

`best`, in the default table, runs the form `pick` names for the GPU and shape (docs/transpose.md),
each of which also runs when named (`--variants coarsened_tma`). On Hopper (sm_90), with A's tiles
brought in by the copy engine (TMA) from a tensor map encoded here once per shape (hardware/tma.py):
`coarsened_tma` (N and M multiples of 4), `coarsened_tma_store_wide` (B's 64 x 128 tiles stored by
TMA too, through a second map), `coarsened_tma_skew` (M = 4 mod 8: the odd rows of B's tiles start 4
columns early, so every run of B starts on a 32-byte sector). Where M or N is not a multiple of 4,
the sector forms move every row piece of B onto 32-byte sectors at any pitch (each row of B starts
its piece up to 7 columns early, so the grid has tile rows up to M + 7): `coarsened_sector_vec` (any
GPU, A's rows as the aligned float4s covering them), `coarsened_sector_tma` (N a multiple of 4, A by
TMA through a map of its rows four at a time) and `coarsened_sector_tma_any` (any N, its boxes
started on 16 bytes; `_el` reads A with an L2 evict-last policy). The forms measured beside these
and not picked (TMA stores with evict-first, the tall sector forms, other map promotions, bulk
copies) are studies/forms/transpose_forms.py's.
"""

from __future__ import annotations

import numpy as np

from pmppbench.hardware.archs import capability
from pmppbench.measure.check import Tolerance
from pmppbench.hardware.gpu import cupy
from pmppbench.measure.protocol import Protocol
from pmppbench.workloads.base import Launch, Sizes, Starter, Traffic, Unavailable, Variant, Workload
from pmppbench.hardware import tma
from pmppbench.workloads.helpers import (
    SAMPLE, check_row_tiles, checked_indices, device_context, grid_2d, index_arg, index_type, indexed_kernel, loaded,
    output_job, random_array, repeated_random, take, upload_sample, with_wide_paths,
)

TILE_DIM = 32  # the course's tile and block edge: block (32, 32), one element per thread
COARSENED_TILE = 64  # coarsened<64>: tile edge; its block is (32, COARSENED_ROWS)
COARSENED_ROWS = 8
LARGE_CHECK = {"m": 32771, "n": 65537}  # 2^31 + 229,379 elements: the 64-bit path
SAMPLE_ABOVE = 1 << 30  # more elements: repeated-block input, exact check on sampled rows and columns
SAMPLES = 64  # sampled rows and columns of the output, each way
INDEXED = {"copy<int>", "naive<int>", "tiled<32, int>", "tiled<33, int>"}  # with a 64-bit instantiation
TMA_BOX = (32, COARSENED_TILE)  # coarsened_tma's box: 32 columns (128 bytes, the swizzle's row) x 64 rows
WIDE_ROWS = 2 * COARSENED_TILE  # the wide forms' tiles: 64 columns x 128 rows of A, 512-byte row pieces of B
SKEW = 4  # coarsened_tma_skew: the odd rows of B's tiles start 4 columns early
SECTOR_SHIFT = 7  # the sector forms: B's row pieces start up to 7 columns early (to a 32-byte sector)

# A learner's kernel --like the course's four (docs/your-own-kernel.md): their int sizes (past 2^31
# elements the harness passes long long), block (TILE_DIM, TILE_DIM) per 32 x 32 tile of A.
COURSE_GRID = "ceil(n / 32) x ceil(m / 32) blocks: x over A's columns, y over its rows, one block per 32 x 32 tile"
COURSE_INDEX = ("    int x = blockIdx.x * TILE_DIM + threadIdx.x;  // A's column\n"
                "    int y = blockIdx.y * TILE_DIM + threadIdx.y;  // A's row\n")
COURSE_DEFINES = (("TILE_DIM", TILE_DIM),)
COPY = Starter("const float* a, float* b, int m, int n", COURSE_GRID,
               "b = a, bit for bit: b[y * n + x] = a[y * n + x] (both m x n, row-major)",
               COURSE_INDEX + "    if (x < n && y < m) b[y * n + x] = a[y * n + x];\n", block=("TILE_DIM", "TILE_DIM"))
TRANSPOSED = "b = A^T, bit for bit: b[x * m + y] = a[y * n + x] (A m x n, B n x m, both row-major)"
NAIVE = Starter("const float* a, float* b, int m, int n", COURSE_GRID, TRANSPOSED,
                COURSE_INDEX + "    if (x < n && y < m) b[x * m + y] = a[y * n + x];  // reads coalesced, writes "
                "strided by m\n", block=("TILE_DIM", "TILE_DIM"))
COARSENED = Starter(
    "const float* a, float* b, unsigned long long m, unsigned long long n",
    f"ceil(n / TILE) x ceil(m / TILE) blocks of 32 x {COARSENED_ROWS} threads: one block per TILE x TILE tile of A",
    TRANSPOSED,
    "    // the block's TILE x TILE tile of A, TILE * TILE / (32 * 8) elements per thread\n"
    "    for (unsigned dy = threadIdx.y; dy < TILE; dy += blockDim.y)\n"
    "        for (unsigned dx = threadIdx.x; dx < TILE; dx += blockDim.x) {\n"
    "            unsigned long long x = blockIdx.x * (unsigned long long)TILE + dx;  // A's column\n"
    "            unsigned long long y = blockIdx.y * (unsigned long long)TILE + dy;  // A's row\n"
    "            if (x < n && y < m) b[x * m + y] = a[y * n + x];\n"
    "        }\n")

# The forms beyond coarsened that `best` runs (pick), each also run when named (`--variants`): A's tile by
# the copy engine (TMA, sm_90), and B's row pieces on 32-byte sectors at any pitch. The forms measured
# beside them and not picked are studies/forms/transpose_forms.py's (docs/transpose.md).
TMA = Variant("coarsened_tma", f"coarsened_tma<{COARSENED_TILE}>",
              f"coarsened's {COARSENED_TILE}x{COARSENED_TILE} tiles and order, A's tile loaded by TMA (two swizzled "
              "32-column boxes on an mbarrier), 4x4 shuffle transposes, float4 streaming stores", needs="sm_90")
TMA_WIDE = Variant("coarsened_tma_store_wide", f"coarsened_tma_store<{WIDE_ROWS}, false>",
                   f"coarsened_tma with B's tile stored by TMA too, on {COARSENED_TILE}x{WIDE_ROWS} tiles (B's row "
                   "pieces 512 bytes)", needs="sm_90")
TMA_SKEW = Variant("coarsened_tma_skew", f"coarsened_tma_skew<{COARSENED_TILE}>",
                   "coarsened_tma with the odd rows of B's tiles 4 columns early: every run on a 32-byte sector "
                   "where M = 4 mod 8", needs="sm_90")


def sector_form(rows: int, vec: bool) -> Variant:
    """coarsened_sector<rows, vec>: B's row pieces of `rows` floats on 32-byte sectors at any pitch,
    A's tile loaded element by element or (vec) as the aligned float4s covering each row."""
    name = "coarsened_sector" + ("_tall" if rows > COARSENED_TILE else "") + ("_vec" if vec else "")
    loads = "A's rows as the aligned float4s that cover them" if vec else "A loaded element by element"
    return Variant(name, f"coarsened_sector<{rows}, {str(vec).lower()}>",
                   f"coarsened's order, each {rows}-float row piece of B started on a 32-byte sector (up to 7 "
                   f"columns early), {loads}; any pitch")


SECTOR_VEC = sector_form(COARSENED_TILE, True)  # best's form on Hopper where M is not a multiple of 4 and no map serves
SECTOR_TMA = Variant("coarsened_sector_tma", f"coarsened_sector_tma<{COARSENED_TILE}>",
                     "coarsened_sector's pieces of B, A's tile loaded by TMA through a map of A's rows four at a time "
                     "(8 swizzled boxes of 32 columns x 18 such rows); N a multiple of 4", needs="sm_90")
SECTOR_TMA_ANY = Variant("coarsened_sector_tma_any", f"coarsened_sector_tma_any<{COARSENED_TILE}, false>",
                         "coarsened_sector_tma with each phase's box started on 16 bytes (4 unswizzled boxes of 68 "
                         "columns x 18 rows of four, up to 3 columns early): any N", needs="sm_90")
SECTOR_TMA_ANY_EL = Variant("coarsened_sector_tma_any_el", f"coarsened_sector_tma_any<{COARSENED_TILE}, true>",
                            "coarsened_sector_tma_any reading A with an L2 evict-last policy (the boxes' extra columns "
                            "stay in L2 for the next tile column)", needs="sm_90")
PICKED = (TMA, TMA_WIDE, TMA_SKEW, SECTOR_VEC, SECTOR_TMA, SECTOR_TMA_ANY, SECTOR_TMA_ANY_EL)  # run when named
NAMED_ONLY = frozenset(v.name for v in PICKED)  # out of the default table, where `best` stands for them
SECTOR_BOX = (32, (COARSENED_TILE + 8) // 4)  # coarsened_sector_tma's box: 32 columns x 18 rows of four (y0 - 8 ..)
SECTOR_ANY_BOX = (COARSENED_TILE + 4, SECTOR_BOX[1])  # coarsened_sector_tma_any's: 68 columns (up to 3 early) x 18


def tile_rows(kernel: str) -> tuple[int, int]:
    """(rows of A a coarsened form's block moves, the skew that shifts them up), from its kernel
    expression ("coarsened_tma_store<128, false>"): the template's first argument (64, or 128 for the
    wide and tall forms); the sector forms' pieces start up to SECTOR_SHIFT rows of A early,
    coarsened_tma_skew's tiles SKEW."""
    family, _, args = kernel.partition("<")
    rows = int(args.split(",")[0].strip(" >"))
    if family.startswith("coarsened_sector"):
        return rows, SECTOR_SHIFT
    return rows, SKEW if family == "coarsened_tma_skew" else 0


BEST = Variant("best", f"coarsened<{COARSENED_TILE}>",
               "the fastest shipped form for this GPU and shape (pick): on Hopper with N and M multiples of 4, "
               "coarsened_tma where both are multiples of 64, coarsened_sector_tma_any_el where N = 4 mod 8 and "
               "A is at least the L2's size, coarsened_tma_skew where M = 4 mod 8, "
               "coarsened_tma_store_wide elsewhere; where M or N is not a multiple of 4, coarsened_sector_tma if N "
               "is and coarsened_sector_tma_any if not (its _el form where A is at least the L2's size); "
               "coarsened otherwise")


def pick(shape, compute_capability: str | None, l2_bytes: int | None = None) -> str:
    """The variant `best` runs. On Hopper (compute capability 9.x, where the TMA forms were measured:
    docs/transpose.md), by the pitches of A and B:
    - M and N multiples of 4 (both sides' rows on a float4) and below 2^31 (the tensor maps' int32
      coordinates): coarsened_tma where both are multiples of 64 (256-byte pitches); where N = 4 mod 8
      (A's rows 16 bytes off a sector) and A is at least the L2's size, coarsened_sector_tma_any_el
      (below; +0.1-1.8 points over the forms that follow at 4100^2, 6148^2, 8196^2 and 8192 x 8196 on
      H100s, where it loses 0.1-1.0 at N = 0 mod 8: docs/transpose.md);
      coarsened_tma_skew where M = 4 mod 8 (B's odd rows 16 bytes off a sector: the skew puts every run
      of B on one); coarsened_tma_store_wide at the other pitches (512-byte row pieces of B, both sides
      by the copy engine).
    - M or N not a multiple of 4: every row piece of B moved onto its own sectors (where M is off a
      float4, coarsened's 128-byte runs of B share their end sectors with the neighbouring block's)
      and A brought in by the copy engine as rows of four: coarsened_sector_tma where N is a multiple
      of 4 (swizzled boxes), else coarsened_sector_tma_any (boxes started on 16 bytes, any pitch of A;
      where only N is off, above coarsened at every shape timed: docs/transpose.md).
      Where the any-N form serves and A is at least the L2's size (`l2_bytes`), its _el form, which
      reads A with an L2 evict-last policy: the ends of lines that a box shares with the next tile
      column's stay in L2 until that column reads them (with the settle's reset, +0.2-2.6 points at
      every such shape timed from 4096 x 4097 up on H100s, none at 16384 x 16385; not timed where A
      fits in the L2: docs/transpose.md). Where no map serves (M < 4, 4N past
      int32): coarsened_sector_vec if M is off a float4, else coarsened.
    Everywhere else, and where the GPU is not known, coarsened."""
    m, n = shape["m"], shape["n"]
    hopper = compute_capability is not None and capability(compute_capability)[0] == 9
    past_l2 = bool(l2_bytes) and 4 * m * n >= l2_bytes  # A at least the L2's size: the _el form's condition
    if hopper and (m % 4 or n % 4):
        form, unavailable = (SECTOR_TMA, sector_tma_unavailable) if n % 4 == 0 else (SECTOR_TMA_ANY,
                                                                                    sector_tma_any_unavailable)
        if not unavailable(m, n):
            return SECTOR_TMA_ANY_EL.name if form is SECTOR_TMA_ANY and past_l2 else form.name
        return SECTOR_VEC.name if m % 4 else "coarsened"
    if not hopper or max(m, n) >= 1 << 31:
        return "coarsened"
    if m % COARSENED_TILE == 0 and n % COARSENED_TILE == 0:
        return TMA.name
    if n % 8 == 4 and past_l2 and not sector_tma_any_unavailable(m, n):
        return SECTOR_TMA_ANY_EL.name
    return TMA_SKEW.name if m % 8 == 4 else TMA_WIDE.name


def picked(shape, device) -> str:
    """pick for `device` (a DeviceInfo, or None where the GPU is not known)."""
    if device is None:
        return pick(shape, None)
    return pick(shape, device.compute_capability, device.l2_bytes)


def sector_tma_unavailable(m: int, n: int) -> str | None:
    """Why coarsened_sector_tma cannot run at M x N, or None where it can: its map of A has floor(M / 4)
    rows of 4N elements (TMA's coordinates are int32), and the copy engine faults on a box whose first
    element is not on 16 bytes, which at N not a multiple of 4 some box's is."""
    if n % 4:
        return ("needs N a multiple of 4 (the copy engine faults on a box whose first element is not on "
                "16 bytes)")
    return sector_tma_any_unavailable(m, n)


def sector_tma_any_unavailable(m: int, n: int) -> str | None:
    """Why coarsened_sector_tma_any cannot run at M x N, or None where it can: the map's limits
    (its boxes start on 16 bytes at any N)."""
    if m < 4 or max(m, 4 * n) >= 1 << 31:
        return ("needs M >= 4 and 4N below 2^31, M too (its map has floor(M / 4) rows of 4N elements; TMA's "
                "coordinates are int32)")
    return None


def rows_of_four_map(a, m: int, n: int, any_n: bool = False, promotion: int = tma.PROMOTION) -> tma.TensorMap:
    """coarsened_sector_tma's map of A (M x N FP32, row-major): 4N contiguous elements (A's rows
    4k .. 4k + 3) by floor(M / 4) rows, a row stride of 16N bytes (legal for any N; the engine still
    needs each box's first element on 16 bytes, so the host runs it only where N is a multiple of 4),
    SECTOR_BOX boxes, the 128-byte swizzle, zeros past the edges; A's last M % 4 rows are not in it
    (the kernel loads them). With any_n, coarsened_sector_tma_any's: the same with SECTOR_ANY_BOX
    boxes and no swizzle (its rows of 272 bytes are past the swizzle's 128). `promotion`: the map's L2
    promotion in bytes (the _any_p forms')."""
    box = SECTOR_ANY_BOX if any_n else SECTOR_BOX
    return tma.TensorMap("fp32", a.data.ptr, (4 * n, m // 4), (16 * n,), box, swizzle=not any_n, promotion=promotion)


def tile_map(a, m: int, n: int, rows: int = COARSENED_TILE) -> tma.TensorMap:
    """The tensor map of A (M x N FP32, row-major) for coarsened_tma: N contiguous elements by M
    rows, boxes of 32 columns x `rows` (TMA_BOX by default), the 128-byte swizzle, zeros past the
    edges (hardware/tma.py's map). coarsened_tma_store's map of B (N x M) is the same call with m and
    n swapped: boxes of 32 columns x 64 rows of B."""
    return tma.TensorMap("fp32", a.data.ptr, (n, m), (4 * n,), (TMA_BOX[0], rows))


def coarsened_launch(variant: Variant, shape, ctx: dict, geometry, promotion: int = tma.PROMOTION) -> Launch:
    """The launch of a coarsened form (coarsened, the sector forms, the TMA forms), by its kernel's
    family; the tensor maps a form reads through are encoded once per buffer and box and kept in ctx.
    `promotion`: the L2 promotion of coarsened_sector_tma_any's map (the study's _p forms)."""
    m, n = shape["m"], shape["n"]
    a, b = ctx["a"], ctx["b"]
    family = variant.kernel.partition("<")[0]
    if family.startswith("coarsened_tma"):
        why = tma_unavailable(family, m, n)
        if why:
            raise Unavailable(f"{variant.name} {why}")
        rows, skew = tile_rows(variant.kernel)
        rows += skew  # the skew form's box: A's rows y0 - 4 .. y0 + 63
        source = cached(ctx, ("tile map", a.data.ptr, rows), lambda: tile_map(a, m, n, rows)).arg
        out = b  # coarsened_tma_store: B (N x M) through the same map, m and n swapped
        if family == "coarsened_tma_store":
            out = cached(ctx, ("tile map", b.data.ptr, "out"), lambda: tile_map(b, n, m)).arg
        return Launch(ctx.kernels[variant.kernel], *geometry, (source, out, np.uint64(m), np.uint64(n)))
    if family in ("coarsened_sector_tma", "coarsened_sector_tma_any"):
        anywhere = family == "coarsened_sector_tma_any"
        why = (sector_tma_any_unavailable if anywhere else sector_tma_unavailable)(m, n)
        if why:
            raise Unavailable(f"{variant.name} {why}")
        four = cached(ctx, ("rows of four map", a.data.ptr, anywhere, promotion),
                      lambda: rows_of_four_map(a, m, n, any_n=anywhere, promotion=promotion))
        return Launch(ctx.kernels[variant.kernel], *geometry, (four.arg, a, b, np.uint64(m), np.uint64(n)))
    return Launch(ctx.kernels[variant.kernel], *geometry, (a, b, np.uint64(m), np.uint64(n)))


def tma_unavailable(family: str, m: int, n: int) -> str | None:
    """Why the TMA form `family` cannot run at M x N, or None where it can."""
    if m % 4 or n % 4:
        return "needs N and M multiples of 4 (TMA's row stride is a multiple of 16 bytes; B is written as float4s)"
    if max(m, n) >= 1 << 31:
        return "needs N and M below 2^31 (TMA's box coordinates are int32)"
    if family == "coarsened_tma_skew" and m % 8 != 4:
        return "is for M = 4 mod 8 only (B's odd rows 16 bytes off a sector); elsewhere it would move aligned rows off"
    return None


def cached(ctx: dict, key, make):
    """ctx[key], made on first use (a tensor map names its buffer's address and box: one per buffer and box)."""
    if key not in ctx:
        ctx[key] = make()
    return ctx[key]


class Transpose(Workload):
    name = "transpose"
    title = "Matrix transpose B = A^T (FP32)"
    about = "Matrix transpose B = A^T: copy, naive, shared32, padded33, coarsened (8*M*N bytes)."
    dims = ("m", "n")
    dim_help = {"m": "Rows of the FP32 input A.", "n": "Columns of A."}
    protocol = Protocol(warmup=3, batches=5, reps=20)
    variants = (
        Variant("copy", "copy<int>", "B = A, same 32x32 block and one element per thread: the bandwidth reference",
                defines=COURSE_DEFINES, starter=COPY),
        Variant("naive", "naive<int>", "one element per thread: coalesced reads, writes strided by M floats",
                defines=COURSE_DEFINES, starter=NAIVE),
        Variant("shared32", "tiled<32, int>", "32x32 shared tile, both sides coalesced; 32-way bank conflict on read-out",
                defines=COURSE_DEFINES + (("TILE_STRIDE", 32),), starter=NAIVE),
        Variant("padded33", "tiled<33, int>", "the same kernel with shared row stride 33: no bank conflicts",
                defines=COURSE_DEFINES + (("TILE_STRIDE", 33),), starter=NAIVE),
        Variant("coarsened", f"coarsened<{COARSENED_TILE}>",
                f"32x{COARSENED_ROWS} threads move a padded {COARSENED_TILE}x{COARSENED_TILE} tile, "
                f"{COARSENED_TILE * COARSENED_TILE // (32 * COARSENED_ROWS)} elements each as float4s, loads issued "
                "first; streaming loads and stores; tiles column by column",
                defines=(("TILE", COARSENED_TILE),), starter=COARSENED),
        BEST,
        Variant("memcpy", None, "cudaMemcpyAsync device to device of A into B: the same 8*M*N bytes, the roof"),
        *PICKED,
    )
    # A transpose is a permutation: every output element is an input element, bit for bit.
    tolerance = Tolerance("exact")
    baseline = "naive"
    roof = "memcpy"  # "% of memcpy": the ceiling for moving these bytes, timed in the same run
    rate = "GB/s"

    def variants_for(self, shape):
        return tuple(v for v in self.variants if v.name not in NAMED_ONLY)  # best runs them in the table

    # Square, non-square with partial tiles on both edges, just past one tile either way, the
    # seed's 2x3 example, a single element, one row / one column of 4097, and past 2^31 elements.
    sizes = Sizes(default={"m": 4096, "n": 4096}, checks=tuple(
        {"m": m, "n": n} for m, n in
        ((4096, 4096), (1000, 3000), (33, 31), (31, 33), (2, 3), (1, 1), (1, 4097), (4097, 1))) + (LARGE_CHECK,))

    def validate(self, shape):
        super().validate(shape)
        check_row_tiles(self.name, shape["m"], TILE_DIM)

    def device_bytes(self, shape):
        return 2 * 4 * shape["m"] * shape["n"]  # A and B

    def kernel_names(self):
        return with_wide_paths(super().kernel_names(), INDEXED)

    def index_type(self, shape) -> str:
        """int while every offset y * n + x and every x, y (up to the tile-rounded edges) fits."""
        m, n = shape["m"], shape["n"]
        return index_type(max(m * n, m + TILE_DIM, n + TILE_DIM))

    def make_inputs(self, shape, rng):
        m, n = shape["m"], shape["n"]
        if not sampled(shape):
            return {"a": random_array((m, n), rng)}
        # The output is N x M after a transpose, M x N after copy: sample rows and columns of both.
        a = repeated_random(m * n, rng).reshape(m, n)
        picks_n = checked_indices(n, SAMPLES, rng)
        return {"a": a, SAMPLE: (checked_indices(m, SAMPLES, rng), picks_n)}  # rows and columns of A

    def reference_key(self, variant):
        return "copy" if variant.name in ("copy", "memcpy") else "transpose"

    def reference(self, shape, inputs, variant):
        a = inputs["a"]
        copy = self.reference_key(variant) == "copy"
        if SAMPLE not in inputs:
            return a if copy else np.ascontiguousarray(a.T)
        # the output is A (M x N) after a copy; after a transpose A^T, whose rows are A's columns
        return take(a, inputs[SAMPLE]) if copy else take(a.T, inputs[SAMPLE][::-1])

    def setup(self, shape, inputs, kernels):
        cp = cupy()
        m, n = shape["m"], shape["n"]
        # One output buffer serves every variant: read as N x M after a transpose, M x N after copy.
        ctx = device_context(kernels, a=cp.asarray(inputs["a"]), b=cp.empty(m * n, dtype=cp.float32))
        return upload_sample(inputs, ctx)

    def geometry(self, variant, shape, device=None):
        """x over A's columns, y over its rows, one block per tile of A: the course's block
        (32, 32) on 32 x 32 tiles, coarsened's (32, 8) on 64 x 64 tiles (64 x 128 for the wide
        forms); best's, that of the form it picks for `device` (coarsened's without one)."""
        if variant.name == BEST.name:
            variant = self.variant(picked(shape, device))
        if not variant.name.startswith("coarsened"):
            return grid_2d(shape["n"], shape["m"], TILE_DIM, TILE_DIM), (TILE_DIM, TILE_DIM)
        rows, skew = tile_rows(variant.kernel)  # the skewed forms' tile rows reach M + 4 (M + 7): the last pieces
        return grid_2d(shape["n"], shape["m"] + skew, COARSENED_TILE, rows), (TILE_DIM, COARSENED_ROWS)

    def job(self, variant, shape, ctx, index: str | None = None):
        """`index` forces an instantiation of the textbook kernels (studies/baselines.py times
        both at one shape); by default the shape's own (index_type)."""
        m, n = shape["m"], shape["n"]
        a, b = ctx["a"], ctx["b"]
        if variant.name == BEST.name:  # the picked form's own job, its kernel loaded on first use
            chosen = self.variant(picked(shape, ctx.device))
            loaded(ctx, self.name, chosen.kernel, self.defines(shape))
            return self.job(chosen, shape, ctx, index)
        if variant.kernel is None:  # memcpy: the driver's device-to-device copy, on the current stream
            def run():
                b.data.copy_from_device_async(a.data, 4 * m * n)
            launch = None
        elif variant.kernel in INDEXED:
            index = index or self.index_type(shape)
            kernel = indexed_kernel(self, shape, ctx, variant.kernel, index)
            launch = Launch(kernel, *self.geometry(variant, shape), (a, b, index_arg(index, m), index_arg(index, n)))
            run = launch
        else:
            launch = run = coarsened_launch(variant, shape, ctx, self.geometry(variant, shape))
        copy = self.reference_key(variant) == "copy"
        return output_job(run, b.reshape((m, n) if copy else (n, m)), ctx, launch=launch, transposed=not copy)

    def traffic(self, shape, variant, device=None):
        # Logical traffic: each element read once and written once, 4 bytes each way.
        return Traffic(bytes=8 * shape["m"] * shape["n"], flops=0)


def sampled(shape) -> bool:
    """Whether the shape is checked on sampled rows and columns (more than SAMPLE_ABOVE elements)."""
    return shape["m"] * shape["n"] > SAMPLE_ABOVE


WORKLOAD = Transpose()
