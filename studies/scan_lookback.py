"""Candidates of the scan's look-back kernels, timed in one process beside CUB and the memcpy roof
(docs/scan.md says which results they produced).

Run on a GPU machine:  python3 studies/scan_lookback.py [--sizes 20,24,26,28] [--json FILE] [--profile]

A candidate is a compile of kernels_cu/scan.cu's lookback_persistent (persistent blocks, next tile
copied to shared memory during the look-back; not shipped: docs/scan.md) with -D knobs LP_ROWS,
LP_THREADS (the tile) and LP_BLOCKS (the launch bound's blocks per SM, and the grid's: that many per
SM), or of the shipped one-block-per-tile lookback with other -D knobs: LB_ROWS and
LB_THREADS (the tile: threads x rows of 16-byte vectors), LB_MIN_BLOCKS (the launch bound's blocks
per SM), LB_PREFETCH (the tile asked of L2 before the ticket), LB_TICKET (0: the tile is the block
index, CUB's numbering, for comparison only), LB_BACKOFF (a sleep in the look-back's spin), and its
run-time `ahead` (the tile asked of L2 that many waves of resident blocks on; 0: off). The shipped
variants (lookback, cub, memcpy) run through the workload's own jobs. Every candidate is checked
against the workload's reference under its own tile count's float bound (int32: exact) before it is
timed; then all of a shape's candidates are timed together under one alternating protocol, twice,
and the better median kept.

--profile (2^26 float32 only): the LB_PROFILE builds of the shipped lookback and of lookback_staged
(SKNOBS[0]), a quarter wave ahead, after two warm calls: where each tile's block spent its time (the ticket; the load and the tile
scan; the look-back's wait; the stores' issue), in microseconds at the device's maximum SM clock
(NVML), as percentiles over the tiles.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pmppbench.hardware import device, occupancy  # noqa: E402
from pmppbench import workloads  # noqa: E402
from pmppbench.measure.check import Tolerance, compare, device_copy  # noqa: E402
from pmppbench.hardware.compile import load_kernels  # noqa: E402
from pmppbench.hardware.gpu import cupy  # noqa: E402
from pmppbench.measure.protocol import Protocol, measure  # noqa: E402
from pmppbench.workloads import scan as sc  # noqa: E402

# The knobbed look-backs and the persistent one are studies/forms/scan_lookback.cu's (the shipped
# scan.cu has only the defaults): found through PMPPBENCH_KERNEL_PATH.
FORMS = "scan_lookback"
sys.path.insert(0, str(Path(__file__).resolve().parent / "forms"))
from scan_forms import lookback_grid  # noqa: E402
os.environ["PMPPBENCH_KERNEL_PATH"] = os.pathsep.join(
    filter(None, [str(Path(__file__).resolve().parent / "forms"), os.environ.get("PMPPBENCH_KERNEL_PATH")]))

# lookback (one block per tile): (rows, threads, min blocks per SM, prefetch, ticket, backoff ns, ahead in
# waves of resident blocks, wide). The shipped kernel is (8, 256, 1, 1, 1, 0, scan.LOOKBACK_AHEAD_WAVES, 0),
# the row `lookback`. Distances ahead of 0-3 waves on 8-row tiles and 1 wave on 16 x 256 and 16 x 128
# tiles were slower than a quarter wave. LB_WIDE (1: the look-back by the whole block, 256 words a step;
# 0: by warp 0, 32 a step, the shipped kernel): its candidates (WIDE_KNOBS) are slower (docs/scan.md).
WIDE_KNOBS = [(8, 256, 4, 1, 1, 0, 0.5, 1), (8, 256, 4, 1, 1, 0, 0, 1), (8, 256, 4, 1, 1, 0, 0.25, 1),
              (12, 256, 3, 1, 1, 0, 0.5, 1)]
# Then the shipped warp-0 look-back at other distances ahead.
KNOBS = [(8, 256, 1, 1, 1, 0, ahead, 0) for ahead in (0, 0.125, 0.25, 0.375, 0.75)]
# lookback_persistent: (rows, threads, blocks per SM); all four are slower than lookback_staged (docs/scan.md).
PKNOBS = [(8, 256, 4), (8, 128, 8), (16, 128, 4), (8, 256, 3)]
STAGED_KNOBS = ("rows", "threads", "blocks", "ahead", "looker", "ticket", "backoff", "hint", "control", "ramp")
STAGED_DEFAULTS = (7, 256, 7, 0.25, 1, 0, 0, 0, 0, 0)  # the kernel without hints or ramp, a quarter wave ahead


def staged(**knobs) -> tuple:
    """A lookback_staged candidate: STAGED_KNOBS in order, each STAGED_DEFAULTS' unless given."""
    return tuple(knobs.get(k, d) for k, d in zip(STAGED_KNOBS, STAGED_DEFAULTS))


