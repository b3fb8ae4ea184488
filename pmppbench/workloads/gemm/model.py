"""GEMM's traffic model: the compulsory bytes of the GB/s column and each variant's own
modelled global loads and stores (docs/gemm.md, "Two models to predict with")."""

from __future__ import annotations

from pmppbench.workloads.base import Traffic
from pmppbench.workloads.gemm.configs import Padding
from pmppbench.workloads.gemm.tiles import Cover, tile_count


def traffic(m: int, n: int, k: int, cover: Cover | None, elem: int = 4, padding: Padding | None = None) -> Traffic:
    """bytes: the compulsory traffic 4(MK + KN + MN), each matrix once (the GB/s column and
    the roofline's intensity; `elem`: bytes of an input element, 2 for BF16 and FP16, C is
    always FP32). extra: the modelled loads and stores of a kernel covering C
    with `cover` (None: no model, as for cuBLAS).

    naive reads A and B for every FMA: 8MNK + 4MN bytes, 2 FLOP per 8 B = 0.25 FLOP/B.
    A tiled kernel with a BM x BN tile of C per block reads all of A once per block column
    and all of B once per block row (out-of-range loads are skipped, not counted):
    4 (MK ceil(N/BN) + KN ceil(M/BM)) + 4MN. For square tiles T that is ~ 8MNK/T, T/4 FLOP/B
    (tiled16: 4, tiled32: 8, regtile4x4 (64x64): 16, 128x128 rungs: 32). coarsened's
    32 x 128 tile gives the course notes' 4MNK/T (1 + 1/COARSE_FACTOR) bytes, 2T/(4 (1 + 1/4)) = 12.8
    FLOP/B. corner_turning and dynamic_smem are T = 32 tilings. A configuration (best's
    choice) is the same formula with its tiles; the partial tiles of split-K / stream-K
    (written once, read once, in L2) are not counted. pipelined_padded (`padding`) loads
    every element of every tile, the clamped ones past C's edge too, over the padded K:
    4 tiles (BM + BN) kp, plus the bytes its copies move per call (Padding.copied_bytes).
    """
    flops = 2 * m * n * k
    compulsory = elem * (m * k + k * n) + 4 * m * n
    if cover is None:
        return Traffic(bytes=compulsory, flops=flops)
    if padding is not None:
        loads = tile_count(cover, m, n) * (cover.bm + cover.bn) * padding.kp
    elif cover.reuse:
        loads = m * k * -(-n // cover.bn) + k * n * -(-m // cover.bm)
    else:
        loads = 2 * m * n * k
    model = elem * loads + 4 * m * n + (padding.copied_bytes if padding is not None else 0)
    return Traffic(bytes=compulsory, flops=flops,
                   extra={"model_bytes": float(model), "model_AI_flop_per_B": flops / model})
