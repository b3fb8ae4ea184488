"""`pmppbench compare BASE NEW`: line up two result files and say what changed, honestly.

Rows are matched by (workload, variant, dims, device): the sizes and parameters the row was
run with (its `dims`; the shape label for files without them), never by how a label reads.
For each pair:

    ratio  = new median_ms / base median_ms       (> 1: NEW is slower)
    change = 100 x (ratio - 1) %

The verdict respects noise (pyperf's "not significant" rather than an invented winner). The
ratio gets a 95% confidence interval by the percentile bootstrap over batch means: each run's
batch means are resampled with replacement (RESAMPLES times, a fixed seed, so a comparison
reads the same every time), the median of each resample taken (the median of batch means
is what a row reports), and the interval is the middle 95% of new median / base median.
Then:

    SLOWER  when the interval lies wholly above 1 + SAME_WITHIN
    FASTER  when it lies wholly below 1 - SAME_WITHIN
    SAME    otherwise: at this confidence the two runs may differ by less than SAME_WITHIN

Why the margin: batch means come from one run, so their interval measures the noise within
a run, not between runs (the GPU's clock, where the buffers landed, the L2's state): a change
smaller than SAME_WITHIN is SAME however narrow the interval (the evidence:
docs/measurement.md).

Why a bootstrap and not a rank test: the question is "how much slower, give or take", an
interval on the ratio, which a rank test (a p-value for "some difference") does not give; the
bootstrap asks nothing of the batch means' distribution. Its limit: with the course's 5
batches per row a resampled median takes one of 5 values, so the interval is coarse and only
approximately 95%; more batches (--batches, --until-stable) make it finer (docs/measurement.md).

A row with fewer than MIN_BATCHES batch means (a file from before rows carried them, or a
run with --batches 2) falls back to the noise bands, each run's [min_ms, max_ms]: SLOWER when
NEW's fastest batch is slower than BASE's slowest, FASTER the other way; a row from an older
file without min/max uses median x (1 +- spread_pct / 200); a row with neither has a
zero-width band, so any difference counts. Two more verdicts: FAIL when NEW's row did not
pass its check (or errored), UNTIMED when either row has no time. Rows present in only one
file are counted and listed apart, never compared: a subset run against a full one is
compared on the rows they share.

--fail-on-slower PCT (for CI): exit code 1 when a row is slower by more than PCT percent at
the same confidence (SLOWER, and the interval's lower end above 1 + PCT/100; by the noise
bands, the change above PCT), or when any row is FAIL (a kernel that stopped being correct
is a regression of any size); 0 otherwise. A gate passes only on what it judged, so it
refuses (exit 2, `gate_problem`) when it judged nothing (no rows matched, or every pair was
untimed) and when NEW ran a step (a workload on a shape on a device) but lost some of BASE's
rows of it (a run that silently lost rows is not a pass); steps NEW did not run at all are a
subset, counted, not refused. A regression among the rows it did judge is still exit 1. PCT
is a finite percentage > 0 (`threshold`): NaN would make every comparison false and pass.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from pmppbench import paths
from pmppbench.errors import UsageError
from pmppbench.row import Result

FASTER, SLOWER, SAME, FAIL, UNTIMED = "FASTER", "SLOWER", "SAME", "FAIL", "UNTIMED"

Key = tuple[str, str, str, str]  # (workload, variant, dims, device)


def threshold(text: str | None) -> float | None:
    """--fail-on-slower's value: a finite percentage > 0 (the words are ours, whatever the parser)."""
    if text is None:
        return None
    try:
        pct = float(str(text).strip().rstrip("%"))
    except ValueError:
        pct = math.nan
    if not (math.isfinite(pct) and pct > 0):
        raise UsageError(f"--fail-on-slower takes a percentage > 0 such as 5 (exit 1 when a row is slower by more), "
                         f"got {paths.quoted(text)}")
    return pct


