"""How many blocks an SM can hold, worked out by hand the way PMPP 5.6 does, and checked
against the CUDA occupancy API.

PMPP 5.6: an SM holds a limited number of threads, blocks, registers and bytes of shared
memory. A kernel's blocks are admitted until one of these runs out; that resource limits
the occupancy (active warps / the SM's maximum warps). The book's H100 example:

    228 KB / 2048 threads = 114 B per thread      (the budget for full occupancy)
    38 KB / 256 threads   = 152 B per thread      (a kernel that asks for more)
    228 KB / 38 KB        = 6 blocks = 1536 threads -> 1536 / 2048 = 75% occupancy

The hardware adds three details the book leaves out, and the hand computation here includes
them so that it agrees with `cuOccupancyMaxActiveBlocksPerMultiprocessor` (the rules are
those of NVIDIA's cuda_occupancy.h):

- threads are admitted in whole warps: a 100-thread block occupies 4 warps;
- registers are allocated per warp in units of 256, from a register file split evenly
  between the SM's 4 warp schedulers, so a warp's registers must fit in one quarter;
- shared memory is allocated in units of 128 B (256 B before sm_80), and from sm_80 on the
  driver reserves 1 KB of it for every block. With that 1 KB the book's 38 KB example
  holds 5 blocks (62.5%), not 6: `SmLimits(..., reserved_smem_per_block=0)` gives the
  book's own arithmetic.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.table import Table

from pmppbench.hardware import device
from pmppbench.hardware.gpu import cupy

# The four resources of PMPP 5.6, in the order the table and the explanation list them.
RESOURCES = ("threads", "blocks", "registers", "shared memory")


@dataclass(frozen=True)
class SmLimits:
    """What one SM offers a kernel, and the allocation rules of its architecture."""

    max_threads: int  # resident threads per SM (2048 on sm_80 and sm_90)
    max_blocks: int  # resident blocks per SM (32 on sm_80 and sm_90)
    registers: int  # 32-bit registers per SM (65536)
    smem_bytes: int  # shared memory per SM at the largest carveout (228 KB on sm_90)
    warp_size: int = 32
    max_threads_per_block: int = 1024
    regs_per_block: int = 65536
    max_regs_per_thread: int = 255
    reg_alloc_unit: int = 256  # registers are handed to a warp in units of 256
    reg_partitions: int = 4  # one slice of the register file per warp scheduler
    smem_alloc_unit: int = 128  # shared memory is handed to a block in units of 128 B (sm_80+)
    reserved_smem_per_block: int = 1024  # kept by the driver for every block (sm_80+)
    smem_per_block_optin: int | None = None  # largest a block may ask for; None: the whole SM

    @property
    def max_warps(self) -> int:
        return self.max_threads // self.warp_size

    @classmethod
    def from_device(cls, dev: Any, *, reserved_smem_per_block: int | None = None,
                    regs_per_block: int | None = None) -> "SmLimits":
        """Limits of a pmppbench.hardware.device.DeviceInfo. The two attributes DeviceInfo does not
        carry default to what every GPU since Ampere reports (1 KB reserved, 64K registers)."""
        major, minor = (int(x) for x in dev.compute_capability.split("."))
        if reserved_smem_per_block is None:
            reserved_smem_per_block = 1024 if major >= 8 else 0
        return cls(
            max_threads=dev.max_threads_per_sm,
            max_blocks=dev.max_blocks_per_sm,
            registers=dev.regs_per_sm,
            smem_bytes=dev.smem_per_sm,
            warp_size=dev.warp_size,
            max_threads_per_block=dev.max_threads_per_block,
            regs_per_block=regs_per_block or 65536,
            reg_partitions=2 if (major, minor) == (6, 0) else 4,
            smem_alloc_unit=128 if major >= 8 else 256,
            reserved_smem_per_block=reserved_smem_per_block,
            smem_per_block_optin=dev.smem_per_block_optin,
        )


@dataclass(frozen=True)
class Occupancy:
    """The result of the hand computation for one kernel launch configuration."""

    threads_per_block: int
    registers_per_thread: int
    smem_per_block: int  # static + dynamic bytes the kernel asks for (without the reservation)
    blocks_by: dict[str, int | None]  # resource -> blocks per SM it allows (None: no limit)
    active_blocks: int
    limiters: tuple[str, ...]  # every resource whose limit equals active_blocks
    active_warps: int
    max_warps: int
    steps: dict[str, str]  # resource -> its arithmetic, one line each
    conclusion: str

    @property
    def limiter(self) -> str:
        return ", ".join(self.limiters)

    @property
    def occupancy(self) -> float:
        """Theoretical occupancy: active warps / the SM's maximum warps (0..1)."""
        return self.active_warps / self.max_warps

    @property
    def occupancy_pct(self) -> float:
        return 100.0 * self.occupancy

    @property
    def explanation(self) -> str:
        """One line: the limiting resource's arithmetic and the resulting occupancy."""
        return "; ".join(self.steps[r] for r in self.limiters) + " -> " + self.conclusion

    @property
    def details(self) -> list[str]:
        """Every resource's arithmetic, then the conclusion."""
        return [*self.steps.values(), self.conclusion]


