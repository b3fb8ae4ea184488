"""CUB as the library peer of the reduction, the histogram and the scan, through NVIDIA's cuda-cccl
(`cuda.compute`, `pip install "pmppbench[cccl]"`) or through CuPy's own CUB binding.

Each call here is one library call on CuPy's current stream (the stream the protocol's events
time). cuda.compute JIT-compiles an algorithm object's CUB kernels the first time a process
asks for its key (the data types, the operator; for the histogram the bin count, the level
type and whether the sample offsets need 64 bits; for the scan the kind, inclusive or
exclusive) and keeps the build for the process: every
later request with the same key, from any thread, reuses it (a thread asking while another
builds it waits for that build). So the objects are built once per process and key, and
`prebuild_*` can build them ahead on the worker's build thread (Workload.prebuild) while the
GPU runs earlier steps; the job's own request then finds the build done. Both go through
`reducer` / `histogrammer` / `scanner`, so they ask with the same key. Temporary storage is allocated once
per job, so a timed call is what a program that reuses its objects pays: CUB's kernels and
nothing else. A missing package is `Unavailable` (a SKIP row with the reason), never an error.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pmppbench.workloads.base import Unavailable

CCCL_HINT = 'cuda-cccl is not installed (pip install "pmppbench[cccl]")'


def compute_module():
    """cuda.compute, or Unavailable with what to install."""
    try:
        import cuda.compute as compute  # noqa: PLC0415 (optional extra, and heavy: only where CUB runs)
    except ImportError as exc:
        raise Unavailable(f"{CCCL_HINT}: {exc}") from None
    return compute


class _Stream:
    """CuPy's current stream through the __cuda_stream__ protocol cuda.compute reads."""

    def __init__(self, cp):
        self.cp = cp

    def __cuda_stream__(self):
        return (0, self.cp.cuda.get_current_stream().ptr)


# ---- DeviceReduce::Sum ---------------------------------------------------------------------

def reducer(compute, d_in, d_out):
    """cuda.compute's sum object for d_in's type into d_out's (built at the key's first
    request in the process) and its initial value."""
    h_init = np.zeros(1, dtype=d_in.dtype)
    return compute.make_reduce_into(d_in=d_in, d_out=d_out, op=compute.OpKind.PLUS, h_init=h_init), h_init


def reduce_sum(cp, d_in, d_out) -> tuple[Any, dict]:
    """cuda.compute's DeviceReduce::Sum of d_in into the 1-element d_out: (run, what it holds)."""
    compute = compute_module()
    reduce, h_init = reducer(compute, d_in, d_out)
    stream = _Stream(cp)
    n = int(d_in.size)
    kw = dict(d_in=d_in, d_out=d_out, num_items=n, op=compute.OpKind.PLUS, h_init=h_init, stream=stream)
    temp = cp.empty(max(int(reduce(temp_storage=None, **kw)), 1), dtype=cp.uint8)

    def run() -> None:
        reduce(temp_storage=temp, **kw)

    return run, {"temp": temp, "reducer": reduce}


def prebuild_reduce(cp, dtype) -> None:
    """Build the sum object of `dtype` (reducer's key) ahead of the job that will ask for it.
    The two 1-element arrays stand for the job's (the key holds their type and dtype, not
    their size); allocating them first makes the GPU's primary context current on this
    thread, where cuda.compute loads what it built."""
    compute = compute_module()
    d_in, d_out = cp.empty(1, dtype=dtype), cp.empty(1, dtype=dtype)
    reducer(compute, d_in, d_out)


def cupy_reduce_sum(d_in, d_out):
    """CuPy's CUB binding (cupy.cuda.cub.device_reduce): DeviceReduce::Sum into d_out (0-d)."""
    try:
        from cupy.cuda import cub  # noqa: PLC0415 (CuPy: only where a GPU runs)
    except ImportError as exc:
        raise Unavailable(f"CuPy was built without CUB: {exc}") from None

    def run() -> None:
        cub.device_reduce(d_in, cub.CUPY_CUB_SUM, (0,), (), out=d_out)

    return run


