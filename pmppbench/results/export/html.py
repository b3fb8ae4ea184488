"""HTML: one self-contained page to share a run (--out run.html, `report --html`) or a
comparison (`compare --html`).

Everything is inline: the CSS, the charts (hand-built SVG, export/svg.py) and a few lines of
script that only show a mark's value on hover or focus; nothing is fetched when the page is
viewed, so it opens from a USB stick. Every number in a chart is also written beside it and in
the tables, which are the terminal's (export/columns.py): the same columns, the same cells.

A run's page: the device and software, then per workload the protocol caption, its table (one
per GPU when several ran), the hardware-counter table (--counters), its warnings, the ladder
(each row's headline rate and % of its roof, the textbook baseline hatched, the roof variant
grey, the theoretical or measured roof dashed), the roofline (every row with FLOPs and bytes
in its model as a labelled point; plot.on_roofline chooses them) and the counters beside the
model; then, for runs on several GPUs, the health view (health.py). A comparison's page: the
matched rows as `compare` prints them, each ratio with its noise range (compare.noise_band),
SLOWER and FASTER marked.
"""

from __future__ import annotations

import statistics
from dataclasses import fields
from typing import Any

from pmppbench.results import compare as comparing
from pmppbench.results import health as healthview
from pmppbench.results.export import svg
from pmppbench.results.export.base import Exporter
from pmppbench.results.export.columns import Column, columns_for, counter_columns_for, num, rate
from pmppbench.results.export.markdown import run_facts
from pmppbench.results.export.svg import esc
from pmppbench.measure.noise import stability_line
from pmppbench.results.plot import headline_rate, on_roofline
from pmppbench.measure.protocol import Protocol
from pmppbench.row import Result
from pmppbench.measure.roofline import Ceilings, ceilings_from_meta

CSS = """
body{font-family:"DejaVu Sans",Verdana,sans-serif;margin:1.5em auto;max-width:1200px;padding:0 1em;color:#111}
h1{font-size:1.5em}h2{margin-top:2em;border-bottom:1px solid #999}h3{font-size:1.05em;margin-top:1.4em}
.caption{color:#333}table{border-collapse:collapse;margin:.6em 0;font-size:12px}
th,td{border:1px solid #bbb;padding:2px 6px;white-space:nowrap}th{background:#eee}
td.r{text-align:right;font-variant-numeric:tabular-nums}tr.bad td{background:#fde0d9}
td.PASS{color:#00573f}td.FAIL,td.ERROR,td.SLOWER{color:#a33a00;font-weight:bold}td.FASTER{color:#004f7d;font-weight:bold}
.warnings li{color:#6b4a00}figure{margin:1em 0;overflow-x:auto}figcaption{font-size:12px;color:#333}
svg .title{font-weight:bold;font-size:12px}svg .group{font-weight:bold}svg .mark:hover,svg .mark:focus{opacity:.75;outline:none}
#tip{position:absolute;background:#222;color:#fff;padding:3px 7px;border-radius:3px;font-size:12px;
pointer-events:none;transform:translate(-50%,-100%);max-width:40em;white-space:normal}
nav a{margin-right:1em}.wide{overflow-x:auto}
"""

SCRIPT = """(function(){var tip=document.getElementById('tip');
function at(e){return e.target&&e.target.closest?e.target.closest('[data-tip]'):null;}
function show(e){var m=at(e);if(!m){return;}tip.textContent=m.getAttribute('data-tip');tip.hidden=false;
var b=m.getBoundingClientRect();tip.style.left=(window.scrollX+b.left+b.width/2)+'px';
tip.style.top=(window.scrollY+b.top-6)+'px';}
function hide(e){var to=e.relatedTarget;if(!to||!to.closest||!to.closest('[data-tip]')){tip.hidden=true;}}
document.addEventListener('mouseover',show);document.addEventListener('focusin',show);
document.addEventListener('mouseout',hide);document.addEventListener('focusout',hide);})();"""


