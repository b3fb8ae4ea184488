"""The facts (DeviceInfo, as CUDA's attributes report them) of the GPUs a course uses, from
their public spec sheets; the H200's are those this project's H200 runs recorded
(results/h200/*.meta.json). tests/test_portability*.py run the planning, the tile choices,
the occupancy, the ceilings and the compile limits on each."""

from __future__ import annotations

from pmppbench.hardware.device import DeviceInfo

KIB, MIB, GIB = 1 << 10, 1 << 20, 1 << 30


def _gpu(name, cc, sms, sm_mhz, mem_mhz, bus, memory, l2, smem_sm, optin, threads_sm, blocks_sm):
    major, minor = cc.split(".")
    return DeviceInfo(name=name, compute_capability=cc, arch=f"sm_{major}{minor}", sm_count=sms,
                      sm_clock_mhz=float(sm_mhz), mem_clock_mhz=float(mem_mhz), bus_width_bits=bus,
                      memory_bytes=memory, l2_bytes=l2, smem_per_sm=smem_sm, smem_per_block=48 * KIB,
                      smem_per_block_optin=optin, regs_per_sm=65536, max_threads_per_sm=threads_sm,
                      max_blocks_per_sm=blocks_sm, max_threads_per_block=1024, warp_size=32,
                      driver="13.0", cuda_runtime="13.0", cupy="14.2.0")


#              name                            cc     SMs  SM MHz  mem MHz  bus   memory        L2         smem/SM     opt-in      thr/SM blk/SM
T4 = _gpu("Tesla T4",                          "7.5",  40, 1590,   5001,  256, 15642329088,   4 * MIB,   64 * KIB,   64 * KIB,   1024, 16)
A100 = _gpu("NVIDIA A100-PCIE-40GB",           "8.0", 108, 1410,   1215, 5120, 42298834944,   40 * MIB,  164 * KIB,  163 * KIB,   2048, 32)
RTX3090 = _gpu("NVIDIA GeForce RTX 3090",      "8.6",  82, 1695,   9751,  384, 25447170048,   6 * MIB,  100 * KIB,   99 * KIB,   1536, 16)
RTX4090 = _gpu("NVIDIA GeForce RTX 4090",      "8.9", 128, 2520,  10501,  384, 25393692672,   72 * MIB,  100 * KIB,   99 * KIB,   1536, 24)
L4 = _gpu("NVIDIA L4",                         "8.9",  58, 2040,   6251,  192, 23580639232,   48 * MIB,  100 * KIB,   99 * KIB,   1536, 24)
H100_PCIE = _gpu("NVIDIA H100 PCIe",           "9.0", 114, 1755,   1593, 5120, 85028536320,   50 * MIB,  228 * KIB,  227 * KIB,   2048, 32)
H200 = _gpu("NVIDIA H200",                     "9.0", 132, 1980,   3201, 6016, 150109880320, 60 * MIB,  228 * KIB,  227 * KIB,   2048, 32)
RTX5090_LAPTOP = _gpu("NVIDIA GeForce RTX 5090 Laptop GPU", "12.0", 82, 1597, 14001, 256, 25241059328, 64 * MIB, 100 * KIB, 99 * KIB, 1536, 24)
# 8 GB: the smallest memory a course's laptop has (for the memory-fit tests)
RTX4060_LAPTOP = _gpu("NVIDIA GeForce RTX 4060 Laptop GPU", "8.9", 24, 2370, 8001, 128, 8585216000, 32 * MIB, 100 * KIB, 99 * KIB, 1536, 24)
# sm_100 for the compile limits only (no course GPU of it in the list)
B200 = _gpu("NVIDIA B200",                     "10.0", 148, 1965,  3996, 8192, 180 * GIB,   126 * MIB,  228 * KIB,  227 * KIB,   2048, 32)

PROFILES = {d.name: d for d in (T4, A100, RTX3090, RTX4090, L4, H100_PCIE, H200, RTX5090_LAPTOP, RTX4060_LAPTOP)}

# The spec sheets' headline figures: (memory bandwidth GB/s, FP32 TFLOP/s at boost)
SPEC_SHEET = {T4: (320, 8.1), A100: (1555, 19.5), RTX3090: (936, 35.6), RTX4090: (1008, 82.6), L4: (300, 30.3),
              H100_PCIE: (2000, 51.2), H200: (4800, 66.9), RTX5090_LAPTOP: (896, 33.5), RTX4060_LAPTOP: (256, 14.6)}

# Every target CI compiles for, with the GPU whose limits its kernels are held to.
TARGETS = {"sm_75": T4, "sm_80": A100, "sm_86": RTX3090, "sm_89": RTX4090, "sm_90": H100_PCIE,
           "sm_90a": H100_PCIE, "sm_100": B200, "sm_120": RTX5090_LAPTOP}