# ---- DeviceHistogram::HistogramEven --------------------------------------------------------

def histogrammer(compute, d_samples, d_hist, bins: int, lower: int, upper: int, n: int):
    """cuda.compute's even-histogram object: `bins` equal bins over [lower, upper) of `n`
    samples of d_samples' type into d_hist (built at the key's first request in the
    process), and the keywords of its call."""
    levels = np.array([bins + 1], dtype=np.int32)
    lo, hi = np.array([lower], dtype=np.int32), np.array([upper], dtype=np.int32)
    kw = dict(d_samples=d_samples, d_histogram=d_hist, h_num_output_levels=levels, h_lower_level=lo,
              h_upper_level=hi, num_samples=n)
    return compute.make_histogram_even(**kw), kw


def histogram_even(cp, d_samples, d_hist, bins: int, lower: int, upper: int) -> tuple[Any, dict]:
    """cuda.compute's DeviceHistogram::HistogramEven of the byte samples into d_hist (uint32).
    CUB zeroes the histogram itself inside the call."""
    compute = compute_module()
    hist, kw = histogrammer(compute, d_samples, d_hist, bins, lower, upper, int(d_samples.size))
    kw["stream"] = _Stream(cp)
    temp = cp.empty(max(int(hist(temp_storage=None, **kw)), 1), dtype=cp.uint8)

    def run() -> None:
        hist(temp_storage=temp, **kw)

    return run, {"temp": temp, "hist": hist}


def prebuild_histogram(cp, bins: int, lower: int, upper: int, n: int) -> None:
    """Build the histogram object of `n` byte samples into `bins` uint32 bins (histogrammer's
    key) ahead of the job that will ask for it. The arrays stand for the job's (the key holds
    their types and `n`'s offset width, not their sizes), allocated first as in prebuild_reduce."""
    compute = compute_module()
    d_samples, d_hist = cp.empty(1, dtype=cp.uint8), cp.empty(bins, dtype=cp.uint32)
    histogrammer(compute, d_samples, d_hist, bins, lower, upper, n)


# ---- DeviceScan::InclusiveSum / ExclusiveSum -------------------------------------------------

def scanner(compute, d_in, d_out, exclusive: bool):
    """cuda.compute's prefix-sum object of d_in's type into d_out (built at the key's first
    request in the process) and its initial value: an exclusive scan starts from 0 (CUB's
    ExclusiveSum), an inclusive one takes none (InclusiveSum)."""
    if exclusive:
        init = np.zeros(1, dtype=d_in.dtype)
        return compute.make_exclusive_scan(d_in=d_in, d_out=d_out, op=compute.OpKind.PLUS, init_value=init), init
    return compute.make_inclusive_scan(d_in=d_in, d_out=d_out, op=compute.OpKind.PLUS, init_value=None), None


def prefix_sum(cp, d_in, d_out, exclusive: bool) -> tuple[Any, dict]:
    """cuda.compute's DeviceScan of d_in into d_out (the same length): (run, what it holds)."""
    compute = compute_module()
    scan, init = scanner(compute, d_in, d_out, exclusive)
    kw = dict(d_in=d_in, d_out=d_out, op=compute.OpKind.PLUS, init_value=init, num_items=int(d_in.size),
              stream=_Stream(cp))
    temp = cp.empty(max(int(scan(temp_storage=None, **kw)), 1), dtype=cp.uint8)

    def run() -> None:
        scan(temp_storage=temp, **kw)

    return run, {"temp": temp, "scan": scan}


def prebuild_scan(cp, dtype, exclusive: bool) -> None:
    """Build the prefix-sum object of `dtype` and kind (scanner's key) ahead of the job that
    will ask for it; the 1-element arrays stand for the job's, as in prebuild_reduce."""
    compute = compute_module()
    d_in, d_out = cp.empty(1, dtype=dtype), cp.empty(1, dtype=dtype)
    scanner(compute, d_in, d_out, exclusive)