# lookback_staged (the tile in shared memory by the copy engine, so that a waiting block holds no
# registers and shared memory sets the blocks per SM): (rows, threads, blocks per SM of the launch
# bound, ahead in waves of resident blocks, looker, ticket, backoff, hint, control, ramp). What was
# measured and left out of scan.cu, each slower or no better (docs/scan.md): the scan before the
# look-back, copy-engine stores, a copy per warp's part, 8 x 128 tiles at 12 per SM; the block index's
# tile copied before the ticket (LS_SPEC); the looker reading 2 or 4 words a lane, taking the epoch's
# ticket itself, reading 2-4 windows a round trip (1-4 points slower) or polling the nearest word first;
# the first wave's prefetches skipped or delayed; narrower blocks for more tile bytes per SM (216 KB
# against 196 KB: 0.2-2.6 points slower); a two-level look-back over groups of 32 tiles (one window
# walked instead of 2.2-5.7, 1.5-3.5 points slower at 2^24-2^28). The knobs kept: LS_LOOKER (a ninth
# warp looks back while the tile lands), LS_TICKET (0: the tile by block index, the ticket only for the
# epoch), LS_HINT (L2 eviction priorities: 1, the prefetch evict_last and the copy evict_first, shipped
# with three eighths of a wave ahead; 2, the copy's alone; 3, the prefetch's alone), LS_CONTROL (the
# looker does not walk: the data movement alone, timed unchecked) and LS_RAMP (the first wave's copies
# sent out `ramp` SM cycles per block index apart, about 5, 8 and 12 ns at 1980 MHz, so that they land
# about in index order and the wave's chain runs while its later tiles' bytes still move; 10 shipped).
# Candidates by name (staged()); the first is the shipped kernel, the second the same without the ramp.
SHIPPED_STAGED = staged(ahead=0.375, hint=1, ramp=10)  # scan.py's STAGED_AHEAD_WAVES, scan.cu's LS_HINT, LS_RAMP
SKNOBS = [SHIPPED_STAGED, staged(ahead=0.375, hint=1), *(staged(ahead=0.375, hint=1, ramp=ramp) for ramp in (16, 24))]
FAMILIES = ("lookback", "persistent", "staged")
SHIPPED = ("lookback", "cub", "memcpy")
PROFILE_DEFINES = {"LB_PROFILE": 1, "LB_WIDE": 0}  # the look-back by warp 0, with time stamps


def defines_of(knobs) -> dict:
    rows, threads, blocks, prefetch, ticket, backoff, _, wide = knobs
    return {"LB_ROWS": rows, "LB_THREADS": threads, "LB_MIN_BLOCKS": blocks, "LB_PREFETCH": prefetch,
            "LB_TICKET": ticket, "LB_BACKOFF": backoff, "LB_WIDE": wide}


def label(knobs) -> str:
    rows, threads, blocks, prefetch, ticket, backoff, ahead, wide = knobs
    return (f"lookback rows={rows} threads={threads} minb={blocks} pf={prefetch} ticket={ticket} sleep={backoff} "
            f"ahead={ahead} wide={wide}")


def pdefines_of(knobs) -> dict:
    rows, threads, blocks = knobs
    return {"LP_ROWS": rows, "LP_THREADS": threads, "LP_BLOCKS": blocks}


def plabel(knobs) -> str:
    rows, threads, blocks = knobs
    return f"persistent rows={rows} threads={threads} blocks/SM={blocks}"


def sknobs(knobs) -> dict:
    """A candidate's knobs by name (a short tuple takes the defaults for the rest)."""
    return dict(zip(STAGED_KNOBS, tuple(knobs) + STAGED_DEFAULTS[len(knobs):]))


def sdefines_of(knobs) -> dict:
    k = sknobs(knobs)
    return {"LS_ROWS": k["rows"], "LS_THREADS": k["threads"], "LS_BLOCKS": k["blocks"], "LS_LOOKER": k["looker"],
            "LS_TICKET": k["ticket"], "LB_BACKOFF": k["backoff"], "LS_HINT": k["hint"], "LS_CONTROL": k["control"],
            "LS_RAMP": k["ramp"]}


