"""Derived values, computed once per row from what was measured and modelled (pure).

    rates           GB/s = model bytes / median time; GFLOP/s = model FLOPs / median time
    relative        speedup vs the workload's baseline variant; % of its roof variant's rate
    speed of light  intensity, bound and % of the roof at that intensity (PMPP 5.1), against
                    each set of ceilings (datasheet-style peaks, and the measured ones)
    counters        (--counters) each hardware counter beside its model: DRAM bytes / model
                    bytes, requested bytes / modelled requests, shared-memory wavefronts per
                    request, achieved / theoretical occupancy

Every exporter, `compare` and `plot` read these fields; nothing recomputes them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pmppbench.results import Result
from pmppbench.roofline import MEMORY_BOUND, Ceilings, classify


def fill_rates(row: Result) -> None:
    """Rates of a timed row from its traffic model and median time."""
    if not row.median_ms:
        return
    seconds = row.median_ms / 1e3
    if row.bytes:
        row.gb_per_s = row.bytes / seconds / 1e9
    if row.flops:
        row.gflop_per_s = row.flops / seconds / 1e9


def fill_relative(rows: list[Result], baseline: str | None, roof: str | None, rate: str) -> None:
    """Fill speedup (vs the baseline variant) and % of the roof variant, within one shape."""
    by_name = {r.variant: r for r in rows}
    base = by_name.get(baseline) if baseline else None
    top = by_name.get(roof) if roof else None
    for r in rows:
        if base and base.median_ms and r.median_ms:
            r.speedup_vs = baseline
            r.speedup = base.median_ms / r.median_ms
        top_rate = top.headline_rate(rate) if top else None
        mine = r.headline_rate(rate)
        if top_rate and mine:
            r.pct_of = roof
            r.pct_of_roof = 100.0 * mine / top_rate


def speed_of_light(row: Any, ceilings: Ceilings | Sequence[Ceilings]) -> dict[str, Any] | None:
    """AI, ridge, bound and % of each roof for one timed Result row; None if it has no place
    on the roofline.

    Returned keys: intensity_flop_per_byte, ridge_flop_per_byte and bound (judged against
    the first ceilings given, normally the theoretical ones: the book's ridge point), and
    sol_pct_<source> for every ceilings given (sol_pct_theoretical, sol_pct_measured):
    100 x attained rate / roof at this AI.

    Rows without a time or a byte model, and rows timed with the host clock (the stream
    workload: its time includes PCIe transfers, so the device-memory roof does not bound
    it), get None.
    """
    roofs = [ceilings] if isinstance(ceilings, Ceilings) else list(ceilings)
    if not roofs:
        raise ValueError("speed_of_light needs at least one set of ceilings")
    if not row.median_ms or not row.bytes or getattr(row, "timer", "") == "host":
        return None
    seconds = row.median_ms / 1e3
    flops = row.flops or 0
    intensity = flops / row.bytes
    gbs = row.bytes / seconds / 1e9
    gflops = flops / seconds / 1e9
    ridge = roofs[0].ridge_flop_per_byte
    out: dict[str, Any] = {
        "intensity_flop_per_byte": intensity,
        "ridge_flop_per_byte": ridge,
        "bound": classify(intensity, ridge) if ridge else MEMORY_BOUND,
    }
    for c in roofs:
        on_memory_roof = c.fp32_gflops is None or intensity * c.bandwidth_gbs <= c.fp32_gflops
        pct = 100.0 * gbs / c.bandwidth_gbs if on_memory_roof else 100.0 * gflops / c.fp32_gflops
        out[f"sol_pct_{c.source}"] = pct
    return out


def fill_speed_of_light(row: Result, ceilings: Sequence[Ceilings]) -> None:
    for key, value in (speed_of_light(row, ceilings) or {}).items():
        setattr(row, key, value)


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def fill_counters(row: Result) -> None:
    """The counter columns of a row from its raw counters (row.counters, ncu metric names) and
    its model: bytes (logical), model["model_bytes"] (a workload's modelled requests, GEMM's),
    occupancy_theoretical_pct (PMPP 5.6 by hand). A ratio whose model is missing stays None."""
    from pmppbench import counters as k  # noqa: PLC0415

    c = row.counters
    if not c:
        return
    rd, wr = c.get(k.DRAM_READ), c.get(k.DRAM_WRITE)
    row.dram_read_bytes = None if rd is None else int(rd)
    row.dram_write_bytes = None if wr is None else int(wr)
    if rd is not None and wr is not None:
        row.dram_vs_model = _ratio(rd + wr, row.bytes)
    row.l2_hit_pct, row.l1_hit_pct = c.get(k.L2_HIT), c.get(k.L1_HIT)
    ld, st = c.get(k.GLOBAL_LD), c.get(k.GLOBAL_ST)
    if ld is not None and st is not None:
        row.requested_bytes = int(ld + st)
        row.requested_vs_model = _ratio(ld + st, row.model.get("model_bytes") or row.bytes)
    row.smem_ld_wavefronts_per_request = _ratio(c.get(k.SMEM_LD_WF), c.get(k.SMEM_LD_REQ))
    row.smem_ld_conflicts_per_request = _ratio(c.get(k.SMEM_LD_CONFLICTS), c.get(k.SMEM_LD_REQ))
    row.smem_st_wavefronts_per_request = _ratio(c.get(k.SMEM_ST_WF), c.get(k.SMEM_ST_REQ))
    row.occupancy_achieved_pct = c.get(k.OCCUPANCY)
    row.occupancy_vs_theoretical = _ratio(row.occupancy_achieved_pct, row.occupancy_theoretical_pct)
