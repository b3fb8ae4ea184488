"""CSV: one row per Result, nested fields (dims, batch means, clocks, model) as JSON text.

Every row carries `format_version` (resultfile.FORMAT_VERSION), so a file read back, or a
part of one, says which layout it has. `CsvSink` appends each row the moment it exists and
flushes, so a run that crashes or is stopped keeps every finished row. A CSV has no place
for the run's metadata: it goes beside it, to FILE.meta.json (`meta_beside`).
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import asdict, fields
from typing import TextIO

from pmppbench.results.export.base import Exporter
from pmppbench.results.resultfile import FORMAT_VERSION
from pmppbench.row import Result

FIELDNAMES = ["format_version"] + [f.name for f in fields(Result)]


def flat(row: Result) -> dict:
    out = {"format_version": FORMAT_VERSION}
    for k, v in asdict(row).items():
        out[k] = json.dumps(v) if isinstance(v, (dict, list)) else v
    return out


def dumps(rows: list[Result]) -> str:
    buf = io.StringIO()
    write(buf, rows)
    return buf.getvalue()


def write(fh: TextIO, rows: list[Result]) -> None:
    writer = csv.DictWriter(fh, fieldnames=FIELDNAMES, lineterminator="\n")
    writer.writeheader()
    for r in rows:
        writer.writerow(flat(r))


class CsvSink:
    """Appends each row to an open CSV file as soon as it is added."""

    def __init__(self, fh: TextIO):
        self._fh = fh
        self._writer = csv.DictWriter(fh, fieldnames=FIELDNAMES, lineterminator="\n")
        self._writer.writeheader()
        fh.flush()

    def add(self, row: Result) -> None:
        self._writer.writerow(flat(row))
        self._fh.flush()

    def close(self) -> None:
        self._fh.close()


EXPORTER = Exporter("csv", lambda rows, meta: dumps(rows), appender=CsvSink, meta_beside=True)