def _page(title: str, body: list[str]) -> str:
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{esc(title)}</title><style>{CSS}</style></head><body>\n"
            + "\n".join(body)
            + f"\n<div id=\"tip\" role=\"tooltip\" hidden></div><script>{SCRIPT}</script></body></html>\n")


def _table(rows: list[Result], cols: list[Column], cls: str, **data: str) -> str:
    attrs = "".join(f' data-{k}="{esc(v)}"' for k, v in data.items())
    head = "".join(f"<th>{esc(c.header)}</th>" for c in cols)
    body = []
    for r in rows:
        cells = []
        for c in cols:
            text = c.cell(r)
            klass = ("r" if c.justify == "right" else "") + (f" {text}" if c.header == "check" else "")
            cells.append(f'<td class="{klass.strip()}">{esc(text)}</td>' if klass.strip() else f"<td>{esc(text)}</td>")
        body.append(f'<tr{"" if r.ok else " class=bad"}>{"".join(cells)}</tr>')
    return (f'<div class="wide"><table class="{cls}"{attrs}><thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(body)}</tbody></table></div>')


def _figure(chart: str, caption: str) -> str:
    return f"<figure>{chart}<figcaption>{esc(caption)}</figcaption></figure>"


def _slug(text: str) -> str:
    return "".join(ch if ch.isalnum() else "-" for ch in text).strip("-").lower()


# ---- captions -------------------------------------------------------------------------------

def _device_line(meta: dict[str, Any], rows: list[Result]) -> str:
    name = meta.get("name") or ", ".join(dict.fromkeys(r.device for r in rows if r.device)) or "unknown GPU"
    arch = f" ({meta['arch']})" if meta.get("arch") else ""
    facts = run_facts(meta)
    when = f" at {meta['timestamp']}" if meta.get("timestamp") else ""
    return f"Measured on {name}{arch}" + (f" · {facts}" if facts else "") + when


def protocol_caption(rows: list[Result], meta: dict[str, Any], workload: str) -> str:
    """What the terminal's table caption says after the device: the protocol, or the check rules."""
    if meta.get("check_only"):
        tolerances = "; ".join(dict.fromkeys(r.tolerance for r in rows if r.tolerance))
        return f"check only · {tolerances}" if tolerances else "check only"
    recorded = (meta.get("protocol") or {}).get(workload)
    if isinstance(recorded, dict):
        known = {f.name for f in fields(Protocol)}
        try:
            # a file from before the L2 settle records no `settle`: its batches ran unsettled
            return Protocol(**{"settle": False, **{k: v for k, v in recorded.items() if k in known}}).describe()
        except (TypeError, ValueError):
            pass
    timed = next((r for r in rows if r.batches), None)  # an older file: the protocol the rows record
    if timed is None:
        return ""
    return Protocol(warmup=timed.warmup or 0, batches=timed.batches, reps=timed.reps or 1, alternate=timed.alternate,
                    timer=timed.timer or "events", settle=False).describe()


def _title(workload: str) -> str:
    from pmppbench import workloads  # noqa: PLC0415 (a file from a build with other workloads still reads)
    from pmppbench.errors import UsageError  # noqa: PLC0415

    try:
        return workloads.get(workload).title
    except UsageError:
        return workload


# ---- charts of one workload ----------------------------------------------------------------

def _sol_ceilings(rows: list[Result], meta: dict[str, Any]) -> Ceilings | None:
    """The ceilings the SoL column is against: measured when the rows have it, else theoretical."""
    want = "measured" if any(r.sol_pct_measured is not None for r in rows) else "theoretical"
    return next((c for c in ceilings_from_meta(meta) if c.source == want), None)


def _roof_rate(c: Ceilings, r: Result, unit: str) -> float | None:
    """The roof at the row's intensity, in the ladder's unit (PMPP 5.1's speed of light)."""
    ai = r.intensity_flop_per_byte or 0.0
    if unit == "GFLOP/s":
        return c.roof_gflops(ai) if ai else None
    return c.roof_gflops(ai) / ai if ai else c.bandwidth_gbs


