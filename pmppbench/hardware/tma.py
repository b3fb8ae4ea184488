"""The TMA tensor maps of the wgmma rungs (kernels_cu/gemm_wgmma.cuh): A and B described to
Hopper's copy engine once per shape, on the host, by the driver's cuTensorMapEncodeTiled.

The driver call goes through ctypes on libcuda, the library CuPy itself runs on: no other
package is needed. A map is 128 opaque bytes the kernel takes by value (a __grid_constant__
parameter); CuPy passes it as a pointer to those bytes (CPointer), which the driver copies
into the launch's parameters.

What the maps say (the kernel reads its tiles in the layout they produce):
- A (M x K, row-major): a 2-D tensor of K contiguous elements by M rows; a box of one 128-byte
  row of K (64 halves, or 32 TF32 words) by the block tile's 128 (M) rows (TF32: 256), so the
  128-byte swizzle applies.
- B (K x N, row-major): N contiguous by K rows; a box of one 128-byte row of N by as many K
  rows (64 x 64 halves, 32 x 32 TF32 words); the kernel loads 4 (or 8) boxes side by side for
  its 256 columns.
- Elements are 16-bit words (BF16, FP16) or FP32 words holding TF32 values (FLOAT32: the copy
  engine moves the bits as they are); the row stride in bytes must be a multiple of 16 (K and
  N multiples of 8: tensor.aligned), and elements past the tensor read as zero (the edges).
"""

from __future__ import annotations

import ctypes

import numpy as np

from pmppbench.errors import EnvironmentProblem
from pmppbench.hardware.gpu import driver_function

# cuda.h's enums (CUDA 12.0 on)
# Element kinds: the GEMM's precisions, and plain FP32 (the transpose's coarsened_tma).
DATA_TYPE = {"bf16": 9, "fp16": 6, "tf32": 7, "fp32": 7}  # CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, _FLOAT16, _FLOAT32
ELEMENT_BYTES = {"bf16": 2, "fp16": 2, "tf32": 4, "fp32": 4}
INTERLEAVE_NONE = 0
SWIZZLE_NONE = 0
SWIZZLE_128B = 3
L2_PROMOTION = {0: 0, 64: 1, 128: 2, 256: 3}  # bytes the L2 fetches around a miss -> CU_TENSOR_MAP_L2_PROMOTION_*
PROMOTION = 256  # every shipped map's
OOB_FILL_ZERO = 0  # CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE: elements past the tensor are zeros
MAP_BYTES = 128  # sizeof(CUtensorMap), 64-byte aligned
ROW_BYTES = 128  # gemm_wgmma.cuh: WG_ROW (the swizzle's span)
BOX_M = {"bf16": 128, "fp16": 128, "tf32": 256}  # WgElem::BM: the block tile's rows, one box of A


def row_elements(precision: str) -> int:
    """Elements in a 128-byte row: the k-tile (WgElem::BK) and B's box width (WgElem::BOX_N)."""
    return ROW_BYTES // ELEMENT_BYTES[precision]


def a_layout(m: int, k: int, precision: str) -> tuple[tuple[int, int], tuple[int], tuple[int, int]]:
    """(sizes, the row stride in bytes, box) of A's map, innermost first."""
    return (k, m), (ELEMENT_BYTES[precision] * k,), (row_elements(precision), BOX_M[precision])


def b_layout(k: int, n: int, precision: str) -> tuple[tuple[int, int], tuple[int], tuple[int, int]]:
    """(sizes, the row stride in bytes, box) of B's map, innermost first."""
    return (n, k), (ELEMENT_BYTES[precision] * n,), (row_elements(precision), row_elements(precision))


def check_layout(sizes, strides, box, precision: str, swizzle: bool = True) -> None:
    """What cuTensorMapEncodeTiled requires of these maps, said before the driver says less."""
    if any(s % 16 for s in strides):
        raise ValueError(f"TMA: row strides {strides} B must be multiples of 16")
    if swizzle and box[0] * ELEMENT_BYTES[precision] > ROW_BYTES:
        raise ValueError(f"TMA: box {box} too large for the 128-byte swizzle")
    if any(b > 256 for b in box) or box[0] * ELEMENT_BYTES[precision] % 16:
        raise ValueError(f"TMA: box {box} must be at most 256 a side and its rows a multiple of 16 bytes")
    if any(s < 1 or s >= 1 << 32 for s in sizes):
        raise ValueError(f"TMA: sizes {sizes} outside 1 .. 2^32 - 1")


def _encode():
    u32, u64 = ctypes.c_uint32, ctypes.c_uint64
    fn = driver_function("cuTensorMapEncodeTiled",
                         (ctypes.c_void_p, ctypes.c_int, u32, ctypes.c_void_p, ctypes.POINTER(u64), ctypes.POINTER(u64),
                          ctypes.POINTER(u32), ctypes.POINTER(u32), ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int))
    if fn is None:
        raise EnvironmentProblem("the TMA forms need the driver's cuTensorMapEncodeTiled (CUDA 12 or newer)")
    return fn


class TensorMap:
    """One encoded map: 128 bytes kept 64-byte aligned on the host, `arg` the kernel argument."""

    def __init__(self, precision: str, pointer: int, sizes, strides, box, swizzle: bool = True,
                 promotion: int = PROMOTION):
        """`swizzle`: the 128-byte swizzle (the wgmma rungs' and most transpose forms'), else none;
        `promotion`: the L2's fetch around a miss, in bytes (a key of L2_PROMOTION)."""
        check_layout(sizes, strides, box, precision, swizzle)
        self._buffer = np.zeros(MAP_BYTES + 64, dtype=np.uint8)
        start = -self._buffer.ctypes.data % 64
        self.words = self._buffer[start:start + MAP_BYTES]
        u32, u64 = ctypes.c_uint32, ctypes.c_uint64
        rank = len(sizes)
        result = _encode()(self.words.ctypes.data, DATA_TYPE[precision], rank, pointer, (u64 * rank)(*sizes),
                           (u64 * (rank - 1))(*strides), (u32 * rank)(*box), (u32 * rank)(*([1] * rank)),
                           INTERLEAVE_NONE, SWIZZLE_128B if swizzle else SWIZZLE_NONE, L2_PROMOTION[promotion],
                           OOB_FILL_ZERO)
        if result != 0:
            raise RuntimeError(f"cuTensorMapEncodeTiled failed (CUresult {result}) for sizes {sizes}, "
                               f"strides {strides}, box {box}")

    @property
    def arg(self):
        from cupy.cuda.function import CPointer  # noqa: PLC0415 (CuPy, lazily: gpu.py says why)

        return CPointer(self.words.ctypes.data)


class NoMap:
    """The zero map the kernel's path without TMA takes in its place (never read)."""

    def __init__(self):
        self.words = np.zeros(MAP_BYTES // 8, dtype=np.uint64)

    @property
    def arg(self):
        from cupy.cuda.function import CPointer  # noqa: PLC0415

        return CPointer(self.words.ctypes.data)


def maps(precision: str, a, b, m: int, n: int, k: int) -> tuple[TensorMap, TensorMap]:
    """A's and B's maps over the device arrays a (M x K) and b (K x N)."""
    return (TensorMap(precision, a.data.ptr, *a_layout(m, k, precision)),
            TensorMap(precision, b.data.ptr, *b_layout(k, n, precision)))
