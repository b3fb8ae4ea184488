"""Result files: the format, safe writes, and reading them back with validation.

The machine formats are `.csv` (one row per Result, run metadata beside it in
`<name>.csv.meta.json`) and `.json` (metadata and rows in one document); both carry
`format_version` (FORMAT_VERSION below). Files of pmppbench 0.1.0 have none and read as
version 1. The exporters in `pmppbench/export/` write them (and the Markdown and HTML
reports, which are never read back); this module reads them.

Promises:
- Anything that is not a readable pmppbench result file (missing, a folder, empty, binary,
  not CSV/JSON, wrong columns, a short or truncated row, a value of the wrong type, a newer
  format) raises UsageError with one line naming the file, the row and the column.
- `write_atomic` writes to a temporary file first and renames it, so a failure never leaves
  half a file where a good one was.
"""

from __future__ import annotations

import csv
import io
import json
import os
import tempfile
from dataclasses import fields
from pathlib import Path
from typing import Any

from pmppbench.errors import UsageError
from pmppbench.row import CHECK_STATES, Result

# The layout of a result file: the Result fields, one per column (CSV) or key (JSON).
# 1: pmppbench 0.1.0 files, which had no format_version column; 2: format_version added.
FORMAT_VERSION = 2
READABLE = ("csv", "json")
REQUIRED = ("workload", "variant", "shape", "check")
_TYPES = {f.name: str(f.type) for f in fields(Result)}


def meta_path_for(path: Path) -> Path:
    return path.with_name(path.name + ".meta.json")