def row_key(r: Result, by_uuid: bool = False) -> Key:
    """`by_uuid` when the file holds several GPUs of one name (--devices): each is its own
    device; otherwise the GPU's name is the device, so a file from before UUIDs were recorded,
    or from another machine with the same GPU, lines up with this one."""
    dims = json.dumps(r.dims, sort_keys=True) if r.dims else r.shape  # tuples and lists alike
    return (r.workload, r.variant, dims, (r.device_uuid if by_uuid else "") or r.device)


def noise_band(r: Result) -> tuple[float, float] | None:
    """[fastest, slowest] batch mean in ms; None for an untimed row."""
    if r.median_ms is None:
        return None
    if r.min_ms is not None and r.max_ms is not None:
        return (r.min_ms, r.max_ms)
    if r.spread_pct is not None:
        half = r.median_ms * r.spread_pct / 200.0
        return (r.median_ms - half, r.median_ms + half)
    return (r.median_ms, r.median_ms)


CONFIDENCE = 0.95
RESAMPLES = 10_000
BOOTSTRAP_SEED = 36  # fixed: the same files always give the same intervals
MIN_BATCHES = 5  # fewer batch means on either side: the noise bands' rule


def ratio_interval(base: Result, new: Result, confidence: float = CONFIDENCE) -> tuple[float, float] | None:
    """The percentile-bootstrap interval of new median / base median over the two rows' batch
    means; None when either has fewer than MIN_BATCHES of them (or no time)."""
    b, n = base.batch_means_ms, new.batch_means_ms
    if base.median_ms is None or new.median_ms is None or len(b) < MIN_BATCHES or len(n) < MIN_BATCHES \
            or min(b) <= 0:
        return None
    rng = np.random.default_rng(BOOTSTRAP_SEED)

    def medians(means) -> np.ndarray:
        x = np.asarray(means, dtype=np.float64)
        return np.median(x[rng.integers(0, x.size, (RESAMPLES, x.size))], axis=1)

    ratios = medians(n) / medians(b)
    tail = (1 - confidence) / 2
    lo, hi = np.quantile(ratios, [tail, 1 - tail])
    return float(lo), float(hi)


SAME_WITHIN = 0.01  # a ratio whose interval reaches within 1% of 1 is SAME (between-run noise: module doc)


def verdict(base: Result, new: Result, interval: tuple[float, float] | None = None) -> str:
    """FASTER / SLOWER / SAME (by `interval`, ratio_interval's, else by the noise bands), FAIL
    or UNTIMED; see the module doc."""
    if not new.ok:
        return FAIL
    b, n = noise_band(base), noise_band(new)
    if b is None or n is None:
        return UNTIMED
    if interval is None:
        return SLOWER if n[0] > b[1] else FASTER if n[1] < b[0] else SAME
    lo, hi = interval
    return SLOWER if lo > 1 + SAME_WITHIN else FASTER if hi < 1 - SAME_WITHIN else SAME


@dataclass(frozen=True)
class Comparison:
    base: Result
    new: Result
    verdict: str
    key: Key = ("", "", "", "")  # what matched them (row_key)
    interval: tuple[float, float] | None = None  # the ratio's 95% bootstrap interval (ratio_interval)

    @property
    def ratio(self) -> float | None:
        """new median / base median (> 1 means NEW is slower)."""
        if not self.base.median_ms or self.new.median_ms is None:
            return None
        return self.new.median_ms / self.base.median_ms

    @property
    def change_pct(self) -> float | None:
        """+12.5 means NEW takes 12.5% longer; -20 means it takes 20% less time."""
        ratio = self.ratio
        return None if ratio is None else 100.0 * (ratio - 1.0)


