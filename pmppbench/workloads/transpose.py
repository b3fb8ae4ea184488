"""Matrix transpose B = A^T (PMPP 5.x-6.x, the course lab seeds/004 "矩阵转置").

A is M x N FP32 row-major, B is N x M row-major. The course's four kernels (copy, naive,
tiled<32>, tiled<33>), all with block (32, 32) and one element per thread, plus `coarsened`,
a 32 x 8 block moving a padded 64 x 64 tile with float4 loads and streaming float4 stores,
and `memcpy`, the driver's device-to-device copy of A into B: the ceiling for moving these
bytes and the roof of the "% of memcpy" column (docs/memory_roof.md). Every variant moves
8*M*N logical bytes.

`copy` and `memcpy` write A unchanged, so they have their own reference (A itself, M x N)
and can never pass as a transpose; the transposes share the reference A^T (N x M).
"""

from __future__ import annotations

import numpy as np

from pmppbench.check import Tolerance
from pmppbench.gpu import cupy
from pmppbench.workloads.base import Job, Launch, Traffic, Variant, Workload, check_row_tiles, grid_2d, kernel_job

TILE_DIM = 32  # the course's tile and block edge: block (32, 32), one element per thread
COARSENED_TILE = 64  # coarsened<64>: tile edge; its block is (32, COARSENED_ROWS)
COARSENED_ROWS = 8


class Transpose(Workload):
    name = "transpose"
    title = "Matrix transpose B = A^T (FP32)"
    dims = ("m", "n")
    variants = (
        Variant("copy", "copy", "B = A, same 32x32 block and one element per thread: the bandwidth reference"),
        Variant("naive", "naive", "one element per thread: coalesced reads, writes strided by M floats"),
        Variant("shared32", "tiled<32>", "32x32 shared tile, both sides coalesced; 32-way bank conflict on read-out"),
        Variant("padded33", "tiled<33>", "the same kernel with shared row stride 33: no bank conflicts"),
        Variant("coarsened", f"coarsened<{COARSENED_TILE}>",
                f"32x{COARSENED_ROWS} threads move a padded {COARSENED_TILE}x{COARSENED_TILE} tile, "
                f"{COARSENED_TILE * COARSENED_TILE // (32 * COARSENED_ROWS)} elements each as float4s, loads issued "
                "first; streaming loads and stores"),
        Variant("memcpy", None, "cudaMemcpyAsync device to device of A into B: the same 8*M*N bytes, the roof"),
    )
    # A transpose is a permutation: every output element is an input element, bit for bit.
    tolerance = Tolerance("exact")
    baseline = "naive"
    roof = "memcpy"  # "% of memcpy": the ceiling for moving these bytes, timed in the same run
    rate = "GB/s"

    def default_shape(self):
        return {"m": 4096, "n": 4096}

    def check_shapes(self):
        # Square, non-square with partial tiles on both edges, just past one tile either way,
        # the seed's 2x3 example, a single element, and one row / one column of 4097.
        return [{"m": m, "n": n} for m, n in
                ((4096, 4096), (1000, 3000), (33, 31), (31, 33), (2, 3), (1, 1), (1, 4097), (4097, 1))]

    def validate(self, shape):
        super().validate(shape)
        check_row_tiles(self.name, shape["m"], TILE_DIM)

    def device_bytes(self, shape):
        return 2 * 4 * shape["m"] * shape["n"]  # A and B

    def make_inputs(self, shape, rng):
        return {"a": rng.standard_normal((shape["m"], shape["n"]), dtype=np.float32)}

    def reference_key(self, variant):
        return "copy" if variant.name in ("copy", "memcpy") else "transpose"

    def reference(self, shape, inputs, variant):
        a = inputs["a"]
        return a if self.reference_key(variant) == "copy" else np.ascontiguousarray(a.T)

    def setup(self, shape, inputs, kernels):
        cp = cupy()
        m, n = shape["m"], shape["n"]
        # One output buffer serves every variant: read as N x M after a transpose, M x N after copy.
        return {"a": cp.asarray(inputs["a"]), "b": cp.empty(m * n, dtype=cp.float32), "kernels": kernels}

    def job(self, variant, shape, ctx):
        m, n = shape["m"], shape["n"]
        a, b = ctx["a"], ctx["b"]
        if variant.kernel is None:  # memcpy: the driver's device-to-device copy, on the current stream
            return Job(run=lambda: b.data.copy_from_device_async(a.data, 4 * m * n),
                       output=b.reshape(m, n).get, poison=lambda: b.fill(np.nan))
        grid, block = launch_geometry(variant, m, n)
        launch = Launch(ctx["kernels"][variant.kernel], grid, block, (a, b, np.uint64(m), np.uint64(n)))
        return kernel_job(launch, b, (m, n) if self.reference_key(variant) == "copy" else (n, m))

    def traffic(self, shape, variant):
        # Logical traffic: each element read once and written once, 4 bytes each way.
        return Traffic(bytes=8 * shape["m"] * shape["n"], flops=0)


def launch_geometry(variant: Variant, m: int, n: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """(grid, block) for one variant on an M x N input: x runs over A's columns, y over its rows."""
    if variant.name == "coarsened":
        return grid_2d(n, m, COARSENED_TILE, COARSENED_TILE), (TILE_DIM, COARSENED_ROWS)
    return grid_2d(n, m, TILE_DIM, TILE_DIM), (TILE_DIM, TILE_DIM)


WORKLOAD = Transpose()
