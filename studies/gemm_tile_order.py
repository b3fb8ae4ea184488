"""The wgmma rungs' tile order (gemm_wgmma.cuh wg_group_m), timed in one process beside cuBLAS of
the same precision (docs/tensor_cores.md says what it found).

Run on a GPU machine (sm_90a):  python3 studies/gemm_tile_order.py [--shapes 8192:bf16,...] [--groups 8,16]

A candidate is a rung (wgmma, wgmma_ws, wgmma_persist) built from a copy of the kernels whose
wg_group_m returns G (grouped_source; the shipped file has no switch): C walked in
groups of G tile rows, column by column inside a group (G = 1: C's row-major tile order), so that a
wave of blocks reads a patch of A and B rather than all of B for a few tile rows. The rows named by
the rung alone are the shipped kernels (the workload's own jobs: the precision's own G, 16 for BF16
and FP16, 8 for TF32). Every candidate is checked against the workload's reference under the
workload's tolerance before it is timed; then a shape's candidates are timed together under one
alternating protocol, in --rounds rounds (each in the other order); the best median is kept, and beside
it each round's ratio to cuBLAS's median of that round.
Beside each median: NVML's SM clock over the batches and the board's mean power after each batch
(one figure a round), since the 8192^3 rows run under the power cap and a tile order that reads
fewer bytes may draw less.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pmppbench.measure import clocks  # noqa: E402
from pmppbench import workloads  # noqa: E402
from pmppbench.measure.check import compare, device_copy  # noqa: E402
from pmppbench.hardware.compile import load_kernels  # noqa: E402
from pmppbench.hardware.gpu import cupy  # noqa: E402
from pmppbench.measure.protocol import Protocol, measure  # noqa: E402
from pmppbench.workloads.gemm import tensor  # noqa: E402

RUNGS = ("wgmma", "wgmma_ws", "wgmma_persist")


class PowerObserver(clocks.ClockObserver):
    """The harness's clock observer, plus the board's power (NVML, watts) after every batch."""

    def __init__(self, watch):
        super().__init__(watch)
        self.watts: dict[str, list[float]] = {}

    def after(self, name: str) -> None:
        super().after(name)
        self.watts.setdefault(name, []).append(self.watch._nv.nvmlDeviceGetPowerUsage(self.watch._h) / 1e3)


def grouped_source(g: int) -> Path:
    """gemm.cu with gemm_tc.cuh and gemm_wgmma.cuh inlined and wg_group_m returning g, in a
    temporary file (a kernel file's own includes would find the shipped headers)."""
    kernels = Path(__file__).resolve().parent.parent / "kernels_cu"
    wg = (kernels / "gemm_wgmma.cuh").read_text()
    line = "return WgElem<P>::GROUP_M;"
    assert wg.count(line) == 1, "gemm_wgmma.cuh: wg_group_m changed; update grouped_source"
    tc = (kernels / "gemm_tc.cuh").read_text().replace('#include "gemm_wgmma.cuh"', wg.replace(line, f"return {g};"))
    path = Path(tempfile.gettempdir()) / f"gemm_group_{g}.cu"
    path.write_text((kernels / "gemm.cu").read_text().replace('#include "gemm_tc.cuh"', tc))
    return path


def candidates(w, shape, ctx, groups, rungs=RUNGS) -> dict:
    """name -> job: the shipped kernels of `rungs` and cuBLAS (the workload's own jobs), then each
    rung built from grouped_source(G) for every G of `groups`, on the same buffers and TMA maps."""
    p = shape["precision"]
    jobs = {v.name: w.job(v, shape, ctx) for v in w.variants_for(shape) if v.name in (*rungs, "cublas")}
    for g in groups:
        for rung in rungs:
            v = w.variant(rung)
            expr = tensor.kernel_for(v, p, shape)
            kernel = load_kernels("gemm", [expr], source=grouped_source(g))[expr]
            own = ctx.with_kernels({expr: kernel})  # tensor_job finds this build's kernel under its name
            jobs[f"{rung} G={g}"] = w.job(replace(v, kernel=expr), shape, own)
    return jobs


def checked(jobs: dict, ref, tol) -> dict:
    """name -> (passed, detail): each job run once on a poisoned output and compared with the reference."""
    cp = cupy()
    out = {}
    for name, job in jobs.items():
        job.poison()
        job.run()
        cp.cuda.Device().synchronize()
        result = compare(job.output(), ref, tol)
        out[name] = (result.passed, result.detail)
    return out


def shape_of(spec: str) -> dict:
    """'8192:bf16' (a cube) or '4096x4096x1024:fp16' -> the workload's shape."""
    dims, precision = spec.split(":")
    m, n, k = (int(v) for v in dims.split("x")) if "x" in dims else (int(dims),) * 3
    return {"m": m, "n": n, "k": k, "precision": precision}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", default="8192:bf16,8192:fp16,4096:bf16,4096x4096x1024:bf16")
    ap.add_argument("--groups", default="1,8,16", help="tile-order groups G to build beside the shipped kernels")
    ap.add_argument("--rungs", default=",".join(RUNGS))
    ap.add_argument("--batches", type=int, default=5, help="timed batches a candidate a round (20 calls each)")
    ap.add_argument("--rounds", type=int, default=2, help="alternating rounds, each in the other order")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    cp = cupy()
    w = workloads.get("gemm")
    watch = clocks.watch()
    rungs = args.rungs.split(",")
    rows = []
    for spec in args.shapes.split(","):
        shape = shape_of(spec)
        label = w.label(shape)
        inputs = w.make_inputs(shape, np.random.default_rng(0))
        variants = [v for v in w.variants_for(shape) if v.name in (*rungs, "cublas")]
        ref = device_copy(w.reference(shape, inputs, variants[0]))
        tol = w.tolerance_for(shape)
        ctx = w.setup(shape, inputs, {})
        jobs = candidates(w, shape, ctx, [int(g) for g in args.groups.split(",")], rungs)
        good = {}
        for name, (passed, detail) in checked(jobs, ref, tol).items():
            print(f"{'PASS' if passed else 'FAIL'} {label} {name}: {detail}", flush=True)
            if passed:
                good[name] = jobs[name].run
            else:
                rows.append({"shape": label, "cand": name, "check": "FAIL", "detail": detail})
        times = {k: [] for k in good}
        clock = {k: [] for k in good}
        watts = {k: [] for k in good}
        for r in range(args.rounds):
            order = list(good) if r % 2 == 0 else list(good)[::-1]
            obs = PowerObserver(watch) if watch.available else None
            t = measure({k: good[k] for k in order}, Protocol(warmup=3, batches=args.batches, reps=20, alternate=True),
                        observer=obs)
            for k in good:
                times[k].append(t[k].median_ms)
                if obs:
                    clock[k].append(obs.summary(k))
                    watts[k].append(float(np.mean(obs.watts.get(k, [0.0]))))
        flops = 2.0 * shape["m"] * shape["n"] * shape["k"]
        best_cublas = min(times["cublas"]) if "cublas" in times else None
        for key, ts in times.items():
            ms = min(ts)
            row = {"shape": label, "cand": key, "check": "PASS", "ms": round(ms, 4),
                   "ms_repeats": "/".join(f"{v:.4f}" for v in ts), "tflops": round(flops / ms / 1e9, 1),
                   "pct_cublas": round(100 * best_cublas / ms, 1) if best_cublas else None,
                   # against cuBLAS's median of the same round: the batches shared its clocks
                   "pct_cublas_rounds": "/".join(f"{100 * c / v:.1f}" for c, v in zip(times["cublas"], ts))
                   if "cublas" in times else "",
                   "clocks": clock[key], "watts": [round(x, 1) for x in watts[key]]}
            rows.append(row)
            print(" ".join(f"{k}={v}" for k, v in row.items()), flush=True)
        del ctx, jobs, good, ref
        cp.get_default_memory_pool().free_all_blocks()
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    print("\n# shape | candidate | ms (each round) | TFLOP/s | % of cuBLAS (best medians) | % of cuBLAS each round | W")
    for r in rows:
        if r["check"] == "PASS":
            print(f"{r['shape']:28} {r['cand']:20} {r['ms_repeats']:>16} {r['tflops']:>8} {r['pct_cublas']:>6} "
                  f"{r['pct_cublas_rounds']:>12} "
                  f"{'/'.join(str(x) for x in r['watts'])}")
        else:
            print(f"{r['shape']:28} {r['cand']:20} FAIL {r['detail']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
