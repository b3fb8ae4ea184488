"""GEMM's input precisions (`--precision fp32,tf32,bf16,fp16`): how the FP32 inputs are
rounded to each, how they are stored on the device, and which kernel template argument
names them (kernels_cu/gemm_tc.cuh). C is FP32 in every precision (FP32 accumulation).

Rounding is to nearest, ties to even, on the FP32 bit pattern (NumPy has no BF16 or TF32):
TF32 keeps FP32's 8 exponent bits and the top 10 of its 23 mantissa bits (the FP32 word
with its low 13 bits zero, as the tensor cores read it), BF16 the top 7 (the FP32 word's
upper half), FP16 is NumPy's float16 (5 exponent bits, 10 mantissa bits; the inputs'
normal values stay far inside its range).
"""

from __future__ import annotations

import numpy as np

from pmppbench.hardware.archs import PRECISIONS, precision_of

TENSOR = PRECISIONS[1:]  # the tensor-core precisions
# Mantissa bits kept (without the implicit one): the unit roundoff is 2^-(bits + 1).
MANTISSA_BITS = {"fp32": 23, "tf32": 10, "bf16": 7, "fp16": 10}
ELEMENT_BYTES = {"fp32": 4, "tf32": 4, "bf16": 2, "fp16": 2}  # an input element on the device
# The kernels' template argument (gemm_tc.cuh: P).
TEMPLATE_ARG = {"tf32": 0, "bf16": 1, "fp16": 2}


of = precision_of  # a shape without the key is FP32: today's table, labels and rows unchanged


def unit_roundoff(precision: str) -> float:
    return 2.0 ** -(MANTISSA_BITS[precision] + 1)


def _round_bits(x: np.ndarray, drop: int) -> np.ndarray:
    """x's FP32 words rounded to nearest even at bit `drop` (the low `drop` bits zero after)."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    # finite values only (the inputs are normal): the largest word, 0xFF7FFFFF, plus the
    # rounding increment stays below 2^32, so uint32 arithmetic cannot wrap
    lsb = (bits >> np.uint32(drop)) & np.uint32(1)
    out = bits + np.uint32((1 << (drop - 1)) - 1)
    out += lsb
    out &= np.uint32(~((1 << drop) - 1) & 0xFFFFFFFF)
    return out


def rounded(x: np.ndarray, precision: str) -> np.ndarray:
    """x (FP32) rounded to `precision`, as FP32 values (exact: every value of the narrower
    formats is an FP32 value). The CPU reference multiplies these."""
    if precision == "fp32":
        return x
    if precision == "fp16":
        return x.astype(np.float16).astype(np.float32)
    return _round_bits(x, 23 - MANTISSA_BITS[precision]).view(np.float32).reshape(x.shape)


def stored(x: np.ndarray, precision: str) -> np.ndarray:
    """How the kernels read x rounded to `precision`: FP32 words (fp32, tf32), the upper
    16 bits of the FP32 word as uint16 (bf16), IEEE half (fp16)."""
    r = rounded(x, precision)
    if precision == "bf16":
        return (r.view(np.uint32) >> 16).astype(np.uint16)
    if precision == "fp16":
        return r.astype(np.float16)
    return r
