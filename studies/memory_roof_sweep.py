"""Candidate configurations of the coarsened transpose and stencil kernels, timed in one process
against a device-to-device memcpy of the same bytes (docs/transpose.md, docs/stencil.md).

Run on a GPU machine:  python3 studies/memory_roof_sweep.py [--before DIR] [--final] [--json FILE]

For every shape (transpose 8192^2 and 4096^2; stencil n = 2^24 and 2^22 at R = 2 and 32) each
candidate is first checked against the float64/NumPy reference (bit-exact for the transpose,
the running-sum bound for the stencil), then all candidates of the shape are timed together
under one alternating protocol (batches visit the candidates in order, then reversed), twice.
The `memcpy` row is cudaMemcpyAsync device-to-device of the bytes the kernel reads plus
writes (8 bytes per element); `copy4` is a one-float4-per-thread SM copy kernel.

Candidates are template instantiations of the study kernels in studies/memory_roof/ plus,
with --before DIR, the coarsened kernels of another tree (DIR/transpose.cu, DIR/stencil.cu,
e.g. from `git show REV:kernels_cu/stencil.cu`), so that "before" and "after" share one run. With --study3 the tile orders of the
transpose and the stencil's latency candidates (ordered<> and pipe<> in the study kernels) are
timed next to memcpy and the kernel the workload runs now (sweep3.txt). With --final only three rows per shape are timed: memcpy, the earlier build's
coarsened kernel and this build's `coarsened` variant, launched through the workload itself.

Grid modes for the persistent transpose kernels (the block loops over tiles blockIdx.x, +gridDim.x, ...):
  tiles  one block per tile (the classic launch)
  slots  min(tiles, resident blocks per SM x SMs): one full wave of blocks
  waves  rounds = ceil(tiles / slots), grid = ceil(tiles / rounds): every block gets the same
         number of tiles (at most one fewer), so no block is left running alone at the end
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

from pmppbench.hardware import device, occupancy
from pmppbench import workloads
from pmppbench.measure.check import Tolerance, compare
from pmppbench.hardware.compile import kernels_from, load_kernels
from pmppbench.hardware.gpu import cupy
from pmppbench.measure.protocol import Protocol, measure
from pmppbench.workloads.stencil import COARSE_C, U, coarsened_outputs_per_block, coarsened_threads, stencil_reference

COPY4 = r"""
extern "C" __global__ void copy4(const float4* __restrict__ a, float4* __restrict__ b, long long n4) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) b[i] = a[i];
}
"""


STUDY = Path(__file__).resolve().parent / "memory_roof"


def grid_for(mode: str, tiles: int, slots: int) -> int:
    if mode == "tiles":
        return tiles
    if mode == "slots":
        return min(tiles, slots)
    rounds = math.ceil(tiles / slots)
    return math.ceil(tiles / rounds)


def raw_module(code: str, names: list[str], defines: dict | None = None):
    cp = cupy()
    opts = ("-std=c++17", *(f"-D{k}={v}" for k, v in (defines or {}).items()))  # CuPy adds the arch
    return cp.RawModule(code=code, options=opts, name_expressions=names)


class Table:
    def __init__(self, log=None):
        self.rows = []
        self.log = log

    def add(self, **row):
        self.rows.append(row)
        if self.log:
            print(" ".join(f"{k}={v}" for k, v in row.items()), file=self.log, flush=True)


def time_all(runs: dict, reps: int, repeats: int = 2) -> dict[str, list[float]]:
    """Median ms per call of every run, `repeats` times, the candidate order reversed each time."""
    out = {k: [] for k in runs}
    names = list(runs)
    for r in range(repeats):
        order = names if r % 2 == 0 else names[::-1]
        t = measure({k: runs[k] for k in order}, Protocol(warmup=10, batches=7, reps=reps, alternate=True))
        for k in names:
            out[k].append(t[k].median_ms)
    return out


def add_timed(table, good: dict, reps: int, nbytes: int, info: dict, **where) -> None:
    """Time the candidates that passed (`good`, memcpy among them) and add their PASS rows:
    the best of the repeats, GB/s for `nbytes` a call, and % of memcpy's best in the same run."""
    times = time_all(good, reps=reps)
    roof = min(times["memcpy"])
    for key, ts in times.items():
        ms = min(ts)
        table.add(**where, cand=key, check="PASS", ms=f"{ms:.4f}", ms_repeats="/".join(f"{t:.4f}" for t in ts),
                  gbs=f"{nbytes / ms / 1e6:.0f}", pct_memcpy=f"{100 * roof / ms:.1f}", **info.get(key, {}))


