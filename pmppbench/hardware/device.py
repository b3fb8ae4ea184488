"""Facts about the GPU, and the theoretical ceilings PMPP 5.1 reasons with.

Peak bandwidth  = 2 (double data rate) x memory clock x bus width in bytes.
Peak FP32 rate  = SMs x FP32 lanes per SM x 2 (an FMA is two FLOPs) x SM boost clock.
Ridge point     = peak FP32 / peak bandwidth, in FLOP/B: kernels with a lower arithmetic
                  intensity are memory-bound by the roofline model, higher ones compute-bound.

Every fact comes from the device itself (CUDA's attributes; NVML for a clock or bus width CUDA
reports as 0); only the FP32 lanes and tensor FLOPs per SM and clock come from archs.py's table.
"""

from __future__ import annotations

import functools
import platform
from dataclasses import asdict, dataclass

from pmppbench import __version__
# the per-SM rates no device reports (archs.py); the tables stay importable from here
from pmppbench.hardware.archs import FP32_LANES_PER_SM, PRECISIONS, TENSOR_FLOP_PER_CLK_PER_SM  # noqa: F401
from pmppbench.hardware.archs import fp32_lanes, tensor_flop_per_clk
from pmppbench.hardware.gpu import cupy, require_device


@dataclass(frozen=True)
class DeviceInfo:
    name: str
    compute_capability: str  # "9.0"
    arch: str  # "sm_90", what NVRTC is given
    sm_count: int
    sm_clock_mhz: float
    mem_clock_mhz: float
    bus_width_bits: int
    memory_bytes: int
    l2_bytes: int
    smem_per_sm: int
    smem_per_block: int
    smem_per_block_optin: int
    regs_per_sm: int
    max_threads_per_sm: int
    max_blocks_per_sm: int
    max_threads_per_block: int
    warp_size: int
    driver: str
    cuda_runtime: str
    cupy: str

    @property
    def peak_bandwidth_gbs(self) -> float:
        return 2 * self.mem_clock_mhz * 1e6 * (self.bus_width_bits / 8) / 1e9

    @property
    def fp32_lanes_per_sm(self) -> int | None:
        return fp32_lanes(self.compute_capability)

    @property
    def peak_fp32_gflops(self) -> float | None:
        lanes = self.fp32_lanes_per_sm
        if lanes is None:
            return None
        return self.sm_count * lanes * 2 * self.sm_clock_mhz * 1e6 / 1e9

    def peak_gflops(self, precision: str = "fp32") -> float | None:
        """The theoretical rate of one precision: FP32 on the CUDA cores, the others on the
        tensor cores (FP32 accumulation). None when this compute capability's rate is unknown
        or it has no tensor path for that precision."""
        if precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
        if precision == "fp32":
            return self.peak_fp32_gflops
        per_clk = tensor_flop_per_clk(self.compute_capability, precision)
        if per_clk is None:
            return None
        return self.sm_count * per_clk * self.sm_clock_mhz * 1e6 / 1e9

    @property
    def ridge_flop_per_byte(self) -> float | None:
        peak = self.peak_fp32_gflops
        return None if peak is None else peak / self.peak_bandwidth_gbs

    def metadata(self) -> dict:
        """What every result file records about the device and software."""
        meta = asdict(self)
        meta.update(
            peak_bandwidth_gbs=round(self.peak_bandwidth_gbs, 1),
            peak_fp32_gflops=None if self.peak_fp32_gflops is None else round(self.peak_fp32_gflops, 1),
            pmppbench=__version__,
            python=platform.python_version(),
        )
        return meta


def _version(v: int) -> str:
    return f"{v // 1000}.{(v % 1000) // 10}"


