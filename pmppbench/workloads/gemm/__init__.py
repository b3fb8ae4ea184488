"""GEMM: the workload (workload.py) and its parts, one job each: tile parameters (tiles.py),
the ladder's rungs and sweep candidates (ladder.py), configurations and their schedules
(configs.py), best's rule (best.py), launches (launch.py), the traffic model (model.py) and
the check (check.py)."""

from pmppbench.workloads.gemm.workload import WORKLOAD

__all__ = ["WORKLOAD"]
