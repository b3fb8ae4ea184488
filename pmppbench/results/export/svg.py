"""Hand-built SVG charts for the HTML report: no library, no script needed to draw them.

Each chart is one <svg> string. Every mark a reader may ask about (a bar, a point, an
interval) is a group with `data-tip` (the page's small script shows it on hover or focus)
and an SVG <title> (the browser's own tooltip, and screen readers); its number is also
written beside it as text, so nothing needs the hover. Colours are the Okabe-Ito palette,
which stays distinct for the common colour-vision deficiencies, and each series also has its
own marker shape, so colour is never the only cue.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape

from pmppbench.measure.roofline import Ceilings

PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
MARKERS = ("circle", "square", "triangle", "diamond", "down", "cross")
BAR, BASELINE, ROOF, MUTED = "#0072B2", "#E69F00", "#7f7f7f", "#bbbbbb"
FONT = 11  # px, the labels' size
CHAR = 0.6 * FONT  # a label's width per character, near enough for layout


def esc(text) -> str:
    return escape(str(text), quote=True)


def number(v: float) -> str:
    """A number for a label: thousands separated, three significant figures below 100."""
    if v is None:
        return ""
    a = abs(v)
    if a >= 100:
        return f"{v:,.0f}"
    if a >= 10:
        return f"{v:.1f}"
    if a >= 1:
        return f"{v:.2f}"
    return f"{v:.3g}"


def _width(text: str) -> float:
    return CHAR * len(text) + 2


def _open(width: float, height: float, title: str, cls: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="chart {cls}" role="img" width="{width:.0f}" '
            f'height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}" font-size="{FONT}" '
            f'font-family="DejaVu Sans, Verdana, sans-serif"><title>{esc(title)}</title>'
            '<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" '
            f'patternTransform="rotate(45)"><rect width="6" height="6" fill="{BASELINE}"/>'
            '<line x1="0" y1="0" x2="0" y2="6" stroke="#000" stroke-width="1.5"/></pattern></defs>')


def _mark(tip: str, body: str, cls: str = "") -> str:
    return (f'<g class="mark{" " + cls if cls else ""}" tabindex="0" data-tip="{esc(tip)}"><title>{esc(tip)}</title>'
            f"{body}</g>")


def _hit(x: float, y: float, w: float, h: float) -> str:
    """An invisible rectangle over a whole row: the pointer finds the row anywhere on it."""
    return f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" fill="transparent"/>'


def marker(kind: str, x: float, y: float, color: str, r: float = 4.5) -> str:
    """A series' marker at (x, y): its shape (MARKERS) as well as its colour tells it apart."""
    if kind == "square":
        return (f'<rect x="{x - r:.1f}" y="{y - r:.1f}" width="{2 * r:.1f}" height="{2 * r:.1f}" fill="{color}" '
                'stroke="#000" stroke-width="0.6"/>')
    if kind in ("triangle", "down"):
        s = -1 if kind == "triangle" else 1  # the apex up or down
        pts = (f"{x:.1f},{y + s * r * 1.2:.1f} {x - r * 1.1:.1f},{y - s * r * 0.8:.1f} "
               f"{x + r * 1.1:.1f},{y - s * r * 0.8:.1f}")
        return f'<polygon points="{pts}" fill="{color}" stroke="#000" stroke-width="0.6"/>'
    if kind == "diamond":
        pts = f"{x:.1f},{y - r * 1.3:.1f} {x + r:.1f},{y:.1f} {x:.1f},{y + r * 1.3:.1f} {x - r:.1f},{y:.1f}"
        return f'<polygon points="{pts}" fill="{color}" stroke="#000" stroke-width="0.6"/>'
    if kind == "cross":
        return (f'<path d="M{x - r:.1f},{y - r:.1f}L{x + r:.1f},{y + r:.1f}M{x - r:.1f},{y + r:.1f}L{x + r:.1f},{y - r:.1f}" '
                f'stroke="{color}" stroke-width="2.5"/>')
    return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r:.1f}" fill="{color}" stroke="#000" stroke-width="0.6"/>'


def _text(x: float, y: float, text: str, anchor: str = "start", cls: str = "", extra: str = "") -> str:
    c = f' class="{cls}"' if cls else ""
    return (f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}"{c}{extra} paint-order="stroke" stroke="#fff" '
            f'stroke-width="3" stroke-linejoin="round">{esc(text)}</text>')


# ---- scales --------------------------------------------------------------------------------

