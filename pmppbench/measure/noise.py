"""When not to trust a number: hyperfine-style warnings, each saying what to do.

The rules read only a Result row (its batch means and the clocks recorded around its
batches), so they are tested on synthetic data and applied the same way to every workload.

`beyond_ceilings` is the one rule that is a verdict, not a warning: a rate faster than every
ceiling that could apply to it is not a measurement of the model's work (runner: SUSPECT).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from pmppbench.row import Result

# ---- ceilings a rate cannot beat (the SUSPECT verdict) ---------------------------------------
# The L2 has no bandwidth attribute. Its upper bound here is each SM taking one 128-byte line
# (an L1 line) from L2 per SM clock; published microbenchmarks of Volta to Hopper measure far
# less per SM per clock. A bound, not an estimate, so that an honest L2-resident kernel never
# reaches it (docs/measurement.md).
L2_BYTES_PER_CLK_PER_SM = 128
# A rate is SUSPECT only when even its slowest batch beats the ceiling by this much: the
# ceilings come from the driver's boost clock, and the cheats this catches beat them by
# several times (a cached GEMM: 5.8x the FP32 peak).
SUSPECT_MARGIN = 0.05


@dataclass(frozen=True)
class Limits:
    """The hard limits of one GPU a row's rates are held to (from device.DeviceInfo)."""

    precision: str  # the precision of the workload's arithmetic: its compute peak
    compute_gflops: float | None  # None when the GPU's rate for that precision is unknown
    dram_gbs: float
    l2_gbs: float
    l2_bytes: int

    @classmethod
    def of(cls, dev, precision: str = "fp32", dram_gbs: float | None = None, compute: bool = True) -> "Limits":
        """`dram_gbs`: a measured DRAM bandwidth, kept when it is above the datasheet's;
        `compute` False: no compute ceiling (the model's FLOPs are not a floor of the work)."""
        l2 = dev.sm_count * L2_BYTES_PER_CLK_PER_SM * dev.sm_clock_mhz * 1e6 / 1e9
        return cls(precision, dev.peak_gflops(precision) if compute else None,
                   max(dev.peak_bandwidth_gbs, dram_gbs or 0.0), l2, dev.l2_bytes)

    def memory_gbs(self, nbytes: int) -> tuple[float, str]:
        """The fastest a call can move `nbytes` (GB/s), and which ceiling that is. A working set
        that fits in L2 may come from L2 on every call; of a larger one at most the L2's size
        can, and the rest crosses DRAM: time >= max(bytes / L2 rate, (bytes - L2) / DRAM rate)."""
        if nbytes <= self.l2_bytes:
            return self.l2_gbs, (f"the L2 bound of {_rate(self.l2_gbs)} GB/s (its {_mb(nbytes)} MB working set "
                                 f"fits in the {_mb(self.l2_bytes)} MB L2)")
        gbs = nbytes / max(nbytes / self.l2_gbs, (nbytes - self.l2_bytes) / self.dram_gbs)
        return gbs, (f"the memory bound of {_rate(gbs)} GB/s (of its {_mb(nbytes)} MB working set, what does not "
                     f"fit in the {_mb(self.l2_bytes)} MB L2 comes from DRAM at {_rate(self.dram_gbs)} GB/s)")


def _rate(v: float) -> str:
    return f"{v:,.0f}"


def _mb(nbytes: float) -> str:
    return f"{nbytes / 1e6:,.1f}"


def beyond_ceilings(row: Result, limits: Limits) -> str | None:
    """Why `row` is SUSPECT, or None: even at its slowest batch its FLOP rate beats the compute
    peak of its precision, or its byte rate the memory ceiling of its working set (the model's
    bytes), by more than SUSPECT_MARGIN. Host-timed rows (PCIe transfers) are not held to
    device limits."""
    slowest = row.max_ms or row.median_ms
    if not slowest or row.timer == "host":
        return None
    seconds = slowest / 1e3
    found = []
    if row.flops and limits.compute_gflops:
        gflops = row.flops / seconds / 1e9
        if gflops > (1 + SUSPECT_MARGIN) * limits.compute_gflops:
            found.append((gflops / limits.compute_gflops, f"{_rate(gflops)} GFLOP/s",
                          f"the {limits.precision.upper()} peak of {_rate(limits.compute_gflops)} GFLOP/s"))
    if row.bytes:
        gbs = row.bytes / seconds / 1e9
        limit, what = limits.memory_gbs(row.bytes)
        if gbs > (1 + SUSPECT_MARGIN) * limit:
            found.append((gbs / limit, f"{_rate(gbs)} GB/s", what))
    if not found:
        return None
    times, rate, what = max(found)
    return (f"{rate} in its slowest batch is {times:.1f}x {what}: no kernel doing the model's work can be this "
            "fast; it may reuse an earlier answer or skip work the check does not see")

