"""GEMM C = A*B, FP32 row-major (PMPP 5.3-5.6 and 6.1-6.3).

C[M,N] = A[M,K] B[K,N]. The table climbs the book's ladder -- naive, tiled16/32, coarsened,
register tiling, corner turning, dynamic shared memory -- then the rungs towards
cuBLAS: 2D block tiling with 8x8 per thread, warp tiling, double buffering, a cp.async
pipeline, and `best`, which picks per shape between the pipelined kernel (the large tile's
loop at BK = 16 with unchecked interior tiles) and configurations of the streamk kernel
(tiles, split-K / stream-K, tile swizzle; `choose`). `cublas` is `cupy.matmul` on the same
FP32 data and is the "% of" column's reference. Each rung is described in docs/gemm_ladder.md; every kernel is in
kernels_cu/gemm.cu.

The check is normwise against a float64 product of the same inputs (see `tolerance_for`).
Products above FULL_CHECK_MAX_MNK multiply-adds are checked exactly on a sample of whole
rows and whole columns of C instead of all of it (see `sample_of`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from pmppbench.check import Tolerance
from pmppbench.errors import UsageError
from pmppbench.gpu import cupy
from pmppbench.protocol import Protocol
from pmppbench.workloads.base import Job, Launch, Traffic, Variant, Workload, check_row_tiles, grid_2d, random_array

# ---- tile parameters: one table for every variant -----------------------------------------


@dataclass(frozen=True)
class Tiles:
    """Issue 10's tile parameters (kernels_cu/gemm.cu, struct Tiles): a BM x BN tile of C per
    block, BK of K per step; one warp per WM x WN warp tile, which its 32 lanes cover in
    WNITER steps along N (and as many as needed along M), TM x TN per lane per step."""

    bm: int
    bn: int
    bk: int
    wm: int
    wn: int
    wniter: int
    tm: int
    tn: int

    @property
    def threads(self) -> int:
        return 32 * (self.bm // self.wm) * (self.bn // self.wn)

    def kernel(self, template: str) -> str:
        """The NVRTC name expression, e.g. double_buffer<128, 128, 8, 32, 64, 2, 4, 4>."""
        return (f"{template}<{self.bm}, {self.bn}, {self.bk}, {self.wm}, {self.wn}, {self.wniter}, "
                f"{self.tm}, {self.tn}>")

    def tag(self) -> str:
        return f"{self.bm}x{self.bn}x{self.bk}_w{self.wm}x{self.wn}_i{self.wniter}_t{self.tm}x{self.tn}"

    def problems(self, template: str) -> list[str]:
        """The static_asserts of struct Tiles and of `template`'s shared stages, as sentences
        (tests/test_gemm.py runs every table entry through it)."""
        bad = []
        if self.bm % self.wm or self.bn % self.wn:
            bad.append("the warp tile WM x WN must divide the block tile BM x BN")
            return bad
        if self.threads > 1024:
            bad.append(f"{self.threads} threads per block: at most 32 warp tiles in a block tile")
        per_lane = 32 * self.tm * self.tn * self.wniter
        wmiter = self.wm * self.wn // per_lane
        lane_cols = self.wn // self.wniter // self.tn if self.wn % self.wniter == 0 else 0
        if wmiter < 1 or wmiter * per_lane != self.wm * self.wn:
            bad.append("WM x WN must be 32 lanes x TM x TN x WNITER x (a whole number of M steps)")
        elif lane_cols < 1 or self.wn % (self.wniter * self.tn) or 32 % lane_cols \
                or (32 // lane_cols) * self.tm * wmiter != self.wm:
            bad.append("the 32 lanes must exactly cover a WM/WMITER x WN/WNITER sub-tile with TM x TN each")
        if self.tm % 4 or self.tn % 4 or self.bk % 4:
            bad.append("TM, TN and BK must be multiples of 4 (float4 fragments and loads)")
        if (self.bm * self.bk // 4) % self.threads or (self.bk * self.bn // 4) % self.threads:
            bad.append("BM*BK/4 and BK*BN/4 must be multiples of the thread count (whole float4 per thread)")
        if template in ("streamk", "pipelined"):
            if self.smem_bytes(2) > STREAMK_SMEM_LIMIT:
                bad.append(f"2 shared stages must fit in {STREAMK_SMEM_LIMIT // 1024} KB of dynamic shared memory")
            return bad
        stages = {"double_buffer": 2, "cp_async": 3}.get(template, 1)
        if self.smem_bytes(stages) > 48 * 1024:
            bad.append(f"{stages} shared stage(s) must fit in 48 KB of static shared memory")
        return bad

    def smem_bytes(self, stages: int) -> int:
        """Shared memory of `stages` stages: A transposed (BK rows of BM + 4) and B (BK x BN)."""
        return stages * 4 * (self.bk * (self.bm + 4) + self.bk * self.bn)


# streamk keeps its two stages in dynamic shared memory; 99 KB is the per-block opt-in of
# sm_86 / sm_89, the smallest of the GPUs with cp.async (sm_80 and later).
STREAMK_SMEM_LIMIT = 99 * 1024


@dataclass(frozen=True)
class Plan:
    """How a variant covers C: a BM x BN tile of C per block of `block` threads. `reuse` is
    False for kernels that read every operand from global memory for every FMA (naive)."""

    bm: int
    bn: int
    block: tuple[int, ...]
    reuse: bool = True


COARSE_TILE, COARSE_FACTOR = 32, 4  # coarsened<32, 4>: the course notes' TILE_WIDTH and COARSE_FACTOR
DYNAMIC_TILE = 32  # dynamic_smem<32>: the C tile; the K depth of a phase is picked at run time

# Issue 10: the tile parameters of every rung and of every sweep candidate, in one place.
# Rungs: blocktile8x8 is kernel 6 of Simon Boehm's public SGEMM worklog (each thread 8x8 contiguous; a "warp tile" of
# 16 x 128), warptile kernel 10 of Simon Boehm's public SGEMM worklog's structure with 4x4 pieces in 32 x 64 warp tiles,
# double_buffer the same tiles with two shared stages, cp_async with a 3-stage cp.async pipeline.
RUNG_TILES = {
    "blocktile8x8": ("warptile", Tiles(128, 128, 8, 16, 128, 1, 8, 8)),
    "warptile": ("warptile", Tiles(128, 128, 8, 32, 64, 2, 4, 4)),
    "double_buffer": ("double_buffer", Tiles(128, 128, 8, 32, 64, 2, 4, 4)),
    "cp_async": ("cp_async", Tiles(128, 128, 8, 32, 64, 2, 4, 4)),
    # The sweep's winner on the H200 (configs/gemm_tuning.toml; 89% of cuBLAS at 2048^3 and
    # 4096^3 against 78% for the 128x128 double_buffer): a 128x256 block tile, 64x64 warp
    # tiles, 8x16 C values per thread. Twice the FMAs per shared load, ~220 registers, so
    # one 256-thread block per SM -- the reuse outweighs the lost occupancy.
    "tuned": ("double_buffer", Tiles(128, 256, 8, 64, 64, 4, 4, 4)),
}
# Sweep candidates: variants named <kernel prefix>_<tiles>, hidden from the default table and
# run by `pmppbench all --config gemm_tuning` (configs/gemm_tuning.toml lists them) or by
# `--variants`. Each keeps registers < 255 with no spills (tests/test_gemm.py checks).
SWEEP_TILES = (
    ("double_buffer", Tiles(128, 128, 8, 64, 32, 2, 4, 4)),
    ("double_buffer", Tiles(128, 128, 16, 32, 64, 2, 4, 4)),
    ("double_buffer", Tiles(128, 64, 16, 32, 32, 1, 4, 4)),
    ("double_buffer", Tiles(64, 128, 8, 32, 64, 2, 4, 4)),
    ("double_buffer", Tiles(64, 64, 8, 32, 32, 1, 4, 4)),
    ("warptile", Tiles(128, 128, 16, 64, 64, 4, 8, 4)),  # the worklog's A6000 kernel 10, 128 threads
    ("cp_async", Tiles(128, 128, 8, 64, 32, 2, 4, 4)),
    ("cp_async", Tiles(64, 128, 8, 32, 64, 2, 4, 4)),
    ("cp_async", Tiles(64, 64, 8, 32, 32, 1, 4, 4)),
)
SWEEP_PREFIX = {"warptile": "wt", "double_buffer": "db", "cp_async": "ca"}

RUNGS = (
    Variant("naive", "naive", "one thread per C element, block (16,16), fmaf over the full K"),
    Variant("tiled16", "tiled<16>", "16x16 tiles of A and B in shared memory: each global load serves 16 FMAs"),
    Variant("tiled32", "tiled<32>", "32x32 tiles, 1024 threads: each global load serves 32 FMAs"),
    Variant("coarsened", f"coarsened<{COARSE_TILE}, {COARSE_FACTOR}>",
            f"one block computes {COARSE_FACTOR} adjacent {COARSE_TILE}x{COARSE_TILE} tiles, loading each A tile once"),
    Variant("regtile2x2", "regtile<2>", "each thread a 2x2 block of C in registers (32x32 block tile)"),
    Variant("regtile4x4", "regtile<4>", "each thread a 4x4 block of C in registers (64x64 block tile)"),
    Variant("corner_turning", "corner_turning<32>",
            "B column-major, its tile loaded coalesced by swapping thread roles; padded to avoid bank conflicts"),
    Variant("dynamic_smem", f"dynamic_smem<{DYNAMIC_TILE}>",
            "extern __shared__ tiles, K depth sized at run time from the device's shared memory"),
    Variant("blocktile8x8", RUNG_TILES["blocktile8x8"][1].kernel("warptile"),
            "128x128x8 block tile, 8x8 C per thread, A transposed in shared memory, float4 loads"),
    Variant("warptile", RUNG_TILES["warptile"][1].kernel("warptile"),
            "32x64 warp tiles, 2x2 pieces of 4x4 per thread: conflict-free float4 shared reads"),
    Variant("double_buffer", RUNG_TILES["double_buffer"][1].kernel("double_buffer"),
            "warptile with two shared stages: the next tile's global loads overlap the math"),
    Variant("cp_async", RUNG_TILES["cp_async"][1].kernel("cp_async"),
            "warptile fed by a 3-stage cp.async pipeline: copies bypass registers, two tiles in flight"),
    Variant("tuned", RUNG_TILES["tuned"][1].kernel("double_buffer"),
            "double_buffer with the sweep's best tiles: 128x256 block, 64x64 warps, 8x16 C per thread"),
)  # then best and cublas (LADDER, after best's configurations below)
CUBLAS = Variant("cublas", None, "cupy.matmul on the same FP32 data: cuBLAS SGEMM (no TF32 unless CUPY_TF32=1)")

# TEST ONLY (tests/test_gemm.py): naive with the K-tail bug, never part of the table.
SKIPS_LAST_K_TILE = Variant("skips_last_k_tile", "skips_last_k_tile",
                            "test only: drops the last K % 16 terms; must FAIL the check")


def _sweep_variants() -> tuple[Variant, ...]:
    out = []
    for template, tiles in SWEEP_TILES:
        out.append(Variant(f"{SWEEP_PREFIX[template]}_{tiles.tag()}", tiles.kernel(template),
                           f"sweep: {template} with BMxBNxBK {tiles.bm}x{tiles.bn}x{tiles.bk}, warp tile "
                           f"{tiles.wm}x{tiles.wn} (x{tiles.wniter} along N), {tiles.tm}x{tiles.tn} per lane step"))
    return tuple(out)


SWEEP = _sweep_variants()


def _plans() -> dict[str, Plan]:
    plans = {
        "naive": Plan(16, 16, (16, 16), reuse=False),
        SKIPS_LAST_K_TILE.name: Plan(16, 16, (16, 16), reuse=False),
        "tiled16": Plan(16, 16, (16, 16)),
        "tiled32": Plan(32, 32, (32, 32)),
        "coarsened": Plan(COARSE_TILE, COARSE_TILE * COARSE_FACTOR, (COARSE_TILE, COARSE_TILE)),
        "regtile2x2": Plan(32, 32, (16, 16)),
        "regtile4x4": Plan(64, 64, (16, 16)),
        "corner_turning": Plan(32, 32, (32, 32)),
        "dynamic_smem": Plan(DYNAMIC_TILE, DYNAMIC_TILE, (DYNAMIC_TILE, DYNAMIC_TILE)),
    }
    tiled = [(name, t) for name, (_, t) in RUNG_TILES.items()]
    tiled += [(v.name, t) for v, (_, t) in zip(SWEEP, SWEEP_TILES)]
    for name, t in tiled:
        plans[name] = Plan(t.bm, t.bn, (t.threads,))
    return plans


PLANS = _plans()

# ---- best: a configuration per shape (issue 21) --------------------------------------------
#
# The ladder's rungs each have one answer for every shape. `best` picks, per shape, one of
# the configurations below: a kernel (pipelined, the large tile's loop made fast; streamk,
# double_buffer's loop with work sharing; double_buffer itself, for the sweeps), its tiles,
# and a schedule -- how the tiles and K steps are dealt out to blocks (kernels_cu/gemm.cu). `choose` is the rule, and
# docs/gemm_ladder.md ("best") the sweep it was read from.

SCHEDULES = ("dp", "split", "streamk", "hybrid")
WHOLE_TILE_KERNELS = ("double_buffer", "pipelined")  # one whole tile per block, a 2D grid


@dataclass(frozen=True)
class Config:
    """One way to compute a shape.

    kernel: "double_buffer" (one whole tile per block, blockIdx order), "pipelined" (the
    same, with fragments double-buffered in registers, the barrier before the last K step
    and unchecked interior tiles: kernels_cu/gemm.cu) or "streamk".
    schedule (streamk only): "dp" one whole tile per block, in the swizzled order;
    "split" every tile's K cut into `split` runs, one block each (split-K); "streamk" all
    K steps of all tiles dealt evenly to as many blocks as the GPU holds at once;
    "hybrid" whole tiles for all full waves but one, stream-K for the rest (the last wave
    and one before it, so no block gets less than one tile's work).
    group_m: tile rows per swizzle group (1: row by row). async_b: B by cp.async.
    checked (pipelined only): every tile through the bounds-checked path, no interior fast
    path (to measure what that path gains). frags (pipelined only): fragments double-buffered
    in registers and the barrier before the last K step's math; without, double_buffer's loop.
    """

    kernel: str
    tiles: Tiles
    schedule: str = "dp"
    split: int = 1
    group_m: int = 1
    async_b: bool = False
    checked: bool = False
    frags: bool = True

    def __post_init__(self):
        if self.kernel not in WHOLE_TILE_KERNELS + ("streamk",) or self.schedule not in SCHEDULES:
            raise ValueError(f"bad config {self}")
        if self.kernel in WHOLE_TILE_KERNELS and (self.schedule, self.group_m, self.async_b) != ("dp", 1, False):
            raise ValueError(f"{self.kernel} has one schedule: a whole tile per block in blockIdx order")
        if (self.checked or not self.frags) and self.kernel != "pipelined":
            raise ValueError("only pipelined has an unchecked interior path and fragment buffers to turn off")

    @property
    def expression(self) -> str:
        """The NVRTC name expression of the kernel it launches."""
        if self.kernel == "pipelined":
            return (self.tiles.kernel("pipelined")[:-1]
                    + f", {'false' if self.checked else 'true'}, {'true' if self.frags else 'false'}>")
        if self.kernel in WHOLE_TILE_KERNELS:
            return self.tiles.kernel(self.kernel)
        return self.tiles.kernel("streamk")[:-1] + f", {'true' if self.async_b else 'false'}>"

    @property
    def name(self) -> str:
        """e.g. sk_128x256x8_w64x64_i4_t4x4_hybrid_g8; `ab` marks B by cp.async; for
        pipelined `chk` no interior path, `nf` no fragment double-buffering."""
        prefix = {"double_buffer": "db", "pipelined": "pl"}.get(self.kernel, "sk")
        sched = f"split{self.split}" if self.schedule == "split" else self.schedule
        return (f"{prefix}_{self.tiles.tag()}{'_ab' if self.async_b else ''}{'_chk' if self.checked else ''}"
                + ("_nf" if not self.frags else "")
                + ("" if self.kernel in WHOLE_TILE_KERNELS else f"_{sched}_g{self.group_m}"))

    @property
    def dynamic_smem(self) -> int:
        """streamk's and pipelined's two stages are static shared memory when they fit in
        48 KB, else dynamic (the kernels' STATIC)."""
        two = self.tiles.smem_bytes(2)
        return two if self.kernel in ("streamk", "pipelined") and two > 48 * 1024 else 0

    def describe(self) -> str:
        sched = {"dp": "a whole tile per block", "split": f"split-K x{self.split}", "streamk": "stream-K",
                 "hybrid": "whole tiles, then stream-K for the last two waves"}[self.schedule]
        t = self.tiles
        return (f"{self.kernel} {t.bm}x{t.bn}x{t.bk} tiles, {sched}"
                + (f", swizzle {self.group_m}" if self.group_m > 1 else "")
                + (", B by cp.async" if self.async_b else "")
                + (", no unchecked interior path" if self.checked else "")
                + (", single fragment buffer" if self.kernel == "pipelined" and not self.frags else ""))


@dataclass(frozen=True)
class Schedule:
    """How streamk's grid covers C (kernels_cu/gemm.cu): `dp_tiles` whole tiles first, then
    the K steps of the other tiles in runs of `per`, one per block (`shared_blocks`)."""

    tiles: int
    kt: int  # K steps per tile
    dp_tiles: int
    per: int  # K steps per shared block (0: none shared)
    shared_blocks: int

    @property
    def grid(self) -> int:
        return self.dp_tiles + self.shared_blocks

    @property
    def shared_steps(self) -> int:
        return (self.tiles - self.dp_tiles) * self.kt

    def contributors(self, u: int) -> tuple[int, int]:
        """The first and last shared block whose run covers part of shared tile u (the
        kernel's `first`, `last`)."""
        return u * self.kt // self.per, ((u + 1) * self.kt - 1) // self.per


INT_STEPS = 2**31 - 1  # streamk counts K steps in int


def schedule_for(cfg: Config, m: int, n: int, k: int, slots: int) -> Schedule:
    """The Schedule of `cfg` on an M x N x K product for a GPU that holds `slots` blocks of
    it at once (SMs x blocks per SM). Shared steps beyond 2^31 fall back to whole tiles."""
    t = cfg.tiles
    tiles = -(-m // t.bm) * -(-n // t.bn)
    kt = -(-k // t.bk)
    if cfg.schedule == "split":
        dp, per = 0, -(-kt // max(1, min(cfg.split, kt)))
    elif cfg.schedule == "streamk":
        dp, per = 0, -(-tiles * kt // slots)
    elif cfg.schedule == "hybrid":
        rest = tiles % slots
        shared = tiles if tiles <= slots else (rest + slots if rest else 0)
        dp = tiles - shared
        per = -(-shared * kt // slots) if shared else 0
    else:
        dp, per = tiles, 0
    if (tiles - dp) * kt > INT_STEPS:
        dp, per = tiles, 0
    shared_blocks = -(-(tiles - dp) * kt // per) if per else 0
    return Schedule(tiles, kt, dp, per, shared_blocks)


def swizzled_tile(tile: int, tiles_m: int, tiles_n: int, group_m: int) -> tuple[int, int]:
    """(tile row, tile column) of C's tile number `tile`, as streamk numbers them: groups of
    group_m tile rows, down the columns inside a group (the kernel's swizzled_tile)."""
    per_group = group_m * tiles_n
    group, inside = divmod(tile, per_group)
    first = group * group_m
    rows = min(tiles_m - first, group_m)
    return first + inside % rows, inside // rows


def segments(s: Schedule) -> list[tuple[int, int, int, int]]:
    """(shared block, shared tile, first K step, end K step) of every run piece, exactly
    as streamk's loop walks them (the CPU tests check that they cover each tile once)."""
    out = []
    total = s.shared_steps
    for g in range(s.shared_blocks):
        it, end = g * s.per, min(total, (g + 1) * s.per)
        while it < end:
            u = it // s.kt
            kb = it - u * s.kt
            ke = min(s.kt, kb + end - it)
            out.append((g, u, kb, ke))
            it += ke - kb
    return out


CONFIGS: dict[str, Config] = {}  # name -> configuration, for jobs by name (the sweep's candidates, best's choices)
CHOSEN: dict[tuple[int, int, int], Config] = {}  # (M, N, K) -> what best launched, for its traffic row
H200_SMS = 132  # the GPU the rule was read on; the traffic model's guess where no GPU is asked


def config_variant(cfg: Config) -> Variant:
    """A variant that runs `cfg` by name (registered for Gemm.job); not in the table."""
    CONFIGS[cfg.name] = cfg
    return Variant(cfg.name, cfg.expression, cfg.describe())


TUNED = RUNG_TILES["tuned"][1]
# best's tile ladder for grids too small for the tuned tile, largest first. Each rung halves
# the FMAs of a block (and its reuse of what it loads), doubling the number of tiles.
SMALL_TILES = (
    Tiles(128, 128, 16, 32, 64, 2, 4, 4),  # 256 threads of 8 x 8
    Tiles(128, 64, 16, 32, 32, 1, 4, 4),  # 256 threads of 8 x 4
    Tiles(64, 64, 16, 32, 16, 1, 4, 4),  # 256 threads of 4 x 4
    Tiles(32, 64, 16, 16, 32, 1, 4, 4),  # 128 threads of 4 x 4
)
# The large-tile choice (sweep 3): the tuned tile with BK = 16, double_buffer's loop and an
# unchecked path for interior tiles (kernels_cu/gemm.cu, pipelined with FRAGS = false).
PIPELINED_TILES = Tiles(128, 256, 16, 64, 64, 4, 4, 4)
BEST_CHOICES = {
    "pipelined": Config("pipelined", PIPELINED_TILES, frags=False),
    "hybrid": Config("streamk", TUNED, "hybrid", group_m=8),
    **{f"streamk {t.bm}x{t.bn}": Config("streamk", t, "streamk") for t in SMALL_TILES},
    "whole 32x64": Config("streamk", SMALL_TILES[-1]),
}
for _cfg in BEST_CHOICES.values():
    config_variant(_cfg)
# The kernel named here is the one `best` launches on large shapes (pipelined); on others it
# loads the one `choose` names when first used (every one is in kernel_names()).
BEST = Variant("best", BEST_CHOICES["pipelined"].expression,
               "a configuration per shape (choose): pipelined 128x256x16 tiles, or streamk's tiles, "
               "split-K / stream-K, swizzle")
LADDER = (*RUNGS, BEST, CUBLAS)

# The rule's constants, read from the H200 sweeps (results/h200/gemm-best/, docs/gemm_ladder.md):
FULL_GRID = 0.9  # 128 x 256 tiles per SM from which that tile is used at all (sweep 2)
SHARED_STEP_COST = 0.05  # a stream-K K step costs 5% more than a data-parallel one (streamk's loop; sweep 2)
FIXUP_STEPS = 15  # the partial tiles' write, count and sum cost about 15 K steps of the tuned tile (sweep 2)
# streamk's whole 128 x 256 tile (BK = 8, checked loads) takes 1.11x pipelined's (BK = 16,
# unchecked interior): sweep 3, 1.106-1.116 on all nine shapes with >= 0.9 x 132 tiles (2048^3 1.112, 4096^3 1.113,
# 8192^3 1.116).
STREAMK_TILE_TIME = 1.11
HYBRID_MARGIN = 0.99  # hybrid must win by 1%, about the sweeps' spread, or whole tiles stay
MIN_STEPS_PER_SM = 16  # K steps of a smaller tile each SM must get for stream-K of it to pay


def tile_count(t: Tiles, m: int, n: int) -> int:
    return -(-m // t.bm) * -(-n // t.bn)


def hybrid_cost(m: int, n: int, k: int, sms: int) -> float:
    """The modelled time of the hybrid schedule of 128 x 256 tiles, in tile-times of
    `pipelined` (one whole tile's K loop there): every SM gets tiles / sms tiles of work,
    plus the stream-K steps' extra cost and the fixup, in streamk's own tile-times, which
    are STREAMK_TILE_TIME of pipelined's. Whole pipelined tiles take ceil(tiles / sms)."""
    s = schedule_for(BEST_CHOICES["hybrid"], m, n, k, sms)  # ~237 registers: one block per SM
    return STREAMK_TILE_TIME * (s.tiles / sms + (SHARED_STEP_COST * s.per + FIXUP_STEPS) / s.kt)


def choose(m: int, n: int, k: int, sms: int) -> Config:
    """best's rule (docs/gemm_ladder.md, "best"), for a GPU of `sms` SMs, read from the
    H200 sweeps (results/h200/gemm-best/):

    1. At least FULL_GRID x sms 128 x 256 tiles: those tiles (the most FMAs per load; one
       block per SM is enough). Whole tiles (`pipelined`: BK = 16, unchecked interior
       tiles) take ceil(tiles / sms) waves; `hybrid` (streamk: whole tiles for all full
       waves but one, the rest dealt out stream-K, swizzled in groups of 8 tile rows)
       takes `hybrid_cost`. Hybrid where it is HYBRID_MARGIN faster (a last wave far from
       full), else whole pipelined tiles.
    2. Fewer: the largest tile of SMALL_TILES whose stream-K run gives each SM at least
       MIN_STEPS_PER_SM K steps -- every SM the same share of the work, whatever the tile
       count -- and, when even the smallest tile gives fewer, that tile whole, one block
       per tile: the K steps are too few to share.
    """
    tiles = tile_count(PIPELINED_TILES, m, n)
    if tiles >= FULL_GRID * sms:
        waves = -(-tiles // sms)
        return BEST_CHOICES["hybrid" if hybrid_cost(m, n, k, sms) < HYBRID_MARGIN * waves else "pipelined"]
    for t in SMALL_TILES:
        if tile_count(t, m, n) * -(-k // t.bk) >= MIN_STEPS_PER_SM * sms:
            return BEST_CHOICES[f"streamk {t.bm}x{t.bn}"]
    return BEST_CHOICES["whole 32x64"]


# ---- checking -----------------------------------------------------------------------------

UNIT_ROUNDOFF = 2.0 ** -24  # FP32
TOLERANCE_FACTOR = 16
# Up to 4096^3 the float64 reference is one BLAS call of ~0.14 TFLOP (a second or so on the
# host); above it, whole rows and columns of C are sampled.
FULL_CHECK_MAX_MNK = 4096 ** 3
SAMPLE_ROWS = SAMPLE_COLS = 64

MIN_TILE_ROWS = 16  # the smallest BM of any variant (naive, tiled16): C's row tiles run along gridDim.y
MAX_DIM = 1 << 30  # kernels index with int and step by a tile: keep K + tile far from 2^31
SMEM_RESERVED_PER_BLOCK = 1024  # shared memory the driver keeps per block (sm_80 and later)


def rtol_for_k(k: int) -> float:
    """The normwise bound for a K-term FP32 dot product: 16 u sqrt(K), u = 2^-24.

    Rounding errors of a K-term sum of random-sign products add up like a random walk, so
    ||C - C_ref|| / ||C_ref|| grows like u sqrt(K); a sequential FP32 sum of normal data
    measures about 0.3 u sqrt(K) (tiling and FMA only lower it). 16 u sqrt(K) leaves a
    50x margin: 3.1e-5 at K = 1024, 6.1e-5 at K = 4096, 8.6e-5 at K = 8192. A kernel that
    drops even one term per output is off by about 1/sqrt(K) (0.4% at K = 65536), and TF32
    (10-bit mantissa) by ~1e-4 to 1e-3: both FAIL.
    """
    return TOLERANCE_FACTOR * UNIT_ROUNDOFF * math.sqrt(k)


def sample_indices(size: int, count: int, rng: np.random.Generator) -> np.ndarray:
    """One random index in each of `count` equal strata of range(size), plus the first and
    last: every part of the matrix, both edges included, is represented."""
    if size <= count:
        return np.arange(size)
    edges = np.linspace(0, size, count + 1).astype(np.int64)
    picks = rng.integers(edges[:-1], edges[1:])
    return np.unique(np.concatenate([[0, size - 1], picks]))


def sample_of(c, rows, cols, xp=np):
    """The checked part of a large C: the sampled rows (row-major) then the sampled columns
    (each column contiguous), flattened into one vector. Works on NumPy and CuPy arrays."""
    return xp.concatenate([c[rows, :].ravel(), c[:, cols].T.ravel()])


class Gemm(Workload):
    name = "gemm"
    title = "GEMM C = A*B (FP32, row-major)"
    about = "FP32 GEMM C = A*B: the PMPP ladder from naive to register tiling, with cuBLAS beside it."
    dims = ("m", "n", "k")
    dim_help = {"m": "Rows of C and A.", "n": "Columns of C and B.", "k": "Columns of A, rows of B."}
    protocol = Protocol(warmup=3, batches=5, reps=20)
    variants = LADDER + SWEEP
    baseline = "naive"
    roof = "cublas"
    rate = "GFLOP/s"

    # ---- shapes ----------------------------------------------------------------------
    def default_shape(self):
        return {"m": 1024, "n": 1024, "k": 1024}

    def check_shapes(self):
        # The course's sizes; its K = 18 tail; a K % 4 != 0 that also breaks every tile edge;
        # one column; one element; K % 4 == 0 but not % 8 with partial 128x128 tiles on both
        # edges (the float4 paths at the edges); a tiny all-partial float4 case.
        return [{"m": m, "n": n, "k": k} for m, n, k in (
            (512, 512, 512), (1024, 1024, 1024), (513, 257, 18), (1000, 999, 17), (33, 1, 65), (1, 1, 1),
            (257, 260, 36), (7, 4, 12))]

    def variants_for(self, shape):
        return LADDER  # the sweep runs only when asked for by name

    def kernel_names(self):
        """The table's kernels and every kernel `best` may choose."""
        names = super().kernel_names()
        return names + [e for e in dict.fromkeys(c.expression for c in BEST_CHOICES.values()) if e not in names]

    def kernel_variants(self):
        uses = {}
        for key, cfg in BEST_CHOICES.items():
            uses.setdefault(cfg.expression, []).append(key)
        out = []
        for kernel, names in super().kernel_variants():
            if kernel in uses:
                others = [x for x in names.split(", ") if x and x != "best"]
                names = ", ".join([*others, f"best ({', '.join(uses[kernel])})"])
            out.append((kernel, names))
        return out

    def tolerance_for(self, shape):
        return Tolerance("normwise", rtol=rtol_for_k(shape["k"]))

    def validate(self, shape):
        super().validate(shape)
        check_row_tiles(self.name, shape["m"], MIN_TILE_ROWS)
        for d in ("n", "k"):
            if shape[d] > MAX_DIM:
                raise UsageError(f"gemm: {d.upper()} = {shape[d]} is above the kernels' limit of {MAX_DIM} (2^30)")

    def device_bytes(self, shape):
        m, n, k = shape["m"], shape["n"], shape["k"]
        return 4 * (m * k + 2 * k * n + m * n)  # A, B, B column-major (corner_turning), C

    # ---- data ------------------------------------------------------------------------
    def sampled(self, shape) -> bool:
        return shape["m"] * shape["n"] * shape["k"] > FULL_CHECK_MAX_MNK

    def make_inputs(self, shape, rng):
        m, n, k = shape["m"], shape["n"], shape["k"]
        inputs = {"a": random_array((m, k), rng), "b": random_array((k, n), rng)}
        if self.sampled(shape):
            inputs["rows"] = sample_indices(m, SAMPLE_ROWS, rng)
            inputs["cols"] = sample_indices(n, SAMPLE_COLS, rng)
        return inputs

    def reference(self, shape, inputs, variant):
        # corner_turning reads a column-major copy of the same B: the same product, one reference.
        a, b = inputs["a"].astype(np.float64), inputs["b"].astype(np.float64)
        if "rows" not in inputs:
            return a @ b
        rows, cols = inputs["rows"], inputs["cols"]
        return np.concatenate([(a[rows, :] @ b).ravel(), (a @ b[:, cols]).T.ravel()])  # == sample_of(a @ b)

    def setup(self, shape, inputs, kernels):
        cp = cupy()
        a, b = cp.asarray(inputs["a"]), cp.asarray(inputs["b"])
        ctx = {"a": a, "b": b, "b_colmajor": cp.ascontiguousarray(b.T),  # N x K row-major = B column-major
               "c": cp.empty((shape["m"], shape["n"]), dtype=cp.float32), "kernels": kernels}
        if "rows" in inputs:
            ctx["rows"], ctx["cols"] = cp.asarray(inputs["rows"]), cp.asarray(inputs["cols"])
        return ctx

    def job(self, variant, shape, ctx):
        cp = cupy()
        m, n, k = shape["m"], shape["n"], shape["k"]
        a, b, c = ctx["a"], ctx["b"], ctx["c"]
        if "rows" in ctx:
            rows, cols = ctx["rows"], ctx["cols"]

            def output():
                return sample_of(c, rows, cols, cp)
        else:
            def output():
                return c

        def poison():
            c.fill(np.nan)

        if variant.kernel is None:  # cublas: CuPy picks the SGEMM and its launch
            return Job(run=lambda: cp.matmul(a, b, out=c), output=output, poison=poison)
        if variant.name == "best" or variant.name in CONFIGS:
            from pmppbench import device  # noqa: PLC0415

            sms = device.current().sm_count
            cfg = choose(m, n, k, sms) if variant.name == "best" else CONFIGS[variant.name]
            launch = config_launch(cfg, shape, ctx, sms)
            if variant.name == "best":
                CHOSEN[(m, n, k)] = cfg
            return Job(run=launch, output=output, poison=poison, launch=launch)

        kernel = ctx["kernels"][variant.kernel]
        plan = PLANS[variant.name]
        grid = grid_2d(n, m, plan.bn, plan.bm)
        args = (a, ctx["b_colmajor"] if variant.name == "corner_turning" else b, c,
                np.int32(m), np.int32(n), np.int32(k))
        smem = 0
        if variant.name == "dynamic_smem":
            from pmppbench import device  # noqa: PLC0415

            dev = device.current()
            tk, smem = dynamic_tile_depth(k, DYNAMIC_TILE, dev.max_threads_per_sm, dev.smem_per_sm,
                                          dev.smem_per_block_optin)
            if smem > dev.smem_per_block:
                kernel.allow_dynamic_smem(smem)  # above 48 KB needs the opt-in
            args += (np.int32(tk),)
        launch = Launch(kernel, grid, plan.block, args, dynamic_smem=smem)
        return Job(run=launch, output=output, poison=poison, launch=launch)

    # ---- model -----------------------------------------------------------------------
    def traffic(self, shape, variant):
        """bytes: the compulsory traffic 4(MK + KN + MN), each matrix once (the GB/s column and
        the roofline's intensity). extra: the variant's own modelled global loads and stores.

        naive reads A and B for every FMA: 8MNK + 4MN bytes, 2 FLOP per 8 B = 0.25 FLOP/B.
        A tiled kernel with a BM x BN tile of C per block reads all of A once per block column
        and all of B once per block row (out-of-range loads are skipped, not counted):
        4 (MK ceil(N/BN) + KN ceil(M/BM)) + 4MN. For square tiles T that is ~ 8MNK/T, T/4 FLOP/B
        (tiled16: 4, tiled32: 8, regtile4x4 (64x64): 16, 128x128 rungs: 32). coarsened's
        32 x 128 tile gives the course notes' 4MNK/T (1 + 1/COARSE_FACTOR) bytes, 2T/(4 (1 + 1/4)) = 12.8
        FLOP/B. corner_turning and dynamic_smem are T = 32 tilings. cuBLAS has no model here.
        best and its configurations: the same formula with the tiles of the configuration (for
        best, the one its job launched on this shape, else the rule's pick for 132 SMs); the
        partial tiles of split-K / stream-K (written once, read once, in L2) are not counted.
        """
        m, n, k = shape["m"], shape["n"], shape["k"]
        flops = 2 * m * n * k
        compulsory = 4 * (m * k + k * n + m * n)
        if variant.kernel is None:
            return Traffic(bytes=compulsory, flops=flops)
        if variant.name == "best" or variant.name in CONFIGS:
            cfg = CONFIGS.get(variant.name) or CHOSEN.get((m, n, k)) or choose(m, n, k, H200_SMS)
            plan = Plan(cfg.tiles.bm, cfg.tiles.bn, (cfg.tiles.threads,))
        else:
            plan = PLANS[variant.name]
        if plan.reuse:
            loads = m * k * -(-n // plan.bn) + k * n * -(-m // plan.bm)
        else:
            loads = 2 * m * n * k
        model = 4 * loads + 4 * m * n
        return Traffic(bytes=compulsory, flops=flops,
                       extra={"model_bytes": float(model), "model_AI_flop_per_B": flops / model})


def dynamic_tile_depth(k: int, tile: int, threads_per_sm: int, smem_per_sm: int, smem_per_block_optin: int
                       ) -> tuple[int, int]:
    """(tk, bytes) for dynamic_smem: the K depth of one phase and the shared memory it takes.

    The budget is what lets as many (tile x tile)-thread blocks be resident as the SM has
    threads for (2 on sm_90: 2048 / 1024), less the driver's 1 KB per block, capped by the
    per-block opt-in limit. The deepest tk (a multiple of the tile) that fits sets the number
    of phases; tk is then evened out over those phases so the last one is not mostly zeros
    (K = 1024 on an H200: 3 phases of 352 rather than 448 + 448 + 128).
    """
    blocks = max(1, threads_per_sm // (tile * tile))
    budget = min(smem_per_block_optin, smem_per_sm // blocks - SMEM_RESERVED_PER_BLOCK)
    bytes_per_k = 2 * tile * 4  # one column of As and one row of Bs, FP32
    tk_max = max(tile, budget // bytes_per_k // tile * tile)
    k_tiles = -(-k // tile)
    phases = -(-k_tiles * tile // tk_max)
    tk = -(-k_tiles // phases) * tile
    return tk, tk * bytes_per_k


def _loaded(ctx: dict, expression: str):
    """The kernel `expression`, compiled and loaded on first use (through the cache) and kept
    in ctx["kernels"] like the ones the runner loaded."""
    kernels = ctx["kernels"]
    if expression not in kernels:
        from pmppbench.compile import load_kernels  # noqa: PLC0415 (needs a GPU)

        kernels[expression] = load_kernels("gemm", [expression])[expression]
    return kernels[expression]


def config_launch(cfg: Config, shape, ctx: dict, sms: int) -> Launch:
    """The launch of configuration `cfg` on the shape set up in ctx. For streamk: the
    schedule for this GPU (its SMs times the blocks of this kernel an SM holds), the
    workspace of partial tiles and the arrival counters (zero; each launch leaves them zero),
    kept in ctx per configuration."""
    m, n, k = shape["m"], shape["n"], shape["k"]
    a, b, c = ctx["a"], ctx["b"], ctx["c"]
    kernel = _loaded(ctx, cfg.expression)
    t = cfg.tiles
    size_args = (np.int32(m), np.int32(n), np.int32(k))
    smem = cfg.dynamic_smem
    if smem > 48 * 1024:
        kernel.allow_dynamic_smem(smem)  # above 48 KB needs the opt-in
    if cfg.kernel in WHOLE_TILE_KERNELS:
        return Launch(kernel, grid_2d(n, m, t.bn, t.bm), (t.threads,), (a, b, c, *size_args), dynamic_smem=smem)
    from pmppbench.occupancy import api_active_blocks  # noqa: PLC0415

    slots = sms * max(1, api_active_blocks(kernel, t.threads, smem))
    sched = schedule_for(cfg, m, n, k, slots)
    key = ("streamk workspace", cfg.name)
    if key not in ctx:
        cp = cupy()
        ctx[key] = (cp.empty(max(1, 2 * sched.shared_blocks * t.bm * t.bn), dtype=cp.float32),
                    cp.zeros(max(1, sched.tiles - sched.dp_tiles), dtype=cp.int32))
    partials, arrivals = ctx[key]
    args = (a, b, c, *size_args, np.int32(sched.dp_tiles), np.int32(sched.per), np.int32(cfg.group_m),
            partials, arrivals)
    shown = replace(kernel, name=f"{kernel.name} ({sched.dp_tiles} whole tiles + {sched.shared_blocks} shared "
                                 f"blocks of {sched.per} K steps, group {cfg.group_m})")
    return Launch(shown, (sched.grid,), (t.threads,), args, dynamic_smem=smem)


WORKLOAD = Gemm()
