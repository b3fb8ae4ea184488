"""Result files: the format, safe writes, and reading them back with validation.

The machine formats are `.csv` (one row per Result, run metadata beside it in
`<name>.csv.meta.json`) and `.json` (metadata and rows in one document); both carry
`format_version` (FORMAT_VERSION below). Files of pmppbench 0.1.0 have none and read as
version 1. The exporters in `pmppbench/results/export/` write them (and the Markdown and HTML
reports, which are never read back); this module reads them.

Promises:
- Anything that is not a readable pmppbench result file (missing, a folder, empty, binary,
  not CSV/JSON, nested beyond reason, a column missing, a short or truncated row, a value of
  the wrong type or out of range, a newer format) raises UsageError with one line naming the
  file, the row and the column.
- Every column pmppbench has written since 0.1.0 must be there (COLUMNS): a file cut down to
  a few columns would otherwise read as rows without times, and a regression gate on it would
  pass. Times are finite and positive (min_ms <= median_ms <= max_ms), spreads finite and
  >= 0, counts whole and >= 0, and a timed PASS row has its median: a NaN or a negative time
  would otherwise be printed, plotted, and called SAME by compare.
- `write_atomic` writes to a temporary file first and renames it, so a failure never leaves
  half a file where a good one was (the exporters, `pmppbench/results/export/files.py`, write through it).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import os
import stat
import tempfile
from dataclasses import fields
from pathlib import Path
from typing import Any

from pmppbench import paths, workloads
from pmppbench.errors import UsageError
from pmppbench.row import CHECK_STATES, Result

# The layout of a result file: the Result fields, one per column (CSV) or key (JSON).
# 1: pmppbench 0.1.0 files, which had no format_version column; 2: format_version added.
FORMAT_VERSION = 2
READABLE = ("csv", "json")
REQUIRED = ("workload", "variant", "shape", "check")
# The columns of format 1 (pmppbench 0.1.0); every later version has them too.
COLUMNS = REQUIRED + (
    "dims", "max_abs_err", "max_rel_err", "check_detail", "tolerance", "median_ms", "min_ms", "max_ms",
    "spread_pct", "batch_means_ms", "warmup", "batches", "reps", "timer", "alternate", "bytes", "flops", "gb_per_s",
    "gflop_per_s", "intensity_flop_per_byte", "ridge_flop_per_byte", "bound", "sol_pct_theoretical",
    "sol_pct_measured", "speedup_vs", "speedup", "pct_of", "pct_of_roof", "model", "kernel", "registers",
    "static_smem_bytes", "dynamic_smem_bytes", "local_bytes", "spill_bytes", "threads_per_block", "clocks",
    "warnings", "error", "seed", "device", "run_id", "timestamp")
TIMES = ("median_ms", "min_ms", "max_ms")  # ms per call: finite and > 0
_CHECK_ERRORS = ("max_abs_err", "max_rel_err")  # inf or NaN when a FAIL's output held them
_TYPES = {f.name: str(f.type) for f in fields(Result)}


def meta_path_for(path: Path) -> Path:
    return path.with_name(path.name + ".meta.json")


def write_atomic(path: Path, text: str) -> None:
    """Write `text` to a temporary file beside `path`, then rename it over `path`.

    A symbolic link is written through (its target is replaced, the link stays), and a file
    that exists keeps its mode (a README that was 755 stays 755); a new file gets the mode a
    plain open() would give it, not mkstemp's 0600. Only a regular file is replaced: a device,
    a FIFO, a socket or a folder raises UsageError (the callers refuse them first, with their
    option's name; this is the last guard)."""
    path = Path(os.path.realpath(path)) if os.path.islink(path) else Path(path)
    try:
        st = os.stat(path)
        mode = stat.S_IMODE(st.st_mode)
        if not stat.S_ISREG(st.st_mode):
            raise UsageError(f"{paths.shown(path)} is {paths.special_name(path) if paths.kind(path) == paths.SPECIAL else 'a folder'}, "
                             "not a regular file; pmppbench writes only files: choose a file name")
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.chmod(tmp, mode)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


# ---- reading ---------------------------------------------------------------------------

def load(path: Path, notes: list[str] | None = None) -> tuple[list[Result], dict]:
    """Rows and metadata of a CSV or JSON result file, validated (UsageError otherwise).

    `notes` (when given) receives what a reader should know and the file does not stop:
    rows that repeat an earlier row exactly (read once) and a CSV without its metadata file."""
    path = Path(path)
    what = paths.kind(path)
    if what == paths.FOLDER:
        raise UsageError(f"{path} is a folder, not a result file; give a .csv or .json written by pmppbench")
    if what == paths.DANGLING:
        raise UsageError(f"{path} is a symbolic link to {os.readlink(path)}, which does not exist; "
                         "give the result file itself")
    if what == paths.MISSING:
        raise UsageError(f"{path}: no such result file; check the path")
    kind = path.suffix.lower()[1:]
    if kind in ("md", "html"):
        raise UsageError(f"{path}: {'Markdown' if kind == 'md' else 'HTML'} reports cannot be read back; "
                         "use the .csv or .json of the run")
    if kind not in READABLE:
        raise UsageError(f"{path}: unknown file type {path.suffix or '(no extension)'}; give the .csv or .json "
                         "of a run")
    notes = [] if notes is None else notes
    try:
        rows, meta = _load_csv(path, notes) if kind == "csv" else _load_json(path, notes)
    except MemoryError:
        raise UsageError(f"{path}: too large to read in this machine's memory; split the file or read it where "
                         "there is more memory") from None
    if not rows:
        raise UsageError(f"{path}: no result rows (only a header); nothing to read")
    return rows, meta


def _json(text: str, bad, pairs=None) -> Any:
    """json.loads; a broken document, or one nested too deeply for Python's parser, raises bad(why).
    `pairs`: json's object_pairs_hook (the duplicate-key check)."""
    try:
        return json.loads(text, object_pairs_hook=pairs)
    except RecursionError:
        raise bad("nested too deeply to be pmppbench's") from None
    except ValueError as exc:
        raise bad(f"not valid JSON: {exc}") from None


def _bad(path: Path, why: str) -> UsageError:
    return UsageError(f"{path}: not a pmppbench result file ({why})")


def _repeats(path: Path, copies: list[tuple[str, str]], notes: list[str]) -> None:
    """One note for the rows that repeat an earlier row exactly ((where, where first) pairs)."""
    if copies:
        where, first = copies[0]
        others = len(copies) - 1
        more = (f" (and {others:,} more row{'s repeat' if others > 1 else ' repeats'} an earlier one)"
                if others else "")
        notes.append(f"{path}: {where} repeats {first} exactly{more}; each row is read once")


def _digest(cells) -> bytes:
    """A row's identity for the repeat check: 16 bytes kept per row, never the row's text."""
    return hashlib.blake2b("\x1f".join(cells).encode(), digest_size=16).digest()


def _load_csv(path: Path, notes: list[str]) -> tuple[list[Result], dict]:
    """The rows of a CSV, read a line at a time: memory grows with the rows kept, never with
    a copy of the file's text (a 100 MB file reads in a few times its size)."""
    rows: list[Result] = []
    seen: dict[bytes, int] = {}
    copies: list[tuple[str, str]] = []
    strings: dict[str, str] = {}  # one object per distinct text (devices, run ids, tolerances repeat)
    with paths.open_capped(path, "result file", str(path)) as fh:
        if b"\x00" in fh.read(1 << 16):  # a binary file says so before its first bad byte as UTF-8 does
            raise _bad(path, "binary data")
        fh.seek(0)
        lines = io.TextIOWrapper(fh, encoding="utf-8", newline="")
        reader = csv.reader(lines)
        header = None
        try:
            for cells in reader:
                if header is None:
                    if not any(c.strip() for c in cells):
                        continue
                    header = _csv_header(path, cells)
                    continue
                if not cells:
                    continue
                number = reader.line_num
                if len(cells) != len(header):
                    raise UsageError(f"{path}: line {number} has {len(cells)} fields but the header has "
                                     f"{len(header)} (a truncated or edited file); rerun or restore the file")
                key = _digest(cells)
                if key in seen:
                    copies.append((f"line {number}", f"line {seen[key]}"))
                    continue
                seen[key] = number
                cells = [strings.setdefault(c, c) if len(c) < 64 else c for c in cells]
                rows.append(_row(path, f"line {number}", dict(zip(header, cells))))
        except UnicodeDecodeError:
            raise _bad(path, "not UTF-8 text") from None
        except csv.Error as exc:
            raise _bad(path, "binary data" if "NUL" in str(exc) else f"unreadable CSV: {exc}") from None
        except OSError as exc:
            raise UsageError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    if header is None:
        raise _bad(path, "the file is empty")
    _repeats(path, copies, notes)
    return rows, _csv_meta(path, notes)


def _csv_header(path: Path, header: list[str]) -> list[str]:
    for i, name in enumerate(header):
        if name in header[:i]:
            raise UsageError(f"{path}: the header names column {_cut(name)} twice (columns {header.index(name) + 1} "
                             f"and {i + 1}); a file pmppbench writes has each column once: restore the file or rerun")
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        raise _bad(path, f"no column {', '.join(missing)}")
    _all_columns(path, "the header", header)
    return header


def _csv_meta(path: Path, notes: list[str]) -> dict:
    """The run metadata beside a CSV ({} and a note when it is missing)."""
    meta_file = meta_path_for(path)
    if paths.kind(meta_file) != paths.FILE:
        notes.append(f"metadata file {paths.shown(meta_file)} missing: GPU and date unknown")
        return {}
    raw = paths.read_capped(meta_file, "metadata file")
    try:
        meta_text = raw.decode("utf-8")
    except UnicodeDecodeError:
        meta_text = "\x00"  # reported below as not JSON
    meta = _json(meta_text, lambda why: UsageError(
        f"{meta_file}: {why.split(':')[0]}; restore it or delete it (the rows do not need it)"))
    if not isinstance(meta, dict):
        raise UsageError(f"{meta_file}: expected a JSON object of run metadata")
    return meta


def _load_json(path: Path, notes: list[str]) -> tuple[list[Result], dict]:
    data = paths.read_capped(path, "result file")
    if b"\x00" in data:
        raise _bad(path, "binary data")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise _bad(path, "not UTF-8 text") from None
    del data
    if not text.strip():
        raise _bad(path, "the file is empty")
    doc = _json(text, lambda why: _bad(path, why), pairs=lambda pairs: _object(path, pairs))
    del text
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), list):
        raise _bad(path, 'expected an object with a "results" list')
    _version(path, doc.get("format_version", 1), "")
    meta = doc.get("meta", {})
    if not isinstance(meta, dict):
        raise _bad(path, '"meta" is not an object')
    rows = []
    seen: dict[bytes, int] = {}
    copies: list[tuple[str, str]] = []
    for i, entry in enumerate(doc["results"]):
        if not isinstance(entry, dict):
            raise UsageError(f"{path}: results[{i}] is not an object")
        key = _digest([json.dumps(entry, sort_keys=True)])
        if key in seen:
            copies.append((f"results[{i}]", f"results[{seen[key]}]"))
            continue
        seen[key] = i
        rows.append(_row(path, f"results[{i}]", entry, columns=True))
    _repeats(path, copies, notes)
    return rows, meta


