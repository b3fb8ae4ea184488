"""One line per variant, printed as it finishes: checked once, then timed (CUDA events, median
of 5 batches of 10 calls), at a few shapes; the build time of CUB's scan object is shown.

    python3 studies/scan_smoke.py [--variants a,b] [N ...]

A first look before the workload's own runs (pmppbench scan): if a variant hangs, the line
before it says how far the others got (run under `python3 -X faulthandler` with `timeout -s
ABRT` for the stack).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pmppbench import workloads  # noqa: E402
from pmppbench.measure.check import compare, device_copy  # noqa: E402
from pmppbench.hardware.gpu import cupy  # noqa: E402
from pmppbench.engine.worker.pipeline import prepared  # noqa: E402

ORDER = ("memcpy", "kogge_stone", "brent_kung", "coarsened", "hierarchical", "domino", "lookback", "cub")


def timed(cp, run, calls=10, batches=5):
    run()
    cp.cuda.Device().synchronize()
    times = []
    for _ in range(batches):
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record()
        for _ in range(calls):
            run()
        b.record()
        b.synchronize()
        times.append(cp.cuda.get_elapsed_time(a, b) / calls)
    return sorted(times)[len(times) // 2]


def main(argv):
    names = ORDER
    if argv and argv[0] == "--variants":
        names, argv = tuple(argv[1].split(",")), argv[2:]
    sizes = [int(a) for a in argv] or [100003, 1 << 20, 1 << 26]
    cp = cupy()
    w = workloads.get("scan")
    for n in sizes:
        for dtype, kind in (("f32", "inclusive"), ("i32", "exclusive")):
            shape = {"n": n, "dtype": dtype, "kind": kind}
            variants = [w.variant(v) for v in names]
            with prepared(w, shape, variants, seed=3) as (inputs, ctx):
                refs = {}
                for v in variants:
                    key = w.reference_key(v)
                    if key not in refs:
                        refs[key] = device_copy(w.reference(shape, inputs, v))
                    t0 = time.time()
                    try:
                        job = w.job(v, shape, ctx)
                    except Exception as exc:  # noqa: BLE001
                        print(f"{n:>10} {dtype} {kind:<9} {v.name:<13} SKIP {exc}", flush=True)
                        continue
                    built = time.time() - t0
                    job.poison()
                    job.run()
                    cp.cuda.Device().synchronize()
                    result = compare(job.output(), refs[key], w.tolerance_of(shape, v))
                    ms = timed(cp, job.run)
                    gbs = 8 * n / ms / 1e6
                    print(f"{n:>10} {dtype} {kind:<9} {v.name:<13} {result.status} {ms:9.4f} ms {gbs:8.1f} GB/s"
                          f"  (job built in {built:.1f} s) {'' if result.passed else result.detail}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
