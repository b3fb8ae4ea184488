"""The unit of work from the plan to its rows.

A Step is one workload on one shape: the session hands it to a lane, the supervisor sends it to
its worker process (or a Ray actor), the worker runs it and the counters child runs it once more
under ncu. A Plan is the steps of one run. The command line makes them (pmppbench/cli/planning.py).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from pmppbench import workloads
from pmppbench.measure.protocol import Protocol
from pmppbench.workloads.base import Shape, Variant, Workload


@dataclass(frozen=True, eq=False)
class Step:
    """One workload on one shape: its variants, protocol and seed, and the run it belongs to.

    It travels by pickle (to a worker process, a Ray actor, the counters child) as its
    workload's name, and arrives with the registry's workload: `arrive` is the one place a
    workload is looked up by name on the way from the plan to the rows."""

    workload: Workload
    shape: Shape
    protocol: Protocol
    seed: int = 0
    variants: tuple[Variant, ...] = ()  # empty when made: the workload's own choice for the shape
    check_only: bool = False
    run_id: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "shape", dict(self.shape))
        object.__setattr__(self, "variants", tuple(self.variants or self.workload.variants_for(self.shape)))

    def __reduce__(self):
        return arrive, (self.workload.name, self.shape, self.protocol, self.seed, self.variants, self.check_only,
                        self.run_id)

    @property
    def label(self) -> str:
        return f"{self.workload.name} {self.workload.label(self.shape)}"

    @property
    def place(self) -> tuple:
        """Where the step stands in its plan: workload, shape and seed (its variants may shrink
        when the supervisor runs it again without a variant that faulted)."""
        return self.workload.name, tuple(sorted((k, repr(v)) for k, v in self.shape.items())), self.seed

    @property
    def key(self) -> tuple:
        """What its host work depends on (worker.Ahead): its place and its variants."""
        return (*self.place, tuple(v.name for v in self.variants))

    def only(self, variants) -> "Step":
        """The same step with fewer variants."""
        return replace(self, variants=tuple(variants))


def arrive(name: str, shape: Shape, protocol: Protocol, seed: int, variants: tuple, check_only: bool,
           run_id: str) -> Step:
    """A step that came through a pickle, with the registry's workload (variants are plain data)."""
    return Step(workloads.get(name), shape, protocol, seed, tuple(variants), check_only, run_id)


@dataclass(frozen=True)
class Plan:
    """The steps of one run, in order; every step carries the run's id and check-only flag."""

    steps: tuple[Step, ...] = ()
    check_only: bool = False
    run_id: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "steps", tuple(replace(s, check_only=self.check_only, run_id=self.run_id)
                                                if (s.check_only, s.run_id) != (self.check_only, self.run_id) else s
                                                for s in self.steps))
