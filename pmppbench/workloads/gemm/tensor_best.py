"""`best` on the tensor cores (`gemm --precision tf32,bf16,fp16`): one configuration of the
warp-specialized wgmma kernel (kernels_cu/gemm_wgmma.cuh, wgmma_ws_tc) per shape and GPU,
chosen by `choose`, a pure rule of the shape, the precision and the SM count; the job that
launches it and its row's traffic model both call it (docs/gemm-shapes.md).

Where the time goes at a shape that is not a multiple of the tile, and what the rule does:
- The last wave. A 128 x 256 tile at 3000^3 gives 24 x 12 = 288 tiles on 132 SMs: 2.2 waves
  run as 3, a quarter of the machine idle. The narrower tiles (128 x 192, 128 x 128) cut C
  into more, smaller pieces; the rule takes the tile whose waves, weighed by a tile's work and
  its speed against 256's (TILE_SPEED), finish first.
- Rows that TMA cannot read. TMA's row strides are multiples of 16 bytes: K or N not a
  multiple of 8 (BF16, FP16) or 4 (TF32) sends the rungs down their path without TMA, every
  thread storing one stage at a time. `best` copies the operand into rows of 16-byte strides
  (pad_copy, one pass over it) and gives TMA the copy with the true sizes: boxes past K or N
  still read zeros, as everywhere else.
Persistent blocks (one per SM, the next tile's loads under this one's epilogue) wherever the
tiles are more than the SMs; one tile a block where they are not. A GPU without wgmma (sm_80
to sm_89, sm_100 on: wgmma is sm_90a's alone) runs mma_sync, its fastest rung
(docs/tensor_cores.md: mma_wide's 226 registers allow one block an SM and lost to it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from pmppbench.hardware import tma
from pmppbench.hardware.gpu import cupy
from pmppbench.workloads.base import Launch, Variant, arch_meets
from pmppbench.workloads.gemm import precision as prec
from pmppbench.workloads.gemm.tiles import Cover
from pmppbench.workloads.helpers import MAX_GRID_Y, grid_2d, loaded

TILE_BM = {"tf32": 256, "bf16": 128, "fp16": 128}  # WgElem::BM (TF32's tile is turned: 256 x 128)
WIDTHS = {"tf32": (128,), "bf16": (256, 192, 128), "fp16": (256, 192, 128)}  # the tiles' BN each precision has
# A tile's rate against the 128 x 256 tile's (tiles of the same K, one block an SM): the
# narrower tiles read more of A a FLOP (A's 64 rows serve BN columns) and issue more, smaller
# MMAs. An estimate, not a measurement: configs/gemm_shapes.toml's run (and the tc_* names
# timed beside best) is what replaces it (docs/gemm-shapes.md).
TILE_SPEED = {256: 1.0, 192: 0.96, 128: 0.88}
THREADS = 384  # gemm_wgmma.cuh WS_THREADS: a producer and two consumer warpgroups
# gemm_wgmma.cuh WS_SMEM_BYTES: 4 stages of 48 KB (the narrower tiles leave part of each unused),
# 1024 bytes to align them, the full and empty mbarriers
SMEM_BYTES = 4 * 48 * 1024 + 1024 + 2 * 4 * 8
PAD_THREADS = 256  # pad_copy's block
PAD_KERNEL = {"tf32": "pad_copy<unsigned int>", "bf16": "pad_copy<unsigned short>", "fp16": "pad_copy<unsigned short>"}


@dataclass(frozen=True)
class TcConfig:
    """One way to run a tensor-core shape: wgmma_ws_tc with tiles BN wide (TF32: its 256 x 128
    tile), persistent or one tile a block; on copies of A and / or B made for TMA wherever the
    shape's K or N asks for them (needs_copy)."""

    bn: int
    persist: bool

    def expression(self, precision: str) -> str:
        """The kernel's NVRTC name expression (the rungs' own where BN = 256: one build)."""
        p = prec.TEMPLATE_ARG[precision]
        if self.bn == 256 or precision == "tf32":
            return f"wgmma_ws_tc<{p}, true{', true' if self.persist else ''}>"
        return f"wgmma_ws_tc<{p}, true, {'true' if self.persist else 'false'}, {self.bn}>"

    @property
    def name(self) -> str:
        """e.g. tc_persist_n192 (parse() reads it back)."""
        return f"tc_{'persist' if self.persist else 'ws'}_n{self.bn}"

    def cover(self, precision: str) -> Cover:
        return Cover(TILE_BM[precision], self.bn, (THREADS,))


