"""A variant that needs a newer (or an arch-specific) GPU is a SKIP row with the reason."""

from __future__ import annotations

import pytest

from pmppbench.workloads.base import arch_meets


@pytest.mark.parametrize("cc, needs, ok", [
    ("9.0", None, True),
    ("7.5", "sm_80", False), ("8.0", "sm_80", True), ("8.9", "sm_80", True), ("12.0", "sm_80", True),
    ("9.0", "sm_90a", True), ("8.9", "sm_90a", False), ("10.0", "sm_90a", False), ("12.0", "sm_90a", False),
    ("10.0", "sm_100a", True), ("12.0", "sm_120", True), ("10.0", "sm_120", False),
    ("sm_89", "sm_80", True), ("sm_89", "sm_90a", False), ("sm_90", "sm_90a", True), ("sm_75", "sm_80", False),
])
def test_arch_meets(cc, needs, ok):
    assert arch_meets(cc, needs) is ok


def test_needs_is_checked_for_form():
    with pytest.raises(ValueError, match="needs must look like sm_80"):
        arch_meets("9.0", "hopper")


def test_a_variant_this_gpu_cannot_run_is_a_skip_row_and_never_called():
    import numpy as np

    from fake_workload import Copy2D
    from pmppbench.engine.worker.pipeline import evaluate
    from portability_profiles import RTX4090 as ada

    w = Copy2D()
    shape = w.default_shape()
    inputs = w.make_inputs(shape, np.random.default_rng(0))
    ctx = w.setup(shape, inputs, {})
    from dataclasses import replace

    hopper_only = replace(w.variant("whole"), needs="sm_90a")
    rows = evaluate(w, shape, [w.variant("rows"), hopper_only], inputs, ctx, protocol=w.protocol,
                    check_only=True, device=ada)
    by = {r.variant: r for r in rows}
    assert by["rows"].check == "PASS"
    assert (by["whole"].check, by["whole"].check_detail) == ("SKIP", "needs sm_90a (this GPU is sm_89)")
    assert w.calls.get("whole", 0) == 0
