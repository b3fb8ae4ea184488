"""How GEMM's kernels are launched: a rung's 2-D grid, dynamic_smem's K depth from the
device's shared memory, and a configuration's grid, workspace and schedule arguments (and,
for pipelined_padded, the pad_rows copies before it)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from pmppbench.hardware import occupancy
from pmppbench.hardware.gpu import cupy
from pmppbench.workloads.base import Launch
from pmppbench.workloads.gemm.configs import WHOLE_TILE_KERNELS, Config, padding_for, schedule_for
from pmppbench.workloads.gemm.tiles import STATIC_SMEM_LIMIT
from pmppbench.workloads.helpers import MAX_GRID_Y, grid_2d, loaded

SMEM_RESERVED_PER_BLOCK = 1024  # shared memory the driver keeps per block (sm_80 and later)
PAD_KERNEL = "pad_rows"  # pipelined_padded's copies (kernels_cu/gemm.cu)
PAD_THREADS = 256


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


def pad_grid(rows_out: int, ld: int) -> tuple[int, int]:
    """pad_rows' grid: a thread per float4 of a row, rows strided over at most 65535 blocks."""
    return -(-ld // 4 // PAD_THREADS), min(rows_out, MAX_GRID_Y)


def pad_launch(ctx: dict, src, dst, rows: int, cols: int, rows_out: int, ld: int) -> Launch:
    return Launch(loaded(ctx, "gemm", PAD_KERNEL), pad_grid(rows_out, ld), (PAD_THREADS,),
                  (src, dst, np.int32(rows), np.int32(cols), np.int32(rows_out), np.int32(ld)))


def config_launches(cfg: Config, shape, ctx: dict, sms: int) -> tuple[Launch, ...]:
    """Every launch of one call of `cfg`, the configuration's own kernel last. One, except
    for pipelined_padded where K % BK != 0 or N % 4 != 0: pad_rows copies A (M x K to M x
    kp) and / or B (K x N to kp x np) into buffers kept in ctx, then the kernel reads them
    (M, N, kp and np its size arguments)."""
    if not cfg.padded:
        return (config_launch(cfg, shape, ctx, sms),)
    m, n, k = shape["m"], shape["n"], shape["k"]
    pad = padding_for(cfg.tiles, m, n, k)
    key = ("padded operands", pad)
    if key not in ctx:
        cp = cupy()
        ctx[key] = (cp.empty(max(pad.a_floats, 1), dtype=cp.float32), cp.empty(max(pad.b_floats, 1), dtype=cp.float32))
    ap, bp = ctx[key]
    copies = []
    if pad.a:
        copies.append(pad_launch(ctx, ctx["a"], ap, m, k, m, pad.kp))
    if pad.b:
        copies.append(pad_launch(ctx, ctx["b"], bp, k, n, pad.kp, pad.np))
    t = cfg.tiles
    args = (ap if pad.a else ctx["a"], bp if pad.b else ctx["b"], ctx["c"],
            *(np.int32(x) for x in (m, n, pad.kp, pad.np)))
    gemm = Launch(config_kernel(cfg, ctx), grid_2d(n, m, t.bn, t.bm), (t.threads,), args, dynamic_smem=cfg.dynamic_smem)
    return (*copies, gemm)


def config_kernel(cfg: Config, ctx: dict):
    """The configuration's kernel, loaded, its dynamic shared memory above 48 KB opted in."""
    kernel = loaded(ctx, "gemm", cfg.expression)
    if cfg.dynamic_smem > STATIC_SMEM_LIMIT:
        kernel.allow_dynamic_smem(cfg.dynamic_smem)
    return kernel


def config_launch(cfg: Config, shape, ctx: dict, sms: int) -> Launch:
    """The one launch of configuration `cfg` (not pipelined_padded: config_launches) on the
    shape set up in ctx. For streamk: the
    schedule for this GPU (its SMs times the blocks of this kernel an SM holds), the
    workspace of partial tiles and the arrival counters (zero; each launch leaves them zero),
    kept in ctx per configuration."""
    if cfg.padded:
        raise ValueError(f"{cfg.name}: a call of several launches (config_launches)")
    m, n, k = shape["m"], shape["n"], shape["k"]
    a, b, c = ctx["a"], ctx["b"], ctx["c"]
    kernel = config_kernel(cfg, ctx)
    t = cfg.tiles
    size_args = (np.int32(m), np.int32(n), np.int32(k))
    smem = cfg.dynamic_smem
    if cfg.kernel in WHOLE_TILE_KERNELS:
        return Launch(kernel, grid_2d(n, m, t.bn, t.bm), (t.threads,), (a, b, c, *size_args), dynamic_smem=smem)
    slots = sms * max(1, occupancy.api_active_blocks(kernel, t.threads, smem))
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
