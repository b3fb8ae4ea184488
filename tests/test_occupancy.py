"""Occupancy by hand (PMPP 5.6) on the book's H100 examples and the allocation rules the
book leaves out; on the GPU, the hand must agree with the CUDA occupancy API for every
kernel of every workload."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from pmppbench import workloads
from pmppbench.hardware.device import DeviceInfo
from pmppbench.hardware.occupancy import RESOURCE_HEADERS, SmLimits, occupancy, resource_cells, resource_row
from pmppbench.cli.tools import resources_table_rows

KB = 1024

# The H100 of PMPP 5.6: 228 KB of shared memory, 2048 threads, 32 blocks and 64K registers
# per SM. The book's arithmetic ignores the 1 KB the driver reserves per block.
H100_BOOK = SmLimits(max_threads=2048, max_blocks=32, registers=65536, smem_bytes=228 * KB,
                     reserved_smem_per_block=0)
# The same SM as the driver sees it (sm_90: 1 KB reserved per block, 128 B allocation unit).
H100 = SmLimits(max_threads=2048, max_blocks=32, registers=65536, smem_bytes=228 * KB,
                smem_per_block_optin=227 * KB)


def test_book_full_occupancy_budget_is_114_bytes_per_thread():
    # Tiled matmul with 16x16 tiles: two 16x16 float tiles = 2048 B for 256 threads = 8 B/thread.
    occ = occupancy(H100_BOOK, 256, 32, 2 * 16 * 16 * 4)
    smem_step = occ.steps["shared memory"]
    assert "228 KB / 2048 threads = 114 B per thread" in smem_step
    assert "2 KB / 256 threads = 8 B per thread" in smem_step
    assert occ.blocks_by["shared memory"] == 114  # far more than the 8 the threads allow
    assert occ.active_blocks == 8 and occ.occupancy_pct == 100.0
    assert "shared memory" not in occ.limiters


def test_book_38KB_blocks_of_256_threads_reach_75_percent():
    occ = occupancy(H100_BOOK, 256, 32, 38 * KB)
    assert occ.blocks_by == {"threads": 8, "blocks": 32, "registers": 8, "shared memory": 6}
    assert occ.active_blocks == 6 and occ.active_warps == 48
    assert occ.occupancy_pct == pytest.approx(75.0)
    assert occ.limiter == "shared memory"
    text = occ.explanation
    assert "38 KB / 256 threads = 152 B per thread" in text
    assert "228 KB / 38 KB = 6 blocks" in text
    assert "6 x 256 threads = 1536 threads; 1536 / 2048 = 75% occupancy" in text


def test_the_drivers_reserved_kilobyte_costs_the_38KB_kernel_a_block():
    occ = occupancy(H100, 256, 32, 38 * KB)
    assert occ.blocks_by["shared memory"] == 5  # 228 KB / (38 + 1) KB
    assert occ.occupancy_pct == pytest.approx(62.5)
    assert "38 KB + 1 KB reserved = 39 KB per block" in occ.explanation


def test_64_registers_per_thread_halve_occupancy():
    # 65536 / 2048 = 32 registers per thread for full occupancy; 64 allow half the threads.
    occ = occupancy(H100, 256, 64, 0)
    assert occ.blocks_by["registers"] == 4
    assert occ.limiter == "registers" and occ.occupancy_pct == 50.0
    assert "65536 / 2048 threads = 32 per thread for full occupancy" in occ.steps["registers"]


def test_registers_are_allocated_per_warp_in_units_of_256():
    # 33 x 32 = 1056 registers per warp, allocated as 1280: 12 warps per 16K slice, 48 per SM.
    occ = occupancy(H100, 256, 33, 0)
    assert occ.blocks_by["registers"] == 6
    assert "allocated as 1280 (units of 256)" in occ.steps["registers"]


def test_a_warps_registers_come_from_one_schedulers_quarter():
    # 40 x 32 = 1280 per warp: 65536 / 1280 = 51 warps if the file were one pool, but each
    # 16384-register quarter holds 12, so 48: 24 two-warp blocks, not 25.
    occ = occupancy(H100, 64, 40, 0)
    assert occ.blocks_by["registers"] == 24
    assert occ.limiter == "registers"
    assert "each of 4 scheduler slices of 16384 holds 12 warps = 48 warps" in occ.steps["registers"]


def test_a_partial_warp_takes_a_whole_warp_slot():
    occ = occupancy(H100_BOOK, 100, 0, 0)
    assert occ.blocks_by["threads"] == 16  # 64 warps / 4 warps per 100-thread block
    assert occ.blocks_by["registers"] is None and occ.blocks_by["shared memory"] is None
    assert occ.active_warps == 64 and occ.occupancy_pct == 100.0
    assert "4 whole warps" in occ.steps["threads"]


def test_small_blocks_hit_the_block_limit():
    occ = occupancy(H100, 32, 16, 0)
    assert occ.blocks_by["threads"] == 64
    assert occ.active_blocks == 32 and occ.limiter == "blocks"
    assert occ.occupancy_pct == 50.0


def test_shared_memory_is_allocated_in_units_of_128_bytes():
    occ = occupancy(H100, 128, 16, 100)
    # 100 B + 1 KB reserved = 1124 B, allocated as 1152 B: 233472 / 1152 = 202 blocks.
    assert occ.blocks_by["shared memory"] == 202
    assert "allocated as 1152 B (units of 128 B)" in occ.steps["shared memory"]


def test_ties_name_every_limiting_resource():
    occ = occupancy(H100, 256, 32, 0)
    assert occ.limiters == ("threads", "registers")
    assert occ.limiter == "threads, registers"


@pytest.mark.parametrize("threads, regs, smem, resource", [
    (1024, 128, 0, "registers"),  # 128 x 1024 = 128K registers > 64K per block
    (256, 32, 228 * KB, "shared memory"),  # more than the 227 KB a block may opt into
    (2048, 16, 0, "threads"),  # more than 1024 threads per block
])
def test_a_launch_that_cannot_fit_gets_zero_blocks(threads, regs, smem, resource):
    occ = occupancy(H100, threads, regs, smem)
    assert occ.active_blocks == 0 and occ.occupancy_pct == 0.0
    assert resource in occ.limiters


def test_dynamic_shared_memory_above_the_kernels_own_limit_cannot_launch():
    ok = occupancy(H100, 256, 32, 64 * KB, dynamic_smem=64 * KB, max_dynamic_smem=64 * KB)
    assert ok.active_blocks == 3  # 228 KB / 65 KB
    refused = occupancy(H100, 256, 32, 64 * KB, dynamic_smem=64 * KB, max_dynamic_smem=48 * KB)
    assert refused.active_blocks == 0 and refused.limiter == "shared memory"


def test_bad_inputs_are_refused():
    with pytest.raises(ValueError):
        occupancy(H100, 0, 32, 0)
    with pytest.raises(ValueError):
        occupancy(H100, 128, -1, 0)


def _device(cc: str, **overrides) -> DeviceInfo:
    fields = dict(name="Test GPU", compute_capability=cc, arch="sm_" + cc.replace(".", ""), sm_count=132,
                  sm_clock_mhz=1980.0, mem_clock_mhz=2619.0, bus_width_bits=5120, memory_bytes=80 << 30,
                  l2_bytes=50 << 20, smem_per_sm=228 * KB, smem_per_block=48 * KB, smem_per_block_optin=227 * KB,
                  regs_per_sm=65536, max_threads_per_sm=2048, max_blocks_per_sm=32, max_threads_per_block=1024,
                  warp_size=32, driver="13.0", cuda_runtime="13.0", cupy="14.0.0")
    fields.update(overrides)
    return DeviceInfo(**fields)


def test_limits_from_a_device_follow_its_architecture():
    hopper = SmLimits.from_device(_device("9.0"))
    assert (hopper.smem_bytes, hopper.max_threads, hopper.max_blocks) == (228 * KB, 2048, 32)
    assert hopper.reserved_smem_per_block == 1024 and hopper.smem_alloc_unit == 128
    assert hopper.smem_per_block_optin == 227 * KB
    volta = SmLimits.from_device(_device("7.0", smem_per_sm=96 * KB))
    assert volta.reserved_smem_per_block == 0 and volta.smem_alloc_unit == 256
    assert SmLimits.from_device(_device("6.0")).reg_partitions == 2


def _launch(name="tiled<32>", threads=(32, 32), regs=38, static=8192, dynamic=0, local=0):
    kernel = SimpleNamespace(name=name, registers=regs, static_smem=static, local_bytes=local)
    return SimpleNamespace(kernel=kernel, threads_per_block=threads[0] * threads[1], dynamic_smem=dynamic)


def test_resource_row_carries_the_launch_and_the_hand_answer():
    row = resource_row("gemm", "tiled32", "1024x1024x1024", _launch(), H100, api_blocks=1)
    assert (row.kernel, row.threads_per_block, row.registers, row.static_smem_bytes) == ("tiled<32>", 1024, 38, 8192)
    # 38 regs -> 1280 per warp -> 48 warps per SM: one 32-warp block.
    assert row.blocks_per_sm_hand == 1 and row.agrees is True
    assert row.occupancy_pct == 50.0 and row.limiter == "registers"
    cells = resource_cells(row)
    assert len(cells) == len(RESOURCE_HEADERS)
    assert cells[RESOURCE_HEADERS.index("blocks/SM (API)")] == "1"
    assert resource_row("gemm", "tiled32", "s", _launch(), H100, api_blocks=2).agrees is False
    assert resource_row("gemm", "tiled32", "s", _launch(), H100).agrees is None


# ---- on the GPU ----------------------------------------------------------------------

def _shapes(w):
    seen, out = set(), []
    for shape in [*w.check_shapes(), w.default_shape()]:
        key = tuple(sorted(shape.items()))
        if key not in seen:
            seen.add(key)
            out.append(shape)
    return out


@pytest.mark.gpu
@pytest.mark.parametrize("name", workloads.names())
def test_hand_and_occupancy_api_agree_for_every_kernel(name):
    w = workloads.get(name)
    rows = [row for shape in _shapes(w) for row in resources_table_rows(w, shape)]
    if w.kernel_names():
        assert rows, f"{name}: no kernel launches found"
    bad = [f"{r.variant} {r.shape}: API {r.blocks_per_sm_api}, hand {r.blocks_per_sm_hand} ({' | '.join(r.details)})"
           for r in rows if not r.agrees]
    assert not bad, "\n".join(bad)
    for r in rows:
        assert 0 < r.occupancy_pct <= 100


@pytest.mark.gpu
def test_current_device_limits_match_its_attributes():
    from pmppbench.hardware import device
    from pmppbench.hardware.occupancy import limits_for_current_device

    d = device.current()
    lim = limits_for_current_device()
    assert (lim.smem_bytes, lim.max_threads, lim.registers) == (d.smem_per_sm, d.max_threads_per_sm, d.regs_per_sm)
    major = int(d.compute_capability.split(".")[0])
    assert lim.reserved_smem_per_block == (1024 if major >= 8 else 0)
