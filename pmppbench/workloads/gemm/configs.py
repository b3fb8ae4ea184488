"""GEMM configurations: a kernel, its tiles and a schedule, i.e. how the tiles and K steps
of C are dealt out to blocks (kernels_cu/gemm.cu: pipelined, pipelined_padded, streamk).
`best` chooses one per shape (best.py); the studies run any of them by name."""

from __future__ import annotations

import re
from dataclasses import dataclass

from pmppbench.workloads.base import Variant
from pmppbench.workloads.gemm.tiles import STATIC_SMEM_LIMIT, Tiles, tile_count

SCHEDULES = ("dp", "split", "streamk", "hybrid")
WHOLE_TILE_KERNELS = ("double_buffer", "pipelined")  # one whole tile per block, a 2D grid
PREFIX = {"double_buffer": "db", "pipelined": "pl", "streamk": "sk"}


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
    padded (pipelined without frags): the kernel pipelined_padded, every tile through the
    unchecked loop on A and B zero-padded to K % BK == 0 and N % 4 == 0; a call copies them
    first (pad_rows) where the shape is not so already (`Padding`).
    """

    kernel: str
    tiles: Tiles
    schedule: str = "dp"
    split: int = 1
    group_m: int = 1
    async_b: bool = False
    checked: bool = False
    frags: bool = True
    padded: bool = False

    def __post_init__(self):
        if self.kernel not in WHOLE_TILE_KERNELS + ("streamk",) or self.schedule not in SCHEDULES:
            raise ValueError(f"bad config {self}")
        if self.kernel in WHOLE_TILE_KERNELS and (self.schedule, self.group_m, self.async_b) != ("dp", 1, False):
            raise ValueError(f"{self.kernel} has one schedule: a whole tile per block in blockIdx order")
        if (self.checked or not self.frags or self.padded) and self.kernel != "pipelined":
            raise ValueError("only pipelined has an unchecked interior path and fragment buffers to turn off")
        if self.padded and (self.checked or self.frags):
            raise ValueError("pipelined_padded is the unchecked loop without fragment double-buffering")
        if self.schedule != "split":
            object.__setattr__(self, "split", 1)  # only split-K has runs to count: one name, one config

    @property
    def expression(self) -> str:
        """The NVRTC name expression of the kernel it launches."""
        if self.padded:
            return self.tiles.kernel("pipelined_padded")
        if self.kernel == "pipelined":
            return (self.tiles.kernel("pipelined")[:-1]
                    + f", {'false' if self.checked else 'true'}, {'true' if self.frags else 'false'}>")
        if self.kernel in WHOLE_TILE_KERNELS:
            return self.tiles.kernel(self.kernel)
        return self.tiles.kernel("streamk")[:-1] + f", {'true' if self.async_b else 'false'}>"

    @property
    def name(self) -> str:
        """e.g. sk_128x256x8_w64x64_i4_t4x4_hybrid_g8; `ab` marks B by cp.async; for
        pipelined `chk` no interior path, `nf` no fragment double-buffering, `pad`
        pipelined_padded (parse() reads it back)."""
        sched = f"split{self.split}" if self.schedule == "split" else self.schedule
        return (f"{PREFIX[self.kernel]}_{self.tiles.tag()}{'_ab' if self.async_b else ''}"
                f"{'_chk' if self.checked else ''}{'_nf' if not self.frags else ''}{'_pad' if self.padded else ''}"
                + ("" if self.kernel in WHOLE_TILE_KERNELS else f"_{sched}_g{self.group_m}"))

    @property
    def dynamic_smem(self) -> int:
        """streamk's and pipelined's two stages are static shared memory when they fit in
        48 KB, else dynamic (the kernels' STATIC)."""
        two = self.tiles.smem_bytes(2)
        return two if self.kernel in ("streamk", "pipelined") and two > STATIC_SMEM_LIMIT else 0

    def describe(self) -> str:
        sched = {"dp": "a whole tile per block", "split": f"split-K x{self.split}", "streamk": "stream-K",
                 "hybrid": "whole tiles, then stream-K for the last two waves"}[self.schedule]
        t = self.tiles
        return (f"{self.kernel} {t.bm}x{t.bn}x{t.bk} tiles, {sched}"
                + (f", swizzle {self.group_m}" if self.group_m > 1 else "")
                + (", B by cp.async" if self.async_b else "")
                + (", no unchecked interior path" if self.checked else "")
                + (", single fragment buffer" if self.kernel == "pipelined" and not self.frags else "")
                + (", every tile unchecked on A and B zero-padded (K to BK, N to 4; where they are not so, "
                   "pad_rows copies them in the call: 2-3 launches)" if self.padded else ""))

    def variant(self) -> Variant:
        """A variant that runs this configuration by name (not in the table)."""
        return Variant(self.name, self.expression, self.describe())


_NAME = re.compile(r"(db|pl|sk)_(\d+)x(\d+)x(\d+)_w(\d+)x(\d+)_i(\d+)_t(\d+)x(\d+)(_ab)?(_chk)?(_nf)?(_pad)?"
                   r"(?:_(dp|streamk|hybrid|split(\d+))_g(\d+))?")


def parse(name: str) -> Config | None:
    """The configuration a Config.name names, or None for any other name: a job by name
    needs nothing but the name (no table of registered configurations)."""
    m = _NAME.fullmatch(name)
    if not m:
        return None
    prefix, *sizes = m.groups()[:9]
    ab, chk, nf, pad, sched, split, group = m.groups()[9:]
    kernel = {v: k for k, v in PREFIX.items()}[prefix]
    if (kernel == "streamk") != (sched is not None):
        return None
    try:
        cfg = Config(kernel, Tiles(*map(int, sizes)), "split" if split else (sched or "dp"), int(split or 1),
                     int(group or 1), bool(ab), bool(chk), not nf, bool(pad))
    except ValueError:
        return None
    return cfg if cfg.name == name else None


@dataclass(frozen=True)
class Padding:
    """pipelined_padded's operands on an M x N x K product: A as M x kp, B as kp x np (kp: K
    rounded up to BK, np: N rounded up to 4), zero beyond K and N. `a` / `b`: that operand
    is a copy made by pad_rows in each call (its rows do not start on 16 bytes, or K has a
    partial step); otherwise the input itself already is that matrix."""

    m: int
    n: int
    k: int
    kp: int
    np: int
    a: bool
    b: bool

    @property
    def a_floats(self) -> int:
        """The floats of A's padded copy (0: no copy)."""
        return self.m * self.kp if self.a else 0

    @property
    def b_floats(self) -> int:
        """The floats of B's padded copy (0: no copy)."""
        return self.kp * self.np if self.b else 0

    @property
    def copied_bytes(self) -> int:
        """What the copies move per call: each copied operand read once, its padded form
        written once (FP32)."""
        return 4 * ((self.m * self.k if self.a else 0) + self.a_floats + (self.k * self.n if self.b else 0) + self.b_floats)


def padding_for(tiles: Tiles, m: int, n: int, k: int) -> Padding:
    kp, np_ = -(-k // tiles.bk) * tiles.bk, -(-n // 4) * 4
    return Padding(m, n, k, kp, np_, a=kp != k, b=kp != k or np_ != n)


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
    tiles = tile_count(t, m, n)
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