def _pct_text(r: Result) -> list[str]:
    parts = []
    if r.pct_of_roof is not None:
        parts.append(f"{r.pct_of_roof:.1f}% of {r.pct_of}")
    if r.sol_pct_measured is not None:
        parts.append(f"{r.sol_pct_measured:.1f}% of measured roof")
    elif r.sol_pct_theoretical is not None:
        parts.append(f"{r.sol_pct_theoretical:.1f}% of peak")
    return parts


def _tip(r: Result, unit: str) -> str:
    value = r.headline_rate(unit)
    parts = [f"{r.workload} {r.variant} {r.shape}", f"check {r.check}"]
    if r.median_ms is not None:
        parts.append(f"median {r.median_ms:.4f} ms (spread {num(r.spread_pct, '.1f')}%)")
    if value:
        parts.append(f"{rate(value)} {unit}")
    parts += _pct_text(r)
    if r.speedup is not None:
        parts.append(f"{r.speedup:.2f}x vs {r.speedup_vs}")
    if r.error or r.check in ("FAIL", "SUSPECT"):
        parts.append(r.error or r.check_detail)
    return "; ".join(parts)


def ladder(rows: list[Result], meta: dict[str, Any], workload: str, suffix: str = "") -> str | None:
    """Every row's headline rate as a bar, by shape: the baseline hatched, the roof variant grey,
    the roof at the shape's intensity dashed; rate and % of the roof written at each bar.
    None when no row has a rate (a --check-only run)."""
    unit = headline_rate(workload, [r for r in rows if r.ok and r.median_ms])
    if not any(r.ok and r.headline_rate(unit) for r in rows):
        return None
    ceilings = _sol_ceilings(rows, meta)
    groups = []
    for shape in dict.fromkeys(r.shape for r in rows):
        mine = [r for r in rows if r.shape == shape]
        bars = []
        for r in mine:
            value = r.headline_rate(unit) if r.ok else None
            kind = "baseline" if r.variant == r.speedup_vs else "roof" if r.variant == r.pct_of else ""
            label = r.variant + (" (baseline)" if kind == "baseline" else " (roof)" if kind == "roof" else "")
            if value:
                text = " · ".join([f"{rate(value)} {unit}"] + _pct_text(r))
            elif not r.ok:
                text = f"{r.check}: {(r.error or r.check_detail)[:60]}"
            else:
                text = f"no {unit} (checked only)" if r.median_ms is None else f"no {unit} in its model"
            bars.append(svg.Bar(label, value, text, _tip(r, unit), kind))
        ref = None
        sample = next((r for r in mine if r.bound and r.timer != "host" and r.headline_rate(unit)), None)
        if ceilings is not None and sample is not None:
            roof = _roof_rate(ceilings, sample, unit)
            if roof:
                ref = (roof, f"{ceilings.source} roof {rate(roof)} {unit}")
        groups.append(svg.Group(shape, bars, ref))
    return svg.bar_chart(groups, unit, f"{workload}{suffix}: {unit} by variant", cls="ladder")


def roofline(rows: list[Result], meta: dict[str, Any], workload: str, several_devices: bool) -> str | None:
    on = on_roofline(rows)
    if not on:
        return None

    def series_of(r: Result) -> str:
        return r.shape + (f" · {r.device} {r.device_pci}".rstrip() if several_devices else "")

    series = list(dict.fromkeys(series_of(r) for r in on))
    points = [svg.Point(r.variant, r.intensity_flop_per_byte, r.gflop_per_s, series.index(series_of(r)),
                        _tip(r, "GFLOP/s") + f"; {r.intensity_flop_per_byte:.3g} FLOP/B") for r in on]
    return svg.roofline_chart(points, ceilings_from_meta(meta), series, f"{workload}: roofline")


