"""Helpers for GPU tests: run one workload's check on shapes and return the rows."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

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


def mutant_check(workload_name: str, edits, shape, variant: str, folder):
    """The rows of `variant` on `shape`, checked with its kernels built from a copy of their
    source with `edits` made (tests/mutants.py) in `folder`: a mutation (a dropped element, a raced
    bin) which must FAIL."""
    from mutants import mutated_copy
    from pmppbench.hardware.compile import kernels_from

    w = workloads.get(workload_name)
    mutated_copy(folder, w.name, edits)
    with kernels_from(folder):
        return run_shape(w, shape, protocol=w.protocol, check_only=True, variants=[w.variant(variant)])


def sanitized(tool: str, *args: str) -> str:
    """The output of `pmppbench ARGS` run under compute-sanitizer's `tool` (memcheck with the
    driver lookups of cuda-bindings left out of its API-error report)."""
    sanitizer = shutil.which("compute-sanitizer")
    if sanitizer is None:
        pytest.skip("compute-sanitizer is not on PATH (it comes with the CUDA toolkit)")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    extra = ["--report-api-errors", "no"] if tool == "memcheck" else []
    run = subprocess.run([sanitizer, "--tool", tool, *extra, sys.executable, "-m", "pmppbench", *args],
                         capture_output=True, text=True, env=env, timeout=600)
    return run.stdout + run.stderr
