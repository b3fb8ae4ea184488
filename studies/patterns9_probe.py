"""One call each of the shipped `lookback` (2^26 float32, inclusive) and of the 7-bin
`thread_private` (2^26 bytes of uniform letters), through the workloads' own jobs, for a profiler
to capture (studies/patterns9_run.sh runs it under ncu -k lookback|thread_private)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pmppbench import workloads  # noqa: E402
from pmppbench.hardware.compile import load_kernels  # noqa: E402
from pmppbench.hardware.gpu import cupy  # noqa: E402


def one_call(name: str, shape: dict, variant: str) -> None:
    w = workloads.get(name)
    kernels = load_kernels(name, w.kernel_names(), w.defines(shape))
    ctx = w.setup(shape, w.make_inputs(shape, np.random.default_rng(0)), kernels)
    job = w.job(w.variant(variant), shape, ctx)
    job.run()
    cupy().cuda.Device().synchronize()
    print(f"{name} {variant} {shape}: one call", flush=True)


def main() -> int:
    one_call("scan", {"n": 1 << 26, "dtype": "f32", "kind": "inclusive"}, "lookback")
    one_call("histogram", {"n": 1 << 26, "bins": 7, "input": "uniform"}, "thread_private")
    return 0


if __name__ == "__main__":
    sys.exit(main())
