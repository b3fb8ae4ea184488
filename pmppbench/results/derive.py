"""Derived values, computed once per row from what was measured and modelled (pure).

    rates           GB/s = model bytes / median time; GFLOP/s = model FLOPs / median time
    relative        speedup vs the workload's baseline variant; % of its roof variant's rate
    speed of light  intensity, bound and % of the roof at that intensity (PMPP 5.1), against
                    each set of ceilings (datasheet-style peaks, and the measured ones)

(--counters puts each hardware counter beside its model in counters.fill_counters.)
Every exporter, `compare` and `plot` read these fields; nothing recomputes them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pmppbench.hardware.archs import precision_of
from pmppbench.row import Result
from pmppbench.measure.roofline import MEMORY_BOUND, Ceilings, classify


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
    precision = precision_of(getattr(row, "dims", None))  # GEMM's tensor-core rows
    peak = roofs[0].compute_gflops(precision)
    ridge = peak / roofs[0].bandwidth_gbs if peak else None
    out: dict[str, Any] = {
        "intensity_flop_per_byte": intensity,
        "ridge_flop_per_byte": ridge,
        "bound": classify(intensity, ridge) if ridge else MEMORY_BOUND,
    }
    for c in roofs:
        peak = c.compute_gflops(precision)
        if peak is None and precision != "fp32":
            continue  # these ceilings have no roof for the tensor cores: no % of a wrong one
        on_memory_roof = peak is None or intensity * c.bandwidth_gbs <= peak
        pct = 100.0 * gbs / c.bandwidth_gbs if on_memory_roof else 100.0 * gflops / peak
        out[f"sol_pct_{c.source}"] = pct
    return out


def fill_speed_of_light(row: Result, ceilings: Sequence[Ceilings]) -> None:
    for key, value in (speed_of_light(row, ceilings) or {}).items():
        setattr(row, key, value)
