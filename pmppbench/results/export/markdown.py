"""Markdown: result tables, the README results section and whole `.md` result files."""

from __future__ import annotations

import io

from pmppbench.results.export.base import Exporter
from pmppbench.results.export.columns import columns_for, counter_columns_for
from pmppbench.measure.noise import stability_line
from pmppbench.row import Result

BEGIN, END = "<!-- results:begin -->", "<!-- results:end -->"


def table(rows: list[Result], cols=None) -> str:
    cols = cols if cols is not None else columns_for(rows)
    out = io.StringIO()
    out.write("| " + " | ".join(c.header for c in cols) + " |\n")
    out.write("|" + "|".join("---:" if c.justify == "right" else "---" for c in cols) + "|\n")
    for r in rows:
        out.write("| " + " | ".join(c.cell(r).replace("|", "\\|") for c in cols) + " |\n")
    return out.getvalue()


# "driver" is the CUDA version the driver supports; "nvidia_driver" the driver's own (NVML).
_FACTS = {"nvidia_driver": "driver", "driver": "CUDA driver API", "cuda_runtime": "CUDA runtime",
          "nvrtc": "NVRTC", "cupy": "CuPy", "pmppbench": "pmppbench"}


def run_facts(meta: dict) -> str:
    """The software a run was measured with, e.g. 'driver 580.1, NVRTC 13.0, pmppbench 0.1.0'."""
    return ", ".join(f"{label} {meta[k]}" for k, label in _FACTS.items() if meta.get(k))


def device_line(meta: dict, source: str = "", bold: str = "") -> str:
    """Where and when the rows were measured, in one sentence; said in words when the file
    records no run metadata (a CSV whose .meta.json is missing)."""
    where = f", from `{source}`" if source else ""
    if not meta.get("name"):
        return f"GPU and date unknown (the run's metadata is missing){where}."
    facts = run_facts(meta)
    when = f" at {meta['timestamp']}" if meta.get("timestamp") else ""
    return f"Measured on {bold}{meta['name']}{bold}" + (f" ({facts})" if facts else "") + when + where + "."


def results_section(rows: list[Result], meta: dict, source: str = "") -> str:
    """Tables per workload (and device, when several), headed by where they were measured."""
    lines = [device_line(meta, source, bold="**"), ""]
    stability = stability_line(rows)
    if stability:
        lines += [stability[0].upper() + stability[1:] + ".", ""]
    for workload in dict.fromkeys(r.workload for r in rows):
        mine = [r for r in rows if r.workload == workload]
        lines += [f"#### {workload}", "", table(mine)]
        counters = counter_columns_for(mine)
        if counters:  # --counters: the hardware beside the model
            lines += [f"#### {workload} · hardware counters (ncu, 1 untimed run)", "", table(mine, counters)]
    warnings = list(dict.fromkeys(w for r in rows for w in r.warnings))
    if warnings:
        lines += ["#### warnings", ""] + [f"- {w}" for w in warnings] + [""]
    return "\n".join(lines)


def document(rows: list[Result], meta: dict) -> str:
    """A whole .md result file: a title over the same text as README's results section."""
    return f"# pmppbench results\n\n{results_section(rows, meta)}\n"


def replace_section(doc: str, text: str) -> str | None:
    """`doc` with `text` between the BEGIN and END markers; None when the markers are missing."""
    if BEGIN not in doc or END not in doc or doc.index(BEGIN) > doc.index(END):
        return None
    head, rest = doc.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n{text.rstrip()}\n{END}{tail}"


EXPORTER = Exporter("md", document)
