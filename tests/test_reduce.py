"""reduce: the check's bound, references, geometry and config on the CPU; every variant on edge
sizes, the 64-bit path and the mutations (a dropped element, a block counted twice) on the GPU."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from gpu_helpers import assert_all_pass, check_rows, mutant_check
from mutants import Edit, mutated_copy
from pmppbench import workloads
from pmppbench.measure.check import compare
from pmppbench.hardware.compile import compile_unit
from pmppbench.cli.planning import shapes_for
from pmppbench.workloads import reduce as red
from pmppbench.workloads.helpers import POISON_INT, poison

W = workloads.get("reduce")


def test_references_are_the_exact_sums():
    for dtype in ("f32", "i32"):
        shape = {"n": 100003, "dtype": dtype}
        x = W.make_inputs(shape, np.random.default_rng(0))["x"]
        ref = W.reference(shape, {"x": x}, W.variant("shared"))
        if dtype == "f32":
            assert x.dtype == np.float32 and x.min() >= red.LOW and x.max() < red.HIGH
            assert ref.dtype == np.float64 and ref[0] == pytest.approx(float(x.astype(np.float64).sum()), rel=1e-15)
        else:
            assert x.dtype == np.int32 and np.all(x != 0) and np.abs(x).max() <= red.INT_LIMIT
            assert ref.dtype == np.int32 and ref[0] == int(x.astype(np.int64).sum())


def test_int32_reference_wraps_as_the_gpu_adds():
    x = np.full(3, 2**30 + 1, dtype=np.int32)  # 3 * (2^30 + 1) wraps past 2^31
    ref = W.reference({"n": 3, "dtype": "i32"}, {"x": x}, W.variant("segmented"))
    assert ref[0] == np.int32(np.uint32((3 * (2**30 + 1)) % 2**32).view(np.int32))


def test_read_roof_reference_is_the_xor_of_the_words():
    x = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    ref = W.reference({"n": 3, "dtype": "f32"}, {"x": x}, W.variant("read"))
    words = x.view(np.uint32)
    assert ref.dtype == np.uint32 and ref[0] == words[0] ^ words[1] ^ words[2]


def test_the_float_bound_is_gamma_d_times_the_sum_of_magnitudes():
    shape = {"n": 1 << 26, "dtype": "f32"}
    seg = W.variant("segmented")
    d = red.additions_depth(seg.name, shape)
    assert d == 1 + 10 + (1 << 26) // 2048  # pair, tree of 1024, then one atomicAdd per block
    du = d * 2.0**-24
    assert W.tolerance_of(shape, seg).atol == pytest.approx(du / (1 - du) * (1 << 26))
    # two-pass rungs: the finish kernel's serial partials are far shorter than the atomic chain
    assert red.additions_depth("shared", shape) == 1 + 10 + 32 + 10
    assert W.tolerance_of(shape, W.variant("cub")).atol == max(
        W.tolerance_of(shape, W.variant(v)).atol for v in ("simple", "segmented", "coarsened"))


def test_int32_and_the_roof_are_checked_bit_for_bit():
    assert W.tolerance_of({"n": 1 << 26, "dtype": "i32"}, W.variant("segmented")).rule == "exact"
    assert W.tolerance_of({"n": 1 << 26, "dtype": "f32"}, W.variant("read")).rule == "exact"


@pytest.mark.parametrize("name", ["segmented", "shared", "coarsened"])
def test_one_dropped_or_doubled_element_fails_at_the_mutation_size(name):
    """At N = 100003 the derived bound is below the smallest input, so the GPU mutations below
    (one element dropped, a block counted twice) cannot pass by rounding."""
    shape = {"n": 100003, "dtype": "f32"}
    tol = W.tolerance_of(shape, W.variant(name))
    assert tol.atol < red.LOW
    ref = np.array([75000.0])
    assert compare(np.array([75000.0 - red.LOW], np.float32), ref, tol).status == "FAIL"
    assert compare(np.array([75000.0 + 0.5 * tol.atol], np.float32), ref, tol).status == "PASS"


def test_warp_vec_depth_follows_its_grid():
    shape = {"n": 100003, "dtype": "f32"}  # 98 blocks on any GPU of 13 SMs or more
    assert red.additions_depth("warp_vec", shape, sms=132) == 1 + 4 + 1 + 5 + 3 + 1 + 5 + 3
    big = {"n": 1 << 28, "dtype": "f32"}  # 8 blocks on each of 132 SMs
    assert red.additions_depth("warp_vec", big, sms=132) == 249 + 4 + 1 + 5 + 3 + 5 + 5 + 3


def test_warp_vec_bound_follows_the_device_and_without_one_holds_on_any_gpu():
    """The row's bound is the one of the grid that ran (the device's SMs); without a device the
    bound is the one-SM grid's, whose threads add the longest serial chains."""
    big = {"n": 1 << 28, "dtype": "f32"}
    v = W.variant("warp_vec")
    h200, t4 = SimpleNamespace(sm_count=132), SimpleNamespace(sm_count=40)
    assert W.tolerance_of(big, v, h200).atol == pytest.approx(red.error_bound(v.name, big, 132))
    assert W.tolerance_of(big, v, h200).atol < W.tolerance_of(big, v, t4).atol < W.tolerance_of(big, v).atol
    assert W.tolerance_of(big, v).atol == pytest.approx(red.error_bound(v.name, big, red.ANY_GPU_SMS))
    assert W.geometry(v, big, h200) == ((8 * 132,), (red.FAST_BLOCK,))
    assert W.geometry(v, big, t4) == ((8 * 40,), (red.FAST_BLOCK,))


