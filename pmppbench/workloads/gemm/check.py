"""GEMM's check: normwise against a float64 product of the same inputs, on all of C or, for
large products, on whole sampled rows and columns of it (workloads/helpers.py)."""

from __future__ import annotations

import math

import numpy as np

UNIT_ROUNDOFF = 2.0 ** -24  # FP32
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