def fill_from_nvml(facts: dict[str, float], nvml) -> dict[str, float]:
    """CUDA's facts with each one it reports as 0 (some drivers and virtualized GPUs do for
    the clocks or the bus width) taken from NVML: its maximum clock of that domain, its bus
    width. `nvml()` gives NVML's facts by the same names, or None without NVML; it is asked
    only when a fact is missing. A fact neither reports stays 0 (its peak is then unknown)."""
    if all(facts.values()):
        return facts
    found = nvml() or {}
    return {k: v or float(found.get(k, 0)) for k, v in facts.items()}


def _nvml_facts(bus_id: str) -> dict[str, float] | None:
    try:
        import pynvml  # noqa: PLC0415 (optional: nvidia-ml-py, asked only when CUDA reports a 0)

        pynvml.nvmlInit()
        h = pynvml.nvmlDeviceGetHandleByPciBusId(bus_id.encode() if isinstance(bus_id, str) else bus_id)
        out = {"sm_clock_mhz": float(pynvml.nvmlDeviceGetMaxClockInfo(h, pynvml.NVML_CLOCK_SM)),
               "mem_clock_mhz": float(pynvml.nvmlDeviceGetMaxClockInfo(h, pynvml.NVML_CLOCK_MEM))}
        try:
            out["bus_width_bits"] = float(pynvml.nvmlDeviceGetMemoryBusWidth(h))
        except Exception:  # noqa: BLE001 -- an older NVML without it
            pass
        return out
    except Exception:  # noqa: BLE001 -- no NVML: the facts stay as CUDA reported them
        return None


@functools.lru_cache(maxsize=1)
def current() -> DeviceInfo:
    """Read the current device once per process."""
    require_device()
    cp = cupy()
    rt = cp.cuda.runtime
    dev = rt.getDevice()
    props = rt.getDeviceProperties(dev)

    def attr(name: str) -> int:
        return int(rt.deviceGetAttribute(getattr(rt, name), dev))

    major, minor = int(props["major"]), int(props["minor"])
    name = props["name"]
    name = name.decode() if isinstance(name, bytes) else str(name)
    facts = fill_from_nvml({"sm_clock_mhz": attr("cudaDevAttrClockRate") / 1000,
                            "mem_clock_mhz": attr("cudaDevAttrMemoryClockRate") / 1000,
                            "bus_width_bits": attr("cudaDevAttrGlobalMemoryBusWidth")},
                           lambda: _nvml_facts(cp.cuda.Device(dev).pci_bus_id))
    return DeviceInfo(
        name=name,
        compute_capability=f"{major}.{minor}",
        arch=f"sm_{major}{minor}",
        sm_count=attr("cudaDevAttrMultiProcessorCount"),
        sm_clock_mhz=facts["sm_clock_mhz"],
        mem_clock_mhz=facts["mem_clock_mhz"],
        bus_width_bits=int(facts["bus_width_bits"]),
        memory_bytes=int(props["totalGlobalMem"]),
        l2_bytes=attr("cudaDevAttrL2CacheSize"),
        smem_per_sm=attr("cudaDevAttrMaxSharedMemoryPerMultiprocessor"),
        smem_per_block=attr("cudaDevAttrMaxSharedMemoryPerBlock"),
        smem_per_block_optin=attr("cudaDevAttrMaxSharedMemoryPerBlockOptin"),
        regs_per_sm=attr("cudaDevAttrMaxRegistersPerMultiprocessor"),
        max_threads_per_sm=attr("cudaDevAttrMaxThreadsPerMultiProcessor"),
        max_blocks_per_sm=attr("cudaDevAttrMaxBlocksPerMultiprocessor"),
        max_threads_per_block=attr("cudaDevAttrMaxThreadsPerBlock"),
        warp_size=attr("cudaDevAttrWarpSize"),
        driver=_version(rt.driverGetVersion()),
        cuda_runtime=_version(rt.runtimeGetVersion()),
        cupy=cp.__version__,
    )


def free_memory_bytes() -> tuple[int, int]:
    """(free, total) device memory in bytes."""
    require_device()
    return cupy().cuda.runtime.memGetInfo()
