"""The ladder's rungs: their variants and how each covers C (the rungs are described in
docs/gemm.md; the kernels are in kernels_cu/gemm.cu and the headers it includes). The tile
sweep's candidates are a study (studies/gemm/tuning.py)."""

from __future__ import annotations

from pmppbench.workloads.base import Variant
from pmppbench.workloads.gemm import starters, tensor
from pmppbench.workloads.gemm.tiles import Cover, Tiles

COARSE_TILE, COARSE_FACTOR = 32, 4  # coarsened<32, 4>: the course notes' TILE_WIDTH and COARSE_FACTOR
DYNAMIC_TILE = 32  # dynamic_smem<32>: the C tile; the K depth of a phase is picked at run time

# The register-tiled rungs. blocktile8x8 is kernel 6 of Simon Boehm's public SGEMM worklog
# (each thread 8x8 contiguous), warptile the structure of its kernel 10 with 4x4 pieces in
# 32 x 64 warp tiles, double_buffer the same tiles with two shared stages, cp_async with a
# 3-stage cp.async pipeline; tuned is the sweep's pick (docs/gemm.md, "Tuning"): more
# FMAs per shared load at the price of one block per SM.
RUNG_TILES = {
    "blocktile8x8": ("warptile", Tiles(128, 128, 8, 16, 128, 1, 8, 8)),
    "warptile": ("warptile", Tiles(128, 128, 8, 32, 64, 2, 4, 4)),
    "double_buffer": ("double_buffer", Tiles(128, 128, 8, 32, 64, 2, 4, 4)),
    "cp_async": ("cp_async", Tiles(128, 128, 8, 32, 64, 2, 4, 4)),
    "tuned": ("double_buffer", Tiles(128, 256, 8, 64, 64, 4, 4, 4)),
}
TUNED = RUNG_TILES["tuned"][1]

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
)
# What a learner's kernel --like each rung is given: its defines and its starter (gemm/starters.py).
RUNGS = tuple(starters.given(v, (COARSE_TILE, COARSE_FACTOR), DYNAMIC_TILE, RUNG_TILES) for v in RUNGS)
CUBLAS = Variant("cublas", None, "cupy.matmul on the same FP32 data: cuBLAS SGEMM (no TF32 unless CUPY_TF32=1)")

def _covers() -> dict[str, Cover]:
    covers = {
        "naive": Cover(16, 16, (16, 16), reuse=False),
        "tiled16": Cover(16, 16, (16, 16)),
        "tiled32": Cover(32, 32, (32, 32)),
        "coarsened": Cover(COARSE_TILE, COARSE_TILE * COARSE_FACTOR, (COARSE_TILE, COARSE_TILE)),
        "regtile2x2": Cover(32, 32, (16, 16)),
        "regtile4x4": Cover(64, 64, (16, 16)),
        "corner_turning": Cover(32, 32, (32, 32)),
        "dynamic_smem": Cover(DYNAMIC_TILE, DYNAMIC_TILE, (DYNAMIC_TILE, DYNAMIC_TILE)),
    }
    covers.update({name: Cover.of(t) for name, (_, t) in RUNG_TILES.items()})
    covers.update(tensor.COVERS)  # the tensor-core rungs (gemm_tc.cuh)
    return covers


COVERS = _covers()  # variant name -> how it covers C, for every rung (the tile sweep's: studies/gemm/tuning.py)
MIN_TILE_ROWS = min(c.bm for c in COVERS.values())  # 16 (naive, tiled16): C's row tiles run along gridDim.y