def write_atomic(path: Path, text: str) -> None:
    """Write `text` to a temporary file beside `path`, then rename it over `path`."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)  # the mode a plain open() would give, not mkstemp's 0600
    try:
        with os.fdopen(fd, "w", newline="") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


# ---- reading ---------------------------------------------------------------------------

def load(path: Path) -> tuple[list[Result], dict]:
    """Rows and metadata of a CSV or JSON result file, validated (UsageError otherwise)."""
    path = Path(path)
    if path.is_dir():
        raise UsageError(f"{path} is a folder, not a result file; give a .csv or .json written by pmppbench")
    if not path.is_file():
        raise UsageError(f"{path}: no such result file")
    kind = path.suffix.lower()[1:]
    if kind in ("md", "html"):
        raise UsageError(f"{path}: {'Markdown' if kind == 'md' else 'HTML'} reports cannot be read back; "
                         "use the .csv or .json of the run")
    if kind not in READABLE:
        raise UsageError(f"{path}: unknown file type {path.suffix or '(no extension)'}; give the .csv or .json "
                         "of a run")
    data = path.read_bytes()
    if b"\x00" in data:
        raise _bad(path, "binary data")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise _bad(path, "not UTF-8 text") from None
    if not text.strip():
        raise _bad(path, "the file is empty")
    rows, meta = _load_csv(path, text) if kind == "csv" else _load_json(path, text)
    if not rows:
        raise UsageError(f"{path}: no result rows (only a header); nothing to read")
    return rows, meta


def _bad(path: Path, why: str) -> UsageError:
    return UsageError(f"{path}: not a pmppbench result file ({why})")


def _load_csv(path: Path, text: str) -> tuple[list[Result], dict]:
    try:
        table = list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error as exc:
        raise _bad(path, f"unreadable CSV: {exc}") from None
    header = table[0]
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        raise _bad(path, f"no column {', '.join(missing)}")
    rows = []
    for number, cells in enumerate(table[1:], start=2):
        if not cells:
            continue
        if len(cells) != len(header):
            raise UsageError(f"{path}: line {number} has {len(cells)} fields but the header has {len(header)} "
                             "(a truncated or edited file); rerun or restore the file")
        rows.append(_row(path, f"line {number}", dict(zip(header, cells))))
    meta_file = meta_path_for(path)
    meta = {}
    if meta_file.is_file():
        try:
            meta = json.loads(meta_file.read_text())
        except (ValueError, UnicodeDecodeError):
            raise UsageError(f"{meta_file}: not valid JSON; restore it or delete it (the rows do not need it)") from None
        if not isinstance(meta, dict):
            raise UsageError(f"{meta_file}: expected a JSON object of run metadata")
    return rows, meta


def _load_json(path: Path, text: str) -> tuple[list[Result], dict]:
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise _bad(path, f"not valid JSON: {exc}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), list):
        raise _bad(path, 'expected an object with a "results" list')
    _version(path, doc.get("format_version", 1), "")
    meta = doc.get("meta", {})
    if not isinstance(meta, dict):
        raise _bad(path, '"meta" is not an object')
    rows = []
    for i, entry in enumerate(doc["results"]):
        if not isinstance(entry, dict):
            raise UsageError(f"{path}: results[{i}] is not an object")
        rows.append(_row(path, f"results[{i}]", entry))
    return rows, meta


def _version(path: Path, raw: Any, where: str) -> None:
    try:
        version = int(raw)
    except (TypeError, ValueError):
        raise UsageError(f"{path}: {where + ', ' if where else ''}format_version {raw!r} is not a number") from None
    if version > FORMAT_VERSION:
        raise UsageError(f"{path}: written by a newer pmppbench (format {version}; this one reads up to "
                         f"{FORMAT_VERSION}); upgrade pmppbench to read it")


def _row(path: Path, where: str, raw: dict[str, Any]) -> Result:
    if "format_version" in raw and raw["format_version"] not in ("", None):
        _version(path, raw["format_version"], where)
    for c in REQUIRED:
        if c not in raw or raw[c] in ("", None):
            raise UsageError(f"{path}: {where}: column {c} is empty")
    kwargs = {}
    for name, type_name in _TYPES.items():
        if name not in raw:
            continue
        try:
            kwargs[name] = _value(raw[name], type_name)
        except (TypeError, ValueError):
            raise UsageError(f"{path}: {where}, column {name}: expected {_expected(type_name)}, "
                             f"got {raw[name]!r}") from None
    if kwargs["check"] not in CHECK_STATES:
        raise UsageError(f"{path}: {where}, column check: expected one of {', '.join(CHECK_STATES)}, "
                         f"got {kwargs['check']!r}")
    return Result(**kwargs)


def _expected(type_name: str) -> str:
    for prefix, words in (("dict", "a JSON object"), ("list", "a JSON list"), ("float", "a number"),
                          ("int", "an integer"), ("bool", "true or false")):
        if type_name.startswith(prefix):
            return words
    return "text"


def _value(raw: Any, t: str) -> Any:
    """One cell (CSV text, or a JSON value) as the field's type; ValueError/TypeError if it is not."""
    if raw is None or (raw == "" and "None" in t):
        if "None" not in t and not t.startswith(("dict", "list", "str")):
            raise ValueError("empty")
        return None if "None" in t else ({} if t.startswith("dict") else [] if t.startswith("list") else "")
    if t.startswith(("dict", "list")):
        value = json.loads(raw) if isinstance(raw, str) else raw
        if not isinstance(value, dict if t.startswith("dict") else list):
            raise TypeError("wrong container")
        return value
    if t.startswith("float"):
        if isinstance(raw, bool):
            raise TypeError("bool")
        return float(raw)
    if t.startswith("int"):
        if isinstance(raw, bool):
            raise TypeError("bool")
        value = float(raw)
        if value != int(value):
            raise ValueError("not whole")
        return int(value)
    if t.startswith("bool"):
        if isinstance(raw, bool):
            return raw
        text = str(raw).strip().lower()
        if text not in ("true", "false", "1", "0", "yes", "no", ""):
            raise ValueError("not a bool")
        return text in ("true", "1", "yes")
    if not isinstance(raw, str):
        raise TypeError("not text")
    return raw
