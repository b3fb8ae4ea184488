"""Paths from the command line, looked at once before anything reads or writes them.

Every path option and argument (--out, report's RESULTS, compare's files, --readme, plot's
--outdir, --config, --kernel) comes through `given()`, so each of these is one line and exit 2,
worded the same way everywhere, instead of an OSError from wherever the path was first used:
an empty value (`--out ''` is not "no --out"), a name the file system cannot hold (a part of
more than 255 bytes, ENAMETOOLONG), and a place that cannot be looked up at all (a file used
as a folder, a loop of links, a folder that may not be searched).

`kind()` then tells apart what a reader needs to know: a file, a folder, a link to nothing,
nothing, or something that is none of these (a device, a FIFO, a socket: SPECIAL), which is
never read or written: reading /dev/zero never ends, opening a FIFO waits for a writer, and
renaming a file over /dev/full replaces the device node.

`read_capped()` reads an input whole, but at most its kind's cap (CAPS), so a wrong path
cannot fill the memory; `same_file()` tells when an output would replace an input; `quoted()`
cuts user input to a length a message can show.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO, Optional

from pmppbench.errors import UsageError

FILE, FOLDER, DANGLING, MISSING, SPECIAL = "file", "folder", "dangling link", "missing", "special"

# The most a file of each kind may hold, in MB (10^6 bytes): far above anything pmppbench
# writes or reads legitimately (a whole `all` run is about half a MB of CSV; the bundled
# configs are a few kB), far below what would exhaust a machine's memory. A reader that ever
# needs more raises every cap at once with $PMPPBENCH_READ_LIMIT_MB.
CAPS = {"result file": 256, "metadata file": 16, "README": 16, "config": 1, "kernel source": 16}
LIMIT_ENV = "PMPPBENCH_READ_LIMIT_MB"


def shown(path) -> str:
    """The path as a message shows it: a name too long to read is cut in its middle."""
    text = os.fsdecode(path)
    return text if len(text) <= 120 else f"{text[:60]}...{text[-40:]}"


def cut(text: str, limit: int = 60, length: int | None = None) -> str:
    """Text from the user as a message shows it: cut in its middle past `limit` characters,
    saying how long it was (`length`, default the text's), so a 10,000-name --variants is not
    echoed whole."""
    if len(text) <= limit:
        return text
    return f"{text[:limit - 24]}...{text[-12:]} ({length or len(text):,} characters)"


def quoted(value, limit: int = 60) -> str:
    """A value from the user in a message: its repr (quotes around text), cut as `cut` does,
    counting the value's own characters."""
    return cut(repr(value), limit, len(value) if isinstance(value, str) else None)


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
    return FOLDER if stat.S_ISDIR(st.st_mode) else FILE if stat.S_ISREG(st.st_mode) else SPECIAL


def special_name(path: Path) -> str:
    """What a SPECIAL path is, in words: 'a character device', 'a FIFO (named pipe)'..."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return "not a regular file"
    for test, words in ((stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                        (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return words
    return "not a regular file"


def same_file(a: Path, b: Path) -> bool:
    """Whether two paths name one file (the same inode, through links too); False when either
    does not exist yet."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def cap_bytes(what: str) -> int:
    """The cap of a kind of file (CAPS) in bytes, or $PMPPBENCH_READ_LIMIT_MB's when set."""
    raw = os.environ.get(LIMIT_ENV, "").strip()
    if raw:
        try:
            mb = float(raw)
        except ValueError:
            mb = -1.0
        if not (mb > 0 and mb < 1e9):
            raise UsageError(f"{LIMIT_ENV}={quoted(raw)}: expected a number of MB > 0 such as 1024")
        return int(mb * 1e6)
    return CAPS[what] * 10**6


def open_capped(path: Path, what: str, label: str | None = None) -> BinaryIO:
    """The regular file `path`, a file of kind `what` (a key of CAPS), opened for reading in
    binary: UsageError (one line naming `label`, default the path) for a device, a FIFO or a
    socket, and for a file past its kind's cap, saying the cap and how to raise it."""
    label = label or shown(path)
    try:
        fh = open(path, "rb", opener=_nonblocking)
    except OSError as exc:
        if exc.errno == errno.EACCES:
            raise UsageError(f"{label}: cannot read it (permission denied); check its permissions") from None
        raise _refused(label, exc) from None
    st = os.fstat(fh.fileno())
    if not stat.S_ISREG(st.st_mode):
        fh.close()
        raise UsageError(f"{label} is {special_name(path)}, not a regular file; give the {what} itself")
    if st.st_size > cap_bytes(what):
        fh.close()
        raise too_large(label, what, st.st_size)
    return fh


def read_capped(path: Path, what: str, label: str | None = None) -> bytes:
    """The whole of the regular file `path` (open_capped's checks), never more than its cap."""
    label = label or shown(path)
    cap = cap_bytes(what)
    with open_capped(path, what, label) as fh:
        try:
            data = fh.read(cap + 1)
        except OSError as exc:
            raise UsageError(f"{label}: cannot read it ({exc.strerror or exc})") from None
    if len(data) > cap:  # a file that grew, or one whose size the system does not tell (/proc)
        raise too_large(label, what, len(data))
    return data


def too_large(label: str, what: str, size: int) -> UsageError:
    return UsageError(f"{label}: {_mb(size)} MB, more than the {_mb(cap_bytes(what))} MB a {what} may have; "
                      f"if it really is one, set {LIMIT_ENV} to its size in MB to read it")


def _mb(n: int) -> str:
    return f"{n / 1e6:,.0f}" if n >= 10**7 else f"{n / 1e6:.3g}"


def _nonblocking(path, flags: int) -> int:
    """open() that does not wait for a FIFO's writer (the FIFO is then refused by its mode)."""
    return os.open(path, flags | os.O_NONBLOCK)


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