@dataclass
class CompareReport:
    matched: list[Comparison]
    only_base: list[Result]
    only_new: list[Result]
    fail_on_slower_pct: float | None = None
    base_name: str = "BASE"
    new_name: str = "NEW"
    notes: list[str] = field(default_factory=list)
    base_meta: dict[str, Any] = field(default_factory=dict)  # the files' run metadata (compare_files)
    new_meta: dict[str, Any] = field(default_factory=dict)

    def count(self, v: str) -> int:
        return sum(1 for c in self.matched if c.verdict == v)

    @property
    def regressions(self) -> list[Comparison]:
        """Rows that make --fail-on-slower fail (empty when it was not given)."""
        pct = self.fail_on_slower_pct
        if pct is None:
            return []
        return [c for c in self.matched if c.verdict == FAIL or (c.verdict == SLOWER and beyond(c, pct))]

    @property
    def judged(self) -> int:
        """Pairs the gate judged: timed on both sides, or FAIL."""
        return sum(1 for c in self.matched if c.verdict != UNTIMED)

    @property
    def gate_problem(self) -> str:
        """Why --fail-on-slower cannot give a verdict on these files ('' when it can)."""
        if self.fail_on_slower_pct is None:
            return ""
        gate = "--fail-on-slower"
        if not self.matched:
            return (f"{gate}: nothing to judge, no row of {self.new_name} matched one of {self.base_name} "
                    f"({_rows(len(self.only_base))} unmatched); compare runs of the same workloads, sizes and GPU")
        if not self.judged:
            return (f"{gate}: nothing to judge, all {_rows(len(self.matched))} that matched are untimed; "
                    "compare timed runs (not --check-only)")
        lost = self.lost
        if lost:
            return (f"{gate}: {len(lost)} of {self.base_name}'s {_rows(len(self.only_base) + len(self.matched))} "
                    f"are not in {self.new_name}, though it ran their workload and shape, so the gate cannot "
                    "vouch for them; rerun with the same variants as the base")
        return ""

    @property
    def lost(self) -> list[Result]:
        """BASE's rows missing from a step (workload, shape, device) that NEW did run."""
        ran = {c.key[:1] + c.key[2:] for c in self.matched} | {_step(r) for r in self.only_new}
        return [r for r in self.only_base if _step(r) in ran]

    @property
    def exit_code(self) -> int:
        """1 when a regression was found (even if rows are missing too); 2 when the gate has a
        problem (`gate_problem`) and found none; else 0."""
        return 1 if self.regressions else 2 if self.gate_problem else 0

    def summary(self) -> str:
        """One line, e.g. '2 faster, 1 slower, 9 same (within noise); 1 row only in base.csv'."""
        parts = [f"{self.count(FASTER)} faster", f"{self.count(SLOWER)} slower",
                 f"{self.count(SAME)} same (within noise)"]
        for v in (FAIL, UNTIMED):
            if self.count(v):
                parts.append(f"{self.count(v)} {v.lower()}")
        text = ", ".join(parts)
        extra = []
        if self.only_base:
            extra.append(f"{_rows(len(self.only_base))} only in {self.base_name}")
        if self.only_new:
            extra.append(f"{_rows(len(self.only_new))} only in {self.new_name}")
        if extra:
            text += "; " + ", ".join(extra)
        untimed = len(self.matched) - self.judged
        if self.fail_on_slower_pct is not None and untimed:
            text += f"; {_rows(untimed)} not judged (untimed)"
        if self.fail_on_slower_pct is not None:
            n = len(self.regressions)
            text += (f"; {n} regression{'s' if n != 1 else ''} beyond {self.fail_on_slower_pct:g}%"
                     if n else f"; no regression beyond {self.fail_on_slower_pct:g}%")
        return text


def beyond(c: Comparison, pct: float) -> bool:
    """Slower by more than pct percent: the interval's lower end above 1 + pct/100 (by the
    noise bands, without one: the change)."""
    if c.interval is not None:
        return c.interval[0] > 1 + pct / 100
    return c.change_pct is not None and c.change_pct > pct


