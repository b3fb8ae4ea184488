"""scan: the references, the float bound, geometry, the CUB binding and the config on the CPU;
every variant on edge sizes, the 64-bit path, the mutations (a missing down-sweep barrier, an
aggregate taken for a prefix, an inclusive/exclusive off-by-one) and the single-pass kernels
called many times on the GPU."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from gpu_helpers import assert_all_pass, check_rows, mutant_check
from mutants import Edit, machine_code, mutated_copy, source_of
from pmppbench import workloads
from pmppbench.measure.check import compare
from pmppbench.workloads.base import Context
from pmppbench.hardware.compile import compile_unit
from pmppbench.errors import UsageError
from pmppbench.cli.planning import shapes_for
from pmppbench.workloads import scan as sc
from pmppbench.workloads.helpers import SAMPLE

W = workloads.get("scan")

# The mutations, each an edit of a copy of the source (tests/mutants.py) that must FAIL: the
# down-sweep's barrier dropped, an aggregate taken for a prefix, the exclusive scan read unshifted.
MUTATIONS = {
    "downsweep_barrier": [Edit("scan.cu", "        __syncthreads();\n        const unsigned index = (t + 1) * stride * 2 - 1;",
                               "        const unsigned index = (t + 1) * stride * 2 - 1;")],
    "aggregate_as_prefix": [Edit(f, "const unsigned done = __ballot_sync(FULL, flag == PREFIX);",
                                 "const unsigned done = __ballot_sync(FULL, flag >= AGGREGATE);")
                            for f in ("scan_lookback_parts.cuh", "scan_lookback.cu")],
    "off_by_one": [Edit("scan_tile.cuh", "return t ? XY[t - 1] : T(0);", "return XY[t];"),
                   Edit("scan_tile.cuh", "#if EXCLUSIVE\n        v.w = pre + v.z;", "#if 0\n        v.w = pre + v.z;")],
}


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_prefix_sums_across_chunks_are_numpys(monkeypatch, dtype, exclusive):
    monkeypatch.setattr(sc, "CHUNK", 1000)  # several chunks and their offsets
    rng = np.random.default_rng(3)
    x = (rng.random(4321) + 0.5).astype(np.float32) if dtype == np.float32 else \
        rng.integers(-1000, 1001, 4321).astype(np.int32)
    wide = np.cumsum(x, dtype=np.float64 if dtype == np.float32 else np.int64)
    want = np.concatenate([[0], wide[:-1]]) if exclusive else wide
    got = sc.prefix_sums(x, exclusive)
    assert got.dtype == (np.float64 if dtype == np.float32 else np.int32)
    if dtype == np.float32:
        np.testing.assert_allclose(got, want, rtol=1e-15)
    else:
        assert np.array_equal(got, want.astype(np.int32))
    picks = np.array([0, 1, 999, 1000, 1001, 2999, 4320])
    assert np.array_equal(sc.prefix_sums(x, exclusive, picks), got[picks])


def test_int32_prefix_sums_wrap_as_the_gpu_adds():
    x = np.full(3, 2**30 + 1, dtype=np.int32)
    got = sc.prefix_sums(x, False)
    assert got.tolist() == [2**30 + 1, -(2**31) + 2, -(2**30) + 3]  # 2(2^30 + 1) and 3(2^30 + 1) wrapped


def test_references_of_the_scan_and_the_copy():
    shape = {"n": 100003, "dtype": "f32", "kind": "exclusive"}
    inputs = W.make_inputs(shape, np.random.default_rng(0))
    x = inputs["x"]
    assert x.dtype == np.float32 and x.min() >= sc.LOW and x.max() < sc.HIGH and SAMPLE not in inputs
    ref = W.reference(shape, inputs, W.variant("lookback"))
    assert ref[0] == 0 and ref[-1] == pytest.approx(float(x[:-1].astype(np.float64).sum()), rel=1e-15)
    assert W.reference(shape, inputs, W.variant("memcpy")) is x
    ints = W.make_inputs({"n": 1000, "dtype": "i32", "kind": "inclusive"}, np.random.default_rng(0))["x"]
    assert ints.dtype == np.int32 and np.all(ints != 0) and np.abs(ints).max() <= sc.INT_LIMIT


def test_a_large_shape_is_checked_on_a_sample_of_its_prefixes(monkeypatch):
    monkeypatch.setattr(sc, "SAMPLE_ABOVE", 5000)
    shape = {"n": 20011, "dtype": "i32", "kind": "inclusive"}
    inputs = W.make_inputs(shape, np.random.default_rng(1))
    picks = inputs[SAMPLE][0]
    assert picks[0] == 0 and picks[-1] == 20010 and picks.size < 20011
    full = np.cumsum(inputs["x"], dtype=np.int64).astype(np.int32)
    assert np.array_equal(W.reference(shape, inputs, W.variant("cub")), full[picks])
    assert np.array_equal(W.reference(shape, inputs, W.variant("memcpy")), inputs["x"][picks])


def test_the_float_bound_is_gamma_d_of_each_variants_chain():
    shape = {"n": 1 << 26, "dtype": "f32", "kind": "inclusive"}
    ks = W.variant("kogge_stone")
    d = sc.additions_depth(ks.name, shape)
    assert d == 10 + sc.SUMS_DEPTH + (1 << 26) // 1024 // 4096 + 1  # section, scan_sums' chunks, add-back
    du = d * 2.0**-24
    assert W.tolerance_of(shape, ks) == sc.Tolerance("elementwise", rtol=du / (1 - du))
    tiles = (1 << 26) // 8192
    assert sc.additions_depth("domino", shape) == sc.TILE_DEPTH["domino"] + tiles + 1
    assert sc.TILE_DEPTH["lookback"] == 3 + 5 + 1 + 8 + 8 + 2  # look-back tiles of 256 threads x 8 vectors
    assert sc.additions_depth("lookback", shape) == sc.TILE_DEPTH["lookback"] + tiles + 5 * -(-tiles // 32) + 1
    deepest = max(W.tolerance_of(shape, W.variant(v)).rtol for v in (*sc.THREE_KERNEL, *sc.SINGLE_PASS))
    assert W.tolerance_of(shape, W.variant("cub")).rtol == deepest
    small = {"n": 3, "dtype": "f32", "kind": "inclusive"}  # no chain is longer than N - 1
    assert W.tolerance_of(small, ks).rtol == pytest.approx(2 * 2.0**-24 / (1 - 2 * 2.0**-24))


def test_the_bound_grows_with_the_prefix_length():
    rtols = [W.tolerance_of({"n": n, "dtype": "f32", "kind": "inclusive"}, W.variant("domino")).rtol
             for n in (1 << 20, 1 << 24, 1 << 28)]
    assert rtols[0] < rtols[1] < rtols[2]


def test_int32_and_the_roof_are_checked_bit_for_bit():
    assert W.tolerance_of({"n": 1 << 26, "dtype": "i32", "kind": "inclusive"}, W.variant("lookback")).rule == "exact"
    assert W.tolerance_of({"n": 1 << 26, "dtype": "f32", "kind": "inclusive"}, W.variant("memcpy")).rule == "exact"


def test_an_off_by_one_or_a_lost_tile_fails_the_float_check():
    """At the mutations' size the bound is far below one input: the inclusive scan in place of
    the exclusive one, or one tile's total missing, cannot pass by rounding."""
    shape = {"n": 100003, "dtype": "f32", "kind": "exclusive"}
    x = W.make_inputs(shape, np.random.default_rng(0))["x"]
    ref = sc.prefix_sums(x, True)
    tol = W.tolerance_of(shape, W.variant("lookback"))
    assert compare(ref.astype(np.float32), ref, tol).status == "PASS"
    inclusive = sc.prefix_sums(x, False).astype(np.float32)
    assert compare(inclusive, ref, tol).status == "FAIL"
    lost = ref.copy()
    lost[16384:] -= x[8192:16384].astype(np.float64).sum()
    assert compare(lost.astype(np.float32), ref, tol).status == "FAIL"


