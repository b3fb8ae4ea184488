"""What a learner's kernel --like an FP32 rung is given and must do (Variant.defines and
Variant.starter, docs/your-own-kernel.md): the rung's signature, its tile sizes as defines (the
template arguments of its kernel; a one-letter parameter under a readable name: T is TILE_WIDTH,
CF COARSE_FACTOR, R REG_TILE, since a one-letter define would rename every T in the learner's
file and in the CUDA headers), and a simple correct body that covers the rung's tile of C. The
tensor-core rungs are not a --like: their kernel and arguments change with the precision."""

from __future__ import annotations

from dataclasses import replace

from pmppbench.workloads.base import Starter, Variant
from pmppbench.workloads.gemm.tiles import Tiles

PARAMS = "const float* A, const float* B, float* C, int M, int N, int K"
LEAVES = ("C = A * B: C[i * N + j] = sum over k < K of A[i * K + k] * B[k * N + j] (A M x K, B K x N, C M x N, "
          "row-major; FP32, within 16 u sqrt(K) of the exact product's magnitude)")


def _dot(b_at: str) -> str:
    return ("            float acc = 0.0f;\n"
            f"            for (int k = 0; k < K; ++k) acc = fmaf(A[(size_t)row * K + k], {b_at}, acc);\n"
            "            C[(size_t)row * N + col] = acc;\n")


def tile_body(bm: str, bn: str, b_at: str = "B[(size_t)k * N + col]") -> str:
    """Every element of the block's bm x bn tile of C, shared out over the block's threads."""
    return (f"    // the block's {bm} x {bn} tile of C, each thread a strided share of it, one dot product each\n"
            "    int threads = blockDim.x * blockDim.y;\n"
            f"    for (int e = threadIdx.y * blockDim.x + threadIdx.x; e < {bm} * {bn}; e += threads) {{\n"
            f"        int row = blockIdx.y * {bm} + e / {bn}, col = blockIdx.x * {bn} + e % {bn};\n"
            "        if (row < M && col < N) {\n" + _dot(b_at) + "        }\n    }\n")


def _tiled(grid: str, bm: str, bn: str, **kw) -> Starter:
    return Starter(kw.pop("params", PARAMS), grid, LEAVES, tile_body(bm, bn, kw.pop("b_at", "B[(size_t)k * N + col]")),
                   **kw)


NAIVE = Starter(PARAMS, "ceil(N / 16) x ceil(M / 16) blocks of 16 x 16 threads: one thread per element of C", LEAVES,
                "    int row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;\n"
                "    if (row < M && col < N) {\n"
                "        float acc = 0.0f;\n"
                "        for (int k = 0; k < K; ++k) acc = fmaf(A[(size_t)row * K + k], B[(size_t)k * N + col], acc);\n"
                "        C[(size_t)row * N + col] = acc;\n"
                "    }\n")
SQUARE = "ceil(N / TILE_WIDTH) x ceil(M / TILE_WIDTH) blocks: one per TILE_WIDTH x TILE_WIDTH tile of C"
TILED = _tiled(SQUARE, "TILE_WIDTH", "TILE_WIDTH", block=("TILE_WIDTH", "TILE_WIDTH"))
COARSENED = _tiled("ceil(N / (TILE_WIDTH * COARSE_FACTOR)) x ceil(M / TILE_WIDTH) blocks: one per COARSE_FACTOR "
                   "adjacent TILE_WIDTH x TILE_WIDTH tiles of C along a row", "TILE_WIDTH",
                   "(TILE_WIDTH * COARSE_FACTOR)", block=("TILE_WIDTH", "TILE_WIDTH"))
REGTILE = _tiled("ceil(N / (16 * REG_TILE)) x ceil(M / (16 * REG_TILE)) blocks of 16 x 16 threads: one per "
                 "16 REG_TILE x 16 REG_TILE tile of C", "(16 * REG_TILE)", "(16 * REG_TILE)")
CORNER_TURNING = _tiled(SQUARE + "; B comes column-major: B[k][j] = Bcm[j * K + k]", "TILE_WIDTH", "TILE_WIDTH",
                        params=PARAMS.replace("const float* B", "const float* Bcm"),
                        b_at="Bcm[(size_t)col * K + k]", block=("TILE_WIDTH", "TILE_WIDTH"))
DYNAMIC_SMEM = _tiled(SQUARE + "; tk: the K depth of a phase, with 2 * TILE_WIDTH * tk floats of dynamic shared "
                      "memory (extern __shared__ float tiles[])", "TILE_WIDTH", "TILE_WIDTH",
                      params=PARAMS + ", int tk", block=("TILE_WIDTH", "TILE_WIDTH"))
BLOCK_TILES = _tiled("ceil(N / BN) x ceil(M / BM) blocks of 32 (BM / WM) (BN / WN) threads: one per BM x BN tile of C",
                     "BM", "BN")

BY_NAME = {"naive": (NAIVE, ()), "tiled16": (TILED, (("TILE_WIDTH", 16),)), "tiled32": (TILED, (("TILE_WIDTH", 32),)),
           "coarsened": (COARSENED, None), "regtile2x2": (REGTILE, (("REG_TILE", 2),)),
           "regtile4x4": (REGTILE, (("REG_TILE", 4),)), "corner_turning": (CORNER_TURNING, (("TILE_WIDTH", 32),)),
           "dynamic_smem": (DYNAMIC_SMEM, None)}


def tile_defines(tiles: Tiles) -> tuple[tuple[str, int], ...]:
    return tuple((name.upper(), getattr(tiles, name)) for name in ("bm", "bn", "bk", "wm", "wn", "wniter", "tm", "tn"))


def given(variant: Variant, coarse: tuple[int, int], dynamic_tile: int, rung_tiles: dict) -> Variant:
    """`variant` with what a learner's kernel --like it is given: its defines and its starter."""
    if variant.name in rung_tiles:
        return replace(variant, defines=tile_defines(rung_tiles[variant.name][1]), starter=BLOCK_TILES)
    starter, defines = BY_NAME[variant.name]
    if variant.name == "coarsened":
        defines = (("TILE_WIDTH", coarse[0]), ("COARSE_FACTOR", coarse[1]))
    elif variant.name == "dynamic_smem":
        defines = (("TILE_WIDTH", dynamic_tile),)
    return replace(variant, defines=defines, starter=starter)