def _step(r: Result) -> tuple[str, str, str]:
    key = row_key(r)
    return key[:1] + key[2:]


def _rows(n: int) -> str:
    return f"{n} row{'s' if n != 1 else ''}"


def _index(rows: Iterable[Result], name: str) -> dict[Key, Result]:
    rows = list(rows)
    uuids: dict[str, set] = {}
    for r in rows:
        uuids.setdefault(r.device, set()).add(r.device_uuid)
    out: dict[Key, Result] = {}
    for r in rows:
        k = row_key(r, by_uuid=len(uuids[r.device]) > 1)
        if k in out:
            raise UsageError(f"{name} has two rows for {r.workload} {r.variant} {r.shape}{' on ' + r.device if r.device else ''}; "
                             "compare files with one row per workload, variant, shape and device")
        out[k] = r
    return out


def compare_results(base_rows: Iterable[Result], new_rows: Iterable[Result],
                    fail_on_slower_pct: float | None = None,
                    base_name: str = "BASE", new_name: str = "NEW") -> CompareReport:
    """Match rows by (workload, variant, dims, device) and give each pair its verdict.

    Matched rows keep NEW's order; rows only in one file keep their file's order.
    """
    if fail_on_slower_pct is not None:
        threshold(str(fail_on_slower_pct))  # the same rule for a caller's number
    base = _index(base_rows, base_name)
    new = _index(new_rows, new_name)
    matched = []
    for k, n in new.items():
        if k in base:
            interval = ratio_interval(base[k], n)
            matched.append(Comparison(base[k], n, verdict(base[k], n, interval), k, interval))
    report = CompareReport(
        matched=matched,
        only_base=[r for k, r in base.items() if k not in new],
        only_new=[r for k, r in new.items() if k not in base],
        fail_on_slower_pct=fail_on_slower_pct,
        base_name=base_name,
        new_name=new_name,
    )
    if not matched and base and new:
        base_devices = sorted({k[3] for k in base})
        new_devices = sorted({k[3] for k in new})
        if base_devices != new_devices:
            report.notes.append(f"no rows matched: {base_name} ran on {', '.join(base_devices) or '?'}, "
                                f"{new_name} on {', '.join(new_devices) or '?'} (the device is part of the key)")
        else:
            report.notes.append("no rows matched: the files share no workload / variant / shape")
    return report


def compare_files(base: Path, new: Path, fail_on_slower_pct: float | None = None,
                  notes: list[str] | None = None) -> CompareReport:
    """compare_results on two CSV or JSON result files (validated: a broken file is exit 2);
    `notes` receives what reading them noticed (resultfile.load)."""
    from pmppbench.results.resultfile import load  # noqa: PLC0415

    base_rows, base_meta = load(Path(base), notes)
    new_rows, new_meta = load(Path(new), notes)
    report = compare_results(base_rows, new_rows, fail_on_slower_pct, base_name=str(base), new_name=str(new))
    report.base_meta, report.new_meta = base_meta, new_meta
    return report


# ---- printing ------------------------------------------------------------------------

HEADERS = ("workload", "variant", "shape", "base_ms", "base_spread_%", "new_ms", "new_spread_%",
           "new/base", "95%_interval", "change_%", "verdict")
CAPTION = (f"verdict: FASTER/SLOWER only when the {100 * CONFIDENCE:g}% bootstrap interval of new/base (over batch "
           f"means) lies beyond 1 +- {100 * SAME_WITHIN:g}%; rows with fewer than {MIN_BATCHES} batch means: when their ranges do not overlap")
LISTED = 10  # rows in one file only, listed by name before the rest are counted
_STYLE = {FASTER: "green", SLOWER: "red", FAIL: "red", SAME: "dim", UNTIMED: "dim"}


def _ms(v: float | None) -> str:
    return "" if v is None else f"{v:.4f}"


