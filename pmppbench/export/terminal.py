"""The terminal: one Rich table per workload, its warnings and the repeatability line."""

from __future__ import annotations

from pmppbench.export.columns import columns_for
from pmppbench.noise import stability_line
from pmppbench.results import Result


def print_table(console, rows: list[Result], title: str = "", caption: str = "") -> None:
    from rich.markup import escape  # noqa: PLC0415
    from rich.table import Table  # noqa: PLC0415

    # Titles hold brackets (y[i] = mean(x[i-R..i+R])) that Rich would read as markup.
    table = Table(title=escape(title) if title else None, caption=escape(caption) if caption else None,
                  header_style="bold")
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


def print_stability(console, rows: list[Result]) -> None:
    line = stability_line(rows)
    if line:
        console.print(line, highlight=False)