def slabel(knobs) -> str:
    k = sknobs(knobs)
    return (f"staged rows={k['rows']} threads={k['threads']} blocks/SM={k['blocks']} ahead={k['ahead']} "
            f"looker={k['looker']} ticket={k['ticket']}"
            + (f" sleep={k['backoff']}" if k["backoff"] else "") + f" hint={k['hint']}"
            + (" CONTROL(no walk, unchecked)" if k["control"] else "") + (f" ramp={k['ramp']}" if k["ramp"] else ""))


def is_control(knobs) -> bool:
    """A candidate built with LS_CONTROL: timed for its data movement, its (wrong) sums not checked."""
    return bool(sknobs(knobs)["control"])


def sthreads(knobs) -> int:
    """A lookback_staged candidate's block: its tile's threads and, with LS_LOOKER, the looker warp."""
    return knobs[1] + 32 * knobs[4]


def ahead_of(k, threads: int, waves: float) -> int:
    """`ahead` in tiles: `waves` waves of the blocks of this build that are resident at once."""
    return sc.lookback_ahead(k, device.current().sm_count, waves, threads=threads)


STAMPS = 7  # scan.cu's LB_STAMPS


def profile(w, cp, kernel: str = "lookback", waves_list=(0, 1), knobs=SKNOBS[0], out_dir: Path | None = None) -> None:
    """The LB_PROFILE build at 2^26 float32, `ahead` at each of `waves_list`: the phases of each tile's
    block. `kernel`: lookback, or lookback_staged with `knobs` (SKNOBS[0], the shipped tile, unless
    told)."""
    n = 1 << 26
    shape = {"n": n, "dtype": "f32", "kind": "inclusive"}
    x = cp.asarray(w.make_inputs(shape, np.random.default_rng(0))["x"])
    out = cp.empty_like(x)
    clock_khz = device.current().sm_clock_mhz * 1e3  # NVML's maximum SM clock: the clocks -> time scale
    extra = sdefines_of(knobs) if kernel == "lookback_staged" else {}
    k = load_kernels(FORMS, [kernel], {**w.defines(shape), **PROFILE_DEFINES, **extra})[kernel]
    threads = sthreads(knobs) if extra else sc.LOOKBACK_THREADS
    tiles = sc.tiles_of(n, (knobs[0] * 4 * knobs[1]) if extra else sc.LOOKBACK_TILE)
    for waves in waves_list:
        ahead = ahead_of(k, threads, waves)
        last = (np.uint64(ahead),) + ((np.uint64(sc.ramped_blocks(k, device.current().sm_count, tiles, threads)),)
                                      if extra else ())  # lookback_staged's `ramped` after `ahead`
        status, ticket = cp.zeros(tiles * (1 + STAMPS), dtype=cp.uint64), cp.zeros(1, dtype=cp.uint64)
        for _ in range(3):  # two warm calls, then the one read
            k((tiles,), (threads,), (x, out, status, ticket, np.uint64(n), np.uint64(tiles), *last))
        cp.cuda.Device().synchronize()
        raw = cp.asnumpy(status[tiles:]).reshape(tiles, STAMPS)
        stamps = raw.astype(np.float64)
        us = stamps[:, :4] / (clock_khz / 1e3)  # clocks -> microseconds
        start = (stamps[:, 4] - stamps[:, 4].min()) / 1e3
        print(f"# profile {slabel(knobs) if extra else kernel} 2^26 f32 ahead={ahead} tiles ({waves} waves), per tile [us] p10 / p50 / p90 / "
              f"mean (SM clock {clock_khz / 1e3:.0f} MHz; resident blocks per SM "
              f"{occupancy.api_active_blocks(k, threads)})")
        for i, phase in enumerate(("ticket", "load+scan", "look-back wait", "store issue")):
            p10, p50, p90 = np.percentile(us[:, i], [10, 50, 90])
            print(f"  {phase:15} {p10:8.3f} {p50:8.3f} {p90:8.3f} {us[:, i].mean():8.3f}")
        life = us.sum(axis=1)
        print(f"  {'block life':15} {np.percentile(life, 10):8.3f} {np.median(life):8.3f} "
              f"{np.percentile(life, 90):8.3f} {life.mean():8.3f}; last block starts at {start.max():.1f} us")
        timeline(raw, us, sc.resident_blocks(k, device.current().sm_count, threads))
        if out_dir:
            name = f"profile-{kernel}-{'-'.join(str(v) for v in knobs) if extra else waves}.npy"
            np.save(out_dir / name, raw)
            print(f"  raw stamps: {out_dir / name}")