def test_integer_outputs_are_poisoned_with_a_value_no_sum_leaves():
    out = np.zeros(1, dtype=np.int32)
    poison(out)
    assert out[0] == POISON_INT
    f = np.zeros(1, dtype=np.float32)
    poison(f)
    assert np.isnan(f[0])
    u = np.zeros(2, dtype=np.uint32)
    poison(u)
    assert u[0] == np.uint32(POISON_INT & 0xFFFFFFFF)


def test_index_path_and_geometry():
    assert red.index_type_of({"n": 1 << 26, "dtype": "f32"}) == "int"
    assert red.index_type_of({"n": red.LARGE_CHECK, "dtype": "f32"}) == "long long"
    shape = {"n": 4097, "dtype": "f32"}
    assert W.geometry(W.variant("simple"), shape) == ((3,), (1024,))
    assert W.geometry(W.variant("coarsened"), shape) == ((1,), (1024,))


def test_dtype_axis_defaults_to_both_and_rejects_others():
    shapes = shapes_for(W, {"n": 1000}, {"dtype": None}, check_only=False)
    assert [s["dtype"] for s in shapes] == ["f32", "i32"]
    from pmppbench.errors import UsageError
    with pytest.raises(UsageError, match="dtype must be one of f32, i32"):
        W.validate({"n": 10, "dtype": "f64"})


def test_cli_rejects_an_unknown_dtype(run_cli):
    code, _out, err = run_cli("reduce", "--dtype", "f64")
    assert code == 2 and "--dtype: unknown value 'f64'; choose from f32, i32" in err


def test_every_kernel_compiles_for_both_dtypes():
    for elem in ("float", "int"):
        unit = compile_unit("reduce", W.kernel_names(), "sm_90", {"ELEM": elem})
        for name, report in unit.ptxas.items():
            assert (report.spill_stores, report.stack_bytes) == (0, 0), (elem, name)


