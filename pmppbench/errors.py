"""The three ways a run can end badly, each with its exit code.

Every message is written for a person: one line saying what was wrong and what to do.
The CLI prints it without a traceback unless --debug is given.
"""


class PmppError(Exception):
    """Base class: `exit_code` is what the process returns."""

    exit_code = 1


class UsageError(PmppError):
    """Bad input from the user (a size <= 0, an unknown variant, a bad config): exit 2."""

    exit_code = 2


class EnvironmentProblem(PmppError):
    """Something missing on this machine (no GPU, old driver, no NVRTC, no CuPy): exit 3."""

    exit_code = 3


class CompileError(PmppError):
    """NVRTC rejected a kernel. The message carries the compiler log with file and line."""

    exit_code = 1


class CheckFailed(PmppError):
    """A variant produced a wrong result: exit 1."""

    exit_code = 1