def timeline(raw, us, resident: int) -> None:
    """Where a call's time goes over the grid, from the profile's global timers (start, end) and the
    walk's windows: the first wave (the first `resident` tiles), the steady middle, the last wave."""
    tiles = len(raw)
    t0 = raw[:, 4].min()
    start, end = (raw[:, 4] - t0) / 1e3, (raw[:, 5] - t0) / 1e3  # us from the first block's start
    windows = raw[:, 6]
    print(f"  call: first block starts 0, last block ends {end.max():.2f} us; first wave ({resident} tiles) ends by "
          f"{end[:resident].max():.2f} us (median {np.median(end[:resident]):.2f})")
    steady = slice(min(resident, tiles), max(tiles - resident, min(resident, tiles)))
    if steady.stop - steady.start > resident:
        s, e = start[steady], end[steady]
        rate = (steady.stop - steady.start) / (e.max() - s.min())
        print(f"  steady middle: {rate:.1f} tiles/us from {s.min():.2f} to {e.max():.2f} us; "
              f"the last wave starts {start[-resident:].min():.2f}, ends {end.max():.2f} us")
    bands = np.array_split(np.arange(tiles), 10)
    print("  tenths of the grid: wait p50 us / windows mean / max / life p50 us")
    for b in bands:
        print(f"    tiles {b[0]:6}-{b[-1]:6}: {np.median(us[b, 2]):7.3f} {windows[b].mean():5.2f} "
              f"{int(windows[b].max()):4} {np.median(us[b].sum(axis=1)):7.3f}")
    first = np.arange(min(resident, tiles))
    for lo, hi in ((0, 32), (32, 128), (128, 512), (512, len(first))):
        b = first[lo:hi]
        if len(b):
            print(f"    first wave {lo}-{hi}: end p50 {np.median(end[b]):.2f} us, windows mean {windows[b].mean():.2f}")


def staged_build(w, cp, shape, knobs):
    """A lookback_staged candidate at `shape`: its kernel, threads, tile count, fresh status words
    and ticket, and its two last arguments (`ahead` in tiles and the ramp's first wave)."""
    k = load_kernels(FORMS, ["lookback_staged"], {**w.defines(shape), **sdefines_of(knobs)})["lookback_staged"]
    threads = sthreads(knobs)
    tiles = sc.tiles_of(shape["n"], knobs[0] * knobs[1] * 4)
    status, ticket = cp.zeros(tiles, dtype=cp.uint64), cp.zeros(1, dtype=cp.uint64)
    ramped = sc.ramped_blocks(k, device.current().sm_count, tiles, threads)
    return k, threads, tiles, status, ticket, (np.uint64(ahead_of(k, threads, knobs[3])), np.uint64(ramped))


def check_staged(w, cp, sizes, calls: int) -> int:
    """Each SKNOBS build of lookback_staged at `sizes`, both dtypes and kinds, `calls` calls in a row
    (each one checked: a rare ordering bug shows as a FAIL); returns the count of failed checks."""
    failed = 0
    for dtype in ("f32", "i32"):
        for kind in sc.KINDS:
            for n in sizes:
                shape = {"n": n, "dtype": dtype, "kind": kind}
                inputs = w.make_inputs(shape, np.random.default_rng(n))
                ref = device_copy(w.reference(shape, inputs, w.variant("lookback")))
                x = cp.asarray(inputs["x"])
                out = cp.empty_like(x)
                for knobs in (k for k in SKNOBS if not is_control(k)):
                    k, threads, tiles, status, ticket, last = staged_build(w, cp, shape, knobs)
                    tol = Tolerance("exact") if dtype == "i32" else Tolerance("elementwise", rtol=bound(knobs, n))
                    bad = 0
                    for _ in range(calls):
                        out.fill(np.nan if dtype == "f32" else -7)
                        k((tiles,), (threads,), (x, out, status, ticket, np.uint64(n), np.uint64(tiles), *last))
                        if not compare(out, ref, tol).passed:
                            bad += 1
                    failed += bad
                    print(f"{'PASS' if not bad else 'FAIL'} n={n} {dtype} {kind} {slabel(knobs)}: "
                          f"{calls - bad}/{calls} calls right", flush=True)
    return failed


