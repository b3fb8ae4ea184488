"""Files: which exporter writes a path, and writing it (whole, or row by row during a run).

The exporter is chosen by the file name's extension, from EXPORTERS; nothing else in the
package knows the list. `check_writable` refuses a path before any work (an unknown
extension, a folder, an existing file without --force, a folder that does not exist or cannot
be written). `save` writes a whole file; `open_sinks` opens one sink per --out path, each kept
up to date with every finished row (a CSV appends; the other formats are rewritten whole,
atomically, after each row, so a stopped run leaves a complete file).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from pmppbench import paths
from pmppbench.errors import UsageError
from pmppbench.results.export import csv, html, json as json_export, markdown
from pmppbench.results.export.base import Exporter, RowSink
from pmppbench.results.resultfile import meta_path_for, write_atomic
from pmppbench.row import Result

EXPORTERS: dict[str, Exporter] = {e.suffix: e for e in (csv.EXPORTER, json_export.EXPORTER, markdown.EXPORTER,
                                                         html.EXPORTER)}
_NAMES = ", ".join(f".{s}" for s in EXPORTERS)


def exporter_for(path: Path, what: str = "--out") -> Exporter:
    exporter = EXPORTERS.get(path.suffix.lower()[1:])
    if exporter is not None:
        return exporter
    if path.is_dir():
        raise UsageError(f"{what} {path} is a folder; give a file name ending in {_NAMES}")
    raise UsageError(f"{what} {path}: unknown file type {path.suffix or '(no extension)'}; use {_NAMES}")


def check_writable(path: Path, force: bool, what: str = "--out", exporter: bool = True,
                   inputs: dict[str, Path] | None = None) -> Path:
    """Refuse, before any work, a path that exists (without --force) or cannot be written.
    `exporter`: the extension must name an exporter (False for `report --html`'s page, whose
    format the option already says). Whatever --force says, only a regular file or a new name
    is written: a device, a FIFO or a socket is refused (renaming over /dev/full would replace
    the device node; opening a FIFO waits for a reader), and so is a path that is the same file
    as one of `inputs` ({label: path}: a command's own input, through links too)."""
    kind = paths.kind(path, what)  # refuses what the system cannot look up (a name too long, ...)
    shown = paths.shown(path)
    if kind == paths.SPECIAL:
        raise UsageError(f"{what} {shown} is {paths.special_name(path)}, not a regular file; pmppbench writes "
                         f"only files, --force or not: choose a file name")
    for label, source in (inputs or {}).items():
        if source is not None and paths.same_file(path, source):
            raise UsageError(f"{what} {shown} is the same file as {label}; writing it would replace its own input: "
                             f"choose another {what}")
    if exporter:
        exporter_for(path, what)
    if kind == paths.FOLDER:
        raise UsageError(f"{what} {shown} is a folder; give a file name")
    if kind == paths.DANGLING:
        raise UsageError(f"{what} {shown} is a symbolic link to {os.readlink(path)}, which does not exist; "
                         f"remove the link or choose another {what}")
    if kind == paths.FILE and not force:
        raise UsageError(f"{what} {shown} exists; pass --force to overwrite it or choose another {what}")
    if not path.parent.is_dir():
        raise UsageError(f"{what} {shown}: folder {path.parent} does not exist")
    try:
        if kind == paths.FILE:
            with open(path, "a"):
                pass
        else:
            with open(path, "x"):
                pass
            path.unlink()
    except OSError as exc:
        raise UsageError(f"{what} {shown}: cannot write there ({exc.strerror or exc}); choose another {what}") from None
    return path


def check_outputs(outs: list[Path], force: bool, inputs: dict[str, Path] | None = None) -> list[Path]:
    """Every --out of a run checked (check_writable, none the same file as one of `inputs`),
    and none given twice (nor a CSV's metadata file as another --out)."""
    seen: dict[Path, Path] = {}
    for p in outs:
        exporter = exporter_for(p)
        names = [p] + ([meta_path_for(p)] if exporter.meta_beside else [])
        for name in names:
            key = name.resolve()
            if key in seen:
                raise UsageError(f"--out {p}: given twice (as {seen[key]}); give each --out file once")
            seen[key] = p
    return [check_writable(p, force, inputs=inputs) for p in outs]


def _write_meta(path: Path, meta: dict[str, Any]) -> None:
    write_atomic(meta_path_for(path), json.dumps(meta, indent=2) + "\n")


def save(path: Path, rows: list[Result], meta: dict[str, Any]) -> None:
    """Write a whole file (and a CSV's metadata beside it)."""
    exporter = exporter_for(path)
    rows = list(rows)
    if exporter.meta_beside:
        _write_meta(path, meta)
    write_atomic(path, exporter.document(rows, meta))


class _Rewritten:
    """A format that cannot be appended to: the whole file rewritten after each row."""

    def __init__(self, path: Path, meta: dict[str, Any]):
        self.path, self.meta, self.rows = path, meta, []
        save(path, [], meta)

    def add(self, row: Result) -> None:
        self.rows.append(row)
        save(self.path, self.rows, self.meta)

    def close(self, meta: dict[str, Any] | None = None) -> None:
        if meta is not None:  # what the run learned at its end (its wall time)
            self.meta = meta
            save(self.path, self.rows, meta)


class _Appended:
    """Rows appended as they come (the exporter's appender); the metadata beside the file
    rewritten at the end with what the run learned."""

    def __init__(self, path: Path, exporter: Exporter, meta: dict[str, Any]):
        self.path, self._meta_beside = path, exporter.meta_beside
        if self._meta_beside:
            _write_meta(path, meta)
        self._rows: RowSink = exporter.appender(open(path, "w", newline=""))

    def add(self, row: Result) -> None:
        self._rows.add(row)

    def close(self, meta: dict[str, Any] | None = None) -> None:
        self._rows.close()
        if meta is not None and self._meta_beside:
            _write_meta(self.path, meta)


def open_sink(path: Path, meta: dict[str, Any]):
    """A sink with add(row) / close(meta) that keeps `path` up to date with every finished row."""
    exporter = exporter_for(path)
    return _Appended(path, exporter, meta) if exporter.appender else _Rewritten(path, meta)


def open_sinks(paths: list[Path], meta: dict[str, Any]) -> list:
    return [open_sink(p, meta) for p in paths]
