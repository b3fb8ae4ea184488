"""The tensor-core rungs of `gemm --precision tf32,bf16,fp16` (kernels_cu/gemm_tc.cuh and
gemm_wgmma.cuh; docs/tensor_cores.md): their variants, the kernel each launches for a
precision and a shape, its arguments, how each covers C, and the cuBLAS row of the same
precision (cublasGemmEx through CuPy's binding, FP32 compute: 32F_FAST_TF32 for tf32)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from pmppbench.workloads.base import Variant
from pmppbench.workloads.gemm import precision as prec
from pmppbench.workloads.gemm import tensor_best
from pmppbench.hardware import tma
from pmppbench.workloads.gemm.tiles import Cover

WMMA = Variant("wmma", "wmma_tc<1>",
               "the warp-matrix API (wmma.load/mma/store): 64x64 tiles, 4 warps of 2x2 16x16 fragments, one "
               "shared stage", needs="sm_80")
MMA_SYNC = Variant("mma_sync", "mma_tc<1, true, 128, 3>",
                   "ldmatrix + mma.sync.m16n8k16, 128x128x32 tiles, 8 warps of 64x32, 3-stage cp.async, "
                   "padded rows (TF32: mma.sync.m16n8k8, k-tiles of 16 words, B by LDS.128)", needs="sm_80")
MMA_WIDE = Variant("mma_wide", "mma_tc<1, true, 256, 4>",
                   "mma_sync with 128x256 tiles, 64x64 warp tiles (32 MMAs per 8 ldmatrix) and 4 stages",
                   needs="sm_80")
WGMMA = Variant("wgmma", "wgmma_tc<1, true>",
                "Hopper's wgmma.mma_async.m64n256k16 from swizzled shared memory, 128x256x64 tiles, 2 warpgroups, "
                "4 stages loaded by TMA onto mbarriers (TF32: m64n128k8 on C^T = B^T A^T, B^T from registers)",
                needs="sm_90a")
WGMMA_WS = Variant("wgmma_ws", "wgmma_ws_tc<1, true>",
                   "wgmma with warp specialization: a TMA producer warpgroup and 2 consumer warpgroups on full/empty "
                   "mbarriers, setmaxnreg, no block barrier in the loop", needs="sm_90a")
WGMMA_PERSIST = Variant("wgmma_persist", "wgmma_ws_tc<1, true, true>",
                        "wgmma_ws with persistent blocks, one per SM looping over the tiles: the next tile's TMA "
                        "loads overlap this one's epilogue", needs="sm_90a")
TENSOR_RUNGS = (WMMA, MMA_SYNC, MMA_WIDE, WGMMA, WGMMA_WS, WGMMA_PERSIST)
# rung -> its template (gemm_wgmma.cuh) and the template arguments after the load path's
WGMMA_RUNGS = {"wgmma": ("wgmma_tc", ""), "wgmma_ws": ("wgmma_ws_tc", ""), "wgmma_persist": ("wgmma_ws_tc", ", true")}
PERSISTENT = {"wgmma_persist"}  # launched as min(tiles, SMs) blocks (persistent_grid)
# Which rungs run each precision: mma_tc is written for the 16-bit inputs; mma_sync's TF32 row is
# mma_tf32_tc (m16n8k8, its own fragments: gemm_tc.cuh), and mma_wide has none (one TF32 tile
# config is what the rung needs: every kernel is compiled for every CI target). The wgmma rungs
# run TF32 too (gemm_wgmma.cuh: C^T = B^T A^T, since wgmma reads TF32 only K-major).
RUNGS_FOR = {"tf32": (WMMA, MMA_SYNC, WGMMA, WGMMA_WS, WGMMA_PERSIST), "bf16": TENSOR_RUNGS, "fp16": TENSOR_RUNGS}
MMA_TILES = {"mma_sync": (128, 3), "mma_wide": (256, 4)}  # BN, STAGES of mma_tc
COVERS = {"wmma": Cover(64, 64, (128,)), **{v: Cover(128, bn, (256,)) for v, (bn, _) in MMA_TILES.items()},
          "wgmma": Cover(128, 256, (256,)), "wgmma_ws": Cover(128, 256, (384,)), "wgmma_persist": Cover(128, 256, (384,))}
# gemm_wgmma.cuh WG_SMEM_BYTES and WS_SMEM_BYTES: 4 stages of A (128 x 64 halves or 128 x 32
# TF32 words: 16 KB) and B (64 x 256 or 32 x 256: 32 KB), 1024 bytes to align them, 8-byte
# mbarriers: one a stage (full), two with warp specialization (full and empty)
WGMMA_SMEM = {"wgmma": 4 * (128 * 64 + 64 * 256) * 2 + 1024 + 4 * 8,
              "wgmma_ws": 4 * (128 * 64 + 64 * 256) * 2 + 1024 + 2 * 4 * 8,
              "wgmma_persist": 4 * (128 * 64 + 64 * 256) * 2 + 1024 + 2 * 4 * 8}


TF32_TILE = (256, 128)  # gemm_wgmma.cuh WgElem<0>: the wgmma rungs' TF32 tile, BM x BN (wg_tile_tf32 says why)


def cover(name: str, precision: str) -> Cover:
    """How rung `name` covers C in `precision`: its COVERS entry, with the wgmma rungs' TF32
    tile turned to 256 x 128."""
    c = COVERS[name]
    return replace(c, bm=TF32_TILE[0], bn=TF32_TILE[1]) if name in WGMMA_RUNGS and precision == "tf32" else c


def persistent_grid(shape, sms: int | None) -> tuple[int]:
    """wgmma_persist's 1-D grid: one block per SM (the kernel holds one: its shared memory), or
    one per tile when there are fewer tiles; without the GPU's SM count, one per tile."""
    c = cover("wgmma_persist", prec.of(shape))
    tiles = -(-shape["m"] // c.bm) * -(-shape["n"] // c.bn)
    return (tiles if sms is None else min(tiles, sms),)


def mma_smem(name: str) -> int:
    """gemm_tc.cuh MmaTiles::SMEM_BYTES: STAGES stages of A (128 x (32 + 8) halves) and B (32 x (BN + 8)).
    mma_tf32_tc's stages are the same bytes (128 x (16 + 4) and 16 x (128 + 8) words: static_assert there)."""
    bn, stages = MMA_TILES[name]
    return stages * (128 * 40 + 32 * (bn + 8)) * 2


def aligned(shape) -> bool:
    """mma_tc's 16-byte cp.async path: every 8-element chunk of a row of A and B is inside the
    matrix or outside it whole (K and N multiples of 8; CuPy's buffers are 256-byte aligned).
    The wgmma rungs' TMA path asks the same: TMA's row strides are multiples of 16 bytes (of
    4 elements would do for TF32; one rule keeps one set of kernels per rung and precision), and
    so does mma_tf32_tc's (4-word chunks, C stored 8 columns at a time)."""
    return shape["k"] % 8 == 0 and shape["n"] % 8 == 0


def kernel_for(variant: Variant, precision: str, shape=None) -> str:
    """The name expression `variant` launches for `precision` (and, for mma_tc and the wgmma
    rungs, the shape's load path; without a shape the aligned one)."""
    p = prec.TEMPLATE_ARG[precision]
    if variant.name == "wmma":
        return f"wmma_tc<{p}>"
    if variant.name == "mma_sync" and precision == "tf32":
        return f"mma_tf32_tc<{'true' if shape is None or aligned(shape) else 'false'}>"
    if variant.name in MMA_TILES:
        bn, stages = MMA_TILES[variant.name]
        return f"mma_tc<{p}, {'true' if shape is None or aligned(shape) else 'false'}, {bn}, {stages}>"
    if variant.name in WGMMA_RUNGS:
        template, more = WGMMA_RUNGS[variant.name]
        return f"{template}<{p}, {'true' if shape is None or aligned(shape) else 'false'}{more}>"
    raise ValueError(f"gemm: {variant.name} is no tensor-core rung")


def variants_for(precision: str, cublas: Variant) -> tuple[Variant, ...]:
    """The table of one tensor precision: its rungs (their kernels for it) and cuBLAS."""
    return (*(replace(v, kernel=kernel_for(v, precision)) for v in RUNGS_FOR[precision]), cublas)


def _kernels():
    """(rung, kernel expression, the row it serves) for every tensor-core kernel `compile`
    builds: each rung for each precision it runs, both load paths of mma_tc and the wgmma rungs,
    and best's narrower tiles (tensor_best.py), counted as wgmma_ws's (they need sm_90a as it does)."""
    for p, rungs in RUNGS_FOR.items():
        for v in rungs:
            yield v.name, kernel_for(v, p), f"{v.name} ({p})"
            if v.name in (*MMA_TILES, *WGMMA_RUNGS):
                yield v.name, kernel_for(v, p, {"k": 1, "n": 1}), f"{v.name} ({p}, K or N not a multiple of 8)"
    for p in RUNGS_FOR:
        for cfg in tensor_best.candidates(p):
            if cfg.bn != 256 and p != "tf32":
                yield "wgmma_ws", cfg.expression(p), f"best ({p}, 128 x {cfg.bn} tiles{', persistent' if cfg.persist else ''})"


def smem_bytes(name: str) -> int:
    """The dynamic shared memory a rung's kernel is launched with (wmma's is static: 0)."""
    return WGMMA_SMEM[name] if name in WGMMA_SMEM else mma_smem(name) if name in MMA_TILES else 0


def kernel_labels() -> dict[str, str]:
    """Every tensor-core kernel -> the row it serves, e.g. "mma_sync (fp16, K or N not a multiple of 8)"."""
    return {expression: label for _, expression, label in _kernels()}


def kernels_of(rung: str) -> list[str]:
    """Every kernel the rung named `rung` may launch (one per precision and load path)."""
    return [expression for name, expression, _ in _kernels() if name == rung]


def kernel_names() -> list[str]:
    return list(kernel_labels())


def kernel_args(name: str, precision: str, shape, ctx) -> tuple:
    """A rung's kernel arguments: (A, B, C, M, N, K), and for the wgmma rungs A's and B's TMA
    maps before them (zero maps on their path without TMA). The maps are made once per shape
    and kept in ctx beside the buffers they describe: the launch points at their bytes."""
    a, b, c = ctx["a"], ctx["b"], ctx["c"]
    m, n, k = shape["m"], shape["n"], shape["k"]
    args = (a, b, c, np.int32(m), np.int32(n), np.int32(k))
    if name not in WGMMA_RUNGS:
        return args
    if "tma_maps" not in ctx:
        ctx["tma_maps"] = tma.maps(precision, a, b, m, n, k) if aligned(shape) else (tma.NoMap(), tma.NoMap())
    return (*(mp.arg for mp in ctx["tma_maps"]), *args)


def cublas_call(precision: str, a, b, c, m: int, n: int, k: int):
    """C = A B by cublasGemmEx on CuPy's handle, on the current stream: row-major C = A B is
    column-major C^T = B^T A^T, so B goes first and M, N swap. FP32 output and compute;
    tf32 asks for 32F_FAST_TF32 (the inputs are already TF32 values)."""
    from cupy_backends.cuda.libs import cublas  # noqa: PLC0415 (CuPy, lazily: gpu.py says why)
    from cupy_backends.cuda.api import runtime  # noqa: PLC0415

    from pmppbench.hardware.gpu import cupy  # noqa: PLC0415

    cp = cupy()
    dtype = {"tf32": runtime.CUDA_R_32F, "bf16": runtime.CUDA_R_16BF, "fp16": runtime.CUDA_R_16F}[precision]
    compute = cublas.CUBLAS_COMPUTE_32F_FAST_TF32 if precision == "tf32" else cublas.CUBLAS_COMPUTE_32F
    scalars = np.array([1.0, 0.0], dtype=np.float32)  # alpha, beta on the host (CuPy's pointer mode)
    alpha, beta = scalars.ctypes.data, scalars.ctypes.data + 4
    handle = cp.cuda.device.get_cublas_handle()

    def run() -> None:
        cublas.setStream(handle, cp.cuda.get_current_stream().ptr)
        cublas.setPointerMode(handle, cublas.CUBLAS_POINTER_MODE_HOST)
        cublas.gemmEx(handle, cublas.CUBLAS_OP_N, cublas.CUBLAS_OP_N, n, m, k, alpha, b.data.ptr, dtype, n,
                      a.data.ptr, dtype, k, beta, c.data.ptr, runtime.CUDA_R_32F, n, compute,
                      cublas.CUBLAS_GEMM_DEFAULT)

    run.scalars = scalars  # alpha and beta live as long as the call
    return run