def bound(knobs, n: int) -> float:
    """scan.py's look-back bound (scan.additions_depth) for this candidate's tile (either kernel's)."""
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
    ap.add_argument("--profile", action="store_true", help="the LB_PROFILE phases at 2^26 f32 only")
    ap.add_argument("--profile-staged", default="0", metavar="I,J",
                    help="with --profile: the SKNOBS entries of lookback_staged to profile (indices)")
    ap.add_argument("--profile-out", type=Path, help="with --profile: a folder for each profile's raw stamps (.npy)")
    ap.add_argument("--no-persistent", action="store_true", help="leave lookback_persistent's candidates out")
    ap.add_argument("--families", default=",".join(FAMILIES),
                    help="candidate families, comma-separated: lookback (KNOBS), persistent (PKNOBS), staged (SKNOBS)")
    ap.add_argument("--check-staged", metavar="SIZES",
                    help="only check lookback_staged's candidates at these sizes (comma-separated N), --calls each")
    ap.add_argument("--calls", type=int, default=20)
    args = ap.parse_args(argv)
    cp = cupy()
    w = workloads.get("scan")
    if args.check_staged:
        failed = check_staged(w, cp, [int(v) for v in args.check_staged.split(",")], args.calls)
        print(f"{failed} failed checks")
        return 1 if failed else 0
    if args.profile:
        profile(w, cp, "lookback", (0.25,), out_dir=args.profile_out)
        for i in args.profile_staged.split(","):
            profile(w, cp, "lookback_staged", (SKNOBS[int(i)][3],), SKNOBS[int(i)], args.profile_out)
        return 0
    families = set(args.families.split(","))
    if args.no_persistent:
        families.discard("persistent")
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
            for knobs in KNOBS if "lookback" in families else []:
                k = load_kernels(FORMS, ["lookback"], {**w.defines(shape), **defines_of(knobs)})["lookback"]
                tiles = sc.tiles_of(n, knobs[0] * knobs[1] * 4)
                status, ticket = cp.zeros(tiles, dtype=cp.uint64), cp.zeros(1, dtype=cp.uint64)
                ahead = ahead_of(k, knobs[1], knobs[6])

                def run(k=k, tiles=tiles, threads=knobs[1], status=status, ticket=ticket, ahead=ahead):
                    k((tiles,), (threads,), (x, out, status, ticket, np.uint64(n), np.uint64(tiles), np.uint64(ahead)))
                runs[label(knobs)] = run
                info[label(knobs)] = {"regs": k.registers, "tiles": tiles, "ahead": ahead, "knobs": knobs}
            for knobs in SKNOBS if "staged" in families else []:
                k, threads, tiles, status, ticket, last = staged_build(w, cp, shape, knobs)

                def srun(k=k, tiles=tiles, threads=threads, status=status, ticket=ticket, last=last):
                    k((tiles,), (threads,), (x, out, status, ticket, np.uint64(n), np.uint64(tiles), *last))
                runs[slabel(knobs)] = srun
                info[slabel(knobs)] = {"regs": k.registers, "tiles": tiles, "ahead": int(last[0]), "ramped": int(last[1]),
                                       "resident": occupancy.api_active_blocks(k, threads), "knobs": knobs}
            for knobs in PKNOBS if "persistent" in families else []:
                k = load_kernels(FORMS, ["lookback_persistent"], {**w.defines(shape), **pdefines_of(knobs)})[
                    "lookback_persistent"]
                rows_, threads, blocks = knobs
                tiles = sc.tiles_of(n, rows_ * threads * 4)
                grid = lookback_grid(n, device.current().sm_count, blocks, rows_ * threads * 4)
                status, ticket = cp.zeros(tiles, dtype=cp.uint64), cp.zeros(1, dtype=cp.uint64)

                def prun(k=k, tiles=tiles, threads=threads, grid=grid, status=status, ticket=ticket):
                    k((grid,), (threads,), (x, out, status, ticket, np.uint64(n), np.uint64(tiles)))
                runs[plabel(knobs)] = prun
                info[plabel(knobs)] = {"regs": k.registers, "tiles": tiles, "grid": grid,
                                       "resident": occupancy.api_active_blocks(k, threads), "knobs": knobs}
            good = {}
            for key, run in runs.items():
                out.fill(np.nan if dtype == "f32" else -7)
                run()
                cp.cuda.Device().synchronize()
                if key == "memcpy" or (key in info and is_control(info[key]["knobs"])):
                    good[key] = run
                    continue
                tol = (Tolerance("exact") if dtype == "i32" else
                       Tolerance("elementwise", rtol=bound(info[key]["knobs"], n) if key in info
                                 else sc.relative_bound("cub" if key == "cub" else "lookback", shape)))
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
