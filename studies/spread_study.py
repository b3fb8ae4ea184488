"""How the batch spread of the host-timed stream rows depends on runs per batch.

Run on a GPU machine: python3 studies/spread_study.py [REPEATS]. For the default `all`
stream shapes it times both configurations under the stream protocol (5 warmup runs, 9
batches, configuration order alternated, NVML sampled after every batch, as the runner
does) with 1, 3, 5, 10 and 20 complete pipeline runs per batch, REPEATS times each, and
prints the spread (max - min of the batch values, over their median) and the median of every repeat.
The evidence behind the stream protocol's runs per batch (README, "The protocol").
"""

from __future__ import annotations

import sys
from dataclasses import replace

from pmppbench import workloads
from pmppbench.measure.protocol import measure
from pmppbench.engine.worker.pipeline import clock_observer, prepared

REPS = (1, 3, 5, 10, 20)
CHUNKS = (1 << 20, 1 << 22)


def main(repeats: int) -> None:
    wl = workloads.get("stream")
    print(f"{'chunk':>8} {'reps':>4} {'variant':>10}  spread % of each repeat" + " " * 10 + "median ms of each repeat")
    for chunk in CHUNKS:
        shape = {**wl.default_shape(), "chunk": chunk}
        variants = [v for v in wl.variants_for(shape) if v.timed]
        with prepared(wl, shape, variants) as (_inputs, ctx):
            runs = {v.name: wl.job(v, shape, ctx).run for v in variants}
            for reps in REPS:
                protocol = replace(wl.protocol, reps=reps)
                timings = [measure(runs, protocol, observer=clock_observer()) for _ in range(repeats)]
                for name in runs:
                    spreads = " ".join(f"{100 * t[name].spread:5.2f}" for t in timings)
                    medians = " ".join(f"{t[name].median_ms:.4f}" for t in timings)
                    print(f"{chunk:>8} {reps:>4} {name:>10}  {spreads:<32} {medians}", flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 6)
