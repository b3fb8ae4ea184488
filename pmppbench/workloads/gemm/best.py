"""`best`: one configuration per shape, chosen by a pure rule of the shape and the GPU's SM
count (docs/gemm.md, "The rule"). The job that launches it and the traffic model of
its row both call `choose`, so they agree on every GPU."""

from __future__ import annotations

from pmppbench.workloads.base import Variant
from pmppbench.workloads.gemm.configs import Config, padding_for, schedule_for
from pmppbench.workloads.gemm.ladder import TUNED
from pmppbench.workloads.gemm.tiles import Tiles, tile_count

# The tile ladder for grids too small for the tuned tile, largest first. Each rung halves
# the FMAs of a block (and its reuse of what it loads), doubling the number of tiles.
SMALL_TILES = (
    Tiles(128, 128, 16, 32, 64, 2, 4, 4),  # 256 threads of 8 x 8
    Tiles(128, 64, 16, 32, 32, 1, 4, 4),  # 256 threads of 8 x 4
    Tiles(64, 64, 16, 32, 16, 1, 4, 4),  # 256 threads of 4 x 4
    Tiles(32, 64, 16, 16, 32, 1, 4, 4),  # 128 threads of 4 x 4
)
# The large-tile choice: the tuned tile with BK = 16, double_buffer's loop and an unchecked
# path for interior tiles (kernels_cu/gemm.cu, pipelined with FRAGS = false).
PIPELINED_TILES = Tiles(128, 256, 16, 64, 64, 4, 4, 4)
# The same loop on half the tile, where C's edge leaves the large tile's last wave nearly empty
# (4095 x 4097: 17 tile columns of 256, the last one column wide; docs/gemm-shapes.md).
HALF_TILES = Tiles(128, 128, 16, 32, 64, 2, 4, 4)
CHOICES = {
    "pipelined": Config("pipelined", PIPELINED_TILES, frags=False),
    # Where pipelined has no unchecked path: its unchecked loop on every tile over A and B
    # zero-padded by copies in the call, faster than the checked loop (docs/gemm.md, "Odd shapes").
    "pipelined padded": Config("pipelined", PIPELINED_TILES, frags=False, padded=True),
    "pipelined 128x128": Config("pipelined", HALF_TILES, frags=False),
    "pipelined 128x128 padded": Config("pipelined", HALF_TILES, frags=False, padded=True),
    "hybrid": Config("streamk", TUNED, "hybrid", group_m=8),
    **{f"streamk {t.bm}x{t.bn}": Config("streamk", t, "streamk") for t in SMALL_TILES},
    "whole 32x64": Config("streamk", SMALL_TILES[-1]),
}
PADDED = CHOICES["pipelined padded"]
WHOLE = {PIPELINED_TILES: ("pipelined", "pipelined padded"), HALF_TILES: ("pipelined 128x128", "pipelined 128x128 padded")}
# The kernel named here is the one `best` launches on large shapes (pipelined); on others
# the job loads the one `choose` names when first used (every one is in kernel_names()).
BEST = Variant("best", CHOICES["pipelined"].expression,
               "a configuration per shape (choose): pipelined 128x256x16 tiles (on zero-padded copies where "
               "K % 16 or N % 4 != 0), or streamk's tiles, split-K / stream-K, swizzle")

# The rule's constants, each read from the H200 sweeps (docs/gemm.md, "The rule" and
# "The large-tile loop"):
FULL_GRID = 0.9  # 128 x 256 tiles per SM from which that tile is used at all
SHARED_STEP_COST = 0.05  # a stream-K K step's extra cost over a data-parallel one
FIXUP_STEPS = 15  # the partial tiles' write, count and sum, in K steps of the tuned tile
STREAMK_TILE_TIME = 1.11  # streamk's whole 128 x 256 tile (BK = 8, checked loads) over pipelined's
HYBRID_MARGIN = 0.99  # hybrid must win by 1%, about the sweeps' spread, or whole tiles stay
MIN_STEPS_PER_SM = 16  # K steps of a smaller tile each SM must get for stream-K of it to pay
# pipelined_padded's copies may move at most this many bytes per FLOP of the product, so they
# cost less than the checked loop they replace (docs/gemm.md, "Odd shapes"). B's copy is
# about 4 / M bytes per FLOP: shapes with few rows keep the checked loop.
PAD_BYTES_PER_FLOP = 1 / 256
# A whole tile's rate against the 128 x 256 tile's, both one block an SM: the H200 tile sweep's
# double_buffer 128x128x16 (3.210 ms) against 128x256x8 (3.014 ms) at 4096^3, where both fill
# their last wave alike, 97% (results/h200/gemm-tuning.csv).
TILE_SPEED = {PIPELINED_TILES: 1.0, HALF_TILES: 3.014 / 3.210}


