"""stencil3d's `best` at other block heights and z chunks, beside a memcpy of the same bytes.

Run on a GPU machine from the checkout's root:

    python3 studies/stencil3d_best.py [N] [--rows 4,8] [--chunks 16,32,64,128] [--reps 10]

`best<BY, ZCHUNK, true>` (kernels_cu/stencil3d.cu) is the shipped kernel's template: BY warps
(rows) per block, ZCHUNK planes per thread. Two costs pull against each other:

- ZCHUNK: each chunk reads the plane before it and the plane after it again, 2 / ZCHUNK more
  reads from DRAM; a longer chunk has fewer blocks to spread over the SMs (N^2 / (128 BY)
  columns of blocks times N / ZCHUNK chunks), and a last wave that fills the GPU less.
- BY: the block's first and last rows read their outer neighbour rows from L2 instead of L1
  (the warps of those rows belong to the blocks beside it), 2 / BY of the y-neighbour loads.

Every candidate is checked against the workload's CPU reference first, then all are timed in
one protocol call with the variants alternated (the same protocol as `pmppbench stencil3d`,
L2 settled before each). The table gives each candidate's median and its time as a percent of
the memcpy's. docs/stencil3d.md ("Why `best` is fast") states what it showed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the checkout's pmppbench (run from anywhere)

from pmppbench.hardware.compile import load_kernels  # noqa: E402
from pmppbench.measure.check import compare  # noqa: E402
from pmppbench.measure.protocol import Protocol, measure  # noqa: E402
from pmppbench.workloads.helpers import SAMPLE, take  # noqa: E402
from pmppbench.workloads.stencil3d import WORKLOAD  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("n", nargs="?", type=int, default=512, help="grid edge (a multiple of 4; default 512)")
    ap.add_argument("--rows", default="4,8", help="BY: warps (rows) per block")
    ap.add_argument("--chunks", default="16,32,64,128", help="ZCHUNK: planes per thread")
    ap.add_argument("--reps", type=int, default=10, help="calls per batch")
    ap.add_argument("--batches", type=int, default=7)
    args = ap.parse_args()
    n = args.n
    if n % 4:
        sys.exit("stencil3d_best.py: N must be a multiple of 4 (the float4 form)")
    candidates = [(by, z) for by in map(int, args.rows.split(",")) for z in map(int, args.chunks.split(","))]
    names = [f"best<{by}, {z}, true>" for by, z in candidates]
    kernels = load_kernels("stencil3d", names)
    shape = {"n": n}
    inputs = WORKLOAD.make_inputs(shape, np.random.default_rng(0))
    ctx = WORKLOAD.setup(shape, inputs, kernels)
    x, y = ctx["x"], ctx["y"]
    best = next(v for v in WORKLOAD.variants if v.name == "best")
    reference = WORKLOAD.reference(shape, inputs, best)
    tolerance = WORKLOAD.tolerance_of(shape, best, None)

    runs = {"memcpy": lambda: y.data.copy_from_device_async(x.data, x.nbytes)}
    for (by, z), name in zip(candidates, names):
        grid = (-(-n // 128), -(-n // by), -(-n // z))
        launch = (lambda k=kernels[name], g=grid, b=(32, by): k(g, b, (x, y, np.int32(n))))
        y.fill(np.nan)
        launch()
        result = compare(take(y, ctx[SAMPLE]) if SAMPLE in ctx else y, reference, tolerance)
        if not result.passed:
            print(f"{name}: {result.status} ({result.detail}); not timed")
            continue
        runs[f"BY={by} ZCHUNK={z}"] = launch

    protocol = Protocol(warmup=3, batches=args.batches, reps=args.reps, alternate=True)
    timings = measure(runs, protocol)
    copy_ms = timings["memcpy"].median_ms
    print(f"stencil3d best at {n}^3, {protocol.describe()}")
    print(f"{'candidate':<20} {'median ms':>10} {'% of memcpy':>12} {'spread %':>9}")
    for name, t in sorted(timings.items(), key=lambda kv: kv[1].median_ms):
        print(f"{name:<20} {t.median_ms:>10.4f} {100 * copy_ms / t.median_ms:>11.1f}% {100 * t.spread:>8.2f}")


if __name__ == "__main__":
    main()
