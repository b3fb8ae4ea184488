"""The sweep `best`'s rule was read from (docs/gemm.md, "best").

Run on the GPU:

    python3 studies/gemm_best_sweep.py --out gemm_best_sweep.csv

Every candidate configuration (pmppbench/workloads/gemm/configs.py, Config: kernel, tiles,
schedule, swizzle) on every shape of SHAPES, each checked against the float64 reference
and then timed under the protocol, with EXTRA (the size table's earlier rungs, `tuned`,
`best`, `cublas`) in the same run of the same shape, through the workload's own jobs
(pipeline.prepared / pipeline.evaluate, the code path of `pmppbench gemm`). Its output is
tests/data/gemm-best-sweep.csv (an H200); scripts/gemm_best_table.py turns such a CSV into the
rule's table. First a check-only pass of every streamk schedule on edge shapes, each
launched three times before its output is read (the arrival counters must come back to zero).
Rows go to a pmppbench result file as they finish; a per-shape summary is printed last.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pmppbench.hardware import device  # noqa: E402
from pmppbench.results import metadata  # noqa: E402
from pmppbench.measure import roofline  # noqa: E402
from pmppbench.engine.worker import pipeline  # noqa: E402
from pmppbench.results.export import files  # noqa: E402
from pmppbench.measure.check import compare  # noqa: E402
from pmppbench.hardware.gpu import cupy  # noqa: E402
from pmppbench.measure.protocol import Protocol  # noqa: E402
from pmppbench.workloads import get  # noqa: E402
from pmppbench.workloads.gemm.best import CHOICES  # noqa: E402
from pmppbench.workloads.gemm.configs import Config  # noqa: E402
from pmppbench.workloads.gemm.ladder import TUNED  # noqa: E402
from pmppbench.workloads.gemm.tiles import Tiles  # noqa: E402

W = get("gemm")

# The target shapes, then shapes where the rule's boundaries lie: 128 x 256 tiles
# filling 61% (2304^2) and 73% (3072^3) of their last wave, and tile ladders between the
# targets (768^3, 1536^3). --more adds a few beyond.
SHAPES = [
    (512, 512, 512), (1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192),
    (4096, 4096, 1024), (1024, 8192, 4096), (4096, 1024, 8192),
    (2304, 2304, 2048), (3072, 3072, 3072), (768, 768, 768), (1536, 1536, 1536), (256, 256, 256),
    (8192, 8192, 256),
]
MORE_SHAPES = [(1024, 1024, 8192), (2048, 2048, 8192), (16384, 16384, 64)]
# Beside every shape's candidates, in the same run: the earlier rungs of the size table,
# tuned, best and cuBLAS.
EXTRA = ["regtile2x2", "regtile4x4", "double_buffer", "tuned", "best", "cublas"]

TUNED16 = Tiles(128, 256, 16, 64, 64, 4, 4, 4)  # BK 16: half the barriers (B by cp.async: no spills)
WIDE = Tiles(256, 128, 8, 64, 64, 4, 4, 4)  # tuned turned on its side
T128 = Tiles(128, 128, 8, 64, 32, 2, 4, 4)  # the best 128x128 of the first sweep, 2 blocks per SM
SMALL = [Tiles(64, 64, 16, 32, 16, 1, 4, 4), Tiles(32, 64, 16, 16, 32, 1, 4, 4), Tiles(64, 64, 8, 32, 32, 1, 4, 4),
         Tiles(64, 128, 16, 32, 32, 1, 4, 4), Tiles(128, 64, 16, 32, 32, 1, 4, 4), Tiles(128, 128, 16, 32, 64, 2, 4, 4)]
# The tile ladder of the second sweep, smallest first: each doubles the FMAs per block.
LADDER_TILES = [SMALL[1], SMALL[0], SMALL[4], SMALL[5]]


def sk(tiles, schedule="dp", split=1, group_m=1, async_b=False):
    return Config("streamk", tiles, schedule, split, group_m, async_b)


# Sweep 3: the pipelined kernel. Its first form (frags: fragments double-buffered in registers,
# the barrier before the last K step, unchecked interior tiles) with the tuned tiles, turned on
# its side, with 32 x 128 warp tiles, and a 128 x 128 tile of 4 such warps (128 threads, 235
# registers: two blocks per SM, so one block's barrier overlaps the other's math); then (nf)
# double_buffer's loop with only the unchecked interior path, at BK = 8 and 16.
T128W4 = Tiles(128, 128, 8, 64, 64, 2, 4, 4)
PIPELINED = [Config("pipelined", t) for t in (TUNED, WIDE, T128W4)]
PIPELINED += [Config("pipelined", t, frags=False) for t in (TUNED, TUNED16, WIDE, Tiles(256, 128, 16, 64, 64, 4, 4, 4),
                                                             T128W4)]
# What each change gains on its own: the tuned tiles with frags but no interior path, and
# double_buffer with the 128-thread tile.
ISOLATE = [Config("pipelined", TUNED, checked=True), Config("double_buffer", T128W4)]


def tile_count(t: Tiles, m: int, n: int) -> int:
    return -(-m // t.bm) * -(-n // t.bn)


def candidates(m: int, n: int, k: int) -> list[Config]:
    """Shapes with at least half a wave of 128 x 256 tiles: those tiles whole (in streamk's
    own data-parallel path, next to `tuned`, which the sweep always runs), hybrid, all
    stream-K, BK = 16. Shapes with fewer than two waves: the smaller tiles of LADDER_TILES
    whole and stream-K, split-K 2 for the middle ones."""
    out = []
    if tile_count(TUNED, m, n) >= 66:
        out += [*PIPELINED, *ISOLATE, sk(TUNED), sk(TUNED, "hybrid", group_m=8), sk(TUNED, "streamk", group_m=8)]
    if tile_count(TUNED, m, n) < 264:
        for t in LADDER_TILES:
            out += [sk(t), sk(t, "streamk")]
        out += [sk(SMALL[4], "split", 2), sk(SMALL[5], "split", 2)]
    return out


# (2200, 4100, 24): 306 tiles of 128 x 256, more than two waves: hybrid has whole and shared tiles
# (300, 520, 64) and (1100, 1100, 100 -> 96 on the K % 8 == 0 path): pipelined's interior tiles next to edge ones
EDGES = [(129, 127, 20), (257, 260, 36), (1000, 999, 17), (33, 1, 65), (1, 1, 1), (513, 257, 1030),
         (1100, 1100, 100), (64, 132, 12), (2200, 4100, 24), (300, 520, 64), (1100, 1100, 96)]


def _edge_configs() -> list[Config]:
    configs = []
    for t in [TUNED, SMALL[0], SMALL[1]]:
        configs += [sk(t, "split", 3), sk(t, "streamk", group_m=3), sk(t, "hybrid", group_m=8)]
    configs += [sk(TUNED16, "hybrid", async_b=True), sk(WIDE, group_m=2), sk(T128, "streamk")]
    configs += [c for c in CHOICES.values() if c.kernel == "streamk"] + PIPELINED + ISOLATE
    return list(dict.fromkeys(configs))


EDGE_CONFIGS = _edge_configs()  # every schedule of the sweep's kernels (tests/gemm_emulate.py runs them too)


def check_edges() -> int:
    """Every kernel of the sweep, every schedule, on edge shapes; three launches per check."""
    variants = [c.variant() for c in EDGE_CONFIGS]
    bad = 0
    for s in EDGES:
        shape = dict(m=s[0], n=s[1], k=s[2])
        with pipeline.prepared(W, shape, ALL, 0) as (inputs, ctx):
            ref = W.reference(shape, inputs, variants[0])
            tol = W.tolerance_for(shape)
            for v in variants:
                job = W.job(v, shape, ctx)
                job.poison()
                for _ in range(3):
                    job.run()
                cupy().cuda.Device().synchronize()
                r = compare(job.output(), ref, tol)
                if not r.passed:
                    bad += 1
                    print(f"EDGE FAIL {v.name} {s}: {r.detail}", flush=True)
    print(f"edge checks: {len(EDGES) * len(variants)} runs, {bad} failed", flush=True)
    return bad


def reps_for(m, n, k) -> int:
    est_s = 2 * m * n * k / 40e12
    return max(3, min(50, int(0.015 / est_s)))


ALL: list = []


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path)
    ap.add_argument("--budget-s", type=float, default=300.0, help="stop starting new shapes after this")
    ap.add_argument("--more", action="store_true", help="also the shapes of MORE_SHAPES")
    ap.add_argument("--edges-only", action="store_true",
                    help="only the edge checks (what compute-sanitizer runs: every schedule of every kernel)")
    args = ap.parse_args()
    if args.edges_only:
        ALL.extend(c.variant() for c in EDGE_CONFIGS)
        return 1 if check_edges() else 0
    if args.out is None:
        ap.error("--out is required (unless --edges-only)")
    shapes = SHAPES + (MORE_SHAPES if args.more else [])
    t0 = time.monotonic()
    dev = device.current()
    cp = cupy()
    per_shape = {s: [c.variant() for c in candidates(*s)] for s in shapes}
    extra = [W.variant(name) for name in EXTRA]
    seen = {}
    for vs in per_shape.values():
        for v in vs:
            seen.setdefault(v.name, v)
    ALL.extend([*extra, *seen.values()])
    # one compile unit for every kernel (memoized by load_kernels): each shape reuses it
    print(f"{len(seen)} configurations, {len({v.kernel for v in ALL})} kernels", flush=True)
    bad = check_edges()
    print(f"[{time.monotonic() - t0:.0f} s] edges done", flush=True)
    meta = metadata.run_meta(0, command="studies/gemm_best_sweep.py")
    sink = files.open_sink(args.out, meta)
    summary = []
    try:
        for s in shapes:
            if time.monotonic() - t0 > args.budget_s:
                print(f"budget reached: skipping {s} and after", flush=True)
                break
            shape = dict(m=s[0], n=s[1], k=s[2])
            variants = [*extra, *per_shape[s]]
            protocol = Protocol(warmup=2, batches=3, reps=reps_for(*s))
            with pipeline.prepared(W, shape, ALL, 0) as (inputs, ctx):
                rows = pipeline.evaluate(W, shape, variants, inputs, ctx, protocol=protocol, seed=0,
                                       device_name=dev.name, synchronize=cp.cuda.Device().synchronize,
                                       ceilings=roofline.ceilings_for(dev), observer=pipeline.clock_observer)
            for r in rows:
                sink.add(r)
            summary.append((s, rows))
            print(f"[{time.monotonic() - t0:.0f} s] {s}: {len(rows)} rows", flush=True)
    finally:
        sink.close()
    for s, rows in summary:
        timed = sorted((r for r in rows if r.median_ms), key=lambda r: r.median_ms)
        failed = [r.variant for r in rows if r.check != "PASS"]
        pct = {r.variant: r.pct_of_roof or 0 for r in timed}
        cub = next(r for r in rows if r.variant == "cublas")
        configs = [r for r in timed if r.variant not in EXTRA]
        top = ", ".join(f"{r.variant} {pct[r.variant]:.1f}" for r in configs[:3])
        print(f"== {s[0]}x{s[1]}x{s[2]} cublas {(cub.median_ms or 0) * 1e3:.1f} us | best {pct.get('best', 0):.1f} "
              f"tuned {pct.get('tuned', 0):.1f} r4x4 {pct.get('regtile4x4', 0):.1f} | {top} | failed: {failed or 'none'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