def _object(path: Path, pairs: list[tuple[str, Any]]) -> dict:
    """A JSON object; a key given twice (json would keep the last silently) is refused."""
    out = dict(pairs)
    if len(out) != len(pairs):
        names = [k for k, _ in pairs]
        twice = next(k for i, k in enumerate(names) if k in names[:i])
        raise UsageError(f"{path}: an object names key {_cut(twice)} twice; a file pmppbench writes has each key "
                         "once: restore the file or rerun")
    return out


def _all_columns(path: Path, where: str, names) -> None:
    missing = [c for c in COLUMNS if c not in names]
    if missing:
        shown = ", ".join(missing[:4]) + (f" and {len(missing) - 4} more" if len(missing) > 4 else "")
        raise UsageError(f"{path}: {where} lacks column{'s' if len(missing) > 1 else ''} {shown} that every "
                         "pmppbench result file has (a cut-down or foreign file); use the file as pmppbench wrote it")


def _version(path: Path, raw: Any, where: str) -> None:
    try:
        version = _whole(raw)
    except (TypeError, ValueError, OverflowError):
        raise UsageError(f"{path}: {where + ', ' if where else ''}format_version {_cut(raw)} is not a whole number; restore the file") from None
    if version < 1:
        raise UsageError(f"{path}: {where + ', ' if where else ''}format_version {raw!r} is not a format "
                         f"(1 to {FORMAT_VERSION}); restore the file")
    if version > FORMAT_VERSION:
        raise UsageError(f"{path}: written by a newer pmppbench (format {version}; this one reads up to "
                         f"{FORMAT_VERSION}); upgrade pmppbench to read it")


