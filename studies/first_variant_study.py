"""What the first variant timed on a shape found different (docs/first_variant.md): on a GPU.

One transpose shape (8192^2 by default) is set up once, as the runner does. Then each condition
of a set is repeated in rotation, each repetition after GAP seconds of idle GPU: what the
condition does, then the course protocol on `coarsened` alone (3 warmup, 5 batches x 20 calls),
with the protocol's own L2 settle off so that the condition decides the state.

  --set warm    idle, back-to-back, busy-but-no-memory kernels, pre-rolls of memcpy or of the
                variant's own calls, orders within one measure() and a timer reused
  --set copies  small and large transfers into, from and beside the variant's buffers, and a
                fill kernel elsewhere: which ones switch the slow state on or off
  --set l2      what the L2 holds when the variant starts: scratch, its input or output read
                with ordinary loads, an unrelated buffer, memcpy before, and the settle after

NVML's SM/memory clocks, performance state and power are sampled before and after each
condition. Prints one JSON line per repetition and a summary table (ratios to the set's first
condition); results/h200/first-variant/ holds the H200's output.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

import numpy as np


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=8192)
    ap.add_argument("--variant", default="coarsened")
    ap.add_argument("--repeats", type=int, default=6)
    ap.add_argument("--gap", type=float, default=0.5, help="idle seconds before each condition")
    ap.add_argument("--pre-ms", type=float, default=20.0)
    ap.add_argument("--set", choices=["warm", "copies", "l2"], default="warm",
                    help="warm: pre-rolls and orders; copies: which transfer leaves the slow state; "
                         "l2: what the L2 holds when the variant starts")
    args = ap.parse_args()

    from pmppbench import workloads
    from pmppbench.hardware.gpu import cupy
    from pmppbench.measure.protocol import EventTimer, Protocol, _hold_launcher, measure
    from pmppbench.engine.worker.pipeline import job_for, prepared

    cp = cupy()
    import pynvml

    pynvml.nvmlInit()
    h = pynvml.nvmlDeviceGetHandleByIndex(0)

    def nv():
        return {"sm": pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM),
                "mem": pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_MEM),
                "pstate": pynvml.nvmlDeviceGetPerformanceState(h),
                "watts": pynvml.nvmlDeviceGetPowerUsage(h) / 1000}

    wl = workloads.get("transpose")
    shape = {"m": args.n, "n": args.n}
    variants = [wl.variant(args.variant)]
    spin_all = cp.RawKernel(r"""
    extern "C" __global__ void spin_all(unsigned long long ns) {
        unsigned long long t0, t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
        float x = threadIdx.x;
        do { for (int i = 0; i < 64; ++i) x = x * 0.999f + 0.001f;
             asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
        if (x == 12345.f) asm volatile("trap;");
    }""", "spin_all")
    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    hold = _hold_launcher()
    a = cp.empty(args.n * args.n, dtype=cp.float32)
    b = cp.empty_like(a)
    a.fill(1.0)
    protocol = Protocol(warmup=3, batches=5, reps=20, settle=False)  # the conditions set the state

    with prepared(wl, shape, variants, 0) as (inputs, ctx):
        job = job_for(wl, variants[0], shape, ctx)
        job.poison()
        job.run()  # the check's run
        cp.cuda.Device().synchronize()

        def for_ms(fn, ms):
            t0 = time.perf_counter()
            k = 1
            while (time.perf_counter() - t0) * 1e3 < ms:
                for _ in range(k):
                    fn()
                cp.cuda.Device().synchronize()
                k = min(2 * k, 64)

        def copy():
            cp.cuda.runtime.memcpyAsync(b.data.ptr, a.data.ptr, a.nbytes, 3, cp.cuda.get_current_stream().ptr)

        pre = args.pre_ms
        sync = cp.cuda.Device().synchronize
        memcpy_job = job_for(wl, wl.variant("memcpy"), shape, ctx)

        # Each condition: (what runs first, the runs measured, whose timing is reported, a
        # timer shared with what ran first or None for a fresh one).
        def alone(prepare):
            return lambda: (prepare(), measure({"x": job.run}, protocol, timer=EventTimer()))

        def reuse_timer():
            t = EventTimer()
            measure({"m": memcpy_job.run}, protocol, timer=t)
            return measure({"x": job.run}, protocol, timer=t)

        conditions = {
            "idle": alone(lambda: None),
            "steady": lambda: (measure({"x": job.run}, protocol, timer=EventTimer()),
                               measure({"x": job.run}, protocol, timer=EventTimer()))[1],
            "spin_one": alone(lambda: (hold(None, pre * 1000), sync())),
            "spin_all": alone(lambda: (spin_all((sms * 4,), (256,), (np.uint64(int(pre * 1e6)),)), sync())),
            "memcpy": alone(lambda: for_ms(copy, pre)),
            "self": alone(lambda: for_ms(job.run, pre)),
            "self_100": alone(lambda: for_ms(job.run, 100)),
            "pair_memcpy_first": lambda: measure({"m": memcpy_job.run, "x": job.run}, protocol, timer=EventTimer()),
            "pair_x_first": lambda: measure({"x": job.run, "m": memcpy_job.run}, protocol, timer=EventTimer()),
            "memcpy_measured_before": lambda: (measure({"m": memcpy_job.run}, protocol, timer=EventTimer()),
                                               measure({"x": job.run}, protocol, timer=EventTimer()))[1],
            "timer_reused": reuse_timer,
            "x_measured_before": lambda: (measure({"x": job.run}, protocol, timer=EventTimer()),
                                          measure({"x": job.run}, protocol, timer=EventTimer()))[1],
        }
        small = 1 << 20  # one 1 MiB transfer: the size of a sampled check's reference upload
        host = np.ones(small // 4, dtype=np.float32)
        ca, cb = ctx["a"], ctx["b"]

        def d2d(dst, src, nbytes=small):
            cp.cuda.runtime.memcpyAsync(dst.data.ptr, src.data.ptr, nbytes, 3, cp.cuda.get_current_stream().ptr)
            sync()

        def settle(prepare, gap_s=0.0):
            return lambda: (prepare(), time.sleep(gap_s), measure({"x": job.run}, protocol, timer=EventTimer()))

        copies = {
            "d2d_other": settle(lambda: d2d(b, a)),  # between two buffers the variant never touches
            "d2d_other_4kb": settle(lambda: d2d(b, a, 4096)),
            "h2d_other": settle(lambda: (cp.cuda.runtime.memcpy(b.data.ptr, host.ctypes.data, small, 1), sync())),
            "d2d_into_b": settle(lambda: d2d(cb, a)),  # into the variant's output
            "d2d_from_a": settle(lambda: d2d(b, ca)),  # from the variant's input
            "d2d_b_to_b": settle(lambda: d2d(cb[small // 4:], cb)),
            "kernel_other": settle(lambda: (b.fill(2.0), sync())),  # an SM kernel writes elsewhere
            "d2d_other_2s": settle(lambda: d2d(b, a), 2.0),
            "nothing": settle(lambda: None),  # whatever the condition before left
        }
        scratch = cp.empty(2 * cp.cuda.Device().attributes["L2CacheSize"] // 4, dtype=cp.float32)

        def scrub():
            scratch.fill(1.0)  # the L2 now holds scratch lines only
            sync()

        l2 = {
            "scrubbed": settle(scrub),
            "read_a": settle(lambda: (scrub(), float(ca.sum()))),  # the variant's input, ordinary loads
            "read_b": settle(lambda: (scrub(), float(cb.sum()))),  # its output
            "read_other": settle(lambda: (scrub(), float(a.sum()))),  # a buffer it never touches
            "memcpy_measured": lambda: (measure({"m": memcpy_job.run}, protocol, timer=EventTimer()),
                                        measure({"x": job.run}, protocol, timer=EventTimer()))[1],
            "memcpy_then_settled": lambda: (
                measure({"m": memcpy_job.run}, protocol, timer=EventTimer()),
                measure({"x": job.run}, Protocol(warmup=3, batches=5, reps=20), timer=EventTimer()))[1],
            "fill_then_settled": lambda: (b.fill(3.0), measure({"x": job.run}, Protocol(warmup=3, batches=5, reps=20),
                                                               timer=EventTimer()))[1],
        }
        if args.set == "copies":
            conditions = copies
        elif args.set == "l2":
            conditions = l2
        results: dict[str, list[float]] = {c: [] for c in conditions}
        firsts: dict[str, list[float]] = {c: [] for c in conditions}
        for rep in range(args.repeats):
            order = list(conditions)
            order = order[rep % len(order):] + order[:rep % len(order)]
            for cond in order:
                time.sleep(args.gap)
                before = nv()
                t = conditions[cond]()
                t = t[-1] if isinstance(t, tuple) else t
                t = t["x"]
                after = nv()
                results[cond].append(t.median_ms)
                firsts[cond].append(t.batch_means_ms[0])
                print(json.dumps({"rep": rep, "cond": cond, "median_ms": t.median_ms,
                                  "batches": t.batch_means_ms, "before": before, "after": after}), flush=True)
    ref = statistics.median(results[next(iter(results))])
    print(f"\n{args.variant} {args.n}x{args.n}, {args.repeats} repetitions, idle gap {args.gap} s, "
          f"pre-roll {pre} ms; ratios to the median of the first condition ({ref:.5f} ms)")
    print(f"{'condition':<14} {'median_ms':>10} {'vs steady':>10} {'min..max vs steady':>22} {'batch 1 vs steady':>18}")
    for cond, xs in results.items():
        m = statistics.median(xs)
        print(f"{cond:<14} {m:10.5f} {100 * (m / ref - 1):+9.2f}% "
              f"{100 * (min(xs) / ref - 1):+10.2f}%..{100 * (max(xs) / ref - 1):+.2f}% "
              f"{100 * (statistics.median(firsts[cond]) / ref - 1):+17.2f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