def counter_charts(rows: list[Result], workload: str) -> list[str]:
    """The counters beside the model: DRAM bytes over the model's, shared-load wavefronts per
    request, achieved occupancy with the theoretical one marked (PMPP 5.6)."""
    counted = [r for r in rows if r.counters]
    out = []
    specs = [
        ("DRAM bytes / model bytes", "ratio", lambda r: r.dram_vs_model, None, (1.0, "model = 1"), ".3f",
         "(DRAM read + written) / the model's bytes"),
        ("shared-load wavefronts / request", "wavefronts", lambda r: r.smem_ld_wavefronts_per_request, None,
         (1.0, "conflict-free = 1"), ".2f", "1 = conflict-free 32-bit loads, 32 = a 32-way bank conflict"),
        ("achieved occupancy %", "%", lambda r: r.occupancy_achieved_pct, lambda r: r.occupancy_theoretical_pct, None,
         ".1f", "bar: achieved; black tick: theoretical (PMPP 5.6)"),
    ]
    for title, unit, get, mark, ref, fmt, what in specs:
        have = [r for r in counted if get(r) is not None]
        if not have:
            continue
        groups = []
        for shape in dict.fromkeys(r.shape for r in have):
            bars = []
            for r in (r for r in have if r.shape == shape):
                m = mark(r) if mark else None
                text = format(get(r), fmt) + (f" (theoretical {m:.1f})" if m is not None else "")
                bars.append(svg.Bar(r.variant, get(r), text, f"{r.workload} {r.variant} {r.shape}: {title} {text}",
                                    mark=m))
            groups.append(svg.Group(shape, bars, ref))
        out.append(_figure(svg.bar_chart(groups, unit, f"{workload}: {title}", cls="counters", plot_w=380), what))
    return out


# ---- the health view ----------------------------------------------------------------------

def health_section(rows: list[Result]) -> list[str]:
    h = healthview.health(rows)
    if not h.ratios:
        return []
    labels = {healthview.device_key(r): f"{r.device} {r.device_pci}".strip() for r in rows}
    slow = {f.device: f for f in h.slow}
    head = ("device", "rows", "median ratio", "worst ratio", "rows slower beyond noise")
    lines, items = [], []
    for i, d in enumerate(h.devices):
        mine = [per[d] for per in h.ratios.values() if d in per]
        med, worst, n_slow = statistics.median(mine), max(mine), len(slow[d].rows) if d in slow else 0
        cells = (f"{d} ({labels.get(d, '')})", str(len(mine)), f"{med:.3f}", f"{worst:.3f}", str(n_slow))
        lines.append("<tr>" + "".join(f'<td class="{"r" if j else ""}">{esc(c)}</td>' for j, c in enumerate(cells))
                     + "</tr>")
        items.append(svg.Interval(labels.get(d, d) or d, min(mine), med, worst, f"median {med:.3f} · worst {worst:.3f}",
                                  f"{d}: {len(mine)} rows, ratios {min(mine):.3f} to {worst:.3f}, median {med:.3f}; "
                                  f"{n_slow} rows slower beyond noise", kind=5 if n_slow else 0))
    out = ['<section id="health"><h2>Device health</h2>',
           "<p>Each GPU's time / the median over the GPUs, per row (1 = the median GPU).</p>",
           '<table class="health"><thead><tr>' + "".join(f"<th>{esc(c)}</th>" for c in head)
           + f'</tr></thead><tbody>{"".join(lines)}</tbody></table>',
           _figure(svg.interval_chart(items, "time / the GPUs' median, per row: range and median", "ratio",
                                      cls="health"), "bar: the range over the rows; point: the median row")]
    for f in h.slow:
        worst = sorted(f.rows, key=lambda x: -x[1])[:5]
        out.append(f"<p class=slow>slower than the other GPUs beyond their noise: {esc(f.device)} ({esc(f.label)}) on "
                   f"{len(f.rows)} rows, e.g. " + esc("; ".join(f"{name} {ratio:.3f}x" for name, ratio in worst)) + "</p>")
    if not h.slow:
        out.append(f"<p>no GPU is slower than the others beyond their noise ({len(h.devices)} GPUs, "
                   f"{len(h.ratios)} rows)</p>")
    out.append("</section>")
    return out


# ---- the run's page ---------------------------------------------------------------------------

