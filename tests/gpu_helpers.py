"""Helpers for GPU tests: run one workload's check on shapes and return the rows."""

from __future__ import annotations

from pmppbench import workloads
from pmppbench.engine.worker.pipeline import run_shape


def check_rows(workload_name: str, shapes, variants=None, seed: int = 1):
    w = workloads.get(workload_name)
    chosen = None if variants is None else [w.variant(v) for v in variants]
    rows = []
    for i, shape in enumerate(shapes):
        w.validate(shape)
        rows += run_shape(w, shape, protocol=w.protocol, check_only=True, seed=seed + i, variants=chosen)
    return rows


def assert_all_pass(rows):
    bad = [f"{r.variant} {r.shape}: {r.check} {r.error or r.check_detail}" for r in rows if r.check != "PASS"]
    assert not bad, "\n".join(bad)


def mutant_check(workload_name: str, define: str, shape, variant: str):
    """The rows of `variant` on `shape`, checked with `define` set to 1 in its kernels' build:
    a mutation the .cu file carries (a dropped element, a raced bin), which must FAIL."""
    base = type(workloads.get(workload_name))

    class Mutant(base):
        def defines(self, shape):
            return {**super().defines(shape), define: 1}

    w = Mutant()
    return run_shape(w, shape, protocol=w.protocol, check_only=True, variants=[w.variant(variant)])
