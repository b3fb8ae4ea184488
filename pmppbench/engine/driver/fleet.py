"""A fleet of GPUs through Ray: `--ray auto` (this machine's cluster, or a new local one) or
`--ray ADDRESS` (a running cluster, e.g. ray://head:10001 or head:6379).

Ray is an optional extra (`pip install "pmppbench[fleet]"`). Each GPU of the cluster gets one
Ray actor (`num_gpus=1`: Ray pins it with CUDA_VISIBLE_DEVICES), which holds a supervised
worker (pmppbench/engine/driver/supervisor.py) exactly as a local GPU does. The session treats every actor as a
lane of `--devices`: every GPU runs the same plan with the same seeds, rows come back to the
driver as each step finishes and go into one result file, tagged with the GPU and its host.
An actor or node that dies turns only its own steps into ERROR rows (Ray's error says which);
the other GPUs' rows are kept.
"""

from __future__ import annotations

import logging
import os
import socket
from dataclasses import replace
from typing import Any, Callable

from pmppbench.hardware import inventory
from pmppbench.hardware.inventory import DeviceId
from pmppbench.errors import EnvironmentProblem, UsageError
from pmppbench.engine.plan import Step
from pmppbench.engine.driver.supervisor import Lane, Supervisor
from pmppbench.engine.worker.process import serve

RAY_HINT = "Ray is not installed: pip install 'pmppbench[fleet]'"


def _ray():
    try:
        import ray  # noqa: PLC0415 (optional, and a second or more to import: only for --ray)
    except ImportError as exc:
        raise EnvironmentProblem(RAY_HINT) from exc
    return ray


def _this_gpu() -> DeviceId:
    """The one GPU Ray gave this actor."""
    return inventory.visible()[0]


class FleetWorker:
    """Ray actor: one GPU, one supervised worker process, every step of the plan on it."""

    def __init__(self, timeout_s: float | None = None, target: Callable | None = None,
                 identify: Callable[[], DeviceId] = _this_gpu):
        self.supervisor = Supervisor(timeout_s, target=target or serve)
        self.host = socket.gethostname()
        self.gpu = identify()

    def identity(self) -> tuple[DeviceId, str]:
        return self.gpu, self.host

    def run(self, step: Step) -> list:
        rows = self.supervisor.run(step)
        for r in rows:
            r.host = self.host
        return rows

    def start(self, steps: list[Step]) -> None:
        """Start this GPU's worker with the plan (Supervisor.start)."""
        self.supervisor.start(steps)

    def spent(self) -> dict[str, float]:
        """Where this GPU's worker time went (runner phases), for the run's wall-time line."""
        return dict(self.supervisor.spent)

    def pid(self) -> int:
        return os.getpid()


def connect(address: str, **init: Any):
    """ray.init for `--ray auto` (the local cluster if one runs, else a new one) or an address."""
    ray = _ray()
    if not ray.is_initialized():
        try:
            # Ray's own INFO and WARNING lines (a local instance started, token authentication) would
            # come before pmppbench's; its errors still show.
            init.setdefault("logging_level", logging.ERROR)
            ray.init(address=None if address == "auto" else address, log_to_driver=False, **init)
        except ConnectionError as exc:
            raise UsageError(f"--ray {address}: no Ray cluster there ({exc}); start one with `ray start --head`") from None
    return ray


def lanes(address: str, timeout_s: float | None = None, *, target: Callable | None = None,
          identify: Callable[[], DeviceId] = _this_gpu, **init: Any) -> list[Lane]:
    """One Lane per GPU of the cluster, each reaching its actor."""
    ray = connect(address, **init)
    gpus = int(ray.cluster_resources().get("GPU", 0))
    if gpus < 1:
        raise EnvironmentProblem(f"the Ray cluster at {address} has no GPUs (ray.cluster_resources() shows none); "
                                 "start its nodes with `ray start ... --num-gpus N`")
    actor_class = ray.remote(num_gpus=1)(FleetWorker)
    actors = [actor_class.remote(timeout_s, target, identify) for _ in range(gpus)]
    out = []
    for actor, (gpu, host) in zip(actors, ray.get([a.identity.remote() for a in actors])):
        gpu = replace(gpu, host=host)

        def run(step, progress=None, actor=actor):
            return ray.get(actor.run.remote(step))  # progress stays on the driver

        def spent(actor=actor) -> dict[str, float]:
            return ray.get(actor.spent.remote())

        def start(steps, actor=actor) -> None:
            ray.get(actor.start.remote(list(steps)))

        out.append(Lane(run, gpu, actor, spent, start))
    return out
