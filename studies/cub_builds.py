"""How long cuda.compute takes to build the CUB objects of `pmppbench all` (the reduction's, the
histogram's and the scan's six keys) on a machine with nothing cached, one after another or on
several threads at once (its builds run without the GIL). Run each form in a fresh process with
empty caches: PMPPBENCH_CACHE_DIR and CCCL_PCH_CACHE_DIR pointed at new folders.

    python3 studies/cub_builds.py --threads 6
"""

from __future__ import annotations

import argparse
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    t0 = time.perf_counter()
    import cupy as cp
    import numpy as np

    from pmppbench.workloads import cub

    cp.cuda.Device().use()
    cp.empty(1)
    imported = time.perf_counter() - t0
    builds = [
        ("reduce f32", lambda: cub.prebuild_reduce(cp, np.float32)),
        ("reduce i32", lambda: cub.prebuild_reduce(cp, np.int32)),
        ("histogram 7", lambda: cub.prebuild_histogram(cp, 7, 0, 7, 1 << 26)),
        ("histogram 256", lambda: cub.prebuild_histogram(cp, 256, 0, 256, 1 << 26)),
        ("scan f32 inclusive", lambda: cub.prebuild_scan(cp, np.float32, False)),
        ("scan i32 exclusive", lambda: cub.prebuild_scan(cp, np.int32, True)),
    ]
    start = time.perf_counter()

    def one(item):
        name, fn = item
        cp.cuda.Device().use()
        t = time.perf_counter()
        fn()
        return name, t - start, time.perf_counter() - start, threading.current_thread().name

    with ThreadPoolExecutor(args.threads) as pool:
        for name, began, ended, thread in pool.map(one, builds):
            print(f"{name:20s} {began:6.2f} -> {ended:6.2f} s  ({ended - began:5.2f} s, {thread})")
    print(f"threads={args.threads}: import {imported:.2f} s, builds {time.perf_counter() - start:.2f} s "
          f"(PMPPBENCH_CACHE_DIR={os.environ.get('PMPPBENCH_CACHE_DIR')}, "
          f"CCCL_PCH_CACHE_DIR={os.environ.get('CCCL_PCH_CACHE_DIR')})")


if __name__ == "__main__":
    main()
