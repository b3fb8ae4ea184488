"""One launch per variant at one shape, for Nsight Compute (issue 21: what stalls `tuned`,
what cuBLAS runs instead). Each variant is warmed up (compiled, run 3 times), then exactly
one launch runs between cudaProfilerStart and cudaProfilerStop, so

    ncu --profile-from-start off --clock-control none --section WarpStateStats ... \\
        python3 studies/gemm_best_profile.py 4096 4096 4096 tuned cublas

profiles that launch and nothing else. Names are the workload's variants (tuned, best,
cublas, ...) or configuration names (pl_128x256x8_w64x64_i4_t4x4, sk_...).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pmppbench.engine.worker import pipeline  # noqa: E402
from pmppbench.hardware.gpu import cupy  # noqa: E402
from pmppbench.workloads import get  # noqa: E402
from pmppbench.workloads.gemm.configs import parse  # noqa: E402

W = get("gemm")


def variant(name: str):
    cfg = parse(name)
    return cfg.variant() if cfg else W.variant(name)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("m", type=int)
    ap.add_argument("n", type=int)
    ap.add_argument("k", type=int)
    ap.add_argument("variants", nargs="+")
    args = ap.parse_args()
    cp = cupy()
    shape = dict(m=args.m, n=args.n, k=args.k)
    vs = [variant(n) for n in args.variants]
    with pipeline.prepared(W, shape, vs, 0) as (_, ctx):
        for v in vs:
            job = W.job(v, shape, ctx)
            for _ in range(3):
                job.run()
            cp.cuda.Device().synchronize()
            cp.cuda.profiler.start()
            job.run()
            cp.cuda.Device().synchronize()
            cp.cuda.profiler.stop()
            print(f"profiled {v.name} ({v.kernel})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