# ---- formatting the arithmetic -----------------------------------------------------

def _size(nbytes: float) -> str:
    """228 KB, 38 KB, 8448 B: whole kilobytes as KB (1 KB = 1024 B, as PMPP and CUDA count)."""
    if nbytes >= 1024 and nbytes % 1024 == 0:
        return f"{int(nbytes) // 1024} KB"
    return f"{nbytes:.4g} B" if nbytes != int(nbytes) else f"{int(nbytes)} B"


def _num(x: float) -> str:
    return f"{x:.4g}"


def _pct(x: float) -> str:
    return f"{x:.3g}%"


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _round_up(a: int, unit: int) -> int:
    return _ceil_div(a, unit) * unit


def _blocks(n: int | None) -> str:
    return "no limit" if n is None else f"{n} block{'s' if n != 1 else ''}"


# ---- the four limits -----------------------------------------------------------------

def _threads_limit(lim: SmLimits, threads: int) -> tuple[int, str]:
    if threads > lim.max_threads_per_block:
        return 0, f"threads: {threads} threads per block exceeds the limit of {lim.max_threads_per_block}"
    warps = _ceil_div(threads, lim.warp_size)
    blocks = lim.max_warps // warps
    if threads % lim.warp_size == 0:
        return blocks, f"threads: {lim.max_threads} threads per SM / {threads} threads per block = {_blocks(blocks)}"
    # A partial warp still takes a whole warp slot.
    return blocks, (f"threads: {threads} threads occupy {warps} whole warps; "
                    f"{lim.max_warps} warps per SM / {warps} = {_blocks(blocks)}")


def _blocks_limit(lim: SmLimits) -> tuple[int, str]:
    return lim.max_blocks, f"blocks: at most {lim.max_blocks} blocks per SM"


