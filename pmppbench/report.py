"""Printers: the Rich table on the terminal and the CSV / JSON / Markdown files.

All of them read the same Result rows and the same column list, so the terminal, the files
and README tables cannot disagree. Every number's unit is in its column header.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields
from pathlib import Path

from pmppbench.errors import UsageError
from pmppbench.noise import stability_line
from pmppbench.results import Result


@dataclass(frozen=True)
class Column:
    header: str
    cell: Callable[[Result], str]
    justify: str = "right"


def _num(v, fmt: str) -> str:
    return "" if v is None else format(v, fmt)


def _rate(v) -> str:
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
            Column("median_ms", lambda r: _num(r.median_ms, ".4f")),
            Column("spread_%", lambda r: _num(r.spread_pct, ".1f")),
        ]
        if any(r.gb_per_s for r in rows):
            cols.append(Column("GB/s", lambda r: _rate(r.gb_per_s)))
        # A FLOP rate is worth a column once some row does at least 1 FLOP per byte moved.
        if any(r.gflop_per_s and (r.intensity_flop_per_byte or 0) >= 1 for r in rows):
            cols.append(Column("GFLOP/s", lambda r: _rate(r.gflop_per_s)))
        base = next((r.speedup_vs for r in rows if r.speedup_vs), "")
        if base:
            cols.append(Column(f"x vs {base}", lambda r: _num(r.speedup, ".2f")))
        roof = next((r.pct_of for r in rows if r.pct_of), "")
        if roof:
            cols.append(Column(f"% of {roof}", lambda r: _num(r.pct_of_roof, ".1f")))
    if any(r.bound for r in rows):
        cols.append(Column("bound", lambda r: r.bound.replace("-bound", ""), "left"))
        cols.append(Column("SoL_%", lambda r: _num(r.sol_pct_measured if r.sol_pct_measured is not None
                                                   else r.sol_pct_theoretical, ".1f")))
    for key in _model_keys(rows):
        cols.append(Column(key, lambda r, k=key: _num(r.model.get(k), ".4g")))
    if any(r.registers is not None for r in rows):
        cols += [
            Column("regs", lambda r: _num(r.registers, "d")),
            Column("smem_B", lambda r: "" if r.static_smem_bytes is None else
                   str(r.static_smem_bytes + (r.dynamic_smem_bytes or 0))),
            Column("local_B", lambda r: _num(r.local_bytes, "d")),
        ]
    if any(not r.ok for r in rows):
        cols.append(Column("detail", lambda r: r.error or (r.check_detail if r.check == "FAIL" else ""), "left"))
    elif not timed:
        cols.append(Column("max_abs_err", lambda r: _num(r.max_abs_err, ".2e")))
        cols.append(Column("max_rel_err", lambda r: _num(r.max_rel_err, ".2e")))
    return cols


def _model_keys(rows: list[Result]) -> list[str]:
    keys: list[str] = []
    for r in rows:
        for k in r.model:
            if k not in keys:
                keys.append(k)
    return keys


def print_table(console, rows: list[Result], title: str = "", caption: str = "") -> None:
    from rich.table import Table  # noqa: PLC0415

    table = Table(title=title or None, caption=caption or None, header_style="bold")
    cols = columns_for(rows)
    for c in cols:
        table.add_column(c.header, justify=c.justify)
    for r in rows:
        style = None if r.ok else "red"
        cells = [c.cell(r) for c in cols]
        cells[2] = f"[green]{cells[2]}[/]" if r.check == "PASS" else cells[2]
        table.add_row(*cells, style=style)
    console.print(table)


def print_warnings(console, rows: list[Result]) -> None:
    for r in rows:
        for w in r.warnings:
            console.print(f"[yellow]warning:[/] {w}", highlight=False)


# ---- files -------------------------------------------------------------------------

FIELDNAMES = [f.name for f in fields(Result)]


def markdown_table(rows: list[Result]) -> str:
    cols = columns_for(rows)
    out = io.StringIO()
    out.write("| " + " | ".join(c.header for c in cols) + " |\n")
    out.write("|" + "|".join("---:" if c.justify == "right" else "---" for c in cols) + "|\n")
    for r in rows:
        out.write("| " + " | ".join(c.cell(r).replace("|", "\\|") for c in cols) + " |\n")
    return out.getvalue()


def format_for(path: Path) -> str:
    ext = path.suffix.lower()
    if ext in (".csv", ".json", ".md"):
        return ext[1:]
    raise UsageError(f"--out {path}: unknown file type {ext or '(none)'}; use .csv, .json or .md")


def write_results(path: Path, rows: Iterable[Result], meta: dict) -> None:
    """Write a whole result file at once (CSV, JSON or Markdown by extension)."""
    rows = list(rows)
    kind = format_for(path)
    if kind == "csv":
        with open(path, "w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=FIELDNAMES)
            writer.writeheader()
            for r in rows:
                writer.writerow(r.to_flat())
        _write_meta_sidecar(path, meta)
    elif kind == "json":
        path.write_text(json.dumps({"meta": meta, "results": [r.to_dict() for r in rows]}, indent=2) + "\n")
    else:
        path.write_text(markdown_document(rows, meta))


def markdown_document(rows: list[Result], meta: dict) -> str:
    """A whole .md result file: a title over the same text as README's results section."""
    return f"# pmppbench results\n\n{results_section(rows, meta)}\n"


