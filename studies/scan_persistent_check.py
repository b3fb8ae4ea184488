"""scan.cu's lookback_persistent (studies/scan_lookback.py's candidate) from fewer blocks than tiles,
small enough for compute-sanitizer: every dtype and kind at 5 tiles and 3 elements, grids of 1, 2 and 7 blocks (each block takes several tiles by ticket,
copies the next into shared memory while it looks back), two calls each on one ticket. Prints one
PASS or FAIL line per case; exit 1 if any failed.

Run on a GPU machine:  compute-sanitizer --tool racecheck python3 studies/scan_persistent_check.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pmppbench import workloads  # noqa: E402
from pmppbench.measure.check import compare, device_copy  # noqa: E402
from pmppbench.hardware.compile import load_kernels  # noqa: E402
from pmppbench.hardware.gpu import cupy  # noqa: E402
from pmppbench.engine.worker.pipeline import prepared  # noqa: E402
from pmppbench.workloads import scan as sc  # noqa: E402


def main() -> int:
    cp = cupy()
    w = workloads.get("scan")
    v = w.variant("lookback")
    n = 5 * sc.LOOKBACK_TILE + 3
    tiles = sc.tiles_of(n, sc.LOOKBACK_TILE)
    failed = 0
    for dtype in sc.DTYPES:
        for kind in sc.KINDS:
            shape = {"n": n, "dtype": dtype, "kind": kind}
            with prepared(w, shape, [v], seed=3) as (inputs, ctx):
                ref = device_copy(w.reference(shape, inputs, v))
                kernel = load_kernels("scan", ["lookback_persistent"], w.defines(shape))["lookback_persistent"]
                out, tol = ctx["out"], w.tolerance_of(shape, v)  # the same tile as lookback: its bound
                for grid in (1, 2, 7):
                    status, ticket = cp.zeros(tiles, dtype=cp.uint64), cp.zeros(1, dtype=cp.uint64)
                    for call in range(2):
                        out.fill(-7)
                        kernel((grid,), (sc.LOOKBACK_THREADS,),
                               (ctx["x"], out, status, ticket, np.uint64(n), np.uint64(tiles)))
                        result = compare(out, ref, tol)
                        failed += not result.passed
                        print(f"{'PASS' if result.passed else 'FAIL'} {dtype} {kind} n={n} grid={grid} call={call} "
                              f"{'' if result.passed else result.detail}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