def document(rows: list[Result], meta: dict[str, Any]) -> str:
    rows = list(rows)
    device_keys = list(dict.fromkeys(healthview.device_key(r) for r in rows))
    several = len(device_keys) > 1
    names = list(dict.fromkeys(r.workload for r in rows))
    body = ["<header><h1>pmppbench results</h1>", f'<p class="caption" id="device">{esc(_device_line(meta, rows))}</p>']
    if meta.get("command"):
        body.append(f"<p class=caption>command: <code>{esc(meta['command'])}</code></p>")
    stability = stability_line(rows)
    if stability:
        body.append(f"<p>{esc(stability[0].upper() + stability[1:])}.</p>")
    if not rows:
        body.append("<p>No rows yet.</p>")
    body.append("<nav>" + "".join(f'<a href="#w-{_slug(w)}">{esc(w)}</a>' for w in names)
                + ('<a href="#health">device health</a>' if several else "") + "</nav></header>")
    for w in names:
        mine = [r for r in rows if r.workload == w]
        body.append(f'<section id="w-{_slug(w)}" class="workload"><h2>{esc(_title(w))}</h2>')
        for d in (device_keys if several else [None]):
            part = [r for r in mine if d is None or healthview.device_key(r) == d]
            if not part:
                continue
            where = f"{part[0].device} {part[0].device_pci}".strip() if d else (meta.get("name") or part[0].device)
            arch = f" ({meta['arch']})" if meta.get("arch") and not d else ""
            body.append(f"<p class=caption>{esc(f'{where}{arch} · {protocol_caption(part, meta, w)}')}</p>")
            body.append(_table(part, columns_for(part), "results", workload=w, device=d or ""))
            counters = counter_columns_for(part)
            if counters:
                body.append(f"<h3>{esc(w)} · hardware counters (ncu, 1 untimed run)</h3>")
                body.append(_table(part, counters, "counters", workload=w, device=d or ""))
        warnings = list(dict.fromkeys(x for r in mine for x in r.warnings))
        if warnings:
            body.append("<h3>warnings</h3><ul class=warnings>" + "".join(f"<li>{esc(x)}</li>" for x in warnings)
                        + "</ul>")
        for d in (device_keys if several else [None]):
            part = [r for r in mine if d is None or healthview.device_key(r) == d]
            chart = ladder(part, meta, w, f" · {part[0].device} {part[0].device_pci}".rstrip() if d else "") \
                if part else None
            if chart:
                body.append(_figure(chart,
                                    "bar: the headline rate; hatched: the textbook baseline the speedups are against; "
                                    "grey: the roof variant; dashed: the roof at the shape's arithmetic intensity"))
        chart = roofline(mine, meta, w, several)
        if chart:
            body.append(_figure(chart, "solid: theoretical roof; dashed: measured roof (info --measure); vertical: "
                                "ridge point. Rows with no FLOPs in their model, or timed on the host, are not on it."))
        body += counter_charts(mine, w)
        body.append("</section>")
    if several:
        body += health_section(rows)
    title = f"pmppbench · {meta.get('name') or 'results'}" + (f" · {meta['timestamp']}" if meta.get("timestamp") else "")
    return _page(title, body)


EXPORTER = Exporter("html", document)


# ---- a comparison's page ----------------------------------------------------------------------

_KIND = {comparing.FASTER: 0, comparing.SLOWER: 5, comparing.SAME: 7}


def ratio_range(c: comparing.Comparison) -> tuple[float, float] | None:
    """The ratio's bootstrap interval (compare.ratio_interval); without one, the new/base ratios
    the two noise bands allow: [new fastest / base slowest, new slowest / base fastest]. Either
    lies wholly above 1 exactly when the verdict is SLOWER, below 1 when FASTER."""
    if c.interval is not None:
        return c.interval
    b, n = comparing.noise_band(c.base), comparing.noise_band(c.new)
    if b is None or n is None or b[0] <= 0 or b[1] <= 0:
        return None
    return (n[0] / b[1], n[1] / b[0])