def test_geometry_and_index_path():
    shape = {"n": 4097, "dtype": "f32", "kind": "inclusive"}
    assert W.geometry(W.variant("kogge_stone"), shape) == ((5,), (1024,))
    assert W.geometry(W.variant("brent_kung"), shape) == ((3,), (1024,))
    assert W.geometry(W.variant("coarsened"), shape) == ((2,), (512,))
    assert W.geometry(W.variant("hierarchical"), shape) == ((2,), (256,))
    assert W.geometry(W.variant("lookback"), shape) == ((1,), (256,))
    assert W.geometry(W.variant("lookback"), {**shape, "n": 8193}) == ((2,), (256,))
    assert W.geometry(W.variant("domino"), {**shape, "n": 16385}) == ((3,), (256,))
    assert sc.index_type_of({"n": 1 << 26, "dtype": "f32", "kind": "inclusive"}) == "int"
    assert sc.index_type_of({"n": sc.LARGE_CHECK, "dtype": "f32", "kind": "inclusive"}) == "long long"
    assert sc.index_type_of({"n": 2**31 - 2049, "dtype": "f32", "kind": "inclusive"}) == "long long"  # rounded up to sections, + 1
    assert sc.index_type_of({"n": 2**31 - 8193, "dtype": "f32", "kind": "inclusive"}) == "int"


