"""The columns of a result table: a header with its unit and a cell formatter per column.

Optional columns appear only when some row has a value, and a column never changes meaning
between rows: the speed-of-light column names its ceiling (`SoL_measured_%` against the
ceilings `pmppbench info --measure` measured, `SoL_peak_%` against the datasheet-style
peaks) and the "x vs" / "% of" columns name their reference variant.

`counter_columns_for` gives the second table --counters adds: each hardware counter beside
its model, units in the headers (MB = 10^6 bytes; wf/req and conf/req = wavefronts and bank
conflicts per warp request; a/b = a ratio).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pmppbench.row import Result


@dataclass(frozen=True)
class Column:
    """`drop`: where a terminal too narrow for every column leaves this one out (0: never;
    higher: sooner; export/fitted.py); `words`: its cells are prose, which may wrap."""

    header: str
    cell: Callable[[Result], str]
    justify: str = "right"
    drop: int = 0
    words: bool = False


# The order a narrow terminal leaves columns out, first to last: the model's own columns, the
# resources, the roofline's verdict, the comparisons with other rows, the spread, the rates (the
# headline rate last).
# The row's identity, its check and its median time are always shown, and so is why it failed.
DROP = {"regs": 78, "smem_B": 79, "local_B": 80, "bound": 61, "SoL": 60, "% of": 55, "spread_%": 45,
        "x vs": 40, "GFLOP/s": 35, "GB/s": 30, "max_abs_err": 21, "max_rel_err": 20, "model": 90}


def num(v, fmt: str) -> str:
    return "" if v is None else format(v, fmt)


def rate(v) -> str:
    return "" if v is None else f"{v:,.1f}" if v < 1000 else f"{v:,.0f}"


def columns_for(rows: list[Result]) -> list[Column]:
    """The columns worth showing for these rows (empty optional columns are left out)."""
    cols = [
        Column("variant", lambda r: r.variant, "left"),
        Column("shape", lambda r: r.shape, "left"),
        Column("check", lambda r: r.check, "left"),
    ]
    timed = any(r.median_ms is not None for r in rows)
    if timed:
        cols += [
            Column("median_ms", lambda r: num(r.median_ms, ".4f")),
            Column("spread_%", lambda r: num(r.spread_pct, ".1f"), drop=DROP["spread_%"]),
        ]
        # A FLOP rate is worth a column once some row does at least 1 FLOP per byte moved; it is
        # then the headline, and a narrow terminal keeps it longer than the bandwidth.
        flops = any(r.gflop_per_s and (r.intensity_flop_per_byte or 0) >= 1 for r in rows)
        if any(r.gb_per_s for r in rows):
            cols.append(Column("GB/s", lambda r: rate(r.gb_per_s), drop=DROP["GFLOP/s" if flops else "GB/s"]))
        if flops:
            cols.append(Column("GFLOP/s", lambda r: rate(r.gflop_per_s), drop=DROP["GB/s"]))
        base = next((r.speedup_vs for r in rows if r.speedup_vs), "")
        if base:
            cols.append(Column(f"x vs {base}", lambda r: num(r.speedup, ".2f"), drop=DROP["x vs"]))
        roof = next((r.pct_of for r in rows if r.pct_of), "")
        if roof:
            cols.append(Column(f"% of {roof}", lambda r: num(r.pct_of_roof, ".1f"), drop=DROP["% of"]))
    if any(r.bound for r in rows):
        cols.append(Column("bound", lambda r: r.bound.replace("-bound", ""), "left", drop=DROP["bound"]))
        if any(r.sol_pct_measured is not None for r in rows):
            cols.append(Column("SoL_measured_%", lambda r: num(r.sol_pct_measured, ".1f"), drop=DROP["SoL"]))
        else:
            cols.append(Column("SoL_peak_%", lambda r: num(r.sol_pct_theoretical, ".1f"), drop=DROP["SoL"]))
    for i, key in enumerate(model_keys(rows)):  # the last one first
        cols.append(Column(key, lambda r, k=key: num(r.model.get(k), ".4g"), drop=DROP["model"] + i))
    if any(r.registers is not None for r in rows):
        cols += [
            Column("regs", lambda r: num(r.registers, "d"), drop=DROP["regs"]),
            Column("smem_B", lambda r: "" if r.static_smem_bytes is None else
                   str(r.static_smem_bytes + (r.dynamic_smem_bytes or 0)), drop=DROP["smem_B"]),
            Column("local_B", lambda r: num(r.local_bytes, "d"), drop=DROP["local_B"]),
        ]
    if any(not r.ok for r in rows):
        cols.append(Column("detail", lambda r: r.error or (r.check_detail if r.check in ("FAIL", "SUSPECT") else ""),
                           "left", words=True))
    elif not timed:
        cols.append(Column("max_abs_err", lambda r: num(r.max_abs_err, ".2e"), drop=DROP["max_abs_err"]))
        cols.append(Column("max_rel_err", lambda r: num(r.max_rel_err, ".2e"), drop=DROP["max_rel_err"]))
    return cols


def model_keys(rows: list[Result]) -> list[str]:
    keys: list[str] = []
    for r in rows:
        for k in r.model:
            if k not in keys:
                keys.append(k)
    return keys


def mb(v) -> str:
    return "" if v is None else f"{v / 1e6:,.1f}"


def has_counters(rows: list[Result]) -> bool:
    return any(r.counters for r in rows)


def counter_columns_for(rows: list[Result]) -> list[Column]:
    """The hardware-counter table's columns (--counters): each counter beside its model;
    empty when no row has counters (the run's warning says why). A column no row has a value
    for is left out; rows without counters say why in counters_note."""
    if not has_counters(rows):
        return []
    cols = [Column("variant", lambda r: r.variant, "left"), Column("shape", lambda r: r.shape, "left")]
    optional = [
        ("model_MB", lambda r: r.bytes, mb),
        ("DRAM_rd_MB", lambda r: r.dram_read_bytes, mb),
        ("DRAM_wr_MB", lambda r: r.dram_write_bytes, mb),
        ("DRAM/model", lambda r: r.dram_vs_model, lambda v: num(v, ".3f")),
        ("req_MB", lambda r: r.requested_bytes, mb),
        ("req/model", lambda r: r.requested_vs_model, lambda v: num(v, ".3f")),
        ("L2_hit_%", lambda r: r.l2_hit_pct, lambda v: num(v, ".1f")),
        ("L1_hit_%", lambda r: r.l1_hit_pct, lambda v: num(v, ".1f")),
        ("smem_ld_wf/req", lambda r: r.smem_ld_wavefronts_per_request, lambda v: num(v, ".2f")),
        ("smem_ld_conf/req", lambda r: r.smem_ld_conflicts_per_request, lambda v: num(v, ".2f")),
        ("smem_st_wf/req", lambda r: r.smem_st_wavefronts_per_request, lambda v: num(v, ".2f")),
        ("warp_eff_%", lambda r: r.warp_efficiency_pct, lambda v: num(v, ".1f")),
        ("glob_atom_req", lambda r: r.global_atomic_requests, lambda v: num(v, ",d")),
        ("smem_atom_inst", lambda r: r.shared_atomic_instructions, lambda v: num(v, ",d")),
        ("tensor_pipe_%", lambda r: r.tensor_pipe_pct, lambda v: num(v, ".1f")),
        ("occ_theory_%", lambda r: r.occupancy_theoretical_pct, lambda v: num(v, ".1f")),
        ("occ_achieved_%", lambda r: r.occupancy_achieved_pct, lambda v: num(v, ".1f")),
        ("occ/theory", lambda r: r.occupancy_vs_theoretical, lambda v: num(v, ".3f")),
    ]
    counted = [r for r in rows if r.counters]
    for i, (header, value, fmt) in enumerate(optional):  # a narrow terminal leaves out the last first
        if header == "model_MB" or any(value(r) is not None for r in counted):
            cols.append(Column(header, lambda r, value=value, fmt=fmt: fmt(value(r)), drop=1 + i))
    if any(r.counters_note for r in rows):
        cols.append(Column("counters_note", lambda r: r.counters_note, "left", words=True))
    return cols