@dataclass(frozen=True)
class Scale:
    lo: float
    hi: float
    a: float  # pixel of lo
    b: float  # pixel of hi
    log: bool = False

    def __call__(self, v: float) -> float:
        if self.log:
            t = (math.log10(v) - math.log10(self.lo)) / (math.log10(self.hi) - math.log10(self.lo))
        else:
            t = (v - self.lo) / (self.hi - self.lo)
        return self.a + t * (self.b - self.a)

    def ticks(self) -> list[float]:
        if self.log:
            out = []
            for k in range(math.floor(math.log10(self.lo)), math.ceil(math.log10(self.hi)) + 1):
                for m in (1, 2, 5):
                    v = m * 10.0 ** k
                    if self.lo <= v <= self.hi:
                        out.append(v)
            return out if len(out) <= 12 else [v for v in out if round(v / 10 ** math.floor(math.log10(v))) == 1]
        span = self.hi - self.lo
        step = 10 ** math.floor(math.log10(span / 5))
        for m in (1, 2, 5, 10):
            if span / (step * m) <= 6:
                step *= m
                break
        start = math.ceil(self.lo / step) * step
        return [start + i * step for i in range(int((self.hi - start) / step + 1e-9) + 1)]


def _boxes_overlap(a, b) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


# ---- bars: the ladder, and the counters beside the model ----------------------------------

@dataclass(frozen=True)
class Bar:
    label: str
    value: float | None  # None: no bar (the text says why)
    text: str  # written at the bar's end: the number and its context
    tip: str
    kind: str = ""  # "" | "baseline" (hatched) | "roof" (grey)
    mark: float | None = None  # a tick on the bar (e.g. the theoretical occupancy)


@dataclass(frozen=True)
class Group:
    title: str
    bars: list[Bar]
    ref: tuple[float, str] | None = None  # a dashed line across the group: (value, its label)


def bar_chart(groups: list[Group], unit: str, title: str, cls: str = "ladder", plot_w: float = 460) -> str:
    """Horizontal bars, one per row, in groups (one per shape), a linear axis from 0 in `unit`."""
    bars = [b for g in groups for b in g.bars]
    label_w = max([_width(b.label) for b in bars] + [60]) + 8
    text_w = max([_width(b.text) for b in bars] + [40, _width(unit) + 8]) + 10
    values = [b.value for b in bars if b.value] + [g.ref[0] for g in groups if g.ref] \
        + [b.mark for b in bars if b.mark]
    top = max(values) * 1.08 if values else 1.0
    row, head = 17, 22
    height = 30 + sum(head + row * len(g.bars) + (10 if g.ref else 0) for g in groups) + 34
    width = label_w + plot_w + text_w
    x = Scale(0.0, top, label_w, label_w + plot_w)
    out = [_open(width, height, title, cls)]
    out.append(_text(4, 16, title, cls="title"))
    y = 30.0
    for g in groups:
        out.append(_text(4, y + 14, g.title, cls="group"))
        y += head
        g_top, at = y, len(out)  # the group's roof line goes under its bars (inserted at `at`)
        for b in g.bars:
            if b.value:
                fill = "url(#hatch)" if b.kind == "baseline" else ROOF if b.kind == "roof" else BAR
                w = max(x(b.value) - x(0), 1.0)
                body = (f'<rect x="{x(0):.1f}" y="{y + 2:.1f}" width="{w:.1f}" height="{row - 4}" fill="{fill}" '
                        'stroke="#000" stroke-width="0.5"/>')
                if b.mark:
                    body += (f'<line x1="{x(b.mark):.1f}" y1="{y:.1f}" x2="{x(b.mark):.1f}" y2="{y + row:.1f}" '
                             'stroke="#000" stroke-width="2.5"/>')
                end = x(b.value)
            else:
                body, end = "", x(0)
            body += _hit(0, y, width, row) + _text(label_w - 6, y + row - 4, b.label, "end")
            body += _text(max(end, x(b.mark) if b.mark else 0) + 5, y + row - 4, b.text, cls="value")
            out.append(_mark(b.tip, body))
            y += row
        if g.ref:
            rx = x(g.ref[0])
            out.insert(at, f'<line class="ref" x1="{rx:.1f}" y1="{g_top - 2:.1f}" x2="{rx:.1f}" y2="{y + 2:.1f}" '
                       'stroke="#000" stroke-dasharray="5,3" stroke-width="1.2"/>')
            out.append(_text(rx, y + 11, g.ref[1], "middle", cls="reflabel"))
            y += 10
    axis_y = y + 6
    out.append(f'<line x1="{x(0):.1f}" y1="{axis_y:.1f}" x2="{x(top):.1f}" y2="{axis_y:.1f}" stroke="#000"/>')
    for t in x.ticks():
        out.append(f'<line x1="{x(t):.1f}" y1="{axis_y:.1f}" x2="{x(t):.1f}" y2="{axis_y + 4:.1f}" stroke="#000"/>')
        out.append(_text(x(t), axis_y + 15, number(t), "middle"))
    out.append(_text(x(top) + 8, axis_y + 15, unit))
    out.append("</svg>")
    return "".join(out)


