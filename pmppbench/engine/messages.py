"""What the supervisor (driver side) and its worker process (worker side) say to each other.

Small frozen dataclasses, pickled through their Pipe:
supervisor -> worker: PlanAhead (with the start), a Step to run, Stop.
worker -> supervisor: At before every check, warmup and batch; then Rows, or Sticky (the
worker exits next), or Failed (the step failed as a whole; the worker is fine).
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass

from pmppbench.engine.plan import Step
from pmppbench.errors import PmppError


@dataclass(frozen=True)
class PlanAhead:
    """The steps a worker will be sent, in order: sent once when it starts (Supervisor.start),
    so that it can make their host work ahead."""

    steps: tuple[Step, ...] = ()

    def index(self, step: Step) -> int | None:
        """Where `step` stands in the plan; None when it is not in it."""
        return next((i for i, s in enumerate(self.steps) if s.place == step.place), None)


@dataclass(frozen=True)
class Stop:
    """The session is done with this worker: exit."""


@dataclass(frozen=True)
class At:
    """The heartbeat: `variant` enters `phase` (check, warmup, batch, counters, ...)."""

    variant: str
    phase: str


@dataclass(frozen=True)
class Rows:
    """The step's rows, and the runner phases (pipeline.spent) the worker spent on it."""

    rows: list
    spent: dict


@dataclass(frozen=True)
class Sticky:
    """A sticky CUDA error (`error`, e.g. cudaErrorIllegalAddress) in `variant`: the worker exits."""

    variant: str
    error: str
    detail: str


@dataclass(frozen=True)
class Failed:
    """The step failed as a whole (a compile error, a shape too large); the worker is fine.
    `error` is the exception itself: a PmppError keeps its type (and so its exit code)."""

    error: Exception


class WorkerFault(Exception):
    """A step that failed as a whole inside the worker with an error pmppbench does not name."""


def portable(exc: Exception) -> Exception:
    """The error as it can cross the pipe: a PmppError as it is, anything else as a WorkerFault
    with its type and message."""
    if isinstance(exc, PmppError):
        try:
            pickle.loads(pickle.dumps(exc))  # the supervisor must be able to unpickle it too
            return exc
        except Exception:  # noqa: BLE001 -- an error that will not pickle still says what happened
            return WorkerFault(str(exc))
    return WorkerFault(f"{type(exc).__name__}: {exc}")