# ---- transpose -------------------------------------------------------------------------

T_CANDIDATES = [
    # (tile, rows, vec, prefetch, cache hint: 0 none, 1 streaming stores, 2 streaming loads and
    #  stores, min blocks per SM for __launch_bounds__, grid modes)
    (64, 8, 1, False, 0, 8, ("tiles",)),
    (64, 8, 1, False, 1, 8, ("tiles",)),
    (64, 8, 1, False, 2, 8, ("tiles",)),
    (64, 8, 2, False, 1, 8, ("tiles",)),
    (64, 8, 4, False, 1, 8, ("tiles",)),
    (64, 8, 4, False, 2, 8, ("tiles",)),
    (64, 8, 4, True, 1, 8, ("waves",)),
    (64, 16, 1, False, 1, 4, ("tiles",)),
    (32, 8, 1, False, 1, 8, ("tiles",)),
    (32, 8, 4, False, 1, 8, ("tiles",)),
]


def t_name(tile, rows, vec, prefetch, cs, minb):
    return f"coarsened<{tile}, {rows}, {vec}, {str(prefetch).lower()}, {cs}, {minb}>"


def sweep_transpose(table: Table, before: Path | None):
    cp = cupy()
    dev = device.current()
    names = [t_name(*c[:6]) for c in T_CANDIDATES]
    t0 = time.time()
    with kernels_from(STUDY):
        kernels = load_kernels("transpose", names)
    print(f"# transpose: {len(names)} kernels compiled in {time.time() - t0:.1f} s", flush=True)
    olds = {}
    if before:
        text = (before / "transpose.cu").read_text()
        store = "dst[size_t(j * ROWS) * m + i * TILE_DIM] = tile[c][r];"
        assert store in text
        for label, code in (("before coarsened<64>", text),
                            ("before coarsened<64> + stcs", text.replace(store, "__stcs(&" + store.replace(" = ", ", ").replace(";", ");")))):
            olds[label] = raw_module(code, ["coarsened<64>"]).get_function("coarsened<64>")
    copy4 = cp.RawModule(code=COPY4).get_function("copy4")
    for m, n in ((8192, 8192), (4096, 4096)):
        a_host = np.random.default_rng(0).standard_normal((m, n), dtype=np.float32)
        ref = np.ascontiguousarray(a_host.T)
        a = cp.asarray(a_host)
        b = cp.empty(m * n, dtype=cp.float32)
        runs, info = {}, {}
        nbytes = 4 * m * n
        runs["memcpy"] = lambda: b.data.copy_from_device_async(a.data, nbytes)
        n4 = m * n // 4
        runs["copy4"] = lambda: copy4(((n4 + 255) // 256,), (256,), (a, b, np.int64(n4)))
        for label, old in olds.items():
            grid = ((n + 63) // 64, (m + 63) // 64)
            runs[label] = (lambda g=grid, old=old: old(g, (32, 8), (a, b, np.uint64(m), np.uint64(n))))
        for cand, name in zip(T_CANDIDATES, names):
            tile, rows, *_ = cand
            k = kernels[name]
            per_sm = occupancy.api_active_blocks(k, 32 * rows)
            tiles_x = (n + tile - 1) // tile
            tiles = tiles_x * ((m + tile - 1) // tile)
            for mode in cand[6]:
                g = grid_for(mode, tiles, per_sm * dev.sm_count)
                key = f"{name} {mode}"
                info[key] = dict(regs=k.registers, per_sm=per_sm, grid=g, tiles=tiles)
                runs[key] = (lambda k=k, g=g, rows=rows, tx=tiles_x:
                             k((g,), (32, rows), (a, b, np.uint64(m), np.uint64(n), np.uint64(tx))))
        good = {}
        for key, fn in runs.items():
            b.fill(np.nan)
            try:
                fn()
                cp.cuda.Device().synchronize()
            except Exception as exc:  # noqa: BLE001 - one candidate's launch failure is its row
                table.add(workload="transpose", shape=f"{m}x{n}", cand=key, check=f"ERROR {exc}")
                continue
            out = b.get().reshape((m, n) if key in ("memcpy", "copy4") else (n, m))
            ok = compare(out, a_host if key in ("memcpy", "copy4") else ref, Tolerance("exact")).passed
            if ok:
                good[key] = fn
            else:
                table.add(workload="transpose", shape=f"{m}x{n}", cand=key, check="FAIL")
        add_timed(table, good, 20, 8 * m * n, info, workload="transpose", shape=f"{m}x{n}")


# ---- stencil ---------------------------------------------------------------------------

S_CANDIDATES = [
    # (threads, c, path: 1 shared tile, 2 shared tile + chunked first window, 3 register window;
    #  streaming stores)
    (128, 15, 1, False),
    (128, 15, 1, True),
    (128, 15, 2, False),
    (128, 15, 2, True),
    (128, 7, 2, False),
    (128, 9, 2, False),
    (128, 11, 2, False),
    (64, 15, 2, False),
    (256, 15, 2, False),
    (128, 1, 3, False),  # R <= 4 only
    (128, 1, 3, True),
    (256, 1, 3, False),
]


def s_name(threads, c, path, cs):
    return f"coarsened<{threads}, {c}, {path}, {str(cs).lower()}>"


def running_bound(radius: int, c: int) -> float:
    m = 2 * radius + 1
    return (m / 2 + (c - 1) * (m + 4) / m + 3) * U


def sweep_stencil(table: Table, before: Path | None):
    cp = cupy()
    copy4 = cp.RawModule(code=COPY4).get_function("copy4")
    for radius in (2, 32):
        cands = [c for c in S_CANDIDATES if c[2] != 3 or radius <= 4]
        names = [s_name(*c) for c in cands]
        t0 = time.time()
        with kernels_from(STUDY):
            kernels = load_kernels("stencil", names, {"RADIUS": radius})
        print(f"# stencil R={radius}: {len(names)} kernels compiled in {time.time() - t0:.1f} s", flush=True)
        old = None
        if before:
            old = raw_module((before / "stencil.cu").read_text(), ["coarsened<128, 31>"],
                             {"RADIUS": radius}).get_function("coarsened<128, 31>")
        for n in (1 << 24, 1 << 22):
            x_host = np.random.default_rng(1).random(n, dtype=np.float32) * 2 - 1
            ref = stencil_reference(x_host, radius)
            x = cp.asarray(x_host)
            y = cp.empty(n, dtype=cp.float32)
            runs, info, bounds = {}, {}, {}
            runs["memcpy"] = lambda: y.data.copy_from_device_async(x.data, 4 * n)
            runs["copy4"] = lambda: copy4(((n // 4 + 255) // 256,), (256,), (x, y, np.int64(n // 4)))
            if old is not None:
                runs["before coarsened<128, 31>"] = lambda: old(((n + 3967) // 3968,), (128,), (x, y, np.int64(n)))
                bounds["before coarsened<128, 31>"] = running_bound(radius, 31)
            for cand in cands:
                threads, c, path, _cs = cand
                name = s_name(*cand)
                k = kernels[name]
                per_sm = occupancy.api_active_blocks(k, threads)
                per_block = 4 * threads if path == 3 else threads * c
                g = (n + per_block - 1) // per_block
                key = name
                info[key] = dict(regs=k.registers, per_sm=per_sm, grid=g)
                bounds[key] = (2 * radius + 1) / 2 * U + 3 * U if path == 3 else running_bound(radius, c)
                runs[key] = lambda k=k, g=g, t=threads: k((g,), (t,), (x, y, np.int64(n)))
            good = {}
            for key, fn in runs.items():
                y.fill(np.nan)
                try:
                    fn()
                    cp.cuda.Device().synchronize()
                except Exception as exc:  # noqa: BLE001
                    table.add(workload="stencil", shape=f"{n} R={radius}", cand=key, check=f"ERROR {exc}")
                    continue
                out = y.get()
                if key in ("memcpy", "copy4"):
                    ok = compare(out, x_host, Tolerance("exact")).passed
                else:
                    ok = compare(out, ref, Tolerance("elementwise", atol=bounds[key])).passed
                if ok:
                    good[key] = fn
                else:
                    table.add(workload="stencil", shape=f"{n} R={radius}", cand=key, check="FAIL")
            add_timed(table, good, 100, 8 * n, info, workload="stencil", shape=f"{n} R={radius}")


# ---- study 3: tile orders (transpose), latency at 2^22 (stencil) -----------------------

T3_CANDIDATES = [(0, 2), (2, 2), (4, 2), (8, 2), (16, 2), (32, 2), (64, 2), (128, 2), (-8, 2), (-32, 2),
                 (16, 1), (32, 1), (32, 0), (0, 3), (32, 3)]  # ordered<GROUP, CS>

S3_PIPES = [  # pipe<THREADS, C, TPB, ASYNC, WARP>, R > 4 only
    (128, 9, 1, False, False), (128, 9, 2, False, False), (128, 9, 1, True, False), (128, 9, 2, True, False),
    (128, 9, 4, True, False), (128, 9, 1, False, True), (128, 9, 2, False, True), (128, 9, 2, True, True),
    (128, 9, 4, True, True), (256, 9, 1, False, True), (256, 9, 2, True, True), (64, 9, 2, True, True),
    (128, 7, 2, True, True), (128, 11, 2, True, True),
]
S3_REGISTER = [(128, True), (256, True), (512, True), (256, False)]  # coarsened<THREADS, 1, 3, CS>, R <= 4


def pipe_name(threads, c, tpb, asyn, warp):
    return f"pipe<{threads}, {c}, {tpb}, {str(asyn).lower()}, {str(warp).lower()}>"


def study3_transpose(table: Table, repeats: int):
    cp = cupy()
    names = [f"ordered<{g}, {cs}>" for g, cs in T3_CANDIDATES]
    with kernels_from(STUDY):
        kernels = load_kernels("transpose", names)
    now = load_kernels("transpose", ["coarsened<64>"])["coarsened<64>"]
    for m, n in ((8192, 8192), (4096, 4096)):
        a_host = np.random.default_rng(0).standard_normal((m, n), dtype=np.float32)
        ref = np.ascontiguousarray(a_host.T)
        a = cp.asarray(a_host)
        b = cp.empty(m * n, dtype=cp.float32)
        grid, args = ((n + 63) // 64, (m + 63) // 64), (a, b, np.uint64(m), np.uint64(n))
        runs = {"memcpy": lambda: b.data.copy_from_device_async(a.data, 4 * m * n),
                "now coarsened<64>": lambda: now(grid, (32, 8), args)}  # the kernel the workload runs
        for name in names:
            runs[name] = lambda k=kernels[name]: k(grid, (32, 8), args)
        good = {}
        for key, fn in runs.items():
            b.fill(np.nan)
            fn()
            cp.cuda.Device().synchronize()
            out = b.get().reshape((m, n) if key == "memcpy" else (n, m))
            if np.array_equal(out, a_host if key == "memcpy" else ref):
                good[key] = fn
            else:
                table.add(workload="transpose", shape=f"{m}x{n}", cand=key, check="FAIL")
        del ref
        times = time_all(good, reps=20, repeats=repeats)
        roof = min(times["memcpy"])
        for key, ts in times.items():
            ms = min(ts)
            regs = kernels[key].registers if key in kernels else ""
            table.add(workload="transpose", shape=f"{m}x{n}", cand=key, check="PASS", ms=f"{ms:.4f}",
                      ms_repeats="/".join(f"{t:.4f}" for t in ts), gbs=f"{8 * m * n / ms / 1e6:.0f}",
                      pct_memcpy=f"{100 * roof / ms:.1f}", regs=regs)
        del a, b


def study3_stencil(table: Table, repeats: int):
    cp = cupy()
    for radius in (2, 32):
        if radius <= 4:
            cands = {s_name(t, 1, 3, cs): (t, 4 * t) for t, cs in S3_REGISTER}
        else:
            cands = {s_name(128, 9, 2, True): (128, 128 * 9)}
            cands.update({pipe_name(*p): (p[0], p[0] * p[1] * p[2]) for p in S3_PIPES})
        with kernels_from(STUDY):
            kernels = load_kernels("stencil", list(cands), {"RADIUS": radius})
        w = workloads.get("stencil")
        now_name = w.variant("coarsened").kernel  # the kernel the workload runs, with its geometry
        now = load_kernels("stencil", [now_name], {"RADIUS": radius})[now_name]
        now_out, now_threads = coarsened_outputs_per_block(radius), coarsened_threads(radius)
        for n in (1 << 24, 1 << 22):
            x_host = np.random.default_rng(1).random(n, dtype=np.float32) * 2 - 1
            ref = stencil_reference(x_host, radius)
            x = cp.asarray(x_host)
            y = cp.empty(n, dtype=cp.float32)
            runs = {"memcpy": lambda: y.data.copy_from_device_async(x.data, 4 * n),
                    "now coarsened": lambda: now(((n + now_out - 1) // now_out,), (now_threads,), (x, y, np.int64(n)))}
            info = {}
            for name, (threads, per_block) in cands.items():
                k = kernels[name]
                g = (n + per_block - 1) // per_block
                info[name] = dict(regs=k.registers, per_sm=occupancy.api_active_blocks(k, threads), grid=g)
                runs[name] = lambda k=k, g=g, t=threads: k((g,), (t,), (x, y, np.int64(n)))
            good, outs = {}, {}
            for key, fn in runs.items():
                y.fill(np.nan)
                fn()
                cp.cuda.Device().synchronize()
                out = y.get()
                if key == "memcpy":
                    ok = np.array_equal(out, x_host)
                else:
                    c = COARSE_C if key.startswith("now") else int(key.split(", ")[1])
                    bound = (2 * radius + 1) / 2 * U + 3 * U if radius <= 4 else running_bound(radius, c)
                    ok = compare(out, ref, Tolerance("elementwise", atol=bound)).passed
                    outs[key] = out
                if ok:
                    good[key] = fn
                else:
                    table.add(workload="stencil", shape=f"{n} R={radius}", cand=key, check="FAIL")
            times = time_all(good, reps=100, repeats=repeats)
            roof = min(times["memcpy"])
            for key, ts in times.items():
                ms = min(ts)
                # same tiles, same order: bit for bit the kernel the workload runs now (C = 9)
                same = "" if key == "memcpy" else str(np.array_equal(outs[key], outs["now coarsened"]))
                table.add(workload="stencil", shape=f"{n} R={radius}", cand=key, check="PASS", ms=f"{ms:.4f}",
                          ms_repeats="/".join(f"{t:.4f}" for t in ts), gbs=f"{8 * n / ms / 1e6:.0f}",
                          pct_memcpy=f"{100 * roof / ms:.1f}", bits_as_now=same, **info.get(key, {}))
            del x, y


# ---- before vs after -------------------------------------------------------------------

FINAL_SHAPES = {
    "transpose": [{"m": 8192, "n": 8192}, {"m": 4096, "n": 4096}],
    "stencil": [{"n": n, "radius": r} for r in (2, 32) for n in (1 << 24, 1 << 22)],
}


def before_stencil(text: str, radius: int) -> tuple[str, int, int, int]:
    """(name, threads, outputs per block, C) of an earlier build's coarsened stencil: fb7189f's
    coarsened<128, 9> (register window of 512 outputs for R <= 4, 1152-output tiles beyond;
    the same summation order and bound as this build's), or 7c56340's coarsened<128, 31>."""
    if "REGISTER_MAX_R" in text:
        return "coarsened<128, 9>", 128, 512 if radius <= 4 else 1152, 9
    return "coarsened<128, 31>", 128, 3968, 31


def final(table: Table, before: Path | None):
    """memcpy, the earlier build's coarsened and this build's, per shape, in one alternating protocol."""
    cp = cupy()
    for name, shapes in FINAL_SHAPES.items():
        w = workloads.get(name)
        for shape in shapes:
            label = w.label(shape)
            variants = [w.variant("coarsened"), w.variant("memcpy")]
            kernels = load_kernels(name, w.kernel_names(), w.defines(shape))
            inputs = w.make_inputs(shape, np.random.default_rng(0))
            ctx = w.setup(shape, inputs, kernels)
            jobs = {v.name: w.job(v, shape, ctx) for v in variants}
            if before:
                if name == "transpose":
                    m, n = shape["m"], shape["n"]
                    old = raw_module((before / "transpose.cu").read_text(), ["coarsened<64>"]).get_function(
                        "coarsened<64>")
                    a, b = ctx["a"], ctx["b"]
                    run = (lambda old=old, a=a, b=b, m=m, n=n: old(((n + 63) // 64, (m + 63) // 64), (32, 8),
                                                                  (a, b, np.uint64(m), np.uint64(n))))
                    jobs["before"] = type(jobs["coarsened"])(run=run, output=lambda b=b, m=m, n=n: b.reshape(n, m).get(),
                                                             poison=lambda b=b: b.fill(np.nan))
                else:
                    n = shape["n"]
                    text = (before / "stencil.cu").read_text()
                    kname, threads, per_block, before_c = before_stencil(text, shape["radius"])
                    old = raw_module(text, [kname], w.defines(shape)).get_function(kname)
                    x, y = ctx["x"], ctx["y"]
                    run = (lambda old=old, x=x, y=y, n=n, t=threads, b=per_block:
                           old(((n + b - 1) // b,), (t,), (x, y, np.int64(n))))
                    jobs["before"] = type(jobs["coarsened"])(run=run, output=y.get, poison=lambda y=y: y.fill(np.nan))
            tol = w.tolerance_for(shape)
            good = {}
            for key, job in jobs.items():
                job.poison()
                job.run()
                cp.cuda.Device().synchronize()
                ref = w.reference(shape, inputs, w.variant("memcpy" if key == "memcpy" else "coarsened"))
                rule = tol
                if name == "stencil" and key == "before" and before_c == 31:  # C = 31: the earlier, looser bound
                    m = 2 * shape["radius"] + 1
                    rule = Tolerance("elementwise", atol=(m / 2 + 30 * (m + 4) / m + 3) * U)
                result = compare(job.output(), ref, rule)
                if result.passed:
                    good[key] = job.run
                else:
                    table.add(workload=name, shape=label, cand=key, check=f"FAIL {result.detail}")
            times = time_all(good, reps=20 if name == "transpose" else 100)
            roof = min(times["memcpy"])
            for key, ts in times.items():
                ms = min(ts)
                table.add(workload=name, shape=label, cand=key, check="PASS", ms=f"{ms:.4f}",
                          ms_repeats="/".join(f"{t:.4f}" for t in ts), gbs=f"{w.traffic(shape, w.variant('memcpy')).bytes / ms / 1e6:.0f}",
                          pct_memcpy=f"{100 * roof / ms:.1f}")
            ctx.close()
            del ctx, jobs, good


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", type=Path, help="folder with the earlier transpose.cu and stencil.cu")
    ap.add_argument("--json", type=Path, help="write every row here")
    ap.add_argument("--log", type=Path, help="one line per row as it is measured")
    ap.add_argument("--only", choices=("transpose", "stencil"))
    ap.add_argument("--final", action="store_true", help="only memcpy, --before's coarsened and this build's")
    ap.add_argument("--study3", action="store_true", help="tile orders and stencil latency candidates (sweep3)")
    ap.add_argument("--repeats", type=int, default=3, help="--study3: alternating protocols per shape")
    args = ap.parse_args(argv)
    dev = device.current()
    print(f"# {dev.name}, {dev.sm_count} SMs, L2 {dev.l2_bytes >> 20} MiB, driver {dev.driver}", flush=True)
    table = Table(args.log.open("w") if args.log else None)
    if args.final:
        final(table, args.before)
    elif args.study3:
        if args.only in (None, "transpose"):
            study3_transpose(table, args.repeats)
        if args.only in (None, "stencil"):
            study3_stencil(table, args.repeats)
    else:
        if args.only in (None, "transpose"):
            sweep_transpose(table, args.before)
        if args.only in (None, "stencil"):
            sweep_stencil(table, args.before)
    if args.json:
        args.json.write_text(json.dumps(table.rows, indent=1))
    print("\n# shape | candidate | ms (min of repeats) | % of memcpy | grid")
    for r in table.rows:
        cand = r["cand"].replace("coarsened", "c").replace(", ", ",")
        if r.get("check") == "PASS":
            print(f"{r['shape']:12} {cand:28} {r['ms']:>7} {r['pct_memcpy']:>6} {r.get('grid', '')} "
                  f"{r.get('regs', '')} {r.get('per_sm', '')} {r.get('bits_as_now', '')}")
        else:
            print(f"{r['shape']:12} {cand:28} {r['check'][:60]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
