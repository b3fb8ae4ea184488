"""What a GPU cannot report about itself, by compute capability.

Everything else the ceilings and the planning use (SM count, clocks, memory bus width, L2
size, shared memory and register limits) is read from the device: CUDA's attributes, and
NVML where CUDA reports nothing (device.py). This table keeps only the per-SM rates that no
attribute carries, so the theoretical peaks (PMPP 5.1) follow from the facts of any GPU
listed here. An architecture that is not listed still runs every workload: its peak FP32
and tensor rates are unknown (None), and the rows carry no "% of peak" for it.
"""

from __future__ import annotations

# FP32 lanes (CUDA cores) per SM, from the CUDA programming guide's "arithmetic instructions"
# table. Used only for the theoretical peak.
FP32_LANES_PER_SM = {
    (5, 0): 128, (5, 2): 128, (5, 3): 128,
    (6, 0): 64, (6, 1): 128, (6, 2): 128,
    (7, 0): 64, (7, 2): 64, (7, 5): 64,
    (8, 0): 64, (8, 6): 128, (8, 7): 128, (8, 9): 128,
    (9, 0): 128,
    (10, 0): 128, (10, 1): 128, (10, 3): 128,
    (12, 0): 128, (12, 1): 128,
}

# Dense tensor-core FLOPs per SM per clock with FP32 accumulation, by input precision (the
# vendor's dense peak divided by SMs x boost clock; sparsity not counted). GeForce parts of
# sm_75/86/89/120 run FP32 accumulation at half these rates: the table keeps the full rate,
# since it serves as an upper bound (roofline, implausible-rate warning), never as a target.
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


def precision_of(dims) -> str:
    """The precision a shape (or a row's dims) computes in: GEMM's --precision axis; a shape
    without the key (every other workload, and GEMM's FP32 ladder) is FP32."""
    return (dims or {}).get("precision", "fp32")


def capability(text: str) -> tuple[int, int]:
    """(major, minor) of a compute capability written "8.9", or of an arch "sm_89" / "sm_90a"."""
    if text.startswith("sm_"):
        digits = text[3:].rstrip("abf")
        return int(digits[:-1]), int(digits[-1])
    major, minor = text.split(".")
    return int(major), int(minor)


def fp32_lanes(compute_capability: str) -> int | None:
    return FP32_LANES_PER_SM.get(capability(compute_capability))


def tensor_flop_per_clk(compute_capability: str, precision: str) -> int | None:
    return TENSOR_FLOP_PER_CLK_PER_SM.get(capability(compute_capability), {}).get(precision)


def target_known(arch: str) -> bool:
    """Whether `arch` ("sm_70", "sm_90a") names a GPU architecture of this table."""
    try:
        return capability(arch) in FP32_LANES_PER_SM
    except (ValueError, IndexError):
        return False
