"""The roofline of PMPP 5.1: ceilings, the ridge point, and how close a variant gets to its roof.

A GPU has two ceilings: the rate it can move bytes through global memory (GB/s) and the
rate it can do FP32 arithmetic (GFLOP/s). A kernel's arithmetic intensity AI (modelled
FLOP per byte) decides which one it meets first:

    attainable GFLOP/s at AI = min(peak GFLOP/s, AI x peak GB/s)
    ridge point              = peak GFLOP/s / peak GB/s      (FLOP/B)

AI below the ridge: memory-bound; at or above it: compute-bound. Speed of light (PMPP 5.1)
is the attained rate as a percentage of the roof at the variant's own AI. On the memory
side that is attained GFLOP/s / (AI x GB/s) = attained GB/s / peak GB/s, so a variant with
no FLOPs in its model (a copy, a transpose) still gets a speed of light: its bandwidth
against the memory roof. On the compute side it is attained GFLOP/s / peak GFLOP/s.

Two sets of ceilings are kept side by side:
- theoretical, from the device's clocks and widths (pmppbench.hardware.device);
- measured on the user's GPU by `measure_ceilings()`: a large device-to-device copy (bytes
  read + bytes written over time) and a cuBLAS FP32 GEMM through cupy.matmul. They are
  cached per device (GPU name + driver) in <cache dir>/ceilings.json, so later runs and
  `pmppbench plot` read them without a GPU.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from pmppbench.hardware import device
from pmppbench.hardware.compile import cache_dir
from pmppbench.hardware.gpu import cupy, require_device
from pmppbench.measure.protocol import Protocol, measure
from pmppbench.row import now_iso

MEMORY_BOUND = "memory-bound"
COMPUTE_BOUND = "compute-bound"


@dataclass(frozen=True)
class Ceilings:
    """One set of roofs: memory bandwidth and FP32 rate, and where they came from."""

    source: str  # "theoretical" | "measured"
    bandwidth_gbs: float
    fp32_gflops: float | None  # None when the device's FP32 lane count is unknown
    device: str = ""
    driver: str = ""
    how: str = ""  # one line: how these numbers were obtained
    timestamp: str = ""
    detail: dict[str, Any] = field(default_factory=dict)
    tensor_gflops: dict[str, float] = field(default_factory=dict)  # tf32/bf16/fp16 -> the tensor cores' peak

    def compute_gflops(self, precision: str = "fp32") -> float | None:
        """The compute roof of a row of `precision` (GEMM's --precision): FP32 on the CUDA cores,
        the others on the tensor cores; None where these ceilings do not know it."""
        return self.fp32_gflops if precision == "fp32" else self.tensor_gflops.get(precision)

    @property
    def ridge_flop_per_byte(self) -> float | None:
        return None if not self.fp32_gflops else self.fp32_gflops / self.bandwidth_gbs

    def roof_gflops(self, intensity: float) -> float:
        """Attainable GFLOP/s at arithmetic intensity `intensity` (FLOP/B)."""
        memory_roof = intensity * self.bandwidth_gbs
        return memory_roof if self.fp32_gflops is None else min(self.fp32_gflops, memory_roof)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Ceilings":
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


def theoretical_ceilings(dev: Any) -> Ceilings:
    """The paper ceilings of a pmppbench.hardware.device.DeviceInfo."""
    lanes = dev.fp32_lanes_per_sm
    return Ceilings(
        source="theoretical",
        bandwidth_gbs=dev.peak_bandwidth_gbs,
        fp32_gflops=dev.peak_fp32_gflops,
        tensor_gflops={p: g for p in ("tf32", "bf16", "fp16") if (g := dev.peak_gflops(p))},
        device=dev.name,
        driver=dev.driver,
        how=(f"2 x {dev.mem_clock_mhz:.0f} MHz x {dev.bus_width_bits // 8} B bus; "
             + (f"{dev.sm_count} SMs x {lanes} FP32 lanes x 2 x {dev.sm_clock_mhz:.0f} MHz" if lanes
                else "FP32 lanes per SM unknown for this compute capability")),
    )


# ---- classification and speed of light -----------------------------------------------

def classify(intensity: float, ridge: float) -> str:
    """'memory-bound' below the ridge point, 'compute-bound' at or above it (PMPP 5.1)."""
    if intensity < 0 or ridge <= 0:
        raise ValueError(f"intensity must be >= 0 and the ridge > 0 (got {intensity}, {ridge})")
    return MEMORY_BOUND if intensity < ridge else COMPUTE_BOUND


# ---- measuring the practical ceilings ------------------------------------------------

COPY_BYTES = 1 << 30  # 1 GiB each way: far beyond any L2, so the copy streams from HBM/GDDR
GEMM_N = 8192  # 2 x 8192^3 = 1.1 TFLOP per call: long enough for cuBLAS to reach its peak


def measure_ceilings(copy_bytes: int | None = None, gemm_n: int | None = None, batches: int = 9) -> Ceilings:
    """Measure this GPU's practical ceilings (needs a GPU; takes a few seconds).

    Bandwidth: cudaMemcpyAsync device-to-device of `copy_bytes`, counting bytes read plus
    bytes written (2 x copy_bytes) per call. FP32: cupy.matmul of two gemm_n x gemm_n FP32
    matrices, 2 x gemm_n^3 FLOP per call (cuBLAS; TF32 only if CUPY_TF32=1, which is
    recorded). Each is timed with pmppbench's own protocol (CUDA events around batches of
    calls, median of the batch means) so the ceilings are measured like the kernels.
    The buffers shrink to fit in a quarter of free memory.
    """
    require_device()
    cp = cupy()
    dev = device.current()
    pool = cp.get_default_memory_pool()
    pool.free_all_blocks()
    free, _ = device.free_memory_bytes()

    nbytes = copy_bytes or COPY_BYTES
    nbytes = max(1 << 20, min(nbytes, free // 4)) // 256 * 256
    src = cp.ones(nbytes // 4, dtype=cp.float32)
    dst = cp.empty_like(src)
    rt = cp.cuda.runtime

    def copy():
        rt.memcpyAsync(dst.data.ptr, src.data.ptr, nbytes, rt.memcpyDeviceToDevice,
                       cp.cuda.get_current_stream().ptr)

    t_copy = measure({"copy": copy}, Protocol(warmup=3, batches=batches, reps=20))["copy"]
    del src, dst
    pool.free_all_blocks()

    n = gemm_n or GEMM_N
    while 3 * 4 * n * n > free // 2 and n > 1024:
        n //= 2
    rng = cp.random.default_rng(0)
    a = rng.random((n, n), dtype=cp.float32)
    b = rng.random((n, n), dtype=cp.float32)
    c = cp.empty((n, n), dtype=cp.float32)
    t_gemm = measure({"gemm": lambda: cp.matmul(a, b, out=c)}, Protocol(warmup=3, batches=batches, reps=5))["gemm"]
    del a, b, c
    pool.free_all_blocks()

    bandwidth = 2 * nbytes / (t_copy.median_ms / 1e3) / 1e9
    gflops = 2 * n**3 / (t_gemm.median_ms / 1e3) / 1e9
    tf32 = os.environ.get("CUPY_TF32", "0") not in ("", "0")
    return Ceilings(
        source="measured",
        bandwidth_gbs=bandwidth,
        fp32_gflops=gflops,
        device=dev.name,
        driver=dev.driver,
        how=(f"device-to-device memcpy of {nbytes / 2**20:.0f} MiB (read + write); "
             f"cupy.matmul FP32 {n}^3{' with TF32 (CUPY_TF32=1)' if tf32 else ''}; median of {batches} batches"),
        timestamp=now_iso(),
        detail={"copy_bytes": nbytes, "copy_median_ms": t_copy.median_ms, "copy_spread_pct": 100 * t_copy.spread,
                "gemm_n": n, "gemm_median_ms": t_gemm.median_ms, "gemm_spread_pct": 100 * t_gemm.spread,
                "tf32": tf32},
    )


# ---- the cache: <cache dir>/ceilings.json, one entry per GPU name + driver -----------------

def cache_path() -> Path:
    return cache_dir() / "ceilings.json"


def device_key(name: str, driver: str) -> str:
    return f"{name} | driver {driver}"


def _read_cache() -> dict[str, Any]:
    try:
        data = json.loads(cache_path().read_text())
    except (OSError, ValueError):
        return {}  # no cache yet, or a damaged one: measure again
    return data if isinstance(data, dict) else {}


def load_cached(name: str, driver: str) -> Ceilings | None:
    """The measured ceilings cached for this GPU and driver, or None (needs no GPU)."""
    entry = _read_cache().get(device_key(name, driver))
    if not isinstance(entry, dict):
        return None
    try:
        return Ceilings.from_dict(entry)
    except TypeError:
        return None


def save_cached(ceilings: Ceilings) -> Path:
    """Store measured ceilings under their device's key; other devices' entries are kept."""
    data = _read_cache()
    data[device_key(ceilings.device, ceilings.driver)] = ceilings.to_dict()
    path = cache_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n")
    tmp.replace(path)  # never leave a half-written file for the next reader
    return path


def measure_and_cache(**kwargs) -> Ceilings:
    """`pmppbench info --measure`: measure now and replace this device's cache entry."""
    c = measure_ceilings(**kwargs)
    save_cached(c)
    return c


