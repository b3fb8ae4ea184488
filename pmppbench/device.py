"""Facts about the GPU, and the theoretical ceilings PMPP 5.1 reasons with.

Peak bandwidth  = 2 (double data rate) x memory clock x bus width in bytes.
Peak FP32 rate  = SMs x FP32 lanes per SM x 2 (an FMA is two FLOPs) x SM boost clock.
Ridge point     = peak FP32 / peak bandwidth, in FLOP/B: kernels with a lower arithmetic
                  intensity are memory-bound by the roofline model, higher ones compute-bound.
"""

from __future__ import annotations

import functools
import platform
from dataclasses import asdict, dataclass

from pmppbench import __version__
from pmppbench.gpu import cupy, require_device

# FP32 lanes (CUDA cores) per SM by compute capability, from the CUDA programming guide's
# "arithmetic instructions" table. Used only for the theoretical peak.
FP32_LANES_PER_SM = {
    (5, 0): 128, (5, 2): 128, (5, 3): 128,
    (6, 0): 64, (6, 1): 128, (6, 2): 128,
    (7, 0): 64, (7, 2): 64, (7, 5): 64,
    (8, 0): 64, (8, 6): 128, (8, 7): 128, (8, 9): 128,
    (9, 0): 128,
    (10, 0): 128, (10, 1): 128, (10, 3): 128,
    (12, 0): 128, (12, 1): 128,
}

# Dense tensor-core FLOPs per SM per clock with FP32 accumulation, by compute capability
# and input precision (the vendor's dense peak divided by SMs x boost clock; sparsity not
# counted). GeForce parts of sm_75/86/89/120 run FP32 accumulation at half these rates:
# the table keeps the full rate, since it serves as an upper bound (roofline, implausible-rate
# warning), never as a target.
TENSOR_FLOP_PER_CLK_PER_SM = {
    (7, 0): {"fp16": 1024},
    (7, 5): {"fp16": 1024},
    (8, 0): {"fp16": 2048, "bf16": 2048, "tf32": 1024},
    (8, 6): {"fp16": 1024, "bf16": 1024, "tf32": 512},
    (8, 7): {"fp16": 1024, "bf16": 1024, "tf32": 512},
    (8, 9): {"fp16": 1024, "bf16": 1024, "tf32": 512},
    (9, 0): {"fp16": 4096, "bf16": 4096, "tf32": 2048},
    (10, 0): {"fp16": 8192, "bf16": 8192, "tf32": 4096},
    (12, 0): {"fp16": 1024, "bf16": 1024, "tf32": 512},
}

PRECISIONS = ("fp32", "tf32", "bf16", "fp16")


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
        major, minor = (int(x) for x in self.compute_capability.split("."))
        return FP32_LANES_PER_SM.get((major, minor))

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
        major, minor = (int(x) for x in self.compute_capability.split("."))
        per_clk = TENSOR_FLOP_PER_CLK_PER_SM.get((major, minor), {}).get(precision)
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
    return DeviceInfo(
        name=name,
        compute_capability=f"{major}.{minor}",
        arch=f"sm_{major}{minor}",
        sm_count=attr("cudaDevAttrMultiProcessorCount"),
        sm_clock_mhz=attr("cudaDevAttrClockRate") / 1000,
        mem_clock_mhz=attr("cudaDevAttrMemoryClockRate") / 1000,
        bus_width_bits=attr("cudaDevAttrGlobalMemoryBusWidth"),
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
