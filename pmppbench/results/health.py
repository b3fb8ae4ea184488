"""The health view across GPUs (--devices): is one of them slower than the others?

For every (workload, variant, shape) timed on two or more GPUs: the median over the GPUs of
their median times, and each GPU's ratio to it. A GPU is slower *beyond the noise* on a row
when its fastest batch is slower than every other GPU's slowest batch (the same rule as
`compare`'s SLOWER); such GPUs are named with the rows that show it.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import dataclass, field

from rich.table import Table

from pmppbench.results.compare import SLOWER, verdict
from pmppbench.row import Result


def device_key(r: Result) -> str:
    return r.device_uuid or r.device_pci or r.device


@dataclass
class Finding:
    device: str  # device_key
    label: str  # "GPU-... (NVIDIA H200, 0000:19:00.0)"
    rows: list[tuple[str, float]] = field(default_factory=list)  # ("transpose naive 4096x4096", ratio)


@dataclass
class Health:
    ratios: dict[tuple[str, str, str], dict[str, float]]  # (workload, variant, shape) -> device -> ratio
    slow: list[Finding]

    @property
    def devices(self) -> list[str]:
        return list(dict.fromkeys(d for per in self.ratios.values() for d in per))


def health(rows: list[Result]) -> Health:
    timed = [r for r in rows if r.ok and r.median_ms]
    groups: dict[tuple[str, str, str], list[Result]] = defaultdict(list)
    for r in timed:
        groups[(r.workload, r.variant, r.shape)].append(r)
    ratios, slow = {}, {}
    for key, group in groups.items():
        if len({device_key(r) for r in group}) < 2:
            continue
        mid = statistics.median(r.median_ms for r in group)
        ratios[key] = {device_key(r): r.median_ms / mid for r in group}
        for r in group:
            others = [o for o in group if device_key(o) != device_key(r)]
            if all(verdict(o, r) == SLOWER for o in others):
                f = slow.setdefault(device_key(r), Finding(device_key(r), f"{r.device} {r.device_pci}".strip()))
                f.rows.append((" ".join(key), r.median_ms / mid))
    return Health(ratios, list(slow.values()))


def print_health(console, rows: list[Result]) -> None:
    """One line per GPU (its median and worst ratio to the GPUs' median), then the slow ones named."""
    h = health(rows)
    if not h.ratios:
        return
    labels = {device_key(r): f"{r.device} {r.device_pci}".strip() for r in rows}
    t = Table(title="Device health: each GPU's time / the median over GPUs, per row", header_style="bold")
    for col in ("device", "rows", "median ratio", "worst ratio", "rows slower beyond noise"):
        t.add_column(col, justify="left" if col == "device" else "right")
    slow = {f.device: f for f in h.slow}
    for d in h.devices:
        mine = [per[d] for per in h.ratios.values() if d in per]
        t.add_row(f"{d} ({labels.get(d, '')})", str(len(mine)), f"{statistics.median(mine):.3f}", f"{max(mine):.3f}",
                  str(len(slow[d].rows)) if d in slow else "0")
    console.print(t)
    for f in h.slow:
        worst = sorted(f.rows, key=lambda x: -x[1])[:5]
        console.print(f"slower than the other GPUs beyond their noise: {f.device} ({f.label}) on {len(f.rows)} rows, "
                      "e.g. " + "; ".join(f"{name} {ratio:.3f}x" for name, ratio in worst), highlight=False)
    if not h.slow:
        console.print(f"no GPU is slower than the others beyond their noise ({len(h.devices)} GPUs, "
                      f"{len(h.ratios)} rows)", highlight=False)