def test_check_shapes_cover_the_edges_and_the_64_bit_path_for_each_dtype():
    shapes = W.check_shapes()
    sizes = {s["n"] for s in shapes}
    for edge in (1, 1024, 1025, 2048, 2049, 4096, 4097, 8192, 8193, 8195, 100003):
        assert edge in sizes
    large = [(s["dtype"], s["kind"]) for s in shapes if s["n"] > 2**31 - 1]
    assert large == [("f32", "inclusive"), ("i32", "exclusive")]
    assert all(sc.index_type_of(s) == "long long" for s in shapes if s["n"] > 2**31 - 1)
    assert {(s["dtype"], s["kind"]) for s in shapes} == {(d, k) for d in sc.DTYPES for k in sc.KINDS}


def test_axes_default_to_every_dtype_and_kind_and_reject_others():
    shapes = shapes_for(W, {"n": 1000}, {"dtype": None, "kind": None}, check_only=False)
    assert [(s["dtype"], s["kind"]) for s in shapes] == [
        ("f32", "inclusive"), ("i32", "inclusive"), ("f32", "exclusive"), ("i32", "exclusive")]
    with pytest.raises(UsageError, match="dtype must be one of f32, i32"):
        W.validate({"n": 10, "dtype": "f64", "kind": "inclusive"})
    with pytest.raises(UsageError, match="kind must be one of inclusive, exclusive"):
        W.validate({"n": 10, "dtype": "f32", "kind": "both"})


def test_cli_rejects_an_unknown_kind(run_cli):
    code, _out, err = run_cli("scan", "--kind", "prefix")
    assert code == 2 and "--kind: unknown value 'prefix'; choose from inclusive, exclusive" in err


def test_traffic_counts_the_logical_bytes_and_the_passes():
    shape = {"n": 1000, "dtype": "i32", "kind": "inclusive"}
    for v in W.variants:
        t = W.traffic(shape, v)
        assert t.bytes == 8000
        assert t.extra["passes"] == (4 if v.name in sc.SECTIONS else 2)
        assert t.flops == (0 if v.name == "memcpy" else 999)


def test_every_kernel_compiles_for_every_dtype_and_kind():
    for defines in W.compile_sets():
        unit = compile_unit("scan", W.kernel_names(), "sm_90", defines)
        assert sorted(unit.ptxas) == sorted(W.kernel_names())
        for name, report in unit.ptxas.items():
            assert (report.spill_stores, report.stack_bytes) == (0, 0), (defines, name)


