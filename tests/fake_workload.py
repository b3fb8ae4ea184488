"""A small sixth workload for the engine's CPU tests: a 2-D copy B = A on NumPy arrays.

It is declared exactly as a real workload is (name, sizes, protocol, variants, check shapes,
inputs, reference, tolerance, launch, traffic) and touches nothing else: the engine, the
command line and config validation follow from the declaration. Its variants are the
cases the engine must keep apart: a right one, a wrong one (never timed), one whose launch
raises (an ERROR row), and a second right one.
"""

from __future__ import annotations

import numpy as np

from pmppbench.measure.check import Tolerance
from pmppbench.measure.protocol import Protocol
from pmppbench.workloads.base import Job, Sizes, Traffic, Variant, Workload


class Copy2D(Workload):
    name = "copy2d"
    title = "2-D copy B = A (FP32, NumPy)"
    about = "2-D copy B = A on the host: the engine's test workload."
    dims = ("m", "n")
    dim_help = {"m": "Rows.", "n": "Columns."}
    protocol = Protocol(warmup=1, batches=3, reps=2)
    variants = (
        Variant("rows", None, "row by row"),
        Variant("wrong", None, "adds 1 to one element"),
        Variant("crash", None, "its launch raises"),
        Variant("whole", None, "one assignment"),
    )
    tolerance = Tolerance("exact")
    baseline = "rows"

    def __init__(self):
        self.calls: dict[str, int] = {}

    sizes = Sizes(default={"m": 16, "n": 8}, checks=({"m": 1, "n": 1}, {"m": 3, "n": 5}))

    def device_bytes(self, shape):
        return 8 * shape["m"] * shape["n"]

    def make_inputs(self, shape, rng):
        return {"a": rng.standard_normal((shape["m"], shape["n"]), dtype=np.float32)}

    def reference(self, shape, inputs, variant):
        return inputs["a"].copy()

    def setup(self, shape, inputs, kernels):
        return {"a": inputs["a"], "b": np.empty_like(inputs["a"])}

    def job(self, variant, shape, ctx):
        a, b = ctx["a"], ctx["b"]

        def run():
            self.calls[variant.name] = self.calls.get(variant.name, 0) + 1
            if variant.name == "crash":
                raise RuntimeError("launch failed: an illegal memory access was encountered")
            if variant.name == "rows":
                for i in range(a.shape[0]):
                    b[i] = a[i]
            else:
                b[...] = a
            if variant.name == "wrong":
                b[0, 0] += 1

        return Job(run=run, output=lambda: b.copy(), poison=lambda: b.fill(np.nan))

    def traffic(self, shape, variant, device=None):
        return Traffic(bytes=8 * shape["m"] * shape["n"])


WORKLOAD = Copy2D()
