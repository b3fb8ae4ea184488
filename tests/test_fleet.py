"""The Ray fleet on the CPU: a local Ray cluster with two declared GPUs, one actor per GPU
(pinned by Ray), the same plan on each, rows back in one list with their GPU and host; an
actor that dies turns only its own steps into ERROR rows."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

from fleet_fakes import fake_gpu, fake_serve  # noqa: E402
from pmppbench.engine.driver import fleet, session  # noqa: E402
from pmppbench import workloads  # noqa: E402
from pmppbench.engine.plan import Plan, Step  # noqa: E402

TESTS = str(Path(__file__).resolve().parent)


@pytest.fixture(scope="module")
def cluster():
    # The actors import the test stand-ins and the fake workload from tests/.
    paths = os.pathsep.join([TESTS, str(Path(TESTS).parent), os.environ.get("PYTHONPATH", "")])
    ray.init(num_cpus=2, num_gpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": paths, "PMPPBENCH_WORKLOADS": "copy2d=fake_workload"}})
    yield
    ray.shutdown()


def plan():
    os.environ["PMPPBENCH_WORKLOADS"] = "copy2d=fake_workload"
    w = workloads.get("copy2d")
    return Plan([Step(w, {"m": 16, "n": 8}, w.protocol, i, [w.variant("rows"), w.variant("whole")])
                         for i in range(2)], run_id="fleet")


def test_one_lane_per_gpu_and_every_gpu_runs_the_plan(cluster):
    lanes = fleet.lanes("auto", 10, target=fake_serve, identify=fake_gpu)
    assert len(lanes) == 2 and {lane.device.uuid for lane in lanes} == {"GPU-fake-0", "GPU-fake-1"}
    assert all(lane.device.host for lane in lanes)
    out = session.run(plan(), lanes=lanes)
    assert len(out.rows) == 2 * 2 * 2 and all(r.check == "PASS" for r in out.rows)
    for lane in lanes:  # each actor's worker saw its own GPU, and rows say where they ran
        mine = [r for r in out.rows if r.device_uuid == lane.device.uuid]
        assert sorted((r.seed, r.variant) for r in mine) == [(0, "rows"), (0, "whole"), (1, "rows"), (1, "whole")]
        assert {r.error for r in mine} == {f"saw {lane.device.uuid.rsplit('-', 1)[1]}"}
        assert {r.host for r in mine} == {lane.device.host}
    for lane in lanes:
        ray.kill(lane.actor)


def test_a_dead_actor_costs_only_its_own_rows(cluster):
    lanes = fleet.lanes("auto", 10, target=fake_serve, identify=fake_gpu)
    ray.kill(lanes[1].actor)
    out = session.run(plan(), lanes=lanes)
    alive = [r for r in out.rows if r.device_uuid == lanes[0].device.uuid]
    dead = [r for r in out.rows if r.device_uuid == lanes[1].device.uuid]
    assert len(alive) == len(dead) == 4
    assert all(r.check == "PASS" for r in alive)
    assert all(r.check == "ERROR" and "Actor" in r.error for r in dead)
    ray.kill(lanes[0].actor)
