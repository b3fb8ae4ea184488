"""A test-only workload whose variants fault, hang and compute wrong (kernels in tests/faults.cu).

Registered for a run with PMPPBENCH_WORKLOADS="faults=fault_workload" and
PMPPBENCH_KERNEL_PATH=tests (tests/test_faults.py does this), so the worker processes find it.
"""

from __future__ import annotations

import numpy as np

from pmppbench.measure.check import Tolerance
from pmppbench.hardware.gpu import cupy
from pmppbench.measure.protocol import Protocol
from pmppbench.workloads.base import Context, Launch, Sizes, Traffic, Variant, Workload
from pmppbench.workloads.helpers import grid_1d, launch_job


class Faults(Workload):
    name = "faults"
    title = "Faulting kernels (test only)"
    about = "y = x done right, wrong, out of bounds and never finishing (test only)."
    dims = ("n",)
    dim_help = {"n": "Elements."}
    protocol = Protocol(warmup=1, batches=3, reps=5)
    variants = (
        Variant("good", "good", "y = x"),
        Variant("out_of_bounds", "out_of_bounds", "writes a terabyte past y"),
        Variant("wrong", "wrong", "y = x + 1"),
        Variant("hang", "hang", "spins forever"),
        Variant("good_again", "good", "y = x, after the faults"),
    )
    tolerance = Tolerance("exact")
    baseline = "good"

    sizes = Sizes(default={"n": 1 << 20}, checks=({"n": 1 << 20},))

    def device_bytes(self, shape):
        return 8 * shape["n"] + 4

    def make_inputs(self, shape, rng):
        return {"x": rng.standard_normal(shape["n"], dtype=np.float32)}

    def reference(self, shape, inputs, variant):
        return inputs["x"].copy()

    def setup(self, shape, inputs, kernels):
        cp = cupy()
        return Context(kernels, None, x=cp.asarray(inputs["x"]), y=cp.empty(shape["n"], dtype=cp.float32),
                       never=cp.zeros(1, dtype=cp.int32))

    def job(self, variant, shape, ctx):
        n = shape["n"]
        launch = Launch(ctx.kernels[variant.kernel], grid_1d(n, 256), (256,),
                        (ctx["x"], ctx["y"], np.int32(n), ctx["never"]))
        return launch_job(launch, ctx["y"], ctx)

    def traffic(self, shape, variant, device=None):
        return Traffic(bytes=8 * shape["n"])


WORKLOAD = Faults()
