"""Vector add (PMPP 5.1): the memory-roof reference, and the model of the workload contract.

`scalar` indexes with the course's `int` while N + 256 fits in 31 bits, with `long long` beyond
(checked at N = 2^31 + 7). Past 2^30 elements the inputs repeat a random block and the check
is exact on sampled elements."""

from __future__ import annotations

import numpy as np

from pmppbench.hardware.gpu import cupy
from pmppbench.measure.check import Tolerance
from pmppbench.measure.protocol import Protocol
from pmppbench.workloads.base import Launch, Sizes, Traffic, Variant, Workload
from pmppbench.workloads.helpers import (SAMPLE, checked_indices, device_context, grid_1d, index_arg, index_type,
                                         indexed_kernel, launch_job, per_thread, random_array, repeated_random,
                                         upload_sample)
from pmppbench.workloads.vecadd_starters import FLOAT4, SCALAR, STRIDED  # what a learner's kernel --like each gets

BLOCK = 256
BLOCKS_PER_SM = 8  # grid_stride: enough resident blocks to saturate memory, no more
LARGE_CHECK = {"n": (1 << 31) + 7}  # past 2^31 elements: scalar's 64-bit path
SAMPLE_ABOVE, SAMPLES = 1 << 30, 1 << 16  # larger N: repeated-block inputs, SAMPLES elements checked


class VecAdd(Workload):
    name = "vecadd"
    title = "Vector add C = A + B (FP32)"
    about = "Vector add C = A + B: scalar, float4, grid_stride (12 bytes per element)."
    dims = ("n",)
    dim_help = {"n": "Elements per vector."}
    protocol = Protocol(warmup=3, batches=5, reps=100)
    variants = (
        Variant("scalar", "scalar<int>", "a thread per element, 256 per block, if (i < n)", wide=True, starter=SCALAR),
        Variant("float4", "float4_add", "16-byte vector loads and stores, scalar tail for n % 4", starter=FLOAT4),
        Variant("grid_stride", "grid_stride", "fixed grid of 8 blocks per SM striding over the array", starter=STRIDED),
    )
    sizes = Sizes(default={"n": 1 << 26}, checks=({"n": 1}, {"n": 3}, {"n": 1000003}, {"n": 1 << 26}, LARGE_CHECK))
    tolerance = Tolerance("exact")  # one FP32 add, correctly rounded on both sides
    baseline = "scalar"

    def device_bytes(self, shape):
        return 12 * shape["n"]

    def make_inputs(self, shape, rng):
        if (n := shape["n"]) <= SAMPLE_ABOVE:
            return {"a": random_array(n, rng), "b": random_array(n, rng)}
        return {"a": repeated_random(n, rng), "b": repeated_random(n, rng), SAMPLE: (checked_indices(n, SAMPLES, rng),)}

    def reference(self, shape, inputs, variant):
        picks = inputs[SAMPLE][0] if SAMPLE in inputs else slice(None)
        return inputs["a"][picks] + inputs["b"][picks]  # FP32 add on the CPU rounds as the GPU does

    def setup(self, shape, inputs, kernels):
        a, b, c = cupy().asarray(inputs["a"]), cupy().asarray(inputs["b"]), cupy().empty(shape["n"], np.float32)
        return upload_sample(inputs, device_context(kernels, a=a, b=b, c=c))

    def geometry(self, variant, shape, device=None):
        """A thread per element (float4: per float4, plus the n % 4 tail); grid_stride: per SM."""
        if (n := shape["n"]) and variant.name == "float4":
            return per_thread(max(n // 4, n % 4), BLOCK)
        if variant.name == "grid_stride":
            return (min(grid_1d(n, BLOCK)[0], BLOCKS_PER_SM * device.sm_count),), (BLOCK,)
        return per_thread(n, BLOCK)

    def job(self, variant, shape, ctx, index: str | None = None):
        """`index` forces scalar's int or long long path; by default the shape's own."""
        n, (grid, block) = shape["n"], self.geometry(variant, shape, ctx.device)
        if variant.wide:  # i = blockIdx.x * 256 + threadIdx.x must fit the index type
            index = index or index_type(n + BLOCK)
            kernel, size = indexed_kernel(self, shape, ctx, variant.kernel, index), index_arg(index, n)
        else:
            kernel, size = ctx.kernels[variant.kernel], np.uint64(n)
        return launch_job(Launch(kernel, grid, block, (ctx["a"], ctx["b"], ctx["c"], size)), ctx["c"], ctx)

    def traffic(self, shape, variant, device=None):
        return Traffic(bytes=12 * shape["n"], flops=shape["n"])  # read A and B, write C; one add each


WORKLOAD = VecAdd()