SPREAD_WARN_PCT = 5.0  # (max - min) / median of the batch means
SHORT_CALL_MS = 0.010  # under ~10 us per call, the per-launch cost is a large part of the time
FIRST_BATCH_FACTOR = 1.15  # first batch this much slower than the median of the others
CLOCK_SAG_FRACTION = 0.90  # SM clock under 90% of its maximum during the batches


def diagnose(row: Result) -> list[str]:
    """The warnings that apply to one timed row (empty when the numbers look trustworthy)."""
    if row.median_ms is None:
        return []
    out = []
    where = f"{row.workload} {row.variant} {row.shape}"
    if row.spread_pct is not None and row.spread_pct > SPREAD_WARN_PCT:
        out.append(f"{where}: batches spread {row.spread_pct:.1f}% (> {SPREAD_WARN_PCT:g}%): the measurement is "
                   "noisy; close other GPU work, or use more --batches / a larger REPS")
    if row.median_ms < SHORT_CALL_MS:
        out.append(f"{where}: {row.median_ms * 1e3:.1f} us per call is under {SHORT_CALL_MS * 1e3:.0f} us: per-launch "
                   "overhead (a few us on the GPU, more on the host) is a large part of such a call; use a larger shape")
    means = row.batch_means_ms
    if len(means) >= 3:
        rest = statistics.median(means[1:])
        if rest > 0 and means[0] > FIRST_BATCH_FACTOR * rest:
            out.append(f"{where}: first batch {means[0] / rest:.2f}x slower than the others: the GPU was not warm; "
                       "use a larger --warmup")
    clocks = row.clocks or {}
    sm_min, sm_max = clocks.get("sm_mhz_min"), clocks.get("sm_mhz_max_supported")
    if sm_min and sm_max and sm_min < CLOCK_SAG_FRACTION * sm_max:
        out.append(f"{where}: SM clock fell to {sm_min:.0f} MHz of {sm_max:.0f} during the batches; the number may "
                   "be low (power or thermal limits); let the GPU cool or compare runs with care")
    if row.sol_pct_theoretical is not None and row.sol_pct_theoretical > 100.0:
        out.append(f"{where}: {row.sol_pct_theoretical:.0f}% of the device's theoretical peak is implausible: the "
                   "kernel may skip work the model counts, or the data stayed in the L2 cache between calls "
                   "(a shape smaller than the L2; time it with --flush-l2)")
    reasons = clocks.get("throttle_reasons")
    if reasons:
        out.append(f"{where}: clocks were held back during the batches ({reasons}); treat the time as an upper bound")
    return out


STABLE_MIN_MS = 0.1  # calls this long are well above launch overhead; their spread should be small


def largest_spread(rows: list[Result], min_ms: float = STABLE_MIN_MS) -> Result | None:
    """The timed row of at least `min_ms` per call whose batches disagree most, if any.

    The one number to read for "how repeatable was this run": short calls are excluded
    because their spread is dominated by launch jitter and already has its own warning.
    """
    timed = [r for r in rows if r.median_ms is not None and r.median_ms >= min_ms and r.spread_pct is not None]
    return max(timed, key=lambda r: r.spread_pct, default=None)


def stability_line(rows: list[Result]) -> str | None:
    worst = largest_spread(rows)
    if worst is None:
        return None
    return (f"largest batch spread of calls >= {STABLE_MIN_MS * 1e3:.0f} us: {worst.spread_pct:.2f}% "
            f"({worst.workload} {worst.variant} {worst.shape})")