def meta_path_for(path: Path) -> Path:
    return path.with_name(path.name + ".meta.json")


def _write_meta_sidecar(path: Path, meta: dict) -> None:
    """CSV has no place for run metadata; it goes beside the file as <name>.csv.meta.json."""
    meta_path_for(path).write_text(json.dumps(meta, indent=2) + "\n")


def read_results(path: Path) -> tuple[list[Result], dict]:
    """Read a CSV or JSON result file back (for compare, plot and report)."""
    if not path.is_file():
        raise UsageError(f"{path}: no such result file")
    kind = format_for(path)
    try:
        if kind == "csv":
            with open(path, newline="") as fh:
                rows = [Result.from_flat(r) for r in csv.DictReader(fh)]
            meta_file = meta_path_for(path)
            meta = json.loads(meta_file.read_text()) if meta_file.is_file() else {}
            return rows, meta
        if kind == "json":
            data = json.loads(path.read_text())
            return [Result(**r) for r in data["results"]], data.get("meta", {})
    except (ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"{path}: not a pmppbench result file ({exc})") from exc
    raise UsageError(f"{path}: Markdown result files cannot be read back; use .csv or .json")


class CsvSink:
    """Appends each row to a CSV file the moment it exists (for long runs: nothing is lost)."""

    def __init__(self, path: Path, meta: dict):
        self.path = path
        self._fh = open(path, "w", newline="")
        self._writer = csv.DictWriter(self._fh, fieldnames=FIELDNAMES)
        self._writer.writeheader()
        self._fh.flush()
        _write_meta_sidecar(path, meta)

    def add(self, row: Result) -> None:
        self._writer.writerow(row.to_flat())
        self._fh.flush()

    def close(self) -> None:
        self._fh.close()


# ---- README results section ---------------------------------------------------------

BEGIN, END = "<!-- results:begin -->", "<!-- results:end -->"


def results_section(rows: list[Result], meta: dict, source: str = "") -> str:
    """Markdown tables per workload, headed by the device and software they were measured on."""
    device = meta.get("name", "unknown GPU")
    # "driver" is the CUDA version the driver supports; "nvidia_driver" the driver's own (NVML).
    labels = {"nvidia_driver": "driver", "driver": "CUDA driver API", "cuda_runtime": "CUDA runtime",
              "cupy": "CuPy", "pmppbench": "pmppbench"}
    facts = ", ".join(f"{label} {meta[k]}" for k, label in labels.items() if meta.get(k))
    lines = [f"Measured on **{device}** ({facts}) at {meta.get('timestamp', '?')}"
             + (f", from `{source}`" if source else "") + ".", ""]
    stability = stability_line(rows)
    if stability:
        lines += [stability[0].upper() + stability[1:] + ".", ""]
    for workload in dict.fromkeys(r.workload for r in rows):
        lines += [f"#### {workload}", "", markdown_table([r for r in rows if r.workload == workload])]
    warnings = [w for r in rows for w in r.warnings]
    if warnings:
        lines += ["#### warnings", ""] + [f"- {w}" for w in warnings] + [""]
    return "\n".join(lines)


def replace_section(path: Path, text: str) -> None:
    """Put `text` between the BEGIN and END markers of a Markdown file."""
    if not path.is_file():
        raise UsageError(f"{path}: no such file")
    doc = path.read_text()
    if BEGIN not in doc or END not in doc or doc.index(BEGIN) > doc.index(END):
        raise UsageError(f"{path}: needs the markers {BEGIN} and {END} around the results section")
    head, rest = doc.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    path.write_text(f"{head}{BEGIN}\n{text.rstrip()}\n{END}{tail}")
