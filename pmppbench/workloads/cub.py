"""CUB as the library peer of the reduction and the histogram, through NVIDIA's cuda-cccl
(`cuda.compute`, `pip install "pmppbench[cccl]"`) or through CuPy's own CUB binding.

Each call here is one library call on CuPy's current stream (the stream the protocol's events
time). The algorithm objects are built once per shape (JIT-compiled by cuda.compute on first
use) and their temporary storage allocated once, so a timed call is what a program that reuses
them pays: CUB's kernels and nothing else. A missing package is `Unavailable` (a SKIP row with
the reason), never an error.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pmppbench.workloads.base import Unavailable

CCCL_HINT = 'cuda-cccl is not installed (pip install "pmppbench[cccl]")'


def compute_module():
    """cuda.compute, or Unavailable with what to install."""
    try:
        import cuda.compute as compute  # noqa: PLC0415
    except ImportError as exc:
        raise Unavailable(f"{CCCL_HINT}: {exc}") from None
    return compute


class _Stream:
    """CuPy's current stream through the __cuda_stream__ protocol cuda.compute reads."""

    def __init__(self, cp):
        self.cp = cp

    def __cuda_stream__(self):
        return (0, self.cp.cuda.get_current_stream().ptr)


def reduce_sum(cp, d_in, d_out) -> tuple[Any, dict]:
    """cuda.compute's DeviceReduce::Sum of d_in into the 1-element d_out: (run, what it holds)."""
    compute = compute_module()
    h_init = np.zeros(1, dtype=d_in.dtype)
    reducer = compute.make_reduce_into(d_in=d_in, d_out=d_out, op=compute.OpKind.PLUS, h_init=h_init)
    stream = _Stream(cp)
    n = int(d_in.size)
    nbytes = reducer(temp_storage=None, d_in=d_in, d_out=d_out, num_items=n, op=compute.OpKind.PLUS,
                     h_init=h_init, stream=stream)
    temp = cp.empty(max(int(nbytes), 1), dtype=cp.uint8)

    def run() -> None:
        reducer(temp_storage=temp, d_in=d_in, d_out=d_out, num_items=n, op=compute.OpKind.PLUS, h_init=h_init,
                stream=stream)

    return run, {"temp": temp, "reducer": reducer}


def cupy_reduce_sum(d_in, d_out):
    """CuPy's CUB binding (cupy.cuda.cub.device_reduce): DeviceReduce::Sum into d_out (0-d)."""
    try:
        from cupy.cuda import cub  # noqa: PLC0415
    except ImportError as exc:
        raise Unavailable(f"CuPy was built without CUB: {exc}") from None

    def run() -> None:
        cub.device_reduce(d_in, cub.CUPY_CUB_SUM, (0,), (), out=d_out)

    return run


def histogram_even(cp, d_samples, d_hist, bins: int, lower: int, upper: int) -> tuple[Any, dict]:
    """cuda.compute's DeviceHistogram::HistogramEven: `bins` equal bins over [lower, upper) of
    the byte samples into d_hist (uint32). CUB zeroes the histogram itself inside the call."""
    compute = compute_module()
    levels = np.array([bins + 1], dtype=np.int32)
    lo, hi = np.array([lower], dtype=np.int32), np.array([upper], dtype=np.int32)
    n = int(d_samples.size)
    hist = compute.make_histogram_even(d_samples=d_samples, d_histogram=d_hist, h_num_output_levels=levels,
                                       h_lower_level=lo, h_upper_level=hi, num_samples=n)
    stream = _Stream(cp)
    kw = dict(d_samples=d_samples, d_histogram=d_hist, h_num_output_levels=levels, h_lower_level=lo,
              h_upper_level=hi, num_samples=n, stream=stream)
    nbytes = hist(temp_storage=None, **kw)
    temp = cp.empty(max(int(nbytes), 1), dtype=cp.uint8)

    def run() -> None:
        hist(temp_storage=temp, **kw)

    return run, {"temp": temp, "hist": hist}
