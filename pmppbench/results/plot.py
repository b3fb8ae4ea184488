"""PNG charts from result rows: one roofline for the whole file, one bar chart per workload.

matplotlib is an optional extra (pip install 'pmppbench[plot]'); it is imported only here,
only when a plot is asked for, and drawn with the Agg canvas directly (no pyplot, no
window, no global backend switch), so plotting works on a headless machine and inside
other programs that use matplotlib themselves.

roofline.png: log-log, FLOP/B on x, GFLOP/s on y. The memory roof (slope = bandwidth) and
the compute roof (flat at peak FP32) for every set of ceilings the file recorded (solid:
theoretical, dashed: measured), a thin vertical line at each ridge point, and one labelled point per
(workload, variant, shape) that passed, was timed, and has both FLOPs and bytes in its
model. Variants with no FLOPs (copies, transposes) sit at AI = 0, which a log axis cannot
show; their speed of light is in their bar chart and in the table instead.

<workload>.png: the workload's headline rate (GB/s or GFLOP/s) for every variant, bars
grouped by shape.

<workload>_counters.png (rows written with --counters): the hardware beside the model, by
variant and shape: DRAM bytes read and written over the model's bytes (1 = the model), the
shared-memory wavefronts per load request (1 = conflict-free, 32 = 32-way), and achieved
occupancy with the theoretical one (PMPP 5.6) marked on each bar.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pmppbench import paths
from pmppbench.errors import EnvironmentProblem, UsageError
from pmppbench.measure.roofline import Ceilings, ceilings_from_meta

MATPLOTLIB_HINT = "matplotlib is not installed: pip install 'pmppbench[plot]'"
_LINESTYLES = {"theoretical": "-", "measured": "--"}


def _matplotlib():
    """(Figure, FigureCanvasAgg), or a one-line message saying how to get them."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: PLC0415
        from matplotlib.figure import Figure  # noqa: PLC0415
    except ImportError as exc:
        raise EnvironmentProblem(MATPLOTLIB_HINT) from exc
    return Figure, FigureCanvasAgg