def _row(path: Path, where: str, raw: dict[str, Any], columns: bool = False) -> Result:
    if "format_version" in raw and raw["format_version"] not in ("", None):
        _version(path, raw["format_version"], where)
    for c in REQUIRED:
        if c not in raw or raw[c] in ("", None):
            raise UsageError(f"{path}: {where}: column {c} is empty")
    if columns:  # a JSON row; a CSV's header was checked once
        _all_columns(path, where, raw)
    kwargs = {}
    for name, type_name in _TYPES.items():
        if name not in raw:
            continue
        try:
            kwargs[name] = _converted(raw[name], *_KINDS[name])
        except RecursionError:
            raise UsageError(f"{path}: {where}, column {name}: nested too deeply to be a pmppbench value; "
                             "restore the file") from None
        except (TypeError, ValueError, OverflowError):
            raise UsageError(f"{path}: {where}, column {name}: expected {_expected(type_name)}, "
                             f"got {_cut(raw[name])}; restore the file or rerun") from None
        problem = _out_of_range(name, kwargs[name])
        if problem:
            raise UsageError(f"{path}: {where}, column {name}: {problem}, got {_cut(raw[name])}; "
                             "restore the file or rerun")
    if kwargs["check"] not in CHECK_STATES:
        raise UsageError(f"{path}: {where}, column check: expected one of {', '.join(CHECK_STATES)}, "
                         f"got {kwargs['check']!r}")
    if kwargs["workload"] not in workloads.names():
        raise UsageError(f"{path}: {where}, column workload: unknown workload {kwargs['workload']!r} (this "
                         f"pmppbench has {', '.join(workloads.names())}); upgrade pmppbench to read it")
    words = {a.name: a.choices for a in workloads.get(kwargs["workload"]).axes if a.choices}
    for key, value in (kwargs.get("dims") or {}).items():
        for v in value if isinstance(value, list) else [value]:
            if isinstance(v, str) and v not in words.get(key, ()):
                raise UsageError(f"{path}: {where}, column dims: expected sizes (an object of whole numbers >= 0, "
                                 f"or lists of them), got {_cut(raw['dims'])}; restore the file or rerun")
    row = Result(**kwargs)
    problem = _timing_problem(row)
    if problem:
        raise UsageError(f"{path}: {where}: {problem}; restore the file or rerun")
    return row


