"""histogram: references, axes and geometry on the CPU; every variant on edge sizes, the 64-bit
path and a race mutation on the GPU."""

from __future__ import annotations

import numpy as np
import pytest

from gpu_helpers import assert_all_pass, check_rows
from pmppbench import workloads
from pmppbench.compile import compile_unit
from pmppbench.planning import shapes_for
from pmppbench.workloads import histogram as hist

W = workloads.get("histogram")


def test_letter_reference_counts_a_to_z_in_bins_of_four():
    text = np.frombuffer(b"programming massively parallel processors", dtype=np.uint8)
    ref = W.reference({"n": text.size, "bins": 7, "input": "uniform"}, {"text": text}, W.variant("warp_vec"))
    # the book's example (PMPP 9.1): a-d 5, e-h 5, i-l 6, m-p 10, q-t 10, u-x 1, y-z 1
    assert ref.dtype == np.uint32 and ref.tolist() == [5, 5, 6, 10, 10, 1, 1]


def test_byte_reference_and_inputs():
    rng = np.random.default_rng(0)
    shape = {"n": 100000, "bins": 256, "input": "uniform"}
    text = W.make_inputs(shape, rng)["text"]
    ref = W.reference(shape, {"text": text}, W.variant("cub"))
    assert ref.sum() == 100000 and (ref > 0).sum() == 256
    letters = W.make_inputs({"n": 1000, "bins": 7, "input": "uniform"}, rng)["text"]
    assert letters.min() >= ord("a") and letters.max() <= ord("z")
    one = W.make_inputs({"n": 1000, "bins": 7, "input": "one_letter"}, rng)["text"]
    assert np.all(one == ord("a"))


def test_read_roof_reference_places_tail_bytes_in_their_word():
    text = np.arange(1, 7, dtype=np.uint8)  # words 0x04030201 and 0x00000605
    ref = W.reference({"n": 6, "bins": 7, "input": "uniform"}, {"text": text}, W.variant("read"))
    assert ref[0] == 0x04030201 ^ 0x0605


def test_axes_default_to_both_values_each():
    shapes = shapes_for(W, {"n": 1000}, {"bins": None, "input": None}, check_only=False)
    assert sorted((s["bins"], s["input"]) for s in shapes) == [
        (7, "one_letter"), (7, "uniform"), (256, "one_letter"), (256, "uniform")]


def test_bad_bins_is_one_line(run_cli):
    code, _out, err = run_cli("histogram", "1000", "--bins", "9")
    assert code == 2 and "histogram: --bins takes 7 or 256, got 9" in err


def test_geometry_and_index_path():
    shape = {"n": 1000003, "bins": 7, "input": "uniform"}
    assert W.geometry(W.variant("global_atomic"), shape) == ((3907,), (256,))
    assert W.geometry(W.variant("coarsened_interleaved"), shape) == ((123,), (256,))
    assert W.index_type(shape) == "int"
    assert W.index_type({**shape, "n": hist.LARGE_CHECK}) == "long long"


def test_every_kernel_compiles_for_both_bin_counts():
    for bins in hist.BINS:
        unit = compile_unit("histogram", W.kernel_names(), "sm_90", {"BINS": bins})
        for name, report in unit.ptxas.items():
            assert (report.spill_stores, report.stack_bytes) == (0, 0), (bins, name)


# ---- on the GPU -------------------------------------------------------------------------------

@pytest.mark.gpu
def test_every_variant_passes_on_edge_sizes():
    shapes = [s for s in W.check_shapes() if s["n"] != hist.LARGE_CHECK]
    assert_all_pass([r for r in check_rows("histogram", shapes) if r.check != "SKIP"])


@pytest.mark.gpu
def test_the_64_bit_path():
    shapes = [{"n": hist.LARGE_CHECK, "bins": 7, "input": "uniform"}]
    variants = [v.name for v in W.variants if v.name not in ("global_atomic", "privatized")]
    assert_all_pass([r for r in check_rows("histogram", shapes, variants) if r.check != "SKIP"])


class Racy(hist.Histogram):
    def defines(self, shape):
        return {**super().defines(shape), "MUTATE_RACE": 1}


@pytest.mark.gpu
def test_a_race_on_a_bin_fails():
    from pmppbench.runner import run_shape

    w = Racy()
    shape = {"n": 1000003, "bins": 7, "input": "one_letter"}
    rows = run_shape(w, shape, protocol=w.protocol, check_only=True, variants=[w.variant("shared_private")])
    assert [r.check for r in rows] == ["FAIL"], rows[0].check_detail


@pytest.mark.parametrize("bins", hist.BINS)
def test_cub_prebuild_asks_for_the_build_the_job_uses(monkeypatch, bins):
    """The prebuild on the worker's build thread asks cuda.compute with the job's key (the
    sample and counter types, the levels, the sample count), so the job finds the build done."""
    from test_reduce import FakeCompute, fake_cupy

    from pmppbench.workloads import cub

    compute = FakeCompute()
    monkeypatch.setattr(cub, "compute_module", lambda: compute)
    monkeypatch.setattr(hist, "cupy", fake_cupy)
    shape = {"n": 1000, "bins": bins, "input": "uniform"}
    W.prebuild(shape, list(W.variants))
    ctx = {"text": np.zeros(1000, dtype=np.uint8), "histo": np.zeros(bins, dtype=np.uint32), "peers": {}}
    W.job(W.variant("cub"), shape, ctx)
    assert len(compute.keys) == 2 and compute.keys[0] == compute.keys[1]
    levels = dict(compute.keys[0][1])
    assert levels["h_num_output_levels"] == ("int32", [bins + 1]) and levels["num_samples"] == ("int", "1000")
    W.prebuild({**shape, "n": hist.LARGE_CHECK}, list(W.variants))  # past 2^31 samples cub is a SKIP: no build
    assert len(compute.keys) == 2


def test_check_only_takes_the_64_bit_path_for_each_bin_count():
    """As every workload's --check-only does, one shape past 2^31 bytes per compile unit (BINS)."""
    large = [s for s in W.check_shapes() if s["n"] > 2**31 - 1]
    assert [(s["bins"], W.index_type(s)) for s in large] == [(7, "long long"), (256, "long long")]
    assert all(W.index_type(s) == "int" for s in W.check_shapes() if s not in large)


@pytest.mark.gpu
def test_cub_built_ahead_on_another_thread_serves_the_job():
    """The worker's build thread runs prebuild; the job on the main thread then uses that build."""
    import threading

    pytest.importorskip("cuda.compute")
    shapes = [{"n": 1000003, "bins": b, "input": "uniform"} for b in hist.BINS]
    builder = threading.Thread(target=lambda: [W.prebuild(s, [W.variant("cub")]) for s in shapes])
    builder.start()
    builder.join()
    assert_all_pass(check_rows("histogram", shapes, ["cub"]))