_NAME = re.compile(r"tc_(ws|persist)_n(256|192|128)")


def parse(name: str) -> TcConfig | None:
    """The configuration a TcConfig.name names, or None."""
    m = _NAME.fullmatch(name)
    return None if m is None else TcConfig(int(m.group(2)), m.group(1) == "persist")


def row_step(precision: str) -> int:
    """Elements in 16 bytes: TMA's row strides are multiples of it."""
    return 16 // tma.ELEMENT_BYTES[precision]


def needs_copy(precision: str, k: int, n: int) -> tuple[bool, bool]:
    """(A, B): which operand's rows TMA cannot read as they are (K, N not a multiple of row_step)."""
    step = row_step(precision)
    return k % step != 0, n % step != 0


def copied_elements(precision: str, m: int, n: int, k: int) -> int:
    """The elements of the copies `best` makes for TMA on this shape (0 where it reads the inputs)."""
    copy_a, copy_b = needs_copy(precision, k, n)
    step = row_step(precision)
    return (m * -(-k // step) * step if copy_a else 0) + (k * -(-n // step) * step if copy_b else 0)


def tiles(precision: str, bn: int, m: int, n: int) -> int:
    c = TcConfig(bn, True).cover(precision)
    return -(-m // c.bm) * -(-n // c.bn)


def wave_cost(precision: str, bn: int, m: int, n: int, sms: int) -> float:
    """The time of the tiles' waves in 128 x 256 tile-times: ceil(tiles / SMs) waves, each a
    tile of bn / 256 the work at TILE_SPEED[bn]."""
    return -(-tiles(precision, bn, m, n) // sms) * (bn / 256) / TILE_SPEED[bn]


def choose(precision: str, m: int, n: int, k: int, sms: int) -> TcConfig:
    """best's rule on a GPU of `sms` SMs: the tile width whose waves finish first (ties to the
    wider), persistent where there are more tiles than SMs (copies for TMA where K or N is off)."""
    widths = WIDTHS[precision]
    bn = min(widths, key=lambda w: (wave_cost(precision, w, m, n, sms), -w))
    return TcConfig(bn, tiles(precision, bn, m, n) > sms)


def config_for(name: str, shape, device) -> TcConfig | None:
    """The configuration the variant named `name` runs on `shape` (a tensor precision): best's
    choice for the GPU (its SM count; None without the GPU's facts, and off Hopper, where best
    runs mma_sync's kernel), or the one the name names (TcConfig.name); None for the rungs."""
    if name == "best":
        if device is None or not on_hopper(device):
            return None
        return choose(prec.of(shape), shape["m"], shape["n"], shape["k"], device.sm_count)
    return parse(name)


def candidates(precision: str) -> list[TcConfig]:
    """Every configuration `choose` may name for `precision` (the kernels `compile` builds)."""
    return [TcConfig(bn, persist) for bn in WIDTHS[precision] for persist in (False, True)]


def padded_maps(precision: str, a, b, m: int, n: int, k: int, lda: int, ldb: int):
    """A's and B's TMA maps over (copies of) the operands with rows lda and ldb elements long
    (multiples of row_step): sizes M x K and K x N as ever, so the pad is never read."""
    size = tma.ELEMENT_BYTES[precision]
    row = tma.row_elements(precision)
    return (tma.TensorMap(precision, a.data.ptr, (k, m), (size * lda,), (row, tma.BOX_M[precision])),
            tma.TensorMap(precision, b.data.ptr, (n, k), (size * ldb,), (row, row)))


def on_hopper(device) -> bool:
    """Whether `device` runs the wgmma kernels (sm_90a: compute capability 9.0 alone)."""
    return arch_meets(device.compute_capability, "sm_90a")


def variant(precision: str) -> Variant:
    """The `best` row of a tensor precision's table (its kernel: the wide persistent one; the
    job loads the one `choose` names)."""
    return Variant("best", TcConfig(256 if precision != "tf32" else 128, True).expression(precision),
                   "a configuration per shape (tensor_best.choose): wgmma_ws's kernel with 128 x 256, 128 x 192 "
                   "or 128 x 128 tiles (TF32: 256 x 128), persistent past one wave, A and B copied to "
                   "16-byte rows for TMA where K or N is not; mma_sync's kernel on a GPU without wgmma",
                   needs="sm_80")


def config_variant(cfg: TcConfig) -> Variant:
    """A variant that runs `cfg` by name (not in the table; its kernel is per precision)."""
    return Variant(cfg.name, cfg.expression("bf16"), f"tensor-core configuration {cfg.name}: wgmma_ws_tc, "
                   f"BN = {cfg.bn}{', persistent' if cfg.persist else ''}, A and B copied for TMA where K or N asks",
                   needs="sm_90a")


def _pad_launch(ctx: dict, precision: str, src, rows: int, cols: int) -> tuple[Launch, object, int]:
    """pad_copy of `src` (rows x cols) into a buffer kept in ctx with rows of 16-byte strides:
    (the launch, the buffer, its row length)."""
    step = row_step(precision)
    ld = -(-cols // step) * step
    key = ("tma copy", id(src), ld)
    if key not in ctx:
        ctx[key] = cupy().empty((rows, ld), dtype=src.dtype)
    dst = ctx[key]
    grid = (-(-ld // step // PAD_THREADS), min(rows, MAX_GRID_Y))
    launch = Launch(loaded(ctx, "gemm", PAD_KERNEL[precision]), grid, (PAD_THREADS,),
                    (src, dst, np.int32(rows), np.int32(cols), np.int32(ld)))
    return launch, dst, ld


def launches(cfg: TcConfig, precision: str, shape, ctx: dict, sms: int) -> tuple[Launch, ...]:
    """Every launch of one call of `cfg`, its own kernel last: pad_copy of A and / or B where
    TMA cannot read them as they are (needs_copy), then wgmma_ws_tc on maps of what it reads."""
    m, n, k = shape["m"], shape["n"], shape["k"]
    a, b = ctx["a"], ctx["b"]
    copy_a, copy_b = needs_copy(precision, k, n)
    copies, lda, ldb = [], k, n
    if copy_a:
        launch, a, lda = _pad_launch(ctx, precision, a, m, k)
        copies.append(launch)
    if copy_b:
        launch, b, ldb = _pad_launch(ctx, precision, b, k, n)
        copies.append(launch)
    key = ("tma maps", copy_a, copy_b)
    if key not in ctx:
        ctx[key] = padded_maps(precision, a, b, m, n, k, lda, ldb)
    a_map, b_map = ctx[key]
    kernel = loaded(ctx, "gemm", cfg.expression(precision))
    kernel.allow_dynamic_smem(SMEM_BYTES)
    c = cfg.cover(precision)
    count = tiles(precision, cfg.bn, m, n)
    grid = (min(count, sms),) if cfg.persist else grid_2d(n, m, c.bn, c.bm)
    args = (a_map.arg, b_map.arg, a, b, ctx["c"], np.int32(m), np.int32(n), np.int32(k))
    return (*copies, Launch(kernel, grid, (THREADS,), args, dynamic_smem=SMEM_BYTES))