# ---- the roofline ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Point:
    label: str
    x: float
    y: float
    series: int  # index into PALETTE / MARKERS
    tip: str


def roofline_chart(points: list[Point], roofs: list[Ceilings], series: list[str], title: str) -> str:
    """Log-log FLOP/B against GFLOP/s: each roof (solid theoretical, dashed measured) with its
    ridge, every point with a visible label placed where it overlaps no other label."""
    W, H, L, R, T, B = 900, min(820, 520 + 6 * max(0, len(points) - 20)), 70, 30, 50, 50
    xs = [p.x for p in points] + [r.ridge_flop_per_byte for r in roofs if r.fp32_gflops]
    ys = [p.y for p in points] + [r.fp32_gflops for r in roofs if r.fp32_gflops]
    xlo, xhi = min(xs) / 3, max(xs) * 4
    ylo, yhi = min(p.y for p in points) / 3, max(ys) * 2
    x = Scale(xlo, xhi, L, W - R, log=True)
    y = Scale(ylo, yhi, H - B, T, log=True)
    out = [_open(W, H, title, "roofline"), _text(4, 16, title, cls="title")]
    out.append(f'<rect x="{L}" y="{T}" width="{W - L - R}" height="{H - T - B}" fill="none" stroke="#000"/>')
    for t in x.ticks():
        out.append(f'<line x1="{x(t):.1f}" y1="{T}" x2="{x(t):.1f}" y2="{H - B}" stroke="#ddd"/>')
        out.append(_text(x(t), H - B + 15, number(t), "middle"))
    for t in y.ticks():
        out.append(f'<line x1="{L}" y1="{y(t):.1f}" x2="{W - R}" y2="{y(t):.1f}" stroke="#ddd"/>')
        out.append(_text(L - 5, y(t) + 4, number(t), "end"))
    out.append(_text((L + W - R) / 2, H - 12, "arithmetic intensity (FLOP/B, modelled)", "middle"))
    out.append(_text(14, (T + H - B) / 2, "attained FP32 rate (GFLOP/s)", "middle",
                     extra=f' transform="rotate(-90 14 {(T + H - B) / 2:.0f})"'))
    out.append('<clipPath id="plot"><rect x="%d" y="%d" width="%d" height="%d"/></clipPath>' % (L, T, W - L - R, H - T - B))
    placed: list[tuple[float, float, float, float]] = []
    for i, roof in enumerate(roofs):
        dash = "" if roof.source == "theoretical" else ' stroke-dasharray="7,4"'
        ridge = roof.ridge_flop_per_byte
        grid = [xlo * (xhi / xlo) ** (k / 120) for k in range(121)]
        path = " ".join(f"{x(v):.1f},{y(roof.roof_gflops(v)):.1f}" for v in grid if ylo <= roof.roof_gflops(v) <= yhi * 1.01)
        tip = (f"{roof.source} roof: {roof.bandwidth_gbs:,.0f} GB/s"
               + (f", {roof.fp32_gflops:,.0f} GFLOP/s, ridge {ridge:.1f} FLOP/B" if ridge else ""))
        body = f'<polyline points="{path}" fill="none" stroke="#000" stroke-width="1.6"{dash} clip-path="url(#plot)"/>'
        if ridge:
            body += (f'<line x1="{x(ridge):.1f}" y1="{T}" x2="{x(ridge):.1f}" y2="{H - B}" stroke="#555" '
                     f'stroke-width="0.8"{dash}/>')
        out.append(_mark(tip, body))
        # the roof's numbers as text: the bandwidth on the slope, the peak on the flat part
        ty = T + 14 + 14 * i
        label = f"{roof.source}: {roof.bandwidth_gbs:,.0f} GB/s" + (
            f", {roof.fp32_gflops:,.0f} GFLOP/s, ridge {ridge:.1f} FLOP/B" if ridge else "")
        out.append(_text(L + 8, ty, label, cls="rooflabel"))
        placed.append((L + 6, ty - FONT, L + 8 + _width(label), ty + 3))
    # the legend under the roofs' numbers (top left: above the memory roof, where no point can be)
    for i, name in enumerate(series):
        yy = T + 14 + 14 * (len(roofs) + i)
        out.append(marker(MARKERS[i % len(MARKERS)], L + 12, yy - 4, PALETTE[i % len(PALETTE)], r=4))
        out.append(_text(L + 21, yy, name, cls="legend"))
        placed.append((L + 6, yy - FONT, L + 21 + _width(name), yy + 3))
    # points first (their marks are obstacles for every label), then the labels
    marks = []
    for p in points:
        px, py = x(p.x), y(p.y)
        marks.append((px - 5, py - 5, px + 5, py + 5))
        out.append(_mark(p.tip, marker(MARKERS[p.series % len(MARKERS)], px, py, PALETTE[p.series % len(PALETTE)]),
                         "point"))
    for p in sorted(points, key=lambda p: (-p.y, p.x)):
        px, py = x(p.x), y(p.y)
        w = _width(p.label)
        box = None
        for dy in (0, 12, -12, 24, -24, 36, -36, 48, -48, 60, -60, 72, -72, 84, -84):
            for side in (1, -1):
                x0 = px + 7 if side > 0 else px - 7 - w
                cand = (x0, py + dy - FONT / 2 - 1, x0 + w, py + dy + FONT / 2 + 1)
                if cand[0] < L or cand[2] > W - R or cand[1] < T or cand[3] > H - B:
                    continue
                if any(_boxes_overlap(cand, o) for o in placed + marks):
                    continue
                box = cand
                break
            if box:
                break
        if box is None:
            box = (px + 7, py - FONT / 2 - 1, px + 7 + w, py + FONT / 2 + 1)
        placed.append(box)
        ly = (box[1] + box[3]) / 2
        lead = ""
        if abs(ly - py) > 6:
            lx = box[0] if box[0] > px else box[2]
            lead = (f'<line x1="{px:.1f}" y1="{py:.1f}" x2="{lx:.1f}" y2="{ly:.1f}" stroke="#777" stroke-width="0.6" '
                    'pointer-events="none"/>')
        out.append(lead + _text(box[0] + 1, ly + 4, p.label, cls="pointlabel", extra=' pointer-events="none"'))
    out.append("</svg>")
    return "".join(out)


