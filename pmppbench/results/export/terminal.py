"""The terminal: one Rich table per workload, its warnings and the repeatability line."""

from __future__ import annotations

from pmppbench.results.export.columns import columns_for, counter_columns_for
from pmppbench.measure.noise import stability_line
from pmppbench.row import Result


def _table(rows: list[Result], cols, title: str, caption: str = "", marked: bool = False):
    """A Rich table of `rows` in `cols`; `marked`: the check column green on PASS, failed rows red."""
    from rich.markup import escape  # noqa: PLC0415
    from rich.table import Table  # noqa: PLC0415

    # Titles hold brackets (y[i] = mean(x[i-R..i+R])) that Rich would read as markup.
    table = Table(title=escape(title) if title else None, caption=escape(caption) if caption else None,
                  header_style="bold")
    for c in cols:
        table.add_column(c.header, justify=c.justify)
    for r in rows:
        cells = [c.cell(r) for c in cols]
        if marked and r.check == "PASS":
            cells[2] = f"[green]{cells[2]}[/]"
        table.add_row(*cells, style=None if not marked or r.ok else "red")
    return table


def print_table(console, rows: list[Result], title: str = "", caption: str = "") -> None:
    console.print(_table(rows, columns_for(rows), title, caption, marked=True))
    counters = counter_columns_for(rows)
    if counters:  # --counters: the hardware beside the model, one more table
        console.print(_table(rows, counters, f"{title} · hardware counters (ncu, 1 untimed run)" if title else ""))


def print_warnings(console, rows: list[Result]) -> None:
    for w in dict.fromkeys(w for r in rows for w in r.warnings):  # a line shared by many rows, once
        console.print(f"[yellow]warning:[/] {w}", highlight=False)


def print_stability(console, rows: list[Result]) -> None:
    line = stability_line(rows)
    if line:
        console.print(line, highlight=False)
