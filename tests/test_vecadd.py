"""vecadd: model and reference on the CPU; every variant on edge sizes on the GPU."""

from __future__ import annotations

import numpy as np
import pytest

from gpu_helpers import assert_all_pass, check_rows
from pmppbench import workloads


def test_traffic_model_is_12_bytes_per_element():
    w = workloads.get("vecadd")
    t = w.traffic({"n": 1000}, w.variants[0])
    assert t.bytes == 12000 and t.flops == 1000
    assert t.flops / t.bytes == pytest.approx(1 / 12)


def test_reference_is_the_fp32_sum():
    w = workloads.get("vecadd")
    inputs = w.make_inputs({"n": 5}, np.random.default_rng(0))
    ref = w.reference({"n": 5}, inputs, w.variants[0])
    assert ref.dtype == np.float32
    np.testing.assert_array_equal(ref, inputs["a"] + inputs["b"])
    assert np.all(inputs["a"] != 0)  # never checks on zeros


def test_check_shapes_cover_the_issue_sizes():
    sizes = [s["n"] for s in workloads.get("vecadd").check_shapes()]
    assert sizes == [1, 3, 1000003, 1 << 26]


@pytest.mark.gpu
def test_every_variant_passes_on_edge_sizes():
    rows = check_rows("vecadd", [{"n": n} for n in (1, 3, 4, 5, 1000003, 1 << 26)])
    assert len(rows) == 18
    assert_all_pass(rows)


@pytest.mark.gpu
def test_timed_run_produces_sane_rows(run_cli, tmp_path):
    out = tmp_path / "v.json"
    code, stdout, _ = run_cli("vecadd", "1048576", "10", "--out", str(out))
    assert code == 0 and "PASS" in stdout
    import json

    data = json.loads(out.read_text())
    assert data["meta"]["name"] and data["meta"]["driver"]
    for row in data["results"]:
        assert row["check"] == "PASS" and row["median_ms"] > 0
        assert len(row["batch_means_ms"]) == 5 and row["reps"] == 10
        assert row["registers"] > 0 and row["threads_per_block"] == 256