# ---- intervals: compare's ratios, the health view's per-GPU ratios ------------------------

@dataclass(frozen=True)
class Interval:
    label: str
    lo: float
    mid: float
    hi: float
    text: str  # written at the right: the number and the verdict
    tip: str
    kind: int = 0  # palette index


def interval_chart(items: list[Interval], title: str, axis: str, cls: str = "intervals") -> str:
    """One line per item: its range [lo, hi] as a bar, `mid` as a point, a line at 1 (no change)."""
    label_w = max([_width(i.label) for i in items] + [60]) + 8
    text_w = max([_width(i.text) for i in items] + [40]) + 10
    plot_w, row = 420, 16
    width, height = label_w + plot_w + text_w, 40 + row * len(items) + 40
    lo = min([i.lo for i in items] + [1.0])
    hi = max([i.hi for i in items] + [1.0])
    pad = max((hi - lo) * 0.08, 0.005)
    x = Scale(lo - pad, hi + pad, label_w, label_w + plot_w)
    out = [_open(width, height, title, cls), _text(4, 16, title, cls="title")]
    y0, y1 = 30, 30 + row * len(items)
    out.append(f'<line x1="{x(1):.1f}" y1="{y0 - 4}" x2="{x(1):.1f}" y2="{y1 + 4}" stroke="#000" stroke-width="1"/>')
    y = float(y0)
    for it in items:
        color = PALETTE[it.kind % len(PALETTE)]
        body = (f'<rect x="{x(it.lo):.1f}" y="{y + 4:.1f}" width="{max(x(it.hi) - x(it.lo), 1.5):.1f}" height="{row - 8}" '
                f'fill="{color}" fill-opacity="0.45" stroke="{color}"/>')
        body += marker(MARKERS[it.kind % len(MARKERS)], x(it.mid), y + row / 2, color, r=3.5)
        body += _hit(0, y, width, row) + _text(label_w - 6, y + row - 4, it.label, "end")
        body += _text(label_w + plot_w + 6, y + row - 4, it.text, cls="value")
        out.append(_mark(it.tip, body))
        y += row
    for t in x.ticks():
        out.append(f'<line x1="{x(t):.1f}" y1="{y1 + 4}" x2="{x(t):.1f}" y2="{y1 + 8}" stroke="#000"/>')
        out.append(_text(x(t), y1 + 19, f"{t:g}", "middle"))
    out.append(_text(label_w + plot_w, y1 + 32, axis, "end"))
    out.append("</svg>")
    return "".join(out)
