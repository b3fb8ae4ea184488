"""Stand-ins a Ray actor imports in the CPU tests of the fleet (tests/test_fleet.py): a GPU
named after the CUDA_VISIBLE_DEVICES Ray gave the actor, and a worker that passes every
variant and says which GPU it saw."""

from __future__ import annotations

import os

from pmppbench.hardware.inventory import DeviceId
from pmppbench.row import Result
from pmppbench.engine.messages import Rows, Stop


def fake_gpu() -> DeviceId:
    pin = os.environ.get("CUDA_VISIBLE_DEVICES", "?")
    return DeviceId(0, "Fake GPU", f"GPU-fake-{pin}", f"0000:{pin}:00.0")


def fake_serve(conn, quiet_stderr=True):
    while True:
        step = conn.recv()
        if isinstance(step, Stop):
            return
        seen = os.environ.get("CUDA_VISIBLE_DEVICES", "")
        conn.send(Rows([Result(step.workload.name, v.name, "16x8", check="PASS", median_ms=1.0, seed=step.seed,
                               error=f"saw {seen}") for v in step.variants], {}))
