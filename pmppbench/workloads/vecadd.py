"""Vector add (PMPP 5.1): the memory-roof reference."""

from __future__ import annotations

import numpy as np

from pmppbench.check import Tolerance
from pmppbench.gpu import cupy
from pmppbench.protocol import Protocol
from pmppbench.workloads.base import Launch, Traffic, Variant, Workload, grid_1d, kernel_job

BLOCK = 256
BLOCKS_PER_SM = 8  # grid_stride: enough resident blocks to saturate memory, no more


class VecAdd(Workload):
    name = "vecadd"
    title = "Vector add C = A + B (FP32)"
    about = "Vector add C = A + B: scalar, float4, grid_stride (12 bytes per element)."
    dims = ("n",)
    dim_help = {"n": "Elements per vector."}
    protocol = Protocol(warmup=3, batches=5, reps=100)
    variants = (
        Variant("scalar", "scalar", "one element per thread, 256 threads per block, if (i < n)"),
        Variant("float4", "float4_add", "16-byte vector loads and stores, scalar tail for n % 4"),
        Variant("grid_stride", "grid_stride", "fixed grid of 8 blocks per SM striding over the array"),
    )
    # One FP32 add per element, correctly rounded on both sides: the result is exact.
    tolerance = Tolerance("exact")
    baseline = "scalar"
    rate = "GB/s"

    def default_shape(self):
        return {"n": 1 << 26}

    def check_shapes(self):
        return [{"n": 1}, {"n": 3}, {"n": 1000003}, {"n": 1 << 26}]

    def device_bytes(self, shape):
        return 3 * 4 * shape["n"]

    def make_inputs(self, shape, rng):
        n = shape["n"]
        return {"a": rng.standard_normal(n, dtype=np.float32), "b": rng.standard_normal(n, dtype=np.float32)}

    def reference(self, shape, inputs, variant):
        return inputs["a"] + inputs["b"]  # FP32 add on the CPU rounds exactly as the GPU does

    def setup(self, shape, inputs, kernels):
        cp = cupy()
        return {"a": cp.asarray(inputs["a"]), "b": cp.asarray(inputs["b"]),
                "c": cp.empty(shape["n"], dtype=cp.float32), "kernels": kernels}

    def job(self, variant, shape, ctx):
        from pmppbench import device  # noqa: PLC0415

        n = shape["n"]
        kernel = ctx["kernels"][variant.kernel]
        if variant.name == "float4":
            grid = grid_1d(max(n // 4, n % 4, 1), BLOCK)
        elif variant.name == "grid_stride":
            grid = (min(grid_1d(n, BLOCK)[0], BLOCKS_PER_SM * device.current().sm_count),)
        else:
            grid = grid_1d(n, BLOCK)
        a, b, c = ctx["a"], ctx["b"], ctx["c"]
        launch = Launch(kernel, grid, (BLOCK,), (a, b, c, np.uint64(n)))
        return kernel_job(launch, c)

    def traffic(self, shape, variant):
        n = shape["n"]
        return Traffic(bytes=12 * n, flops=n)


WORKLOAD = VecAdd()
