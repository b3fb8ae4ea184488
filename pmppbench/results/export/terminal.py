"""The terminal: one Rich table per workload, its warnings and the repeatability line.

Every table fits the terminal it is printed on (export/fitted.py): on a narrow one the
columns of columns.py are left out in their stated order (Column.drop) and a line says which.
"""

from __future__ import annotations

from pmppbench.measure.noise import stability_line
from pmppbench.results.export.columns import Column, columns_for, counter_columns_for
from pmppbench.results.export.fitted import Field, fit
from pmppbench.row import Result


def _print(console, rows: list[Result], cols: list[Column], title: str, caption: str = "", marked: bool = False) -> None:
    """`rows` in `cols`, fitted to the console; `marked`: the check column green on PASS,
    failed rows red."""
    from rich.markup import escape  # noqa: PLC0415

    fields = [Field(c.header, c.justify, c.drop, c.words) for c in cols]
    cells = []
    for r in rows:
        line = [escape(c.cell(r)) for c in cols]
        if marked and r.check == "PASS":
            line[2] = f"[green]{line[2]}[/]"
        cells.append(line)
    styles = [None if not marked or r.ok else "red" for r in rows]
    fitted = fit(console, fields, cells, title=title, caption=caption, styles=styles, markup=True)
    console.print(fitted.table, soft_wrap=False)  # its title and caption wrap to the table
    note = fitted.note(console.width)
    if note:
        console.print(note, markup=False, highlight=False, soft_wrap=False)


def print_table(console, rows: list[Result], title: str = "", caption: str = "") -> None:
    _print(console, rows, columns_for(rows), title, caption, marked=True)
    counters = counter_columns_for(rows)
    if counters:  # --counters: the hardware beside the model, one more table
        _print(console, rows, counters, f"{title} · hardware counters (ncu, 1 untimed run)" if title else "")


def print_warnings(console, rows: list[Result]) -> None:
    for w in dict.fromkeys(w for r in rows for w in r.warnings):  # a line shared by many rows, once
        console.print(f"[yellow]warning:[/] {w}", highlight=False, soft_wrap=False)


def print_stability(console, rows: list[Result]) -> None:
    line = stability_line(rows)
    if line:
        console.print(line, highlight=False, soft_wrap=False)