def test_the_lookback_tile_is_the_kernels():
    """scan.py's look-back tile (grid, status words, bound) is the one scan.cu compiles."""
    import re
    from pathlib import Path

    root = Path(sc.__file__).resolve().parents[2]
    text = (root / "kernels_cu" / "scan_lookback.cuh").read_text()
    study = (root / "studies" / "forms" / "scan_lookback.cu").read_text()
    assert int(re.search(r"#define LB_ROWS (\d+)", text).group(1)) == sc.LOOKBACK_ROWS == 8
    assert int(re.search(r"#define LB_THREADS (\d+)", text).group(1)) == sc.LOOKBACK_THREADS == 256
    assert sc.LOOKBACK_TILE == sc.PASS_TILE == 8192
    # lookback_persistent (the study's candidates) has the same default tile, and a block count per SM
    assert int(re.search(r"#define LP_ROWS (\d+)", study).group(1)) == sc.LOOKBACK_ROWS
    assert int(re.search(r"#define LP_THREADS (\d+)", study).group(1)) == sc.LOOKBACK_THREADS
    # lookback_staged: the tile scan.py mirrors (7 rows: 7168 elements)
    assert int(re.search(r"#define LS_ROWS (\d+)", text).group(1)) == sc.STAGED_ROWS
    assert int(re.search(r"#define LS_THREADS (\d+)", text).group(1)) == sc.STAGED_THREADS
    assert sc.STAGED_TILE == 7168


def test_lookback_prefetches_a_quarter_wave_of_resident_blocks_ahead(monkeypatch):
    """`ahead` (lookback's last argument) is LOOKBACK_AHEAD_WAVES of the blocks resident at once:
    the occupancy API's blocks per SM for the loaded kernel times the SMs; domino takes none."""
    asked = []
    monkeypatch.setattr(sc.occupancy, "api_active_blocks", lambda k, threads: asked.append((k, threads)) or 4)
    assert sc.LOOKBACK_AHEAD_WAVES == 0.25
    assert sc.lookback_ahead("K", 132) == 132 and asked == [("K", sc.LOOKBACK_THREADS)]
    assert sc.lookback_ahead("K", 132, waves=1) == 528
    shape = {"n": 1 << 26, "dtype": "f32", "kind": "inclusive"}
    ctx = Context({"lookback": "LB", "domino": "DO"}, SimpleNamespace(sm_count=132), x="x", out="out",
                  status={"lookback": "S", "domino": "D"}, ticket={"lookback": "T", "domino": "U"})
    launch = W.job(W.variant("lookback"), shape, ctx).launches[0]
    assert launch.kernel == "LB" and launch.grid == (8192,)
    assert launch.args == ("x", "out", "S", "T", np.uint64(1 << 26), np.uint64(8192), np.uint64(132))
    assert W.job(W.variant("domino"), shape, ctx).launches[0].args[2:] == ("D", "U", np.uint64(1 << 26), np.uint64(8192))
    # lookback_staged: three eighths of its own resident blocks' wave (the API's count for its kernel)
    ctx["status"]["lookback_staged"], ctx["ticket"]["lookback_staged"] = "SS", "ST"
    ctx.kernels["lookback_staged"] = "LS"
    launch = W.job(W.variant("lookback_staged"), shape, ctx).launches[0]
    assert sc.STAGED_AHEAD_WAVES == 0.375 and launch.kernel == "LS" and launch.grid == (sc.tiles_of(1 << 26, 7168),)
    assert launch.block == (sc.STAGED_THREADS + 32,)  # the tile's warps and the looker
    assert launch.args[-2] == np.uint64(int(0.375 * 4 * 132)) and asked[-1] == ("LS", sc.STAGED_BLOCK)
    # and its first wave's ramp: the 4 x 132 resident blocks, as the grid (9363 tiles) is more than one wave
    assert launch.args[-1] == np.uint64(4 * 132)