def _cut(raw: Any) -> str:
    text = repr(raw)
    return text if len(text) <= 60 else text[:40] + "..." + text[-10:]


def _out_of_range(name: str, value: Any) -> str:
    """Why one parsed value cannot be what pmppbench wrote ('' when it can)."""
    if value is None:
        return ""
    kind = _KINDS[name][0]
    if kind == "float":
        if name in TIMES and not (math.isfinite(value) and value > 0):
            return "expected a time in ms > 0"
        if name not in _CHECK_ERRORS:
            if not math.isfinite(value):
                return "expected a finite number"
            if name == "spread_pct" and value < 0:
                return "expected a spread >= 0"
        return ""
    if kind == "int":
        return "expected an integer >= 0" if value < 0 else ""
    if name == "batch_means_ms" and not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                            and math.isfinite(v) and v > 0 for v in value):
        return "expected a list of times in ms > 0"
    if name == "dims" and not all(isinstance(k, str) and _size(v) for k, v in value.items()):
        return "expected sizes (an object of whole numbers >= 0, words such as f32, or lists of them)"
    return ""


def _size(v: Any) -> bool:
    """A value of `dims`: a whole number >= 0, a word (a named axis such as the reduction's
    dtype; which words, `_row` checks against the workload's `Axis.choices`), or a non-empty
    list of them (a swept axis)."""
    if isinstance(v, list):
        return bool(v) and all(_count(x) or isinstance(x, str) for x in v)
    return _count(v) or isinstance(v, str)