def _new_figure(size: tuple[float, float]):
    Figure, FigureCanvasAgg = _matplotlib()
    fig = Figure(figsize=size, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _timed(rows) -> list:
    return [r for r in rows if r.ok and r.median_ms]


def _safe_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_") or "workload"


def headline_rate(workload: str, rows) -> str:
    """The workload's own headline rate if it is installed, else GFLOP/s only when every
    timed row has a FLOP model of at least 1 FLOP/B."""
    from pmppbench import workloads  # noqa: PLC0415

    try:
        return workloads.get(workload).rate
    except UsageError:
        pass
    if rows and all(r.flops and r.bytes and r.flops / r.bytes >= 1 for r in rows):
        return "GFLOP/s"
    return "GB/s"


# ---- the roofline -------------------------------------------------------------------

def roofline_points(rows) -> list[tuple[str, str, float, float]]:
    """(workload, label, FLOP/B, GFLOP/s) for every row that belongs on the chart.

    Only the largest shape of each workload is labelled (with the variant's name; the legend
    names the shape): the smaller shapes are drawn as plain points, so the chart stays legible.
    """
    named = largest_shapes(rows)
    return [(r.workload, r.variant if r.shape == named[r.workload] else "", r.intensity_flop_per_byte,
             r.gflop_per_s) for r in on_roofline(rows)]


def on_roofline(rows) -> list:
    """Timed rows with a FLOP and a byte model, except host-timed ones (their time includes PCIe)."""
    return [r for r in _timed(rows) if r.intensity_flop_per_byte and r.gflop_per_s and getattr(r, "timer", "") != "host"]


def largest_shapes(rows) -> dict[str, str]:
    """workload -> the shape whose points carry labels on the roofline (its most bytes)."""
    out: dict[str, tuple[int, str]] = {}
    for r in on_roofline(rows):
        if r.bytes >= out.get(r.workload, (0, ""))[0]:
            out[r.workload] = (r.bytes, r.shape)
    return {w: s for w, (_, s) in out.items()}


def plot_roofline(rows, ceilings: Sequence[Ceilings], path: Path, title: str = "") -> Path | None:
    """Draw roofline.png; None (and no file) when no row has both FLOPs and bytes."""
    points = roofline_points(rows)
    if not points:
        return None
    fig = _new_figure((11, 7))
    ax = fig.add_subplot()
    ax.set_xscale("log")
    ax.set_yscale("log")

    xs = [p[2] for p in points]
    ys = [p[3] for p in points]
    ridges = [c.ridge_flop_per_byte for c in ceilings if c.ridge_flop_per_byte]
    peaks = [c.fp32_gflops for c in ceilings if c.fp32_gflops]
    lo, hi = min(xs + ridges) / 4, max(xs + ridges) * 4
    grid = [lo * (hi / lo) ** (i / 200) for i in range(201)]
    for c in ceilings:
        style = _LINESTYLES.get(c.source, ":")
        label = f"{c.source} roof: {c.bandwidth_gbs:,.0f} GB/s"
        if c.fp32_gflops:
            label += f", {c.fp32_gflops:,.0f} GFLOP/s, ridge {c.ridge_flop_per_byte:.1f} FLOP/B"
            ax.axvline(c.ridge_flop_per_byte, linestyle=style, color="grey", linewidth=0.6)
        ax.plot(grid, [c.roof_gflops(x) for x in grid], style, color="black", linewidth=1.5, label=label)
    ax.set_xlim(lo, hi)
    ax.set_ylim(min(ys) / 3, max(ys + peaks) * 2)

    workloads_seen = list(dict.fromkeys(p[0] for p in points))
    colors = {w: f"C{i % 10}" for i, w in enumerate(workloads_seen)}
    named = largest_shapes(rows)
    for w in workloads_seen:
        big = [p for p in points if p[0] == w and p[1]]
        small = [p for p in points if p[0] == w and not p[1]]
        ax.scatter([p[2] for p in big], [p[3] for p in big], color=colors[w], zorder=3,
                   label=f"{w} (labelled: {named[w]})")
        if small:
            ax.scatter([p[2] for p in small], [p[3] for p in small], color=colors[w], zorder=3, s=12, alpha=0.45)
    ax.set_xlabel("arithmetic intensity (FLOP/B, modelled)")
    ax.set_ylabel("attained FP32 rate (GFLOP/s)")
    ax.set_title(title or "Roofline")
    ax.grid(True, which="both", linewidth=0.3)
    ax.legend(fontsize=8, loc="lower right")
    fig.draw_without_rendering()  # settle the layout so data -> screen positions are final
    _label_points(fig, ax, [p for p in points if p[1]], colors)
    fig.savefig(path, dpi=150)
    return path


_LABEL_PT = 7  # font size of the point labels, in points


def _label_points(fig, ax, points, colors) -> None:
    """Label every point, moving a label up (with a leader line) when it would overlap one
    already placed: variants of one workload often share an AI and sit on top of each other."""
    to_pt = 72.0 / fig.dpi
    right_edge = ax.get_window_extent().x1 * to_pt
    placed: list[tuple[float, float, float, float]] = []  # label boxes in points: x0, x1, y0, y1
    height = _LABEL_PT * 1.25
    order = sorted(points, key=lambda p: (p[3], p[2]))
    for w, label, x, y in order:
        px, py = (v * to_pt for v in ax.transData.transform((x, y)))
        width = 0.6 * _LABEL_PT * len(label)
        dx = 5 if px + 5 + width < right_edge else -5 - width  # near the right edge: label on the left
        x0, x1 = px + dx, px + dx + width
        y0 = py + 2
        moved = True
        while moved:
            moved = False
            for bx0, bx1, by0, by1 in placed:
                if x0 < bx1 and bx0 < x1 and y0 < by1 and by0 < y0 + height:
                    y0, moved = by1 + 0.5, True
        placed.append((x0, x1, y0, y0 + height))
        dy = y0 - py
        ax.annotate(label, (x, y), textcoords="offset points", xytext=(dx, dy), fontsize=_LABEL_PT,
                    color=colors[w], va="bottom",
                    arrowprops=dict(arrowstyle="-", color=colors[w], linewidth=0.4) if dy > height else None)


# ---- bar charts ---------------------------------------------------------------------

def plot_workload_bars(workload: str, rows, path: Path, title: str = "") -> Path | None:
    """Draw <workload>.png: the headline rate by variant, grouped by shape."""
    rows = [r for r in _timed(rows) if r.workload == workload]
    rate = headline_rate(workload, rows)
    rows = [r for r in rows if r.headline_rate(rate)]
    if not rows:
        return None
    shapes = list(dict.fromkeys(r.shape for r in rows))
    variants = list(dict.fromkeys(r.variant for r in rows))
    value = {(r.shape, r.variant): r.headline_rate(rate) for r in rows}

    fig = _new_figure((max(6.0, 1.2 + 0.5 * len(shapes) * len(variants)), 4.5))
    ax = fig.add_subplot()
    width = 0.8 / len(variants)
    for j, v in enumerate(variants):
        xs = [i + (j - (len(variants) - 1) / 2) * width for i in range(len(shapes))]
        ys = [value.get((s, v), 0.0) for s in shapes]
        bars = ax.bar(xs, ys, width, label=v, **variant_style(j))
        ax.bar_label(bars, labels=[_short(y) if y else "" for y in ys], fontsize=7, padding=2)
    ax.set_xticks(range(len(shapes)), shapes)
    ax.set_ylabel(rate)
    ax.set_title(title or f"{workload}: {rate} by variant")
    ax.legend(fontsize=8)
    ax.grid(True, axis="y", linewidth=0.3)
    fig.savefig(path, dpi=150)
    return path


def _counted(rows) -> list:
    return [r for r in rows if r.counters]


def plot_counters(workload: str, rows, path: Path, title: str = "") -> Path | None:
    """Draw <workload>_counters.png; None (and no file) when no row of it has counters."""
    rows = [r for r in _counted(rows) if r.workload == workload]
    if not rows:
        return None
    shapes = list(dict.fromkeys(r.shape for r in rows))
    variants = list(dict.fromkeys(r.variant for r in rows))
    by = {(r.shape, r.variant): r for r in rows}
    fig = _new_figure((max(9.0, 1.5 + 0.45 * len(shapes) * len(variants)), 9.5))
    axes = fig.subplots(3, 1, sharex=True)
    width = 0.8 / len(shapes)

    def xs(i: int) -> list[float]:
        return [j + (i - (len(shapes) - 1) / 2) * width for j in range(len(variants))]

    def values(s: str, get) -> list[float]:
        out = []
        for v in variants:
            value = get(by[(s, v)]) if (s, v) in by else None
            out.append(0.0 if value is None else value)
        return out

    ax = axes[0]
    for i, s in enumerate(shapes):
        read = values(s, lambda r: r.dram_read_bytes / r.bytes if r.dram_read_bytes is not None and r.bytes else None)
        write = values(s, lambda r: r.dram_write_bytes / r.bytes if r.dram_write_bytes is not None and r.bytes else None)
        ax.bar(xs(i), read, width, label=f"read · {s}", color=f"C{i % 10}", edgecolor="black", linewidth=0.3)
        ax.bar(xs(i), write, width, bottom=read, label=f"written · {s}", color=f"C{i % 10}", alpha=0.45, hatch="//",
               edgecolor="black", linewidth=0.3)
    ax.axhline(1.0, color="black", linewidth=0.8, linestyle="--")
    ax.set_ylabel("DRAM bytes / model bytes")
    ax.legend(fontsize=7, ncol=2)

    ax = axes[1]
    for i, s in enumerate(shapes):
        ax.bar(xs(i), values(s, lambda r: r.smem_ld_wavefronts_per_request), width, label=s, color=f"C{i % 10}",
               edgecolor="black", linewidth=0.3)
    ax.set_ylabel("shared-load wavefronts / request")
    ax.legend(fontsize=7)

    ax = axes[2]
    for i, s in enumerate(shapes):
        x = xs(i)
        ax.bar(x, values(s, lambda r: r.occupancy_achieved_pct), width, label=f"achieved · {s}", color=f"C{i % 10}",
               edgecolor="black", linewidth=0.3)
        theory = values(s, lambda r: r.occupancy_theoretical_pct)
        ax.scatter([a for a, t in zip(x, theory) if t], [t for t in theory if t], marker="_", s=200, color="black",
                   zorder=3, label="theoretical (PMPP 5.6)" if i == 0 else None)
    ax.set_ylabel("occupancy %")
    ax.set_ylim(0, 105)
    ax.legend(fontsize=7)
    ax.set_xticks(range(len(variants)), variants, rotation=30, ha="right")
    for a in axes:
        a.grid(True, axis="y", linewidth=0.3)
    axes[0].set_title(title or f"{workload}: hardware counters beside the model")
    fig.savefig(path, dpi=150)
    return path


_HATCHES = ("", "//", "..", "xx")


def variant_style(j: int) -> dict[str, Any]:
    """Bar style of the j-th variant: 20 distinct colours (tab20), then the same colours
    hatched, so every variant of a workload (GEMM has 14) stays distinguishable."""
    from matplotlib import colormaps  # noqa: PLC0415

    return {"color": colormaps["tab20"](j % 20), "hatch": _HATCHES[(j // 20) % len(_HATCHES)],
            "edgecolor": "black", "linewidth": 0.3}


def _short(x: float) -> str:
    if x >= 1000:
        return f"{x / 1000:.3g}k"
    return f"{x:.3g}"


# ---- everything ---------------------------------------------------------------------

def plot_results(rows, meta: dict[str, Any], outdir: Path, force: bool = False) -> list[Path]:
    """Write roofline.png and one <workload>.png per workload into outdir; return the paths.

    The ceilings come from meta["ceilings"] (theoretical and measured), falling back to the
    device's theoretical peaks recorded in older files. Raises UsageError when no row was
    timed (a --check-only file), when a PNG exists and `force` is not set or the folder
    cannot be written (before drawing anything), and EnvironmentProblem when matplotlib is
    missing.
    """
    timed = _timed(rows)
    if not timed:
        raise UsageError("nothing to plot: no row passed its check and was timed "
                         "(was the file written with --check-only?)")
    _matplotlib()  # fail before creating anything
    outdir = Path(outdir)
    if outdir.exists() and not outdir.is_dir():
        raise UsageError(f"--outdir {outdir} is a file, not a folder; give a folder for the PNG files")
    names = list(dict.fromkeys(r.workload for r in timed))
    counted = [w for w in names if any(r.workload == w for r in _counted(timed))]
    targets = [outdir / "roofline.png"] + [outdir / f"{_safe_name(w)}.png" for w in names]
    counter_targets = [outdir / f"{_safe_name(w)}_counters.png" for w in counted]
    targets += counter_targets
    for t in targets:  # a PNG is written as a regular file only, never over a device, a FIFO or an input
        if paths.kind(t) == paths.SPECIAL:
            raise UsageError(f"{t} is {paths.special_name(t)}, not a regular file; pmppbench writes only files: "
                             "choose another --outdir")
    existing = [str(t) for t in targets if t.exists()]
    if existing and not force:
        raise UsageError(f"{', '.join(existing)} exist{'s' if len(existing) == 1 else ''}; pass --force to "
                         "overwrite or choose another --outdir")
    try:
        outdir.mkdir(parents=True, exist_ok=True)
        probe = outdir / ".pmppbench-write-test"
        probe.touch()
        probe.unlink()
    except OSError as exc:
        raise UsageError(f"--outdir {outdir}: cannot write there ({exc.strerror or exc}); choose another folder") from None
    device = meta.get("name", "")
    written = []
    ceilings = ceilings_from_meta(meta)
    roof = plot_roofline(timed, ceilings, targets[0], title=f"Roofline{' — ' + device if device else ''}")
    if roof:
        written.append(roof)
    for w, target in zip(names, targets[1:]):
        path = plot_workload_bars(w, timed, target, title=f"{w}{' — ' + device if device else ''}")
        if path:
            written.append(path)
    for w, target in zip(counted, counter_targets):
        path = plot_counters(w, timed, target, title=f"{w}: hardware counters beside the model"
                             f"{' — ' + device if device else ''}")
        if path:
            written.append(path)
    return written


__all__ = ["plot_results", "plot_roofline", "plot_workload_bars", "plot_counters", "roofline_points", "MATPLOTLIB_HINT"]