def test_the_staged_ramp_covers_the_first_wave_only_where_a_later_wave_waits(monkeypatch):
    """ramped_blocks: the resident blocks (the occupancy API's count for the kernel times the SMs) where
    the grid has more tiles than that, else 0 (one wave: no later wave to let in early, and the ramp
    would only delay it)."""
    monkeypatch.setattr(sc.occupancy, "api_active_blocks", lambda k, threads: 7)
    assert sc.ramped_blocks("K", 132, 925) == 924
    assert sc.ramped_blocks("K", 132, 924) == 0 and sc.ramped_blocks("K", 132, 147) == 0
    assert sc.ramped_blocks("K", 132, sc.tiles_of(1 << 26, sc.STAGED_TILE)) == 924


def test_the_persistent_grid_is_blocks_per_sm_capped_at_the_tiles():
    grid = study_forms().lookback_grid
    assert grid(1 << 26, 132, 4) == 528 and grid(100003, 132, 4) == 13
    assert grid(1, 132, 4) == 1 and grid(1 << 26, 132, 8, tile=4096) == 1056


@pytest.mark.parametrize("mutation, unit, kernel", [
    ("downsweep_barrier", "scan", "brent_kung<int>"), ("aggregate_as_prefix", "scan_lookback", "lookback_persistent"),
    ("off_by_one", "scan_lookback", "lookback_persistent"), ("aggregate_as_prefix", "scan", "lookback"),
    ("aggregate_as_prefix", "scan", "lookback_staged"), ("off_by_one", "scan", "lookback_staged"),
    ("off_by_one", "scan", "kogge_stone<int>"),
])
def test_each_mutation_changes_the_machine_code(mutation, unit, kernel, tmp_path):
    """A mutation that compiled to the same code could never FAIL: each one must change its kernel
    (the copy of the source made and built as the GPU test builds it)."""
    base = {"ELEM": "int", "EXCLUSIVE": 1}
    edits = [e for e in MUTATIONS[mutation] if unit != "scan" or e.file != "scan_lookback.cu"]
    plain = compile_unit(unit, [kernel], "sm_90", base, source=source_of(unit)).cubin
    mutated = compile_unit(unit, [kernel], "sm_90", base, source=mutated_copy(tmp_path, unit, edits)).cubin
    assert plain != mutated


class FakeCompute:
    """cuda.compute's make_*_scan recorded by what its build cache keys on: each array's type and
    dtype and the initial value's."""

    class OpKind:
        PLUS = "plus"

    def __init__(self):
        self.keys = []

    def _make(self, kind):
        def make(**kw):
            self.keys.append((kind, tuple(sorted((k, type(v).__name__, str(getattr(v, "dtype", v)))
                                                 for k, v in kw.items()))))
            return lambda temp_storage=None, **call: 64
        return make

    def __getattr__(self, name):
        if name in ("make_inclusive_scan", "make_exclusive_scan"):
            return self._make(name)
        raise AttributeError(name)


def fake_cupy():
    return SimpleNamespace(empty=np.empty, uint8=np.uint8,
                           cuda=SimpleNamespace(get_current_stream=lambda: SimpleNamespace(ptr=0)))


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_cub_prebuild_asks_for_the_build_the_job_uses(monkeypatch, dtype, exclusive):
    from pmppbench.workloads import cub

    compute, alone = FakeCompute(), FakeCompute()
    cp = fake_cupy()
    monkeypatch.setattr(cub, "compute_module", lambda: compute)
    cub.prebuild_scan(cp, dtype, exclusive)
    cub.prefix_sum(cp, np.zeros(1000, dtype=dtype), np.zeros(1000, dtype=dtype), exclusive)
    monkeypatch.setattr(cub, "compute_module", lambda: alone)  # the job with no prebuild before it
    cub.prefix_sum(cp, np.zeros(1000, dtype=dtype), np.zeros(1000, dtype=dtype), exclusive)
    assert len(compute.keys) == 1 and compute.keys == alone.keys  # one object, the job's own
    assert compute.keys[0][0] == ("make_exclusive_scan" if exclusive else "make_inclusive_scan")


