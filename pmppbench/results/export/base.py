"""The one interface every file format implements (--out, `report --html`, whole-file saves).

An Exporter is a file name's extension and `document(rows, meta)`, the whole file's text for
these rows and the run's metadata. A format that can grow a row at a time (CSV) also gives an
`appender`: a sink over an open file whose add(row) writes that row and flushes; any other
format is rewritten whole, atomically, after each row (export/files.py), so every format keeps
every finished row of a stopped run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, TextIO

from pmppbench.row import Result


class RowSink(Protocol):
    def add(self, row: Result) -> None: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class Exporter:
    suffix: str  # the extension it is chosen by, without the dot: "csv"
    document: Callable[[list[Result], dict[str, Any]], str]
    appender: Callable[[TextIO], RowSink] | None = None  # None: the file is rewritten whole per row
    meta_beside: bool = False  # the run's metadata goes to FILE.meta.json (the format has no place for it)
