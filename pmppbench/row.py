"""The data model: one Result per (workload, variant, shape), independent of printing.

Rows are plain dataclasses so every exporter (terminal, CSV, JSON, Markdown) and every later
tool (compare, plot, report) reads the same fields. Units are in the field names. Derived
values (rates, speedups, % of roof, speed of light) are filled once, by derive.py; files
are written and read back by resultfile.py.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import asdict, dataclass, field
from typing import Any


# SUSPECT: it passed its checks but is faster than any ceiling that could apply to it (pipeline.judge)
CHECK_STATES = ("PASS", "FAIL", "SUSPECT", "ERROR", "SKIP")


@dataclass(slots=True)  # slots: a large result file holds many rows (resultfile reads 100 MB in bounded memory)
class Result:
    workload: str
    variant: str
    shape: str  # the workload's label, e.g. "4096x4096" or "16777216 radius=32"
    dims: dict[str, int] = field(default_factory=dict)
    # check
    check: str = "SKIP"  # PASS | FAIL | SUSPECT | ERROR | SKIP
    max_abs_err: float | None = None
    max_rel_err: float | None = None
    check_detail: str = ""
    tolerance: str = ""
    # timing (milliseconds per call)
    median_ms: float | None = None
    min_ms: float | None = None
    max_ms: float | None = None
    spread_pct: float | None = None  # 100 * (max - min) / median over batch means
    batch_means_ms: list[float] = field(default_factory=list)
    warmup: int | None = None
    batches: int | None = None
    reps: int | None = None
    timer: str = ""
    alternate: bool = False
    stop_rule: str = ""  # --until-stable: the criterion and whether it was met ("" = the fixed batch count)
    retimed_throttled: int | None = None  # --discard-on-throttle: batches thrown away and timed again
    # model and rates
    bytes: int | None = None
    flops: int | None = None
    gb_per_s: float | None = None
    gflop_per_s: float | None = None
    intensity_flop_per_byte: float | None = None
    # speed of light (PMPP 5.1): the roof at this intensity is min(peak FP32, AI x bandwidth)
    ridge_flop_per_byte: float | None = None
    bound: str = ""  # "memory-bound" | "compute-bound", by the model's intensity vs the ridge
    sol_pct_theoretical: float | None = None  # 100 x attained / roof, datasheet-style peaks
    sol_pct_measured: float | None = None  # the same against the measured ceilings (info --measure)
    speedup_vs: str = ""  # the baseline variant's name
    speedup: float | None = None  # baseline median / this median (> 1 means faster)
    pct_of: str = ""  # the roof variant's name (memcpy, cublas)
    pct_of_roof: float | None = None  # 100 * this rate / roof rate
    model: dict[str, float] = field(default_factory=dict)  # workload-specific model columns
    # resources of the kernel (from the driver; spills from ptxas)
    kernel: str = ""
    registers: int | None = None
    static_smem_bytes: int | None = None
    dynamic_smem_bytes: int | None = None
    local_bytes: int | None = None
    spill_bytes: int | None = None
    threads_per_block: int | None = None
    # hardware counters (--counters, counters.py): one extra untimed run under Nsight Compute, beside the model
    counters: dict[str, float] = field(default_factory=dict)  # ncu metric -> value over the variant's kernels
    dram_read_bytes: int | None = None
    dram_write_bytes: int | None = None
    dram_vs_model: float | None = None  # (read + written) / bytes, the model's logical traffic
    l2_hit_pct: float | None = None  # of the sectors L2 was asked for
    l1_hit_pct: float | None = None  # of the sectors L1 was asked for
    requested_bytes: int | None = None  # global loads + stores as the SMs asked L1 for them
    requested_vs_model: float | None = None  # / the modelled requests (model["model_bytes"]; else bytes)
    smem_ld_wavefronts_per_request: float | None = None  # 1 = conflict-free 32-bit loads; 32 = a 32-way conflict
    smem_ld_conflicts_per_request: float | None = None  # bank conflicts ncu counted per shared-load request
    smem_st_wavefronts_per_request: float | None = None
    warp_efficiency_pct: float | None = None  # threads per executed warp instruction, of 32 (divergence)
    global_atomic_requests: int | None = None  # warp-level global atomic and reduction requests
    shared_atomic_instructions: int | None = None  # warp-level shared-memory atomic instructions
    tensor_pipe_pct: float | None = None  # tensor pipe busy, % of peak (mma.sync, wmma, wgmma)
    occupancy_theoretical_pct: float | None = None  # the model: PMPP 5.6 by hand (occupancy.py)
    occupancy_achieved_pct: float | None = None  # warps active / the SM's maximum, while the SM was active
    occupancy_vs_theoretical: float | None = None  # achieved / theoretical
    counters_note: str = ""  # why a row has no counters
    # trust: clocks seen during the batches and the warnings derived from them (noise.py)
    clocks: dict[str, float | str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    # context
    error: str = ""
    seed: int | None = None
    device: str = ""  # the GPU's name
    device_uuid: str = ""  # which GPU of several with the same name (--devices)
    device_pci: str = ""
    host: str = ""  # the machine (a Ray fleet's node)
    run_id: str = ""
    timestamp: str = ""

    @property
    def ok(self) -> bool:
        return self.check in ("PASS", "SKIP") and not self.error

    def headline_rate(self, rate: str) -> float | None:
        return self.gflop_per_s if rate == "GFLOP/s" else self.gb_per_s

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def now_iso() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def error_row(workload: str, variant: str, label: str, dims: dict, message: str, seed: int | None,
              run_id: str) -> Result:
    """The row of a variant that could not be checked or timed: ERROR, and why."""
    return Result(workload, variant, label, dims=dict(dims), check="ERROR", error=message, seed=seed, run_id=run_id,
                  timestamp=now_iso())
