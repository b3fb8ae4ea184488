"""Candidates of the histogram's thread_private kernel (and, for 7 bins, of the study kernel
bulk_private), timed in one process beside CUB, the read roof and warp_vec (README's histogram
section says which results they produced).

Run on a GPU machine:
  python3 studies/histogram_private.py [--n BYTES[,BYTES...]] [--bins 7,256] [--json FILE] [--check-only]

For every shape (2^28 bytes unless --n says other sizes; 7 and 256 bins; uniform and one_letter
text) each candidate is a compile of kernels_cu/histogram.cu's thread_private with other -D knobs
(PRIVATE_VECS: 16-byte loads in flight per thread; for 7 bins PRIVATE_SLICED: the bit-sliced count
or the nibble counters, PRIVATE_AHEAD: steps asked of L2 ahead, PRIVATE_RING: the ring of loads;
for 256 bins PRIVATE_ATOMIC: shared atomicAdd or load-add-store, PRIVATE_RUNS: a vector of 16
equal bytes counted at once, PRIVATE_WARPS: warps of 16 KB per block), or of bulk_private
(HISTOGRAM_BULK_STUDY; BULK_WARPS, BULK_STAGES, BULK_VECS: the copy engine's ring), on a grid of
as many blocks per SM as fit (the occupancy API) times the SMs. The shipped variants (warp_vec,
thread_private, cub, read) run through the workload's own jobs. Every candidate is checked bit for
bit against the NumPy histogram first; then all of a shape's candidates are timed together under
one alternating protocol (batches visit them in order, then reversed), twice, and the better
median of the two is kept. --check-only checks every candidate, on text of every byte value too
(CUB's row differs there by design: its seventh bin of four spans y, z, '{' and '|'), and times
nothing.
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
from pmppbench.hardware.compile import load_kernels  # noqa: E402
from pmppbench.hardware.gpu import cupy  # noqa: E402
from pmppbench.measure.protocol import Protocol, measure  # noqa: E402

# The knobbed thread_private and bulk_private are studies/forms/histogram_private.cu's (the shipped
# histogram.cu has only the defaults): found through PMPPBENCH_KERNEL_PATH.
FORMS = "histogram_private"
os.environ["PMPPBENCH_KERNEL_PATH"] = os.pathsep.join(
    filter(None, [str(Path(__file__).resolve().parent / "forms"), os.environ.get("PMPPBENCH_KERNEL_PATH")]))

# bins -> candidate defines. Every candidate names all its knobs, so a change of the kernel's defaults
# leaves it the same build. 256 bins: VECS 8, ATOMIC 1, RUNS 1, WARPS 3 is the default, with the last
# step's loads at once (SERIAL_TAIL 0). Measured and slower at 7 bins (docs/histogram.md): an L2 prefetch
# ahead, the ring of loads, 6 loads, the plain add of the '{' test.
KNOBS = {
    # 7 bins: the register loop (PRIVATE_RING 0, no prefetch ahead, 8 loads, the tail one vector at a
    # time) with the nibble counters and bit-sliced (the shipped build); bulk_private, the copy engine's
    # ring (HISTOGRAM_BULK_STUDY), at 8 warps x 2 stages x 4 vectors a lane and 4 x 4 x 4. Slower than
    # these: 6 blocks per SM, 4 or 12 loads, the tail's loads at once, rings of 4 x 3 x 4, 4 x 2 x 8,
    # 2 x 4 x 8, the nibble counters in a ring, and one launch with no zeroing (the last block moving an
    # accumulator into the histogram, or reading every block's counts).
    7: [{"PRIVATE_RING": 0, "PRIVATE_AHEAD": 0, "PRIVATE_VECS": 8, "PRIVATE_MIN_BLOCKS": 5, "PRIVATE_SERIAL_TAIL": 1,
         "PRIVATE_SLICED": sl} for sl in (0, 1)]
    + [{"kernel": "bulk_private", "HISTOGRAM_BULK_STUDY": 1, "BULK_WARPS": w, "BULK_STAGES": st, "BULK_VECS": 4,
        "BULK_MIN_BLOCKS": b} for w, st, b in ((8, 2, 3), (4, 4, 5))],
    256: [{"PRIVATE_ATOMIC": a, "PRIVATE_RUNS": r, "PRIVATE_VECS": v, "PRIVATE_WARPS": w, **t}
          for a, r, v, w, t in ((1, 1, 8, 3, {"PRIVATE_SERIAL_TAIL": 1}), (1, 0, 8, 3, {}), (1, 1, 12, 3, {}))],
}
SHIPPED = ("warp_vec", "thread_private", "cub", "read")


def label(knobs: dict) -> str:
    kernel = knobs.get("kernel", "thread_private")
    return kernel + " " + " ".join(f"{k.removeprefix('PRIVATE_').removeprefix('BULK_').lower()}={v}"
                                   for k, v in knobs.items() if k != "kernel")


def threads_of(knobs: dict, bins: int) -> int:
    if knobs.get("kernel") == "bulk_private":
        return 32 * knobs["BULK_WARPS"]
    return 32 * knobs.get("PRIVATE_WARPS", 3) if bins == 256 else 256


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", default=str(1 << 28), help="bytes, comma-separated")
    ap.add_argument("--bins", default="7,256", help="bin counts, comma-separated (7, 256)")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--check-only", action="store_true",
                    help="check every candidate bit for bit (also on text of every byte value), time nothing")
    args = ap.parse_args(argv)
    cp = cupy()
    dev = device.current()
    print(f"# {dev.name}, {dev.sm_count} SMs", flush=True)
    w = workloads.get("histogram")
    rows = []
    texts = ("uniform", "one_letter") + (("every_byte",) if args.check_only else ())
    for n, bins, text in ((int(n), b, t) for n in args.n.split(",") for b in map(int, args.bins.split(","))
                          for t in texts):
        shape = {"n": n, "bins": bins, "input": "uniform" if text == "every_byte" else text}
        kernels = load_kernels("histogram", w.kernel_names(), w.defines(shape))
        inputs = w.make_inputs(shape, np.random.default_rng(0))
        if text == "every_byte":  # the uniform letter text has no byte outside a-z
            inputs = {"text": np.random.default_rng(1).integers(0, 256, n, dtype=np.uint8)}
            shape = {**shape, "input": text}
        ref = w.reference(shape, inputs, w.variant("thread_private"))
        variants = [w.variant(v) for v in SHIPPED]
        w.prebuild(shape, variants)
        ctx = w.setup(shape, inputs, kernels)
        jobs = {v.name: w.job(v, shape, ctx) for v in variants}
        runs, info = {}, {}
        for v, job in jobs.items():
            runs[v] = job.run
        text_d, histo = ctx["text"], ctx["histo"]
        for knobs in KNOBS[bins]:
            kernel = knobs.get("kernel", "thread_private")
            defines = {**w.defines(shape), **{d: v for d, v in knobs.items() if d != "kernel"}}
            k = load_kernels(FORMS, [kernel], defines)[kernel]  # the knobbed forms: studies/forms
            threads = threads_of(knobs, bins)
            per_sm = occupancy.api_active_blocks(k, threads)
            grid = max(1, min(-(-max(n // 16, 1) // threads), per_sm * dev.sm_count))
            key = label(knobs)
            info[key] = {"regs": k.registers, "per_sm": per_sm, "grid": grid}

            def run(k=k, grid=grid, threads=threads, n=n):
                histo.fill(0)
                k((grid,), (threads,), (text_d, np.uint64(n), histo))
            runs[key] = run
        good = {}
        for key, run in runs.items():
            histo.fill(0xFFFFFFFF)
            ctx["xor"].fill(0)
            run()
            cp.cuda.Device().synchronize()
            if key == "read":
                good[key] = run
                continue
            out = jobs[key].output() if key in jobs else histo
            got = cp.asnumpy(out) if hasattr(out, "get") else np.asarray(out)
            if np.array_equal(got, ref):
                good[key] = run
            else:
                rows.append({"shape": w.label(shape), "cand": key, "check": "FAIL"})
                print(f"FAIL {w.label(shape)} {key}: {got[:8]} vs {ref[:8]}", flush=True)
        if args.check_only:
            rows += [{"shape": w.label(shape), "cand": key, "check": "PASS"} for key in good]
            print(f"{w.label(shape)}: {len(good)} PASS", flush=True)
            continue
        times = {k: [] for k in good}
        for r in range(2):
            order = list(good) if r == 0 else list(good)[::-1]
            t = measure({k: good[k] for k in order}, Protocol(warmup=5, batches=7, reps=20, alternate=True))
            for k in good:
                times[k].append(t[k].median_ms)
        cub = min(times["cub"]) if "cub" in times else None
        roof = min(times["read"])
        for key, ts in times.items():
            ms = min(ts)
            row = {"shape": w.label(shape), "cand": key, "check": "PASS", "ms": round(ms, 4),
                   "ms_repeats": "/".join(f"{x:.4f}" for x in ts), "gbs": round(n / ms / 1e6),
                   "pct_read": round(100 * roof / ms, 1), "x_vs_cub": round(cub / ms, 3) if cub else None,
                   **info.get(key, {})}
            rows.append(row)
            print(" ".join(f"{k}={v}" for k, v in row.items()), flush=True)
        del ctx, jobs, runs, good
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    print("\n# shape | candidate | ms | % of read | x vs cub")
    for r in rows:
        if r["check"] == "PASS" and "ms" in r:
            print(f"{r['shape']:36} {r['cand']:58} {r['ms']:>8} {r['pct_read']:>6} {r['x_vs_cub']}")
        else:
            print(f"{r['shape']:36} {r['cand']:58} {r['check']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
