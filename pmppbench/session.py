"""The one orchestration behind every workload command and `all`.

A Plan is a list of Steps (one workload on one shape, with its variants, protocol and
seed). `run` hands each step to the runner, streams every finished row to the sinks the
moment it exists, turns a step that fails as a whole (a compile error, a device fault) into
ERROR rows for its variants and goes on, and stops cleanly on Ctrl-C with every finished
row already in the sinks. The caller prints the tables and picks the exit code from the
rows (`exit_problem`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol as TypingProtocol

from pmppbench.errors import CheckFailed, EnvironmentProblem, PmppError, UsageError
from pmppbench.protocol import Protocol
from pmppbench.results import Result, now_iso
from pmppbench.workloads.base import Shape, Variant, Workload


@dataclass
class Step:
    workload: Workload
    shape: Shape
    protocol: Protocol
    seed: int
    variants: list[Variant] | None = None  # None: the workload's own choice for the shape

    @property
    def label(self) -> str:
        return f"{self.workload.name} {self.workload.label(self.shape)}"


@dataclass
class Plan:
    steps: list[Step]
    check_only: bool = False
    run_id: str = ""


@dataclass
class Outcome:
    rows: list[Result] = field(default_factory=list)
    interrupted: bool = False
    usage_errors: list[str] = field(default_factory=list)  # steps refused as bad input (e.g. too large)


class Sink(TypingProtocol):
    def add(self, row: Result) -> None: ...


RunShape = Callable[..., list[Result]]
Progress = Callable[[str], None]  # a line saying what runs now


def _default_run_shape(*args: Any, **kwargs: Any) -> list[Result]:
    from pmppbench.runner import run_shape  # noqa: PLC0415 (imports the GPU stack lazily)

    return run_shape(*args, **kwargs)


def error_rows(step: Step, exc: BaseException, run_id: str) -> list[Result]:
    """One ERROR row per variant of a step that failed as a whole."""
    message = f"{type(exc).__name__}: {exc}".splitlines()[0] if not isinstance(exc, PmppError) \
        else str(exc).splitlines()[0]
    w = step.workload
    return [Result(w.name, v.name, w.label(step.shape), dims=dict(step.shape), check="ERROR", error=message,
                   seed=step.seed, run_id=run_id, timestamp=now_iso())
            for v in (step.variants or w.variants_for(step.shape))]


def run(plan: Plan, sinks: Iterable[Sink] = (), *, progress: Progress | None = None,
        advance: Callable[[], None] | None = None, debug: bool = False,
        run_shape: RunShape = _default_run_shape) -> Outcome:
    """Run every step; see the module doc. `run_shape` is the runner's (a seam for tests)."""
    sinks = list(sinks)
    out = Outcome()

    def keep(row: Result) -> None:
        out.rows.append(row)
        for s in sinks:
            s.add(row)

    try:
        for step in plan.steps:
            try:
                rows = run_shape(step.workload, step.shape, protocol=step.protocol, check_only=plan.check_only,
                                 seed=step.seed, variants=step.variants, run_id=plan.run_id,
                                 progress=(lambda w, v, s: progress(f"{w} {s}: {v}")) if progress else None)
            except (KeyboardInterrupt, EnvironmentProblem):
                raise  # Ctrl-C, or nothing can run on this machine (exit 3)
            except Exception as exc:  # the step's rows say what went wrong; the run goes on
                if debug and not isinstance(exc, PmppError):
                    raise
                if isinstance(exc, UsageError):
                    out.usage_errors.append(str(exc))
                rows = error_rows(step, exc, plan.run_id)
            for row in rows:
                keep(row)
            if advance:
                advance()
    except KeyboardInterrupt:
        out.interrupted = True
    return out


def exit_problem(out: Outcome) -> PmppError | None:
    """What the run's exit says: None when every row passed (or was skipped); the bad input
    (exit 2) when only refused steps failed; otherwise a failed check (exit 1)."""
    bad = [r for r in out.rows if not r.ok]
    if not bad:
        return None
    if out.usage_errors and all(r.check == "ERROR" and r.error in out.usage_errors for r in bad):
        return UsageError(out.usage_errors[0])
    return CheckFailed(f"{len(bad)} of {len(out.rows)} rows did not PASS: "
                       + "; ".join(f"{r.workload} {r.variant} {r.shape}: {r.error or r.check_detail}"
                                   for r in bad[:3]))