def ceilings_for(dev: Any) -> list[Ceilings]:
    """Theoretical ceilings of `dev`, then its cached measured ones if `info --measure` ran."""
    out = [theoretical_ceilings(dev)]
    measured = load_cached(dev.name, dev.driver)
    if measured is not None:
        out.append(measured)
    return out


# ---- ceilings in result files ------------------------------------------------------------

def ceilings_meta(ceilings: Iterable[Ceilings]) -> dict[str, dict[str, Any]]:
    """For the result file's metadata: meta["ceilings"] = {"theoretical": {...}, "measured": {...}}."""
    return {c.source: c.to_dict() for c in ceilings}


def ceilings_from_meta(meta: dict[str, Any]) -> list[Ceilings]:
    """The ceilings a result file recorded. Files written before meta["ceilings"] existed
    still carry the device's theoretical peaks (peak_bandwidth_gbs, peak_fp32_gflops)."""
    recorded = meta.get("ceilings")
    if isinstance(recorded, dict) and recorded:
        order = sorted(recorded, key=lambda s: (s != "theoretical", s))
        return [Ceilings.from_dict({**recorded[s], "source": s}) for s in order]
    if meta.get("peak_bandwidth_gbs"):
        return [Ceilings("theoretical", float(meta["peak_bandwidth_gbs"]),
                         None if meta.get("peak_fp32_gflops") is None else float(meta["peak_fp32_gflops"]),
                         device=meta.get("name", ""), driver=meta.get("driver", ""))]
    return []