def _spread(r: Result) -> str:
    return "" if r.median_ms is None or r.spread_pct is None else f"{r.spread_pct:.1f}"


def comparison_cells(c: Comparison) -> tuple[str, ...]:
    """The pair as strings, in HEADERS order."""
    ratio, change = c.ratio, c.change_pct
    interval = "" if c.interval is None else f"{c.interval[0]:.3f}-{c.interval[1]:.3f}"
    return (c.new.workload, c.new.variant, c.new.shape, _ms(c.base.median_ms), _spread(c.base),
            _ms(c.new.median_ms), _spread(c.new), "" if ratio is None else f"{ratio:.3f}", interval,
            "" if change is None else f"{change:+.1f}", c.verdict)


# Where a narrow terminal leaves a column out (export/fitted.py), first to last: the change
# (new/base says it), then each side's spread; the ratio, its interval and the verdict stay.
_DROP = {"change_%": 3, "base_spread_%": 2, "new_spread_%": 1}


def _comparison_table(console: Any, matched: list[Comparison], title: str, several_devices: bool,
                      workload: bool = True, caption: str = CAPTION):
    """The fitted table of `matched` (export/fitted.py); without the workload column when
    each workload gets its own table."""
    from rich.markup import escape  # noqa: PLC0415

    from pmppbench.results.export.fitted import Field, fit  # noqa: PLC0415

    headers = list(HEADERS[:3] + (("device",) if several_devices else ()) + HEADERS[3:])
    fields = [Field(h, "left" if h in ("workload", "variant", "shape", "device", "verdict") else "right",
                    _DROP.get(h, 0), words=h == "device") for h in headers]
    rows = []
    for c in matched:
        cells = [escape(x) for x in comparison_cells(c)]
        if several_devices:
            cells.insert(3, escape(f"{c.new.device} {c.new.device_pci}".strip()))
        cells[-1] = f"[{_STYLE[c.verdict]}]{c.verdict}[/]"
        rows.append(cells)
    if not workload:
        fields, rows = fields[1:], [cells[1:] for cells in rows]
    return fit(console, fields, rows, title=title, caption=caption, markup=True)


def print_comparison(console: Any, report: CompareReport) -> None:
    """The Rich table of matched rows (fitted to the terminal: when even its kept columns are
    too wide, one table per workload), the rows found in one file only, and the summary line."""
    base_name, new_name = report.base_name, report.new_name
    several_devices = len({c.key[3] for c in report.matched}) > 1
    if report.matched:
        title = f"{base_name} (base) -> {new_name} (new)"
        tables = [_comparison_table(console, report.matched, title, several_devices)]
        names = list(dict.fromkeys(c.new.workload for c in report.matched))
        if not tables[0].fits and len(names) > 1:
            tables = [_comparison_table(console, [c for c in report.matched if c.new.workload == w], f"{w}: {title}",
                                        several_devices, workload=False, caption=CAPTION if w == names[-1] else "")
                      for w in names]  # the caption once, under the last
        for fitted in tables:
            console.print(fitted.table, soft_wrap=False)  # its title and caption wrap to the table
            note = fitted.note(console.width)
            if note:
                console.print(note, markup=False, highlight=False, soft_wrap=False)
    for label, rows in ((base_name, report.only_base), (new_name, report.only_new)):
        if rows:
            console.print(f"only in {label} ({_rows(len(rows))}):", markup=False, highlight=False, soft_wrap=False)
            for r in rows[:LISTED]:
                console.print(f"  {r.workload} {r.variant} {r.shape}" + (f" ({r.device})" if r.device else ""),
                              markup=False, highlight=False, soft_wrap=False)
            if len(rows) > LISTED:
                console.print(f"  ... and {len(rows) - LISTED} more", markup=False, highlight=False)
    for note in report.notes:
        console.print(note, markup=False, highlight=False, soft_wrap=False)
    console.print(report.summary(), markup=False, highlight=False, soft_wrap=False)
