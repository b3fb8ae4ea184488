"""CUB as the library peer of the reduction, the histogram and the scan, through NVIDIA's cuda-cccl
(`cuda.compute`, `pip install "pmppbench[cccl]"`) or through CuPy's own CUB binding.

Each call here is one library call on CuPy's current stream (the stream the protocol's events
time). cuda.compute JIT-compiles an algorithm object's CUB kernels when asked for it (seconds of
host time each). `built` keeps one
object per key (the data types; for the histogram the bin count, the levels and the sample
count; for the scan the kind, inclusive or exclusive) for the process, and on disk beside the
kernel cache: cuda.compute serializes a built object with its compiled kernels and loads it
again without recompiling, so a later run pays no build. `prebuild_*` ask for the same key as
the job (through `reducer` / `histogrammer` / `scanner`) on the worker's build thread
(Workload.prebuild) while the GPU runs earlier steps; the job then finds the object made (a job
asking while its key is being built waits for that build). Temporary storage is allocated once
per job, so a timed call is what a program that reuses its objects pays: CUB's kernels and
nothing else. A missing package is `Unavailable` (a SKIP row with the reason), never an error.
"""

from __future__ import annotations

import hashlib
import threading
from typing import Any, Callable

import numpy as np

from pmppbench.hardware.compile import cache_dir, write_whole
from pmppbench.workloads.base import Unavailable

CCCL_HINT = 'cuda-cccl is not installed (pip install "pmppbench[cccl]")'


def compute_module():
    """cuda.compute, or Unavailable with what to install."""
    try:
        import cuda.compute as compute  # noqa: PLC0415 (optional extra, and heavy: only where CUB runs)
    except ImportError as exc:
        raise Unavailable(f"{CCCL_HINT}: {exc}") from None
    return compute


_BUILT: dict[tuple, Any] = {}  # (module, key) -> this process's object
_BUILDING: dict[tuple, threading.Lock] = {}  # (module, key) -> held while it is loaded or built
_GUARD = threading.Lock()


def built(compute, cp, key: tuple, make: Callable[[], Any]):
    """cuda.compute's object for `key`: this process's, else the one a run saved on this machine
    (cuda.compute.deserialize: the kernels as built, loaded without recompiling), else make()'s,
    saved for later runs. The file is named by the key, cuda-cccl's version and the GPU's
    compute capability (the kernels are built for it); a damaged or unreadable file is built
    again, and an unwritable cache only costs the next run a build."""
    mine = (compute, key)  # a test's stand-in for cuda.compute keeps its own objects
    with _GUARD:
        lock = _BUILDING.setdefault(mine, threading.Lock())
    with lock:
        if mine not in _BUILT:
            path = _saved(compute, cp, key)
            obj = _load(compute, path)
            if obj is None:
                obj = make()
                _save(compute, obj, path)
            _BUILT[mine] = obj
        return _BUILT[mine]


def _load(compute, path):
    """The object saved at `path`, or None (no file, or one cuda.compute cannot read back)."""
    if path is None or not path.is_file():
        return None
    try:
        return compute.deserialize(path.read_bytes())
    except Exception:  # noqa: BLE001 -- any failure to load is a rebuild
        return None


def _save(compute, obj, path) -> None:
    if path is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_whole(path, compute.serialize(obj))
    except Exception:  # noqa: BLE001 -- OSError, or an object cuda.compute cannot serialize
        pass


def _saved(compute, cp, key: tuple):
    """Where `key`'s object is kept on disk, or None where cuda.compute cannot serialize."""
    if not (callable(getattr(compute, "serialize", None)) and callable(getattr(compute, "deserialize", None))):
        return None
    try:
        from importlib.metadata import version  # noqa: PLC0415

        cccl = version("cuda-cccl")
    except Exception:  # noqa: BLE001 -- not installed as a distribution: the module's own version
        cccl = str(getattr(compute, "__version__", "unknown"))
    capability = cp.cuda.Device().compute_capability
    name = hashlib.sha256(repr((key, cccl, capability)).encode()).hexdigest()[:32]
    return cache_dir() / "cub" / f"{name}.bin"


