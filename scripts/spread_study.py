"""How the batch spread of the host-timed stream pipeline depends on runs per batch.

Run on a GPU machine: python3 scripts/spread_study.py [REPEATS]. For the default `all`
stream shapes it measures the stream protocol (5 warmup, 9 alternated batches) with 1, 3,
5 and 10 complete pipeline runs per batch, REPEATS times each, and prints each variant's
spread (max - min batch mean, over the median) and median. The evidence behind the stream
protocol's runs per batch (README, "The timing protocol").
"""

from __future__ import annotations

import sys
from dataclasses import replace

from pmppbench import workloads
from pmppbench.protocol import DEFAULTS
from pmppbench.runner import run_shape

REPS = (1, 3, 5, 10)
SHAPES = ({"chunk": 1 << 20, "terms": 64}, {"chunk": 1 << 22, "terms": 64})


def main(repeats: int) -> None:
    wl = workloads.get("stream")
    print(f"{'chunk':>8} {'reps':>4} {'variant':>10}  spread % per repeat          median ms per repeat")
    for shape in SHAPES:
        shape = {**wl.default_shape(), **shape}
        for reps in REPS:
            protocol = replace(DEFAULTS["stream"], reps=reps)
            runs = [run_shape(wl, shape, protocol=protocol, seed=i) for i in range(repeats)]
            for name in ("streams=1", "streams=3"):
                rows = [next(r for r in rows if r.variant == name) for rows in runs]
                spreads = " ".join(f"{r.spread_pct:5.2f}" for r in rows)
                medians = " ".join(f"{r.median_ms:.4f}" for r in rows)
                print(f"{shape['chunk']:>8} {reps:>4} {name:>10}  {spreads:<28} {medians}", flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
