"""When not to trust a number: hyperfine-style warnings, each saying what to do.

The rules read only a Result row (its batch means and the clocks recorded around its
batches), so they are tested on synthetic data and applied the same way to every workload.
"""

from __future__ import annotations

import statistics

from pmppbench.row import Result

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
