"""Tables that fit the terminal: no cell is ever cut.

Rich squeezes a table that is wider than the terminal by cutting its cells ("0.2…"), which
turns the numbers themselves into lies. A table here is made to fit instead, in steps, each
tried only when the one before is still too wide:

1. as drawn on a wide terminal (the heavy box);
2. a light box (a rule under the header, no vertical lines): about a character per column;
3. headers stacked over several lines (`SoL_measured_%` as SoL / measured / %);
4. columns left out, in the table's stated order (`Field.drop`, highest first), and named
   in a line under the table, so nothing disappears silently.

A cell never wraps inside a number or a name: its whole text is the column's least width.
Only a cell of words (a FAIL's detail, a counter's note) wraps, at its spaces.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from rich import box
from rich.markup import escape
from rich.cells import cell_len
from rich.table import Table
from rich.text import Text


PROSE = 24  # the narrowest a column of words is drawn, when its text is longer


@dataclass(frozen=True)
class Field:
    """A column as the fitter sees it: `drop` 0 is never left out; higher is left out sooner.
    `words`: its cells are prose that may wrap at spaces (every other cell keeps one line)."""

    header: str
    justify: str = "left"
    drop: int = 0
    words: bool = False


@dataclass
class Fitted:
    table: Table
    dropped: list[str]  # headers of the columns left out, in the order they went
    fits: bool  # False only when even the columns that are never left out are too wide

    def note(self, width: int) -> str:
        """The line under the table that names what was left out ('' when nothing was)."""
        if not self.dropped:
            return ""
        return f"not shown at {width} columns: {', '.join(self.dropped)} (a wider terminal shows them)"


def stacked(header: str) -> str:
    """A header over several lines: broken after each _ and before a / that starts a word."""
    lines = re.sub(r"/(?=[A-Za-z]{3})", "/\n", header).replace("_", "\n").split("\n")
    return "\n".join(part for part in lines if part)


def fit(console: Any, fields: list[Field], rows: list[list[str]], *, width: int | None = None,
        title: str = "", caption: str = "", styles: list[str | None] | None = None,
        markup: bool = False) -> Fitted:
    """The table of `rows` (cells in `fields` order) that fits `width` (default: the
    console's), by the steps of the module doc. `markup`: the cells hold Rich markup
    ([green]PASS[/]); otherwise they are shown as written."""
    limit = min(width or console.width, console.width)
    keep = list(range(len(fields)))
    dropped: list[str] = []
    plain = [[_plain(c, markup) for c in cells] for cells in rows]
    for light, stack in ((False, False), (True, False), (True, True)):
        if _least(fields, plain, keep, light, stack) <= limit:
            return Fitted(_build(fields, rows, keep, light, stack, title, caption, styles, markup), dropped, True)
    while True:
        candidates = [i for i in keep if fields[i].drop]
        if not candidates:
            return Fitted(table, dropped, False)
        gone = max(candidates, key=lambda i: (fields[i].drop, i))
        keep.remove(gone)
        dropped.append(fields[gone].header)
        for stack in (False, True):
            if _least(fields, plain, keep, True, stack) <= limit:
                return Fitted(_build(fields, rows, keep, True, stack, title, caption, styles, markup), dropped, True)
        table = _build(fields, rows, keep, True, True, title, caption, styles, markup)


def _plain(cell: str, markup: bool) -> str:
    return Text.from_markup(cell).plain if markup else cell


def _least(fields: list[Field], rows: list[list[str]], keep: list[int], light: bool, stack: bool) -> int:
    """The narrowest the table can be drawn with no cell cut: each column as wide as its
    widest line (a prose column: its longest word), plus the box's lines and padding."""
    total = 0
    for i in keep:
        f = fields[i]
        texts = [stacked(f.header) if stack else f.header] + [cells[i] for cells in rows]
        if f.words:  # at least PROSE wide (or its longest text), so a sentence reads as one
            longest = max(cell_len(t) for t in texts)
            total += min(longest, max(PROSE, max((cell_len(w) for t in texts for w in t.split()), default=1)))
        else:
            total += max(cell_len(line) for t in texts for line in (t.split("\n") or [""]))
    n = len(keep)
    return total + (2 * (n - 1) if light else 3 * n + 1)


def _build(fields, rows, keep, light, stack, title, caption, styles, markup) -> Table:
    light_box = {"box": box.SIMPLE_HEAD, "show_edge": False, "pad_edge": False, "collapse_padding": True}
    table = Table(title=escape(title) if title else None, caption=escape(caption) if caption else None,
                  header_style="bold", **(light_box if light else {}))
    for i in keep:
        f = fields[i]
        # fold, not ellipsis: should a word ever be wider than its column, it breaks, whole
        table.add_column(stacked(f.header) if stack else f.header, justify=f.justify, overflow="fold",
                         no_wrap=not f.words)
    for n, cells in enumerate(rows):
        shown = [cells[i] if markup else escape(cells[i]) for i in keep]
        table.add_row(*shown, style=styles[n] if styles else None)
    return table
