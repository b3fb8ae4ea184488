"""The coarsened transpose at shapes that are not multiples of its 64 x 64 tile, beside a
device-to-device memcpy of the same bytes (docs/transpose.md, "Every shape").

Run on a GPU machine:  python3 studies/memory_roof/every_shape.py [--json FILE]

Candidates, all instantiations of edged<GROUP, VEC_EDGES, CS> in studies/memory_roof/transpose.cu
(kernels_cu/transpose_tile.cuh's move_tile in a tile order): GROUP 1 << 20 is column by column over
A (the shipped order), 0 row by row, -G bands of G tile columns taken row by row; VEC_EDGES moves
the partial tiles of a matrix with N and M multiples of 4 as float4s; CS 2 streaming loads and
stores (shipped), 1 streaming stores only. `now` is the workload's own `coarsened` variant,
`memcpy` the roof. Shapes: four odd shapes (not multiples of the tile), multiples of the tile for reference (8192^2, 4096^2
and 9984^2, the multiple of 64 nearest 10000), and 4097^2 (rows not on a float4).
--candidates 1 is a smaller first set.
Each candidate is checked bit for bit against A^T on the GPU, then a shape's candidates are timed
together under one alternating protocol, twice (the better median of the two is kept).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from pmppbench.hardware import device  # noqa: E402
from pmppbench import workloads  # noqa: E402
from pmppbench.hardware.compile import kernels_from, load_kernels  # noqa: E402
from pmppbench.hardware.gpu import cupy  # noqa: E402
from pmppbench.measure.protocol import Protocol, measure  # noqa: E402

STUDY = Path(__file__).resolve().parent
SHAPES = ((10000, 10000), (8200, 8200), (8192, 8196), (4100, 4100), (8192, 8192), (4096, 4096), (9984, 9984),
          (4097, 4097))
CANDIDATES = {1: [(1 << 20, False, 2), (1 << 20, True, 2), (0, True, 2), (-8, True, 2)],
              2: [(1 << 20, False, 2), (1 << 20, True, 1), (-2, True, 2), (-4, True, 2), (0, True, 1)]}


def name(group: int, vec: bool, cs: int) -> str:
    return f"edged<{group}, {str(vec).lower()}>" if cs == 2 else f"edged<{group}, {str(vec).lower()}, {cs}>"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", type=Path)
    ap.add_argument("--candidates", type=int, choices=sorted(CANDIDATES), default=2)
    args = ap.parse_args(argv)
    cp = cupy()
    dev = device.current()
    print(f"# {dev.name}, {dev.sm_count} SMs", flush=True)
    names = [name(*c) for c in CANDIDATES[args.candidates]]
    with kernels_from(STUDY):
        kernels = load_kernels("transpose", names)
    w = workloads.get("transpose")
    rows = []
    for m, n in SHAPES:
        shape = {"m": m, "n": n}
        inputs = w.make_inputs(shape, np.random.default_rng(0))
        ctx = w.setup(shape, inputs, load_kernels("transpose", w.kernel_names(), w.defines(shape)))
        a, b = ctx["a"], ctx["b"]
        ref = cp.ascontiguousarray(a.reshape(m, n).T)
        grid, block = w.geometry(w.variant("coarsened"), shape)
        runs = {"memcpy": w.job(w.variant("memcpy"), shape, ctx).run, "now": w.job(w.variant("coarsened"), shape, ctx).run}
        for key in names:
            runs[key] = lambda k=kernels[key]: k(grid, block, (a, b, np.uint64(m), np.uint64(n)))
        good = {}
        for key, run in runs.items():
            b.fill(np.nan)
            run()
            cp.cuda.Device().synchronize()
            ok = bool(cp.array_equal(b.reshape(m, n), a.reshape(m, n))) if key == "memcpy" else \
                bool(cp.array_equal(b.reshape(n, m), ref))
            if ok:
                good[key] = run
            else:
                rows.append({"shape": f"{m}x{n}", "cand": key, "check": "FAIL"})
                print(f"FAIL {m}x{n} {key}", flush=True)
        del ref
        times = {k: [] for k in good}
        for r in range(2):
            order = list(good) if r == 0 else list(good)[::-1]
            t = measure({k: good[k] for k in order}, Protocol(warmup=10, batches=7, reps=20, alternate=True))
            for k in good:
                times[k].append(t[k].median_ms)
        roof = min(times["memcpy"])
        for key, ts in times.items():
            ms = min(ts)
            row = {"shape": f"{m}x{n}", "cand": key, "check": "PASS", "ms": round(ms, 4),
                   "ms_repeats": "/".join(f"{x:.4f}" for x in ts), "gbs": round(8 * m * n / ms / 1e6),
                   "pct_memcpy": round(100 * roof / ms, 1)}
            rows.append(row)
            print(" ".join(f"{k}={v}" for k, v in row.items()), flush=True)
        del ctx, a, b, runs, good
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    print("\n# shape | candidate | ms | % of memcpy")
    for r in rows:
        print(f"{r['shape']:10} {r['cand']:24} {r.get('ms', r['check']):>8} {r.get('pct_memcpy', '')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
