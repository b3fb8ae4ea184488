"""Vector add (PMPP 5.1): the memory-roof reference.

Index paths: `scalar` is a template on its index type, `int` (the course's) while
N + 256 fits in 31 bits and `long long` beyond; the host picks per N (index_type). The check
shapes include N = 2^31 + 7, on the 64-bit path; above SAMPLE_ABOVE elements the inputs are
repeated random blocks (helpers.repeated_random) and the check is exact on sampled elements.
"""

from __future__ import annotations

import numpy as np

from pmppbench.measure.check import Tolerance
from pmppbench.hardware.gpu import cupy
from pmppbench.measure.protocol import Protocol
from pmppbench.workloads.base import Launch, Traffic, Variant, Workload
from pmppbench.workloads.helpers import (
    SAMPLE, checked_indices, device_context, grid_1d, index_arg, index_type, indexed_kernel, launch_job, per_thread, random_array,
    repeated_random, upload_sample, with_wide_paths,
)

BLOCK = 256
BLOCKS_PER_SM = 8  # grid_stride: enough resident blocks to saturate memory, no more
LARGE_CHECK = {"n": (1 << 31) + 7}  # past 2^31 elements: scalar's 64-bit path
SAMPLE_ABOVE = 1 << 30  # larger N: repeated-block inputs, exact check on SAMPLES sampled elements
SAMPLES = 1 << 16
INDEXED = {"scalar<int>"}  # kernels with a 64-bit instantiation


class VecAdd(Workload):
    name = "vecadd"
    title = "Vector add C = A + B (FP32)"
    about = "Vector add C = A + B: scalar, float4, grid_stride (12 bytes per element)."
    dims = ("n",)
    dim_help = {"n": "Elements per vector."}
    protocol = Protocol(warmup=3, batches=5, reps=100)
    variants = (
        Variant("scalar", "scalar<int>", "one element per thread, 256 threads per block, if (i < n)"),
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
        return [{"n": 1}, {"n": 3}, {"n": 1000003}, {"n": 1 << 26}, dict(LARGE_CHECK)]

    def device_bytes(self, shape):
        return 3 * 4 * shape["n"]

    def kernel_names(self):
        return with_wide_paths(super().kernel_names(), INDEXED)

    def index_type(self, shape) -> str:
        """int while i = blockIdx.x * 256 + threadIdx.x fits: below n + 256."""
        return index_type(shape["n"] + BLOCK)

    def sampled(self, shape) -> bool:
        return shape["n"] > SAMPLE_ABOVE

    def make_inputs(self, shape, rng):
        n = shape["n"]
        if not self.sampled(shape):
            return {"a": random_array(n, rng), "b": random_array(n, rng)}
        return {"a": repeated_random(n, rng), "b": repeated_random(n, rng),
                SAMPLE: (checked_indices(n, SAMPLES, rng),)}

    def reference(self, shape, inputs, variant):
        a, b = inputs["a"], inputs["b"]
        if SAMPLE in inputs:
            (picks,) = inputs[SAMPLE]
            a, b = a[picks], b[picks]
        return a + b  # FP32 add on the CPU rounds exactly as the GPU does

    def setup(self, shape, inputs, kernels):
        cp = cupy()
        ctx = device_context(kernels, a=cp.asarray(inputs["a"]), b=cp.asarray(inputs["b"]),
                             c=cp.empty(shape["n"], dtype=cp.float32))
        return upload_sample(inputs, ctx)

    def geometry(self, variant, shape, device=None):
        """One thread per element (float4: per float4, the n % 4 tail elements going to the
        first threads); grid_stride: BLOCKS_PER_SM blocks per SM of `device` (fewer for a
        short vector)."""
        n = shape["n"]
        if variant.name == "float4":
            return per_thread(max(n // 4, n % 4), BLOCK)
        if variant.name == "grid_stride":
            return (min(grid_1d(n, BLOCK)[0], BLOCKS_PER_SM * device.sm_count),), (BLOCK,)
        return per_thread(n, BLOCK)

    def job(self, variant, shape, ctx, index: str | None = None):
        """`index` forces an instantiation of scalar (studies/baselines.py times both at one
        shape); by default the shape's own (index_type)."""
        n = shape["n"]
        a, b, c = ctx["a"], ctx["b"], ctx["c"]
        grid, block = self.geometry(variant, shape, ctx["device"])
        if variant.kernel in INDEXED:  # an int or a long long index, chosen on the host
            index = index or self.index_type(shape)
            kernel = indexed_kernel(self, shape, ctx, variant.kernel, index)
            launch = Launch(kernel, grid, block, (a, b, c, index_arg(index, n)))
        else:
            launch = Launch(ctx["kernels"][variant.kernel], grid, block, (a, b, c, np.uint64(n)))
        return launch_job(launch, c, ctx)

    def traffic(self, shape, variant, device=None):
        n = shape["n"]
        return Traffic(bytes=12 * n, flops=n)


WORKLOAD = VecAdd()