def test_only_cub_is_prebuilt_and_for_the_shapes_dtype_and_kind(monkeypatch):
    from pmppbench.workloads import cub

    asked = []
    monkeypatch.setattr(cub, "prebuild_scan", lambda cp, dtype, exclusive: asked.append((dtype, exclusive)))
    monkeypatch.setattr(sc, "cupy", lambda: None)
    W.prebuild({"n": 1000, "dtype": "i32", "kind": "inclusive"}, [W.variant("lookback")])
    assert asked == []
    W.prebuild({"n": 1000, "dtype": "i32", "kind": "exclusive"}, list(W.variants))
    W.prebuild({"n": 1000, "dtype": "f32", "kind": "inclusive"}, list(W.variants))
    assert asked == [(np.int32, True), (np.float32, False)]


# ---- on the GPU -------------------------------------------------------------------------------

@pytest.mark.gpu
def test_every_variant_passes_on_edge_sizes():
    shapes = [s for s in W.check_shapes() if s["n"] != sc.LARGE_CHECK]
    assert_all_pass([r for r in check_rows("scan", shapes) if r.check != "SKIP"])


@pytest.mark.gpu
def test_the_64_bit_path():
    shapes = [s for s in W.check_shapes() if s["n"] == sc.LARGE_CHECK]
    assert_all_pass([r for r in check_rows("scan", shapes) if r.check != "SKIP"])


@pytest.mark.gpu
@pytest.mark.parametrize("mutation, variant, kind", [
    ("downsweep_barrier", "brent_kung", "inclusive"),
    ("aggregate_as_prefix", "lookback", "inclusive"),
    ("off_by_one", "kogge_stone", "exclusive"),
    ("off_by_one", "lookback", "exclusive"),
    ("aggregate_as_prefix", "lookback_staged", "inclusive"),
    ("off_by_one", "lookback_staged", "exclusive"),
])
@pytest.mark.parametrize("dtype", ["f32", "i32"])
def test_mutations_fail(mutation, variant, kind, dtype, tmp_path):
    edits = [e for e in MUTATIONS[mutation] if e.file != "scan_lookback.cu"]
    rows = mutant_check("scan", edits, {"n": 100003, "dtype": dtype, "kind": kind}, variant, tmp_path)
    assert [r.check for r in rows] == ["FAIL"], rows[0].check_detail


CALLS = 200  # single-pass calls checked one by one: a rare ordering bug shows as a FAIL


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["f32", "i32"])
def test_single_pass_scans_stay_right_call_after_call(dtype):
    """domino, lookback and lookback_staged, CALLS calls each on the same buffers (the ticket and the status words
    carry over from call to call): every call's output checked. int32 is exact, so every call
    is bit for bit the same; float32 look-back may add its predecessors in another order from
    call to call, and each call must still be inside the bound."""
    from pmppbench.measure.check import device_copy
    from pmppbench.hardware.gpu import cupy
    from pmppbench.engine.worker.pipeline import prepared

    cp = cupy()
    shape = {"n": (1 << 22) + 3, "dtype": dtype, "kind": "inclusive"}
    variants = [W.variant(v) for v in sc.SINGLE_PASS]
    with prepared(W, shape, variants, seed=5) as (inputs, ctx):
        ref = device_copy(W.reference(shape, inputs, variants[0]))
        for v in variants:
            job = W.job(v, shape, ctx)
            tol = W.tolerance_of(shape, v)
            first = None
            for call in range(CALLS):
                job.poison()
                job.run()
                out = job.output()
                result = compare(out, ref, tol)
                assert result.passed, f"{v.name} call {call}: {result.detail}"
                if first is None:
                    first = out.copy()
                elif dtype == "i32":
                    assert bool(cp.array_equal(out, first)), f"{v.name} call {call} differs from the first call"


