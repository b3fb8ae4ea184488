"""The look-back's study forms as a workload, `scan_lookback`: the shipped `lookback` and
`lookback_staged` each beside the forms docs/scan.md measured against it (one knob of
studies/forms/scan_lookback.cu turned), and the persistent look-back no table runs.

    PYTHONPATH=studies/forms PMPPBENCH_KERNEL_PATH=studies/forms \\
    PMPPBENCH_WORKLOADS=scan_lookback=scan_forms pmppbench scan_lookback 67108864

Every form is checked against the scan's reference with the shipped look-back's bound (the same
tiles and the same chain of carries); a form is built from the study file with its knobs as -D
defines, so the knob-free forms (`lookback`, `lookback_staged`) are the shipped code.
"""

from __future__ import annotations

import numpy as np

from pmppbench.hardware.compile import load_kernels
from pmppbench.workloads import scan as sc
from pmppbench.workloads.base import Launch, Variant

PERSISTENT_BLOCKS = 4  # lookback_persistent's blocks per SM (LP_BLOCKS, its launch bound)

# form -> (the study kernel it builds, its knobs, the shipped variant whose tile, grid and bound it has)
FORMS = {
    "lookback": ("lookback", {}, "lookback"),
    "lookback_block_index": ("lookback", {"LB_TICKET": 0}, "lookback"),
    "lookback_no_prefetch": ("lookback", {"LB_PREFETCH": 0}, "lookback"),
    "lookback_wide": ("lookback", {"LB_WIDE": 1}, "lookback"),
    "lookback_staged": ("lookback_staged", {}, "lookback_staged"),
    "lookback_staged_ticket": ("lookback_staged", {"LS_TICKET": 1}, "lookback_staged"),
    "lookback_staged_no_hint": ("lookback_staged", {"LS_HINT": 0}, "lookback_staged"),
    "lookback_staged_no_ramp": ("lookback_staged", {"LS_RAMP": 0}, "lookback_staged"),
    "lookback_persistent": ("lookback_persistent", {}, "lookback"),
}
ABOUT = {
    "lookback": "the shipped lookback, built from the study file without knobs",
    "lookback_block_index": "lookback with the tile its block index (CUB's numbering), the ticket for the epoch only",
    "lookback_no_prefetch": "lookback without the L2 prefetches around the ticket",
    "lookback_wide": "lookback with the look-back by the whole block, 256 words a step",
    "lookback_staged": "the shipped lookback_staged, built from the study file without knobs",
    "lookback_staged_ticket": "lookback_staged with the tile from the ticket: its copy waits for the atomic",
    "lookback_staged_no_hint": "lookback_staged without the L2 evict_last / evict_first hints",
    "lookback_staged_no_ramp": "lookback_staged with the first wave's copies all leaving at once",
    "lookback_persistent": f"{PERSISTENT_BLOCKS} resident blocks per SM taking tiles by ticket, the next tile copied "
                           "into shared memory (cp.async) during the look-back",
}


def lookback_grid(n: int, sm_count: int, blocks_per_sm: int, tile: int = sc.LOOKBACK_TILE) -> int:
    """The grid of scan_lookback.cu's lookback_persistent (not shipped: docs/scan.md): `blocks_per_sm`
    per SM, at most one per tile."""
    return max(1, min(sc.tiles_of(n, tile), blocks_per_sm * sm_count))


class ScanLookback(sc.Scan):
    name = "scan_lookback"
    title = "Prefix sum: the look-back's study forms"
    about = "The decoupled look-backs beside the forms measured against them (studies/forms/scan_lookback.cu)."
    variants = tuple(Variant(name, kernel, ABOUT[name]) for name, (kernel, _, _) in FORMS.items())
    baseline = "lookback"
    call = "a call: one launch, no reset (the tickets and status words carry each call's epoch)"
    roof = None

    def kernel_names(self):
        return []  # each form is built with its own knobs, on first use (job)

    def check_shapes(self):
        return [s for s in super().check_shapes() if s["n"] < 1 << 31]

    def geometry(self, variant, shape, device=None):
        shipped = self.variant(FORMS[variant.name][2])
        if variant.name == "lookback_persistent":
            sm_count = device.sm_count if device else 1
            return (lookback_grid(shape["n"], sm_count, PERSISTENT_BLOCKS),), (sc.LOOKBACK_THREADS,)
        return super().geometry(shipped, shape, device)

    def tolerance_of(self, shape, variant, device=None):
        """The shipped look-back's bound: the same tiles and the same chain of carries."""
        return super().tolerance_of(shape, sc.WORKLOAD.variant(FORMS[variant.name][2]), device)

    def setup(self, shape, inputs, kernels):
        ctx = super().setup(shape, inputs, kernels)
        cp = sc.cupy()
        tiles = sc.tiles_of(shape["n"], sc.LOOKBACK_TILE)
        ctx["status"] = {name: cp.zeros(tiles if shipped == "lookback" else sc.tiles_of(shape["n"], sc.STAGED_TILE),
                                        dtype=cp.uint64) for name, (_, _, shipped) in FORMS.items()}
        ctx["ticket"] = {name: cp.zeros(1, dtype=cp.uint64) for name in FORMS}
        return ctx

    def job(self, variant, shape, ctx, index=None):
        kernel, knobs, shipped = FORMS[variant.name]
        built = f"{kernel} {sorted(knobs.items())}"  # one entry per build in ctx.kernels
        if built not in ctx.kernels:
            ctx.kernels[built] = load_kernels(self.name, [kernel], {**self.defines(shape), **knobs})[kernel]
        n, x, out = shape["n"], ctx["x"], ctx["out"]
        (grid,), (threads,) = self.geometry(variant, shape, ctx.device)
        k, sm_count = ctx.kernels[built], ctx.device.sm_count
        tiles = sc.tiles_of(n, sc.PASS_TILES[shipped][0])
        args = (x, out, ctx["status"][variant.name], ctx["ticket"][variant.name], np.uint64(n))
        if variant.name == "lookback_persistent":
            args += (np.uint64(tiles),)
        else:
            args += (np.uint64(tiles), np.uint64(sc.lookback_ahead(k, sm_count, sc.AHEAD_WAVES[shipped], threads)))
            if shipped == "lookback_staged":
                args += (np.uint64(sc.ramped_blocks(k, sm_count, tiles, threads)),)
        return sc.call_job(None, out, ctx, (Launch(k, (grid,), (threads,), args),))

    def traffic(self, shape, variant, device=None):
        return super().traffic(shape, sc.WORKLOAD.variant(FORMS[variant.name][2]), device)


WORKLOAD = ScanLookback()