def whole_cost(t: Tiles, m: int, n: int, sms: int) -> float:
    """The modelled time of whole tiles `t`, one a block, in tile-times of the 128 x 256 tile:
    ceil(tiles / sms) waves, each a tile's share of 128 x 256 at TILE_SPEED."""
    area = t.bm * t.bn / (PIPELINED_TILES.bm * PIPELINED_TILES.bn)
    return -(-tile_count(t, m, n) // sms) * area / TILE_SPEED[t]


def hybrid_cost(m: int, n: int, k: int, sms: int) -> float:
    """The modelled time of the hybrid schedule of 128 x 256 tiles, in tile-times of
    `pipelined` (one whole tile's K loop there): every SM gets tiles / sms tiles of work,
    plus the stream-K steps' extra cost and the fixup, in streamk's own tile-times, which
    are STREAMK_TILE_TIME of pipelined's. Whole pipelined tiles take ceil(tiles / sms)."""
    s = schedule_for(CHOICES["hybrid"], m, n, k, sms)  # ~237 registers: one block per SM
    return STREAMK_TILE_TIME * (s.tiles / sms + (SHARED_STEP_COST * s.per + FIXUP_STEPS) / s.kt)


def choose(m: int, n: int, k: int, sms: int) -> Config:
    """best's rule for a GPU of `sms` SMs:

    1. At least FULL_GRID x sms 128 x 256 tiles: whole tiles of `pipelined` (BK = 16,
       unchecked interior tiles), 128 x 256 (the most FMAs per load; one block per SM is
       enough) or 128 x 128 where its waves finish first (`whole_cost`: C's edge can leave
       the large tile's last wave nearly empty); or `hybrid` (streamk: 128 x 256 whole tiles
       for all full waves but one, the rest dealt out stream-K, swizzled in groups of 8 tile
       rows), which takes `hybrid_cost`. Hybrid where it is HYBRID_MARGIN faster, else the
       whole tiles. Where those have no unchecked path (K % 16 != 0 or N % 4 != 0: rows of A
       or B that do not start on 16 bytes) and the copies that fix that move at most
       PAD_BYTES_PER_FLOP: pipelined_padded on zero-padded copies.
    2. Fewer: the largest tile of SMALL_TILES whose stream-K run gives each SM at least
       MIN_STEPS_PER_SM K steps -- every SM the same share of the work, whatever the tile
       count -- and, when even the smallest tile gives fewer, that tile whole, one block
       per tile: the K steps are too few to share.
    """
    tiles = tile_count(PIPELINED_TILES, m, n)
    if tiles >= FULL_GRID * sms:
        t = min(WHOLE, key=lambda t: (whole_cost(t, m, n, sms), -t.bn))  # ties to the large tile
        if hybrid_cost(m, n, k, sms) < HYBRID_MARGIN * whole_cost(t, m, n, sms):
            return CHOICES["hybrid"]
        plain, padded = WHOLE[t]
        pad = padding_for(t, m, n, k)
        if pad.b and pad.copied_bytes <= PAD_BYTES_PER_FLOP * 2 * m * n * k:
            return CHOICES[padded]
        return CHOICES[plain]
    for t in SMALL_TILES:
        if tile_count(t, m, n) * -(-k // t.bk) >= MIN_STEPS_PER_SM * sms:
            return CHOICES[f"streamk {t.bm}x{t.bn}"]
    return CHOICES["whole 32x64"]
