"""Paths from the command line, looked at once before anything reads or writes them.

Every path option and argument (--out, report's RESULTS, compare's files, --readme, plot's
--outdir, --config, --kernel) comes through `given()`, so each of these is one line and exit 2,
worded the same way everywhere, instead of an OSError from wherever the path was first used:
an empty value (`--out ''` is not "no --out"), a name the file system cannot hold (a part of
more than 255 bytes, ENAMETOOLONG), and a place that cannot be looked up at all (a file used
as a folder, a loop of links, a folder that may not be searched).

`kind()` then tells apart what a reader needs to know: a file, a folder, a link to nothing,
or nothing.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Optional

from pmppbench.errors import UsageError

FILE, FOLDER, DANGLING, MISSING = "file", "folder", "dangling link", "missing"


def shown(path) -> str:
    """The path as a message shows it: a name too long to read is cut in its middle."""
    text = os.fsdecode(path)
    return text if len(text) <= 120 else f"{text[:60]}...{text[-40:]}"


def given(what: str, text: Optional[str]) -> Optional[Path]:
    """`text` (an option's raw value) as a Path, or None when the option was not given."""
    if text is None:
        return None
    if not str(text).strip():
        raise UsageError(f"{what} was given an empty value; give a path, or leave {what} out")
    path = Path(text)
    kind(path, what)  # refuses what the system cannot look up
    return path


def kind(path: Path, what: str = "") -> str:
    """FILE, FOLDER, DANGLING (a symbolic link to nothing) or MISSING; UsageError when the
    system refuses to look the path up."""
    label = f"{what} {shown(path)}" if what else shown(path)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return DANGLING if os.path.islink(path) else MISSING
    except OSError as exc:
        raise _refused(label, exc) from None
    return FOLDER if stat.S_ISDIR(st.st_mode) else FILE


def _refused(label: str, exc: OSError) -> UsageError:
    if exc.errno == errno.ENAMETOOLONG:
        return UsageError(f"{label}: file name too long (each part of a path may have at most 255 bytes); "
                          "choose a shorter name")
    if exc.errno == errno.ENOTDIR:
        return UsageError(f"{label}: a part of the path before the last is a file, not a folder; check the path")
    if exc.errno == errno.ELOOP:
        return UsageError(f"{label}: symbolic links that loop; fix the link or give the real path")
    if exc.errno == errno.EACCES:
        return UsageError(f"{label}: permission denied on a folder of the path; check its permissions or choose another path")
    return UsageError(f"{label}: cannot be looked up ({exc.strerror or exc}); check the path")