class _Stream:
    """CuPy's current stream through the __cuda_stream__ protocol cuda.compute reads."""

    def __init__(self, cp):
        self.cp = cp

    def __cuda_stream__(self):
        return (0, self.cp.cuda.get_current_stream().ptr)


# ---- DeviceReduce::Sum ---------------------------------------------------------------------

def reducer(compute, cp, d_in, d_out):
    """cuda.compute's sum object for d_in's type into d_out's (`built`) and its initial value."""
    h_init = np.zeros(1, dtype=d_in.dtype)
    key = ("reduce_into", str(d_in.dtype), str(d_out.dtype))
    return built(compute, cp, key, lambda: compute.make_reduce_into(d_in=d_in, d_out=d_out, op=compute.OpKind.PLUS,
                                                                    h_init=h_init)), h_init


def reduce_sum(cp, d_in, d_out) -> tuple[Any, dict]:
    """cuda.compute's DeviceReduce::Sum of d_in into the 1-element d_out: (run, what it holds)."""
    compute = compute_module()
    reduce, h_init = reducer(compute, cp, d_in, d_out)
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
    reducer(compute, cp, d_in, d_out)


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

def histogrammer(compute, cp, d_samples, d_hist, bins: int, lower: int, upper: int, n: int):
    """cuda.compute's even-histogram object: `bins` equal bins over [lower, upper) of `n`
    samples of d_samples' type into d_hist (`built`), and the keywords of its call."""
    levels = np.array([bins + 1], dtype=np.int32)
    lo, hi = np.array([lower], dtype=np.int32), np.array([upper], dtype=np.int32)
    kw = dict(d_samples=d_samples, d_histogram=d_hist, h_num_output_levels=levels, h_lower_level=lo,
              h_upper_level=hi, num_samples=n)
    key = ("histogram_even", str(d_samples.dtype), str(d_hist.dtype), bins, lower, upper, n)
    return built(compute, cp, key, lambda: compute.make_histogram_even(**kw)), kw


def histogram_even(cp, d_samples, d_hist, bins: int, lower: int, upper: int) -> tuple[Any, dict]:
    """cuda.compute's DeviceHistogram::HistogramEven of the byte samples into d_hist (uint32).
    CUB zeroes the histogram itself inside the call."""
    compute = compute_module()
    hist, kw = histogrammer(compute, cp, d_samples, d_hist, bins, lower, upper, int(d_samples.size))
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
    histogrammer(compute, cp, d_samples, d_hist, bins, lower, upper, n)


# ---- DeviceScan::InclusiveSum / ExclusiveSum -------------------------------------------------

def scanner(compute, cp, d_in, d_out, exclusive: bool):
    """cuda.compute's prefix-sum object of d_in's type into d_out (`built`) and its initial
    value: an exclusive scan starts from 0 (CUB's ExclusiveSum), an inclusive one takes none
    (InclusiveSum)."""
    key = ("exclusive_scan" if exclusive else "inclusive_scan", str(d_in.dtype), str(d_out.dtype))
    if exclusive:
        init = np.zeros(1, dtype=d_in.dtype)
        return built(compute, cp, key, lambda: compute.make_exclusive_scan(d_in=d_in, d_out=d_out, op=compute.OpKind.PLUS,
                                                                           init_value=init)), init
    return built(compute, cp, key, lambda: compute.make_inclusive_scan(d_in=d_in, d_out=d_out, op=compute.OpKind.PLUS,
                                                                       init_value=None)), None


def prefix_sum(cp, d_in, d_out, exclusive: bool) -> tuple[Any, dict]:
    """cuda.compute's DeviceScan of d_in into d_out (the same length): (run, what it holds)."""
    compute = compute_module()
    scan, init = scanner(compute, cp, d_in, d_out, exclusive)
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
    scanner(compute, cp, d_in, d_out, exclusive)