def _range_word(c: comparing.Comparison) -> str:
    return f"{100 * comparing.CONFIDENCE:g}% interval" if c.interval is not None else "noise range"


def compare_document(report: comparing.CompareReport, base_meta: dict[str, Any] | None = None,
                     new_meta: dict[str, Any] | None = None) -> str:
    several = len({c.key[3] for c in report.matched}) > 1
    headers = comparing.HEADERS[:3] + (("device",) if several else ()) + comparing.HEADERS[3:]
    body = ["<header><h1>pmppbench compare</h1>"]
    for label, name, meta, rows in (("base", report.base_name, base_meta or {}, [c.base for c in report.matched]),
                                    ("new", report.new_name, new_meta or {}, [c.new for c in report.matched])):
        body.append(f'<p class="caption" id="{label}">{esc(label)}: <code>{esc(name)}</code> · '
                    f"{esc(_device_line(meta, rows))}</p>")
    body.append(f'<p id="summary"><strong>{esc(report.summary())}</strong></p>')
    body.append(f"<p>{esc(comparing.CAPTION)}</p></header>")
    lines = []
    for c in report.matched:
        cells = list(comparing.comparison_cells(c))
        if several:
            cells.insert(3, f"{c.new.device} {c.new.device_pci}".strip())
        tds = []
        for h, text in zip(headers, cells):
            klass = text if h == "verdict" else "" if h in ("workload", "variant", "shape", "device") else "r"
            tds.append(f'<td class="{klass}">{esc(text)}</td>' if klass else f"<td>{esc(text)}</td>")
        lines.append(f'<tr{" class=bad" if c.verdict == comparing.FAIL else ""}>{"".join(tds)}</tr>')
    if report.matched:
        body.append('<section id="matched"><h2>Matched rows</h2>')
        items, left_out = [], []
        for c in report.matched:
            span = ratio_range(c)
            name = f"{c.new.workload} {c.new.variant} {c.new.shape}" + (
                f" · {c.new.device_pci or c.new.device}" if several else "")
            if span is None or c.ratio is None or c.verdict not in _KIND:
                left_out.append(f"{name} ({c.verdict})")
                continue
            items.append(svg.Interval(name, span[0], c.ratio, span[1], f"{c.ratio:.3f} {c.verdict}",
                                      f"{name}: new/base {c.ratio:.3f} ({c.change_pct:+.1f}%), {_range_word(c)} "
                                      f"{span[0]:.3f} to {span[1]:.3f}: {c.verdict}", kind=_KIND[c.verdict]))
        if items:
            body.append(_figure(svg.interval_chart(items, "new / base time per row, with its interval",
                                                   "new median / base median (> 1: new is slower)", cls="compare"),
                                f"point: the ratio of the medians; bar: its {100 * comparing.CONFIDENCE:g}% bootstrap "
                                "interval over batch means (a row with fewer batch means: the ratios the two runs' "
                                "batch ranges allow); SLOWER when the bar lies wholly right of 1, FASTER wholly left"))
        if left_out:
            body.append("<p>not drawn (no time on one side, or NEW failed): " + esc("; ".join(left_out)) + "</p>")
        body.append('<div class="wide"><table class="compare"><thead><tr>' + "".join(f"<th>{esc(h)}</th>" for h in headers)
                    + f"</tr></thead><tbody>{''.join(lines)}</tbody></table></div></section>")
    for label, rows in ((report.base_name, report.only_base), (report.new_name, report.only_new)):
        if rows:
            body.append(f"<h3>only in {esc(label)} ({len(rows)} row{'s' if len(rows) != 1 else ''})</h3><ul>"
                        + "".join(f"<li>{esc(f'{r.workload} {r.variant} {r.shape}')}"
                                  + (f" ({esc(r.device)})" if r.device else "") + "</li>" for r in rows) + "</ul>")
    for note in report.notes:
        body.append(f"<p>{esc(note)}</p>")
    return _page(f"pmppbench compare · {report.base_name} -> {report.new_name}", body)
