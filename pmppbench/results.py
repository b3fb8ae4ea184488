"""The data model: one Result per (workload, variant, shape), independent of printing.

Rows are plain dataclasses so every printer (terminal, CSV, JSON, Markdown) and every later
tool (compare, plot, report) reads the same fields. Units are in the field names.
"""

from __future__ import annotations

import datetime as _dt
import json
from dataclasses import asdict, dataclass, field, fields
from typing import Any


@dataclass
class Result:
    workload: str
    variant: str
    shape: str  # the workload's label, e.g. "4096x4096" or "16777216 radius=32"
    dims: dict[str, int] = field(default_factory=dict)
    # check
    check: str = "SKIP"  # PASS | FAIL | ERROR | SKIP
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
    pct_of: str = ""  # the roof variant's name (copy, cublas)
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
    # trust: clocks seen during the batches and the warnings derived from them (noise.py)
    clocks: dict[str, float | str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    # context
    error: str = ""
    seed: int | None = None
    device: str = ""
    run_id: str = ""
    timestamp: str = ""

    @property
    def ok(self) -> bool:
        return self.check in ("PASS", "SKIP") and not self.error

    def headline_rate(self, rate: str) -> float | None:
        return self.gflop_per_s if rate == "GFLOP/s" else self.gb_per_s

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_flat(self) -> dict[str, Any]:
        """One CSV row: nested fields as JSON text."""
        flat = {}
        for k, v in asdict(self).items():
            flat[k] = json.dumps(v) if isinstance(v, (dict, list)) else v
        return flat

    @classmethod
    def from_flat(cls, row: dict[str, Any]) -> "Result":
        """Inverse of to_flat, tolerant of missing columns (older files) and empty cells."""
        kwargs = {}
        for f in fields(cls):
            if f.name not in row:
                continue
            raw = row[f.name]
            kwargs[f.name] = _parse(raw, f.type)
        return cls(**kwargs)


def _parse(raw: Any, type_name: str) -> Any:
    if not isinstance(raw, str):
        return raw
    t = str(type_name)
    if t.startswith(("dict", "list")):
        return json.loads(raw) if raw else ({} if t.startswith("dict") else [])
    if raw == "" and "None" in t:
        return None
    if t.startswith("float"):
        return float(raw)
    if t.startswith("int"):
        return int(float(raw))
    if t.startswith("bool"):
        return raw.strip().lower() in ("true", "1", "yes")
    return raw


def now_iso() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


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
