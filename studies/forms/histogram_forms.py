"""thread_private's study forms as a workload, `histogram_private`: the shipped thread_private beside
the forms docs/histogram.md measured against it (one knob of studies/forms/histogram_private.cu
turned), and bulk_private, which no table runs.

    PYTHONPATH=studies/forms PMPPBENCH_KERNEL_PATH=studies/forms \\
    PMPPBENCH_WORKLOADS=histogram_private=histogram_forms pmppbench histogram_private 268435456

Each form is checked bit for bit against the histogram's reference; the knob-free `thread_private`
is the shipped code.
"""

from __future__ import annotations

import numpy as np

from pmppbench.hardware.compile import load_kernels
from pmppbench.workloads import histogram as hist
from pmppbench.workloads.base import Launch, Variant
from pmppbench.workloads.helpers import staged_job

BULK_THREADS, BULK_BLOCKS_PER_SM, BULK_PIECE = 256, 3, 2048  # bulk_private's defaults: 8 warps, a 2 KB piece each

# form -> (the study kernel, its knobs, the bin counts it is for)
FORMS = {
    "thread_private": ("thread_private", {}, (7, 256)),
    "thread_private_nibbles": ("thread_private", {"PRIVATE_SLICED": 0}, (7,)),
    "thread_private_ring": ("thread_private", {"PRIVATE_RING": 1, "PRIVATE_VECS": 4}, (7,)),
    "bulk_private": ("bulk_private", {}, (7,)),
    "thread_private_stores": ("thread_private", {"PRIVATE_ATOMIC": 0}, (256,)),
    "thread_private_no_runs": ("thread_private", {"PRIVATE_RUNS": 0}, (256,)),
}
ABOUT = {
    "thread_private": "the shipped thread_private, built from the study file without knobs",
    "thread_private_nibbles": "7 bins counted in nibble counters (count_letters) instead of bit-sliced ones",
    "thread_private_ring": "7 bins through a ring of 4 loads, each slot refilled as its vector is taken (8 spill)",
    "bulk_private": "7 bins, the text brought to shared memory by the copy engine: a ring of 2 KB pieces per warp",
    "thread_private_stores": "256 bins counted by load, add and store instead of a shared atomicAdd",
    "thread_private_no_runs": "256 bins without counting a vector of 16 equal bytes at once",
}


class HistogramPrivate(hist.Histogram):
    name = "histogram_private"
    title = "Histogram: thread_private's study forms"
    about = "thread_private beside the forms measured against it (studies/forms/histogram_private.cu)."
    variants = tuple(Variant(name, kernel, ABOUT[name], needs="sm_90" if kernel == "bulk_private" else None)
                     for name, (kernel, _, _) in FORMS.items())
    baseline = "thread_private"
    roof = None

    def variants_for(self, shape):
        return tuple(v for v in self.variants if shape["bins"] in FORMS[v.name][2])

    def kernel_names(self):
        return []  # each form is built with its own knobs, on first use (job)

    def geometry(self, variant, shape, device=None):
        sms = device.sm_count if device else 1
        if variant.name == "bulk_private":
            warps = -(-max(shape["n"] // BULK_PIECE, 1) // (BULK_THREADS // 32))
            return (max(1, min(warps, BULK_BLOCKS_PER_SM * sms)),), (BULK_THREADS,)
        return super().geometry(self.shipped, shape, device)

    @property
    def shipped(self) -> Variant:
        return hist.WORKLOAD.variant("thread_private")

    def job(self, variant, shape, ctx, index=None):
        kernel, knobs, _ = FORMS[variant.name]
        built = f"{kernel} {sorted(knobs.items())}"  # one entry per build in ctx.kernels
        if built not in ctx.kernels:
            ctx.kernels[built] = load_kernels(self.name, [kernel], {**self.defines(shape), **knobs})[kernel]
        grid, block = self.geometry(variant, shape, ctx.device)
        text, histo = ctx["text"], ctx["histo"]
        launch = Launch(ctx.kernels[built], grid, block, (text, np.uint64(shape["n"]), histo))
        return staged_job((launch,), histo, reset=lambda: histo.fill(0))


WORKLOAD = HistogramPrivate()