def _registers_limit(lim: SmLimits, threads: int, regs: int) -> tuple[int | None, str]:
    budget = lim.registers / lim.max_threads
    head = f"registers: {lim.registers} / {lim.max_threads} threads = {_num(budget)} per thread for full occupancy"
    if regs == 0:
        return None, f"{head}; this kernel uses none: no limit"
    warps = _ceil_div(threads, lim.warp_size)
    per_warp = _round_up(regs * lim.warp_size, lim.reg_alloc_unit)
    use = f"{regs} x {lim.warp_size} threads = {regs * lim.warp_size} per warp"
    if per_warp != regs * lim.warp_size:
        use += f", allocated as {per_warp} (units of {lim.reg_alloc_unit})"
    # The hardware checks a block's registers as if its warps were spread over every
    # scheduler's slice at once, so the warp count is rounded up to the slice count.
    assumed = per_warp * _round_up(warps, lim.reg_partitions)
    if regs > lim.max_regs_per_thread:
        return 0, f"{head}; {regs} per thread exceeds the limit of {lim.max_regs_per_thread}: 0 blocks"
    if max(assumed, per_warp * warps) > lim.regs_per_block:
        return 0, f"{head}; {use}: a {threads}-thread block needs more than {lim.regs_per_block}: 0 blocks"
    per_slice = lim.registers // lim.reg_partitions
    warps_per_sm = (per_slice // per_warp) * lim.reg_partitions
    blocks = warps_per_sm // warps
    if warps_per_sm == lim.registers // per_warp:
        fit = f"{lim.registers} / {per_warp} = {warps_per_sm} warps"
    else:  # the quarter rule costs warps: say so
        fit = (f"each of {lim.reg_partitions} scheduler slices of {per_slice} holds {per_slice // per_warp} warps "
               f"= {warps_per_sm} warps")
    return blocks, f"{head}; {use}; {fit} / {warps} warps per block = {_blocks(blocks)}"


def _smem_limit(lim: SmLimits, threads: int, smem: int, max_dynamic: int | None,
                dynamic: int) -> tuple[int | None, str]:
    head = (f"shared memory: {_size(lim.smem_bytes)} / {lim.max_threads} threads = "
            f"{_size(lim.smem_bytes / lim.max_threads)} per thread for full occupancy")
    per_block = smem + lim.reserved_smem_per_block
    if per_block == 0:
        return None, f"{head}; this kernel uses none: no limit"
    allocated = _round_up(per_block, lim.smem_alloc_unit)
    reserved = _size(lim.reserved_smem_per_block)
    if smem == 0:
        use = f"this kernel uses none, but {reserved} is reserved per block"
    else:
        use = f"{_size(smem)} / {threads} threads = {_size(smem / threads)} per thread"
        if lim.reserved_smem_per_block:
            use += f"; {_size(smem)} + {reserved} reserved = {_size(per_block)} per block"
    if allocated != per_block:
        use += f", allocated as {_size(allocated)} (units of {lim.smem_alloc_unit} B)"
    if max_dynamic is not None and dynamic > max_dynamic:
        return 0, (f"{head}; {use}: {_size(dynamic)} of dynamic shared memory exceeds the "
                   f"{_size(max_dynamic)} this kernel allows (Kernel.allow_dynamic_smem raises it): 0 blocks")
    block_cap = (lim.smem_per_block_optin or lim.smem_bytes) + lim.reserved_smem_per_block
    if allocated > block_cap:
        return 0, f"{head}; {use}: above the {_size(block_cap)} one block may have: 0 blocks"
    blocks = lim.smem_bytes // allocated
    return blocks, f"{head}; {use} -> {_size(lim.smem_bytes)} / {_size(allocated)} = {_blocks(blocks)}"


def occupancy(limits: SmLimits, threads_per_block: int, registers_per_thread: int,
              smem_per_block: int, *, dynamic_smem: int = 0, max_dynamic_smem: int | None = None) -> Occupancy:
    """Blocks per SM allowed by each resource, the minimum, its limiter and the occupancy.

    `smem_per_block` is everything the block asks for (static + dynamic). `dynamic_smem` and
    `max_dynamic_smem` (the kernel's CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) matter
    only for the launch check the driver makes: asking for more dynamic shared memory than
    the kernel allowed itself means no block can run.
    """
    if threads_per_block <= 0:
        raise ValueError(f"threads per block must be positive, got {threads_per_block}")
    if registers_per_thread < 0 or smem_per_block < 0:
        raise ValueError("registers and shared memory per block cannot be negative")
    results = {
        "threads": _threads_limit(limits, threads_per_block),
        "blocks": _blocks_limit(limits),
        "registers": _registers_limit(limits, threads_per_block, registers_per_thread),
        "shared memory": _smem_limit(limits, threads_per_block, smem_per_block, max_dynamic_smem, dynamic_smem),
    }
    blocks_by = {r: results[r][0] for r in RESOURCES}
    steps = {r: results[r][1] for r in RESOURCES}
    active = min(b for b in blocks_by.values() if b is not None)
    limiters = tuple(r for r in RESOURCES if blocks_by[r] == active)
    warps_per_block = _ceil_div(threads_per_block, limits.warp_size)
    active_warps = active * warps_per_block
    pct = 100.0 * active_warps / limits.max_warps
    if threads_per_block % limits.warp_size == 0:
        resident = f"{active} x {threads_per_block} threads = {active * threads_per_block} threads; " \
                   f"{active * threads_per_block} / {limits.max_threads}"
    else:
        resident = f"{active} x {warps_per_block} warps = {active_warps} warps; {active_warps} / {limits.max_warps}"
    conclusion = f"{resident} = {_pct(pct)} occupancy, limited by {' and '.join(limiters)}"
    return Occupancy(threads_per_block, registers_per_thread, smem_per_block, blocks_by, active, limiters,
                     active_warps, limits.max_warps, steps, conclusion)


# ---- on the GPU: the driver's answer, and the rows of `pmppbench resources` (tools.py) -----

def limits_for_current_device() -> SmLimits:
    """The current GPU's limits, with the two attributes DeviceInfo lacks read from the driver."""
    rt = cupy().cuda.runtime
    dev_id = rt.getDevice()
    reserved = int(rt.deviceGetAttribute(rt.cudaDevAttrReservedSharedMemoryPerBlock, dev_id))
    regs_per_block = int(rt.deviceGetAttribute(rt.cudaDevAttrMaxRegistersPerBlock, dev_id))
    return SmLimits.from_device(device.current(), reserved_smem_per_block=reserved, regs_per_block=regs_per_block)


def api_active_blocks(kernel: Any, threads_per_block: int, dynamic_smem: int = 0) -> int:
    """cuOccupancyMaxActiveBlocksPerMultiprocessor for a loaded compile.Kernel."""
    drv = cupy().cuda.driver
    return int(drv.occupancyMaxActiveBlocksPerMultiprocessor(kernel.function.ptr, threads_per_block, dynamic_smem))


def max_dynamic_smem(kernel: Any) -> int:
    """The dynamic shared memory the kernel currently allows itself (48 KB - static unless raised)."""
    drv = cupy().cuda.driver
    return int(drv.funcGetAttribute(drv.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, kernel.function.ptr))


@dataclass(frozen=True)
class ResourceRow:
    """One line of `pmppbench resources`: a variant's kernel, its launch and its occupancy."""

    workload: str
    variant: str
    shape: str
    kernel: str
    threads_per_block: int
    registers: int
    static_smem_bytes: int
    dynamic_smem_bytes: int
    local_bytes: int
    blocks_per_sm_api: int | None  # None: not asked (no GPU)
    blocks_per_sm_hand: int
    occupancy_pct: float
    limiter: str
    explanation: str
    details: tuple[str, ...] = ()

    @property
    def agrees(self) -> bool | None:
        return None if self.blocks_per_sm_api is None else self.blocks_per_sm_api == self.blocks_per_sm_hand


RESOURCE_HEADERS = ("variant", "kernel", "threads/block", "regs", "static_smem_B", "dynamic_smem_B", "local_B",
                    "blocks/SM (API)", "blocks/SM (hand)", "occupancy_%", "limiter", "explanation")


def resource_cells(row: ResourceRow) -> tuple[str, ...]:
    """The row as strings, in RESOURCE_HEADERS order."""
    api = "" if row.blocks_per_sm_api is None else str(row.blocks_per_sm_api)
    return (row.variant, row.kernel, str(row.threads_per_block), str(row.registers), str(row.static_smem_bytes),
            str(row.dynamic_smem_bytes), str(row.local_bytes), api, str(row.blocks_per_sm_hand),
            f"{row.occupancy_pct:.1f}", row.limiter, row.explanation)


def resource_row(workload: str, variant: str, shape: str, launch: Any, limits: SmLimits,
                 api_blocks: int | None = None, max_dynamic: int | None = None) -> ResourceRow:
    """A ResourceRow from a workloads.base.Launch (pure: the API answer is passed in)."""
    k = launch.kernel
    dynamic = int(launch.dynamic_smem)
    threads = int(launch.threads_per_block)
    occ = occupancy(limits, threads, k.registers, k.static_smem + dynamic,
                    dynamic_smem=dynamic, max_dynamic_smem=max_dynamic)
    return ResourceRow(workload, variant, shape, k.name, threads, k.registers, k.static_smem, dynamic,
                       k.local_bytes, api_blocks, occ.active_blocks, occ.occupancy_pct, occ.limiter,
                       occ.explanation, tuple(occ.details))


def print_resources(console: Any, rows: list[ResourceRow], title: str = "", caption: str = "") -> None:
    """The Rich table; a disagreement between the hand and the API is shown in red."""
    table = Table(title=title or None, caption=caption or None, header_style="bold")
    headers = RESOURCE_HEADERS[:-1]  # the explanation is printed under the table, one line per kernel
    for h in headers:
        table.add_column(h, justify="left" if h in ("variant", "kernel", "limiter") else "right")
    for r in rows:
        table.add_row(*resource_cells(r)[:-1], style="red" if r.agrees is False else None)
    console.print(table)
    for r in rows:
        console.print(f"  {r.variant}: {r.explanation}", highlight=False, markup=False)


__all__ = ["RESOURCES", "SmLimits", "Occupancy", "occupancy", "ResourceRow", "resource_row", "resource_cells",
           "RESOURCE_HEADERS", "api_active_blocks",
           "limits_for_current_device", "max_dynamic_smem", "print_resources"]
