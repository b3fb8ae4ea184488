"""GEMM's check: normwise against a float64 product of the same inputs, on all of C or, for
large products, on whole sampled rows and columns of it (workloads/helpers.py)."""

from __future__ import annotations

import math

import numpy as np

from pmppbench.workloads.gemm import precision as prec
from pmppbench.workloads.helpers import UNIT_ROUNDOFF  # FP32's

TOLERANCE_FACTOR = 16
# Up to 4096^3 the float64 reference is one BLAS call of ~0.14 TFLOP on the host; above it,
# whole rows and columns of C are sampled.
FULL_CHECK_MAX_MNK = 4096 ** 3
SAMPLE_LINES = 64  # sampled rows and columns of C, each way (one per stratum)
# A sampled row or column of C is a whole line of thousands of elements, so one line at each
# edge is enough (and GEMM's indices stay below 2^30, far from a 32-bit wrap).
SAMPLE_EDGE = 1


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


def reference(a: np.ndarray, b: np.ndarray, picks: tuple | None) -> np.ndarray:
    """The float64 product of the FP32 inputs: all of C, or (picks = (rows, cols)) just the
    sampled rows and columns in helpers.take's layout, without forming the rest of C."""
    a, b = a.astype(np.float64), b.astype(np.float64)
    if picks is None:
        return a @ b
    rows, cols = picks
    return np.concatenate([(a[rows, :] @ b).ravel(), (a @ b[:, cols]).T.ravel()])


# ---- the tensor-core precisions (docs/tensor_cores.md, "The check") -----------------------
# The reference multiplies the inputs as rounded to the precision (precision.rounded), so input
# rounding is no error here. What is left is the product and the FP32 sum:
# - a product of two p-bit significands has at most 2p bits, exact in FP32's 24 when p <= 12:
#   TF32 and FP16 have p = 11, BF16 p = 8, so every product is exact (asserted below);
# - the tensor cores add the aligned products of one MMA with truncation, not rounding to
#   nearest (Fasi, Higham, Mikaitis and Pranesh, "Numerical behavior of NVIDIA tensor cores",
#   PeerJ CS 2021): up to 2u per addition instead of u, u = 2^-24.
# So the bound is the FP32 one with u doubled: 32 u sqrt(K). An FP16 or BF16 accumulator
# (u = 2^-11 or 2^-8) would be off by ~u sqrt(K) / 3, 30x to 300x more at K = 4096: FAIL.
TRUNCATION = 2


def rtol_for(k: int, precision: str) -> float:
    """The normwise bound for a K-term product in `precision` (fp32: rtol_for_k, unchanged)."""
    if precision == "fp32":
        return rtol_for_k(k)
    p = prec.MANTISSA_BITS[precision] + 1
    if 2 * p > 24:
        raise ValueError(f"{precision}: a product of two {p}-bit significands is not exact in FP32")
    return TRUNCATION * rtol_for_k(k)