@pytest.mark.gpu
@pytest.mark.parametrize("kind", sc.KINDS)
@pytest.mark.parametrize("dtype", ["f32", "i32"])
def test_persistent_lookback_with_fewer_blocks_than_tiles(dtype, kind):
    """studies/forms/scan_lookback.cu's lookback_persistent (a study form, not a variant) from 1, 2, 3 and 7 blocks over 5 tiles and 3 elements (each block takes
    several tiles by ticket, the last one partial), CALLS // 10 calls each on the same ticket and status
    words: every call checked. The grid is the kernel's own tickets' count per call, so each grid
    gets its own counter."""
    from pmppbench.measure.check import device_copy
    from pmppbench.hardware.compile import kernels_from, load_kernels
    from pmppbench.hardware.gpu import cupy
    from pmppbench.engine.worker.pipeline import prepared

    cp = cupy()
    n = 5 * sc.LOOKBACK_TILE + 3
    tiles = sc.tiles_of(n, sc.LOOKBACK_TILE)
    shape = {"n": n, "dtype": dtype, "kind": kind}
    v = W.variant("lookback")
    with prepared(W, shape, [v], seed=7) as (inputs, ctx):
        ref = device_copy(W.reference(shape, inputs, v))
        with kernels_from(source_of("scan_lookback").parent):  # the study's kernel (studies/forms)
            kernel = load_kernels("scan_lookback", ["lookback_persistent"], W.defines(shape))["lookback_persistent"]
        out, tol = ctx["out"], W.tolerance_of(shape, v)  # the same tile, so lookback's bound
        for grid in (1, 2, 3, 7):
            status, ticket = cp.zeros(tiles, dtype=cp.uint64), cp.zeros(1, dtype=cp.uint64)
            for call in range(CALLS // 10):
                out.fill(-7)
                kernel((grid,), (sc.LOOKBACK_THREADS,), (ctx["x"], out, status, ticket, np.uint64(n), np.uint64(tiles)))
                result = compare(out, ref, tol)
                assert result.passed, f"grid {grid} call {call}: {result.detail}"
            assert int(ticket[0]) == (CALLS // 10) * (tiles + grid)  # each call's tiles and one stopping ticket a block


@pytest.mark.gpu
def test_cub_built_ahead_on_another_thread_serves_the_job():
    import threading

    pytest.importorskip("cuda.compute")
    shapes = [{"n": 100003, "dtype": d, "kind": k} for d in sc.DTYPES for k in sc.KINDS]
    builder = threading.Thread(target=lambda: [W.prebuild(s, [W.variant("cub")]) for s in shapes])
    builder.start()
    builder.join()
    assert_all_pass(check_rows("scan", shapes, ["cub"]))


def study_forms():
    """studies/forms/scan_forms.py, the look-back's study workload (imported by path, as
    PMPPBENCH_WORKLOADS would with studies/forms on the path)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("scan_forms", source_of("scan_lookback").parent / "scan_forms.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_study_forms_compile_without_spills_and_the_knob_free_ones_are_the_shipped_code():
    """Every form of the look-back's study workload builds for sm_90 with no local memory, as the
    shipped kernels do; built without knobs, the study file's lookback and lookback_staged are the
    shipped machine code, instruction for instruction (the shipped file is the study's defaults)."""
    forms = study_forms()
    base = {"ELEM": "int", "EXCLUSIVE": 0}  # the int inclusive build has the most registers
    study = source_of("scan_lookback")
    for name, (kernel, knobs, _) in forms.FORMS.items():
        report = compile_unit("scan_lookback", [kernel], "sm_90", {**base, **knobs}, source=study).ptxas[kernel]
        assert (report.spill_stores, report.stack_bytes) == (0, 0), name
    for kernel in ("lookback", "lookback_staged"):
        shipped = compile_unit("scan", [kernel], "sm_90a", base)
        own = compile_unit("scan_lookback", [kernel], "sm_90a", base, source=study)
        assert machine_code(shipped, kernel) == machine_code(own, kernel), kernel
    profile = {**base, "LB_PROFILE": 1}  # the profile build of studies/scan_lookback.py --profile
    assert compile_unit("scan_lookback", ["lookback"], "sm_90", profile, source=study).ptxas["lookback"].spill_stores == 0