def test_peer_without_cccl_is_unavailable(monkeypatch):
    import builtins

    from pmppbench.workloads import cub
    from pmppbench.workloads.base import Unavailable

    real = builtins.__import__

    def no_cccl(name, *a, **k):
        if name.startswith("cuda.compute"):
            raise ImportError("No module named 'cuda.compute'")
        return real(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", no_cccl)
    with pytest.raises(Unavailable, match=r"cuda-cccl is not installed \(pip install \"pmppbench\[cccl\]\"\)"):
        cub.compute_module()


# ---- on the GPU -------------------------------------------------------------------------------

@pytest.mark.gpu
def test_every_variant_passes_on_edge_sizes():
    shapes = [s for s in W.check_shapes() if s["n"] != red.LARGE_CHECK]
    assert_all_pass([r for r in check_rows("reduce", shapes) if r.check != "SKIP"])


@pytest.mark.gpu
def test_the_64_bit_path():
    shapes = [s for s in W.check_shapes() if s["n"] == red.LARGE_CHECK]  # --check-only's, one per dtype
    assert [s["dtype"] for s in shapes] == ["f32", "i32"]
    assert_all_pass([r for r in check_rows("reduce", shapes) if r.check != "SKIP"])


# The mutations, each an edit of a copy of reduce.cu (tests/mutants.py) that must FAIL.
MUTATIONS = {
    "drop_last": [Edit("reduce.cu", "    one_pass<T>(in, partial, done, out, n, Add());",
                       "    one_pass<T>(in, partial, done, out, n - 1, Add());")],  # the last element dropped
    "double_block": [Edit("reduce.cu", "    if (threadIdx.x == 0) atomicAdd(out, sum);\n}",
                          "    if (threadIdx.x == 0) atomicAdd(out, sum);\n"
                          "    if (threadIdx.x == 0 && blockIdx.x == 0) atomicAdd(out, sum);\n}")],  # block 0 twice
}


@pytest.mark.parametrize("mutation, kernel", [("drop_last", "warp_vec"), ("double_block", "segmented<int>")])
def test_each_mutation_changes_the_machine_code(mutation, kernel, tmp_path):
    """A mutation that compiled to the same code could never FAIL."""
    plain = compile_unit("reduce", [kernel], "sm_90", {"ELEM": "float"}).cubin
    mutated = compile_unit("reduce", [kernel], "sm_90", {"ELEM": "float"},
                           source=mutated_copy(tmp_path, "reduce", MUTATIONS[mutation])).cubin
    assert plain != mutated


@pytest.mark.gpu
@pytest.mark.parametrize("mutation, variant", [("drop_last", "warp_vec"), ("double_block", "segmented")])
@pytest.mark.parametrize("dtype", ["f32", "i32"])
def test_mutations_fail(mutation, variant, dtype, tmp_path):
    rows = mutant_check("reduce", MUTATIONS[mutation], {"n": 100003, "dtype": dtype}, variant, tmp_path)
    assert [r.check for r in rows] == ["FAIL"], rows[0].check_detail


class FakeCompute:
    """cuda.compute's make_* recorded by what its build cache keys on: each array's type and
    dtype; for the histogram the levels' dtype and value and the sample count."""

    class OpKind:
        PLUS = "plus"

    def __init__(self):
        self.keys = []

    def make_reduce_into(self, **kw):
        self.keys.append(("reduce", tuple(sorted((k, type(v).__name__, str(getattr(v, "dtype", v)))
                                                 for k, v in kw.items()))))
        return lambda temp_storage=None, **call: 64

    def make_histogram_even(self, **kw):
        def part(k, v):
            if k.startswith("h_"):  # host levels: by dtype and value
                return (str(v.dtype), v.tolist())
            return (type(v).__name__, str(getattr(v, "dtype", v)))
        self.keys.append(("histogram", tuple(sorted((k, part(k, v)) for k, v in kw.items()))))
        return lambda temp_storage=None, **call: 64


def fake_cupy():
    return SimpleNamespace(empty=np.empty, uint8=np.uint8, uint32=np.uint32,
                           cuda=SimpleNamespace(get_current_stream=lambda: SimpleNamespace(ptr=0)))


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_cub_prebuild_asks_for_the_build_the_job_uses(monkeypatch, dtype):
    """The prebuild (on the worker's build thread) and the job share one object (cub.built: the
    job builds nothing on the critical path), and that object is what cuda.compute would build
    for the job's own arrays."""
    from pmppbench.workloads import cub

    def job():
        cub.reduce_sum(cp, np.zeros(1000, dtype=dtype), np.zeros(1, dtype=dtype))

    compute, alone = FakeCompute(), FakeCompute()
    cp = fake_cupy()
    monkeypatch.setattr(cub, "compute_module", lambda: compute)
    cub.prebuild_reduce(cp, dtype)
    job()
    monkeypatch.setattr(cub, "compute_module", lambda: alone)  # the job with no prebuild before it
    job()
    assert len(compute.keys) == 1 and compute.keys == alone.keys
    assert dict((k, d) for k, _t, d in compute.keys[0][1])["d_in"] == np.dtype(dtype).name


class SumObject:
    """A stand-in for a built sum object: callable as cuda.compute's, and where it came from."""

    def __init__(self, origin: str):
        self.origin = origin

    def __call__(self, temp_storage=None, **call):
        return 64


class SavingCompute(FakeCompute):
    """FakeCompute whose objects cuda.compute's serialize/deserialize can keep on disk."""

    BLOB = b"CCCL sum object"

    def __init__(self):
        super().__init__()
        self.loaded = 0

    def make_reduce_into(self, **kw):
        super().make_reduce_into(**kw)
        return SumObject("built")

    def serialize(self, obj):
        return self.BLOB

    def deserialize(self, blob):
        if blob != self.BLOB:
            raise ValueError("serialization blob: malformed")
        self.loaded += 1
        return SumObject("loaded")


def test_a_cub_object_is_built_once_per_machine_and_rebuilt_when_its_file_is_damaged(monkeypatch, tmp_path):
    """cub.built keeps what cuda.compute built on disk: a later process (a new module here)
    loads it without building; a damaged file is built again and replaced."""
    from pmppbench.workloads import cub

    monkeypatch.setenv("PMPPBENCH_CACHE_DIR", str(tmp_path))
    cp = SimpleNamespace(**vars(fake_cupy()))
    cp.cuda = SimpleNamespace(get_current_stream=cp.cuda.get_current_stream,
                              Device=lambda: SimpleNamespace(compute_capability="90"))
    first, later, after_damage = SavingCompute(), SavingCompute(), SavingCompute()
    monkeypatch.setattr(cub, "compute_module", lambda: first)
    cub.prebuild_reduce(cp, np.float32)
    saved = list((tmp_path / "cub").iterdir())
    assert len(first.keys) == 1 and len(saved) == 1
    monkeypatch.setattr(cub, "compute_module", lambda: later)
    _run, held = cub.reduce_sum(cp, np.zeros(8, dtype=np.float32), np.zeros(1, dtype=np.float32))
    assert later.keys == [] and later.loaded == 1 and held["reducer"].origin == "loaded"
    cub.prebuild_reduce(cp, np.int32)  # another key: its own build and file
    assert len(later.keys) == 1 and len(list((tmp_path / "cub").iterdir())) == 2
    saved[0].write_bytes(b"\0damaged")
    monkeypatch.setattr(cub, "compute_module", lambda: after_damage)
    cub.prebuild_reduce(cp, np.float32)
    assert len(after_damage.keys) == 1 and after_damage.loaded == 0
    assert saved[0].read_bytes() == SavingCompute.BLOB  # replaced by the new build


def test_only_cub_is_prebuilt_and_for_the_shapes_dtype(monkeypatch):
    from pmppbench.workloads import cub

    asked = []
    monkeypatch.setattr(cub, "prebuild_reduce", lambda cp, dtype: asked.append(dtype))
    monkeypatch.setattr(red, "cupy", lambda: None)
    W.prebuild({"n": 1000, "dtype": "i32"}, [W.variant("shared")])
    assert asked == []
    W.prebuild({"n": 1000, "dtype": "i32"}, list(W.variants))
    W.prebuild({"n": 1000, "dtype": "f32"}, list(W.variants))
    assert asked == [np.int32, np.float32]


def test_check_only_takes_the_64_bit_path_for_each_dtype():
    """As every workload's --check-only does, one shape past 2^31 elements per compile unit."""
    large = [s for s in W.check_shapes() if s["n"] > 2**31 - 1]
    assert [(s["dtype"], red.index_type_of(s)) for s in large] == [("f32", "long long"), ("i32", "long long")]
    assert all(red.index_type_of(s) == "int" for s in W.check_shapes() if s not in large)


@pytest.mark.gpu
def test_cub_loaded_from_the_disk_cache_builds_nothing_and_passes(monkeypatch, tmp_path):
    """What cuda.compute serialized in one run is loaded by the next (no JIT build) and sums right."""
    compute = pytest.importorskip("cuda.compute")
    from pmppbench.workloads import cub

    monkeypatch.setenv("PMPPBENCH_CACHE_DIR", str(tmp_path))
    shapes = [{"n": 100003, "dtype": d} for d in ("f32", "i32")]
    monkeypatch.setattr(cub, "_BUILT", {})  # as in a new process
    assert_all_pass(check_rows("reduce", shapes, ["cub"]))
    assert len(list((tmp_path / "cub").iterdir())) == 2

    def no_build(**kw):
        raise AssertionError("built again instead of loaded")

    monkeypatch.setattr(cub, "_BUILT", {})
    monkeypatch.setattr(compute, "make_reduce_into", no_build)
    assert_all_pass(check_rows("reduce", shapes, ["cub"], seed=7))


@pytest.mark.gpu
def test_cub_built_ahead_on_another_thread_serves_the_job():
    """The worker's build thread runs prebuild; the job on the main thread then uses that build."""
    import threading

    pytest.importorskip("cuda.compute")
    shapes = [{"n": 100003, "dtype": d} for d in ("f32", "i32")]
    builder = threading.Thread(target=lambda: [W.prebuild(s, [W.variant("cub")]) for s in shapes])
    builder.start()
    builder.join()
    assert_all_pass(check_rows("reduce", shapes, ["cub"]))
