"""vecadd: model and reference on the CPU; every variant on edge sizes on the GPU."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gpu_helpers import assert_all_pass, check_rows
from pmppbench import workloads
from pmppbench.measure.check import compare
from pmppbench.hardware.compile import compile_unit
from pmppbench.workloads import vecadd
from pmppbench.workloads.helpers import INT_MAX, SAMPLE, index_type
from pmppbench.workloads.vecadd import LARGE_CHECK


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
    assert sizes == [1, 3, 1000003, 1 << 26, (1 << 31) + 7]  # the last on scalar's 64-bit path


# ---- index paths -------------------------------------------------------------

def test_scalar_takes_int_while_every_index_fits():
    w = workloads.get("vecadd")
    # i = blockIdx.x * 256 + threadIdx.x reaches n + 255 in the last block.
    from pmppbench.workloads.vecadd import BLOCK

    assert index_type((1 << 26) + BLOCK) == "int"
    assert index_type(INT_MAX - 256 + BLOCK) == "int"
    assert index_type(INT_MAX - 255 + BLOCK) == "long long"
    assert index_type(LARGE_CHECK["n"] + BLOCK) == "long long"
    assert w.variant("scalar").kernel == "scalar<int>"
    assert "scalar<long long>" in w.kernel_names()


def test_both_scalar_paths_compile_to_the_same_kernel_but_for_the_index():
    unit = compile_unit("vecadd", workloads.get("vecadd").kernel_names(), "sm_90")
    for name in ("scalar<int>", "scalar<long long>"):
        report = unit.ptxas[name]
        assert report.registers > 0 and (report.spill_stores, report.stack_bytes) == (0, 0), name


def test_large_shapes_are_checked_on_samples(monkeypatch):
    """Past SAMPLE_ABOVE elements the inputs repeat one random block and the reference is the
    sum at the sampled indices only; the small shape here stands in for 2^31."""
    w = workloads.get("vecadd")
    monkeypatch.setattr(vecadd, "SAMPLE_ABOVE", 1000)
    monkeypatch.setattr(vecadd, "SAMPLES", 100)
    shape = {"n": 5000}
    inputs = w.make_inputs(shape, np.random.default_rng(0))
    (idx,) = inputs[SAMPLE]
    assert idx[0] == 0 and idx[-1] == 4999 and len(idx) < 5000 and np.all(np.diff(idx) > 0)
    np.testing.assert_array_equal(w.reference(shape, inputs, w.variant("scalar")), (inputs["a"] + inputs["b"])[idx])
    assert np.all(inputs["a"] != 0) and not np.array_equal(inputs["a"], inputs["b"])


# ---- the course's listing (studies/baselines.py times it beside the rungs) ------------

def test_course_listing_compiles_through_the_same_path(monkeypatch):
    listings = Path(__file__).resolve().parent.parent / "studies" / "course_listings"
    monkeypatch.setenv("PMPPBENCH_KERNELS", str(listings))
    unit = compile_unit("course", ["vector_add"], "sm_90", use_cache=False)
    for name, report in unit.ptxas.items():
        assert report.registers > 0 and (report.spill_stores, report.stack_bytes) == (0, 0), name


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


@pytest.mark.gpu
def test_the_64_bit_path_passes_on_edge_sizes_too():
    """scalar<long long>, forced where the host would pick int: both instantiations are right."""
    from pmppbench.hardware.compile import load_kernels
    from pmppbench.hardware.gpu import cupy

    w = workloads.get("vecadd")
    v = w.variant("scalar")
    for n in (1, 3, 257, 1000003):
        shape = {"n": n}
        inputs = w.make_inputs(shape, np.random.default_rng(n))
        ctx = w.setup(shape, inputs, load_kernels("vecadd", w.kernel_names()))
        for index in ("int", "long long"):
            job = w.job(v, shape, ctx, index=index)
            assert job.launch.kernel.name == f"scalar<{index}>"
            job.poison()
            job.run()
            cupy().cuda.Device().synchronize()
            result = compare(job.output(), w.reference(shape, inputs, v), w.tolerance_for(shape))
            assert result.passed, f"{index} n={n}: {result.detail}"
