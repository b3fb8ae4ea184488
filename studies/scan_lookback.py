"""Candidates of the scan's lookback kernel, timed in one process beside CUB and the memcpy roof
(docs/scan.md says which results they produced).

Run on a GPU machine:  python3 studies/scan_lookback.py [--sizes 20,24,26,28] [--json FILE]

Each candidate is a compile of kernels_cu/scan.cu's lookback with other -D knobs: LB_ROWS and
LB_THREADS (the tile: threads x rows of 16-byte vectors), LB_MIN_BLOCKS (the launch bound's blocks
per SM), LB_PREFETCH (the tile asked of L2 before the ticket) and LB_TICKET (0: the tile is the
block index, CUB's numbering, for comparison only) and LB_BACKOFF (a sleep in the look-back's spin). The shipped variants (lookback, cub, memcpy)
run through the workload's own jobs. Every candidate is checked against the workload's reference
under its own tile count's float bound (int32: exact) before it is timed; then all of a shape's
candidates are timed together under one alternating protocol, twice, and the better median kept.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pmppbench import workloads  # noqa: E402
from pmppbench.check import Tolerance, compare, device_copy  # noqa: E402
from pmppbench.compile import load_kernels  # noqa: E402
from pmppbench.gpu import cupy  # noqa: E402
from pmppbench.protocol import Protocol, measure  # noqa: E402
from pmppbench.workloads import scan as sc  # noqa: E402

# (rows, threads, min blocks per SM, prefetch, ticket, backoff ns)
KNOBS = [
    (8, 256, 1, 0, 1, 0), (8, 256, 1, 1, 1, 0), (12, 256, 3, 0, 1, 0), (12, 256, 3, 1, 1, 0), (12, 256, 1, 1, 1, 0),
    (12, 256, 3, 1, 1, 100), (16, 256, 1, 1, 1, 0), (16, 128, 1, 1, 1, 0), (24, 128, 1, 1, 1, 0), (8, 512, 1, 1, 1, 0),
    (12, 256, 3, 0, 0, 0), (16, 256, 1, 0, 0, 0),
]
SHIPPED = ("lookback", "cub", "memcpy")


def defines_of(knobs) -> dict:
    rows, threads, blocks, prefetch, ticket, backoff = knobs
    return {"LB_ROWS": rows, "LB_THREADS": threads, "LB_MIN_BLOCKS": blocks, "LB_PREFETCH": prefetch,
            "LB_TICKET": ticket, "LB_BACKOFF": backoff}


def label(knobs) -> str:
    rows, threads, blocks, prefetch, ticket, backoff = knobs
    return f"lookback rows={rows} threads={threads} minb={blocks} pf={prefetch} ticket={ticket} sleep={backoff}"


def bound(knobs, n: int) -> float:
    """scan.py's look-back bound (Scan.additions_depth) for this candidate's tile."""
    rows, threads = knobs[0], knobs[1]
    tiles = sc.tiles_of(n, threads * rows * 4)
    d = 3 + 5 + 1 + rows + threads // 32 + 2 + tiles + 5 * -(-tiles // 32) + 1
    du = min(d, max(n - 1, 1)) * sc.UNIT_ROUNDOFF
    return du / (1 - du)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="20,24,26,28", help="log2 of N, comma-separated")
    ap.add_argument("--dtypes", default="f32,i32")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    cp = cupy()
    w = workloads.get("scan")
    rows = []
    for dtype in args.dtypes.split(","):
        for log in (int(s) for s in args.sizes.split(",")):
            n = 1 << log
            shape = {"n": n, "dtype": dtype, "kind": "inclusive"}
            kernels = load_kernels("scan", w.kernel_names(), w.defines(shape))
            inputs = w.make_inputs(shape, np.random.default_rng(0))
            ref = device_copy(w.reference(shape, inputs, w.variant("lookback")))
            variants = [w.variant(v) for v in SHIPPED]
            w.prebuild(shape, variants)
            ctx = w.setup(shape, inputs, kernels)
            jobs = {v.name: w.job(v, shape, ctx) for v in variants}
            runs = {name: job.run for name, job in jobs.items()}
            x, out = ctx["x"], ctx["out"]
            info = {}
            for knobs in KNOBS:
                k = load_kernels("scan", ["lookback"], {**w.defines(shape), **defines_of(knobs)})["lookback"]
                tiles = sc.tiles_of(n, knobs[0] * knobs[1] * 4)
                status, ticket = cp.zeros(tiles, dtype=cp.uint64), cp.zeros(1, dtype=cp.uint64)

                def run(k=k, tiles=tiles, threads=knobs[1], status=status, ticket=ticket):
                    k((tiles,), (threads,), (x, out, status, ticket, np.uint64(n), np.uint64(tiles)))
                runs[label(knobs)] = run
                info[label(knobs)] = {"regs": k.registers, "tiles": tiles, "knobs": knobs}
            good = {}
            for key, run in runs.items():
                out.fill(np.nan if dtype == "f32" else -7)
                run()
                cp.cuda.Device().synchronize()
                if key == "memcpy":
                    good[key] = run
                    continue
                tol = (Tolerance("exact") if dtype == "i32" else
                       Tolerance("elementwise", rtol=bound(info[key]["knobs"], n) if key in info
                                 else w.relative_bound(w.variant("cub" if key == "cub" else "lookback"), shape)))
                result = compare(out, ref, tol)
                if result.passed:
                    good[key] = run
                else:
                    rows.append({"shape": w.label(shape), "cand": key, "check": "FAIL"})
                    print(f"FAIL {w.label(shape)} {key}: {result.detail}", flush=True)
            times = {k: [] for k in good}
            for r in range(2):
                order = list(good) if r == 0 else list(good)[::-1]
                t = measure({k: good[k] for k in order}, Protocol(warmup=3, batches=5, reps=20, alternate=True))
                for k in good:
                    times[k].append(t[k].median_ms)
            cub = min(times["cub"]) if "cub" in times else None
            roof = min(times["memcpy"])
            for key, ts in times.items():
                ms = min(ts)
                extra = {k: v for k, v in info.get(key, {}).items() if k != "knobs"}
                row = {"shape": w.label(shape), "cand": key, "check": "PASS", "ms": round(ms, 4),
                       "ms_repeats": "/".join(f"{v:.4f}" for v in ts), "pct_memcpy": round(100 * roof / ms, 1),
                       "x_vs_cub": round(cub / ms, 3) if cub else None, **extra}
                rows.append(row)
                print(" ".join(f"{k}={v}" for k, v in row.items()), flush=True)
            del ctx, jobs, runs, good, ref
            cp.get_default_memory_pool().free_all_blocks()
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    print("\n# shape | candidate | ms | % of memcpy | x vs cub")
    for r in rows:
        if r["check"] == "PASS":
            print(f"{r['shape']:34} {r['cand']:58} {r['ms']:>8} {r['pct_memcpy']:>6} {r['x_vs_cub']}")
        else:
            print(f"{r['shape']:34} {r['cand']:58} FAIL")
    return 0


if __name__ == "__main__":
    sys.exit(main())
