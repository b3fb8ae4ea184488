"""How long cuda.compute takes to build the CUB objects of `pmppbench all` on a machine with nothing
cached, one after another or on several threads at once (its builds run without the GIL): each
step of the default config's plan has its Workload.prebuild called, as worker.Ahead's build thread
does. Run each form in a fresh process with empty caches: PMPPBENCH_CACHE_DIR and CCCL_PCH_CACHE_DIR
pointed at new folders.

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

    from pmppbench.cli.planning import config_plan

    cp.cuda.Device().use()
    cp.empty(1)
    imported = time.perf_counter() - t0
    plan, _, _ = config_plan({"only": None, "config": None, "seed": None, "flush_l2": False, "counters": False,
                              "check_only": False})
    start = time.perf_counter()

    def one(step):
        cp.cuda.Device().use()
        t = time.perf_counter()
        step.workload.prebuild(step.shape, list(step.variants))
        return step.label, t - start, time.perf_counter() - start, threading.current_thread().name

    with ThreadPoolExecutor(args.threads) as pool:
        for label, began, ended, thread in pool.map(one, plan.steps):
            if ended - began >= 0.01:  # the steps with a library build (the others have none)
                print(f"{label:45s} {began:6.2f} -> {ended:6.2f} s  ({ended - began:5.2f} s, {thread})")
    print(f"threads={args.threads}: import {imported:.2f} s, builds {time.perf_counter() - start:.2f} s "
          f"(PMPPBENCH_CACHE_DIR={os.environ.get('PMPPBENCH_CACHE_DIR')}, "
          f"CCCL_PCH_CACHE_DIR={os.environ.get('CCCL_PCH_CACHE_DIR')})")


if __name__ == "__main__":
    main()