def _count(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _timing_problem(r: Result) -> str:
    """A row whose times contradict each other, or a timed PASS without its median."""
    if r.median_ms is None:
        if r.check == "PASS" and (r.batches or r.reps):
            return f"a timed PASS row ({r.batches} batches x {r.reps} calls) without median_ms"
        return ""
    if r.min_ms is not None and r.max_ms is not None and not r.min_ms <= r.median_ms <= r.max_ms:
        return f"median_ms {r.median_ms:g} is outside [min_ms, max_ms] = [{r.min_ms:g}, {r.max_ms:g}]"
    return ""


def _whole(raw: Any) -> int:
    """An integer cell: 12, "12" or 12.0; ValueError/TypeError/OverflowError otherwise (1e400, inf)."""
    if isinstance(raw, bool):
        raise TypeError("bool")
    if isinstance(raw, int):
        return raw
    if isinstance(raw, str) and raw.strip().lstrip("+-").isdigit():
        return int(raw)
    value = float(raw)
    if value != int(value):
        raise ValueError("not whole")
    return int(value)


def _expected(type_name: str) -> str:
    for prefix, words in (("dict", "a JSON object"), ("list", "a JSON list"), ("float", "a number"),
                          ("int", "an integer"), ("bool", "true or false")):
        if type_name.startswith(prefix):
            return words
    return "text"


def _kind(t: str) -> tuple[str, bool]:
    """A field's type name as (dict, list, float, int, bool or str; whether None is allowed)."""
    return next((k for k in ("dict", "list", "float", "int", "bool") if t.startswith(k)), "str"), "None" in t


_KINDS = {name: _kind(t) for name, t in _TYPES.items()}  # once, not per cell: a 100 MB file has millions


def _value(raw: Any, t: str) -> Any:
    """One cell (CSV text, or a JSON value) as the field's type; ValueError/TypeError if it is not."""
    return _converted(raw, *_kind(t))


def _converted(raw: Any, kind: str, nullable: bool) -> Any:
    if raw is None or (nullable and raw == ""):
        if not nullable and kind not in ("dict", "list", "str"):
            raise ValueError("empty")
        return None if nullable else ({} if kind == "dict" else [] if kind == "list" else "")
    if kind == "float":
        if isinstance(raw, bool):
            raise TypeError("bool")
        return float(raw)
    if kind == "int":
        return _whole(raw)
    if kind == "str":
        if not isinstance(raw, str):
            raise TypeError("not text")
        return raw
    if kind in ("dict", "list"):
        value = json.loads(raw) if isinstance(raw, str) else raw
        if not isinstance(value, dict if kind == "dict" else list):
            raise TypeError("wrong container")
        return value
    if isinstance(raw, bool):
        return raw
    text = str(raw).strip().lower()
    if text not in ("true", "false", "1", "0", "yes", "no", ""):
        raise ValueError("not a bool")
    return text in ("true", "1", "yes")
