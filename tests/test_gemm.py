"""gemm: reference, check bound, traffic model, validation and NVRTC builds on the CPU; every
variant (and a deliberately wrong kernel that must FAIL) on edge shapes on the GPU."""

from __future__ import annotations

import json
import math
import shutil
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from gpu_helpers import assert_all_pass, check_rows
from pmppbench import workloads
from pmppbench.measure.check import compare
from pmppbench.workloads.base import Context
from pmppbench.hardware.compile import compile_unit
from pmppbench.errors import UsageError
from pmppbench.hardware.device import DeviceInfo
from pmppbench.workloads.base import Variant
from pmppbench.workloads.gemm import best, tensor
from pmppbench.workloads.gemm import launch as gemm_launch
from pmppbench.workloads.gemm import check as gemm_check
from pmppbench.workloads.gemm.workload import sampled as gemm_sampled
from pmppbench.workloads.gemm import workload as gemm_workload
from pmppbench.workloads.gemm.best import CHOICES, choose
from pmppbench.workloads.gemm.configs import SCHEDULES, Config, padding_for, parse, schedule_for, segments, swizzled_tile
from pmppbench.workloads.gemm.ladder import COVERS, RUNG_TILES, TUNED
from pmppbench.workloads.gemm.launch import dynamic_tile_depth
from pmppbench.workloads.gemm.model import traffic as model_traffic
from pmppbench.workloads.gemm.check import rtol_for_k
from pmppbench.workloads.gemm.tiles import Cover, Tiles
from pmppbench.workloads.gemm.workload import LADDER
from pmppbench.workloads.helpers import SAMPLE, take

W = workloads.get("gemm")
STUDY = Path(__file__).resolve().parent.parent / "studies" / "gemm"  # the tile sweep (a study workload)
sys.path.insert(0, str(STUDY))
import tuning  # noqa: E402
# naive with the K-tail bug, run as a learner's kernel like naive: never part of the table
SKIPS_LAST_K_TILE = Variant("skips_last_k_tile", "skips_last_k_tile", "test only: drops the last K % 16 terms",
                            source=str(Path(__file__).resolve().parent / "gemm_bug.cu"), like="naive")
LADDER_NAMES = ["naive", "tiled16", "tiled32", "coarsened", "regtile2x2", "regtile4x4", "corner_turning",
                "dynamic_smem", "blocktile8x8", "warptile", "double_buffer", "cp_async", "tuned", "best", "cublas"]


def shape(m, n, k):
    return {"m": m, "n": n, "k": k}


# ---- the table ------------------------------------------------------------------------------

def test_variant_table_matches_the_issues():
    assert [v.name for v in W.variants_for(shape(64, 64, 64))] == LADDER_NAMES
    assert W.baseline == "naive" and W.roof == "cublas" and W.rate == "GFLOP/s"
    assert W.variant("cublas").kernel is None
    assert W.variant("tiled16").kernel == "tiled<16>" and W.variant("tiled32").kernel == "tiled<32>"
    assert W.variant("regtile2x2").kernel == "regtile<2>" and W.variant("regtile4x4").kernel == "regtile<4>"
    # the sweep's candidates are a study's (studies/gemm/tuning.py), not the shipped table's;
    # the test-only kernel is in no table
    for v in tuning.SWEEP:
        assert v.name not in W.variant_names() and v.kernel not in W.kernel_names()
    assert [v.name for v in tuning.WORKLOAD.variants[:5]] == ["cublas", "warptile", "double_buffer", "cp_async", "tuned"]
    assert SKIPS_LAST_K_TILE.name not in W.variant_names()


def test_every_kernel_variant_has_a_launch_plan():
    for v in W.variants:
        if v.kernel and v.name != "best":  # best's launch comes from its Config (tests below)
            cover = COVERS[v.name]
            assert 32 <= math.prod(cover.block) <= 1024 and cover.bm > 0 and cover.bn > 0
            tiles = ((300 + cover.bn - 1) // cover.bn, (100 + cover.bm - 1) // cover.bm)
            persistent = v.name in tensor.PERSISTENT  # a 1-D grid of persistent blocks, one a tile here
            assert W.geometry(v, shape(100, 300, 7)) == ((math.prod(tiles),) if persistent else tiles, cover.block)
    with pytest.raises(ValueError, match="configuration"):
        W.geometry(W.variant("best"), shape(100, 300, 7))


def test_tile_tables_pass_the_kernels_static_asserts():
    for template, tiles in (*RUNG_TILES.values(), *tuning.SWEEP_TILES):
        assert tiles.problems(template) == [], (template, tiles)
        assert tiles.threads in (128, 256)
    # the last two rungs change only how tiles reach shared memory
    assert RUNG_TILES["double_buffer"][1] == RUNG_TILES["cp_async"][1] == RUNG_TILES["warptile"][1]
    # more lane steps than the warp tile holds, fragments that are not float4, too much shared memory
    assert any("32 lanes" in p for p in Tiles(128, 128, 8, 32, 64, 8, 4, 4).problems("warptile"))
    assert any("multiples of 4" in p for p in Tiles(128, 128, 6, 32, 64, 2, 4, 4).problems("warptile"))
    assert any("48 KB" in p for p in Tiles(128, 128, 32, 32, 64, 2, 4, 4).problems("double_buffer"))


def test_tuning_config_runs_every_sweep_point(monkeypatch):
    """The study's config names every candidate; its kernels are the shipped templates, built
    from the study's gemm_tuning.cu (which includes gemm_warptile.cuh) without spills."""
    from pmppbench.cli import config

    monkeypatch.setenv("PMPPBENCH_WORKLOADS", "gemm_tuning=tuning")
    monkeypatch.setenv("PMPPBENCH_KERNEL_PATH", str(STUDY))
    cfg = config.load(STUDY / "tuning.toml")
    (section,) = cfg.sections
    assert section.name == "gemm_tuning" and {"cublas", "double_buffer"} <= set(section.variants)
    assert {v.name for v in tuning.SWEEP} <= set(section.variants)
    assert shape(4096, 4096, 4096) in section.shapes
    study = tuning.WORKLOAD
    assert study.variants_for(shape(64, 64, 64)) == study.variants
    for v in study.variants[1:]:
        assert study.geometry(v, shape(100, 300, 7))[1] == (study.covers[v.name].block[0],)
    unit = compile_unit("gemm_tuning", study.kernel_names(), "sm_90")
    for name in study.kernel_names():
        r = unit.ptxas[name]
        assert 0 < r.registers < 255 and r.spill_stores == 0 and r.spill_loads == 0, f"{name}: {r}"


# ---- best: schedules, swizzle, the rule --------------------------------------------------------

SCHEDULE_SHAPES = [(1, 1, 1), (512, 512, 512), (1024, 1024, 1024), (4096, 4096, 4096), (129, 127, 20),
                   (4096, 1024, 8192), (1000, 999, 17), (1100, 1100, 100), (33, 1, 65)]
SCHEDULE_CONFIGS = [Config("streamk", t, sched, split)
                    for t in (TUNED, Tiles(64, 64, 16, 32, 16, 1, 4, 4)) for sched in SCHEDULES for split in (1, 3)]


@pytest.mark.parametrize("cfg", SCHEDULE_CONFIGS, ids=lambda c: c.name)
@pytest.mark.parametrize("slots", [1, 7, 132, 264])
def test_streamk_schedules_cover_every_k_step_of_every_tile_once(cfg, slots):
    """The kernel's walk (mirrored by `segments`): every shared tile's K steps are covered
    once, in order, by the blocks `contributors` names; partial tiles never share a slot."""
    for m, n, k in SCHEDULE_SHAPES:
        s = schedule_for(cfg, m, n, k, slots)
        assert s.tiles == -(-m // cfg.tiles.bm) * -(-n // cfg.tiles.bn) and s.grid == s.dp_tiles + s.shared_blocks
        assert 0 <= s.dp_tiles <= s.tiles and (s.per > 0) == (s.dp_tiles < s.tiles)
        pieces = {}
        for g, u, kb, ke in segments(s):
            assert 0 <= kb < ke <= s.kt
            pieces.setdefault(u, []).append((kb, ke, g))
        assert sorted(pieces) == list(range(s.tiles - s.dp_tiles))
        slots_used = set()
        for u, ps in pieces.items():
            ps.sort()
            assert ps[0][0] == 0 and ps[-1][1] == s.kt and all(a[1] == b[0] for a, b in zip(ps, ps[1:]))
            first, last = s.contributors(u)
            assert [g for _, _, g in ps] == list(range(first, last + 1))
            if first != last:
                for g in range(first, last + 1):
                    slot = 2 * g + (0 if u == g * s.per // s.kt else 1)
                    assert slot not in slots_used and slot < 2 * s.shared_blocks
                    slots_used.add(slot)
        if s.shared_blocks:  # no block left without work
            assert (s.shared_blocks - 1) * s.per < s.shared_steps


def test_schedules_on_an_h200():
    hyb = Config("streamk", TUNED, "hybrid")
    s = schedule_for(hyb, 4096, 4096, 4096, 132)  # 512 tiles: 2 waves whole, 248 tiles over 132 blocks
    assert (s.tiles, s.dp_tiles, s.shared_blocks, s.per) == (512, 264, 132, -(-248 * 512 // 132))
    s = schedule_for(hyb, 2048, 2048, 2048, 132)  # 128 tiles, fewer than the SMs: all stream-K
    assert (s.dp_tiles, s.shared_blocks) == (0, 132) and s.per == -(-128 * 256 // 132)
    assert schedule_for(hyb, 4224, 4096, 512, 132).dp_tiles == 528  # 33 x 16 tiles, 4 full waves
    split = schedule_for(Config("streamk", TUNED, "split", 4), 1024, 1024, 1024, 132)
    assert (split.dp_tiles, split.per, split.shared_blocks) == (0, 32, 128)
    assert schedule_for(Config("streamk", TUNED, "split", 64), 128, 256, 16, 132).per == 1  # at most kt runs
    dp = schedule_for(Config("streamk", TUNED), 1000, 1000, 1000, 132)
    assert (dp.dp_tiles, dp.shared_blocks, dp.grid) == (32, 0, 32)


@pytest.mark.parametrize("tiles_m, tiles_n, group", [(32, 16, 8), (7, 5, 3), (1, 9, 8), (10, 1, 4), (5, 5, 1)])
def test_swizzle_numbers_every_tile_once(tiles_m, tiles_n, group):
    seen = [swizzled_tile(t, tiles_m, tiles_n, group) for t in range(tiles_m * tiles_n)]
    assert sorted(seen) == [(i, j) for i in range(tiles_m) for j in range(tiles_n)]
    if group == 1:
        assert seen == [(i, j) for i in range(tiles_m) for j in range(tiles_n)]  # row by row
    elif tiles_m > 1:
        assert seen[:2] == [(0, 0), (1, 0)]  # down a column of the group first


def test_configs_name_their_kernel_and_pass_the_static_asserts():
    for cfg in (*CHOICES.values(), *SCHEDULE_CONFIGS):
        assert cfg.tiles.problems(cfg.kernel) == []
        v = cfg.variant()
        assert v.kernel == cfg.expression and v.name == cfg.name
        assert parse(cfg.name) == cfg  # a job by name needs nothing but the name
    for name in ("naive", "best", "db_128x128x8", "sk_128x256x8_w64x64_i4_t4x4", "pl_128x256x8_w64x64_i4_t4x4_dp_g1",
                 "sk_128x256x8_w64x64_i4_t4x4_zigzag_g1", "db_128x128x8_w64x32_i2_t4x4_ab"):
        assert parse(name) is None, name  # not a configuration's name
    assert Config("streamk", TUNED, "hybrid", group_m=8, async_b=True).expression == \
        "streamk<128, 256, 8, 64, 64, 4, 4, 4, true>"
    assert Config("double_buffer", TUNED).expression == W.variant("tuned").kernel
    with pytest.raises(ValueError):
        Config("double_buffer", TUNED, "split", 2)
    # pipelined: its two switches in the name expression and the name; BK = 16 needs dynamic smem
    pl = CHOICES["pipelined"]
    assert pl.expression == "pipelined<128, 256, 16, 64, 64, 4, 4, 4, true, false>" == W.variant("best").kernel
    assert pl.name == "pl_128x256x16_w64x64_i4_t4x4_nf" and pl.dynamic_smem == pl.tiles.smem_bytes(2) == 49664
    assert Config("pipelined", TUNED, checked=True).name == "pl_128x256x8_w64x64_i4_t4x4_chk"
    first_form = Config("pipelined", TUNED)
    assert first_form.expression.endswith(", true, true>") and first_form.dynamic_smem == 0
    with pytest.raises(ValueError):
        Config("double_buffer", TUNED, frags=False)  # only pipelined has the switches
    with pytest.raises(ValueError):
        Config("pipelined", TUNED, "hybrid")
    assert any("99 KB" in p for p in Tiles(128, 256, 64, 64, 64, 4, 4, 4).problems("streamk"))


# ---- inputs, reference, check ------------------------------------------------------------------

def test_reference_hand_checked():
    inputs = {"a": np.array([[1, 2, 3], [4, 5, 6]], np.float32),
              "b": np.array([[7, 8], [9, 10], [11, 12]], np.float32)}
    ref = W.reference(shape(2, 2, 3), inputs, W.variant("naive"))
    np.testing.assert_array_equal(ref, [[58, 64], [139, 154]])


def test_reference_is_the_float64_product_of_the_fp32_inputs():
    s = shape(5, 7, 300)
    inputs = W.make_inputs(s, np.random.default_rng(0))
    a, b = inputs["a"], inputs["b"]
    assert a.dtype == b.dtype == np.float32 and a.shape == (5, 300) and b.shape == (300, 7)
    assert np.all(a != 0) and np.all(b != 0)  # never checks on zeros
    ref = W.reference(s, inputs, W.variant("corner_turning"))  # the same math for every variant
    assert ref.dtype == np.float64
    np.testing.assert_allclose(ref, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-13)
    assert not np.array_equal(W.make_inputs(s, np.random.default_rng(1))["a"], a)


def test_tolerance_grows_like_sqrt_k_and_stays_under_1e4():
    assert W.tolerance_for(shape(8, 8, 1024)).rtol == pytest.approx(16 * 2.0 ** -24 * 32)
    assert W.tolerance_for(shape(8, 8, 4096)).rtol == pytest.approx(2 * rtol_for_k(1024))
    assert rtol_for_k(8192) < 1e-4 and rtol_for_k(18) < 5e-6
    assert W.tolerance_for(shape(8, 8, 18)).rule == "normwise"


@pytest.mark.parametrize("k", [1, 18, 1024, 4096])
def test_bound_passes_fp32_and_fails_a_dropped_tail(k):
    """The bound separates an honest FP32 product (sequential sums, worse than any kernel's)
    from one that drops the last term of K, and NaN never passes."""
    s = shape(24, 20, k)
    inputs = W.make_inputs(s, np.random.default_rng(k))
    a, b = inputs["a"], inputs["b"]
    ref = W.reference(s, inputs, W.variant("naive"))
    acc = np.zeros((24, 20), np.float32)
    for i in range(k):  # multiply and add each rounded to FP32
        acc = (acc + np.outer(a[:, i], b[i, :])).astype(np.float32)
    tol = W.tolerance_for(s)
    assert compare(acc, ref, tol).passed
    if k > 1:
        dropped = (a[:, :-1].astype(np.float64) @ b[:-1, :].astype(np.float64)).astype(np.float32)
        assert not compare(dropped, ref, tol).passed
    acc[3, 4] = np.nan
    assert not compare(acc, ref, tol).passed


def test_large_products_are_checked_on_sampled_rows_and_columns(monkeypatch):
    s = shape(300, 200, 40)
    assert not gemm_sampled(s)
    monkeypatch.setattr(gemm_check, "FULL_CHECK_MAX_MNK", 300 * 200 * 40 - 1)
    assert gemm_sampled(s)
    inputs = W.make_inputs(s, np.random.default_rng(3))
    rows, cols = inputs[SAMPLE]
    assert len(rows) >= 64 and len(cols) >= 64 and {0, 299} <= set(rows) and {0, 199} <= set(cols)
    assert len(rows) <= 66 and len(cols) <= 66  # one per stratum and the two edge lines (SAMPLE_EDGE)
    ref = W.reference(s, inputs, W.variant("naive"))
    full = inputs["a"].astype(np.float64) @ inputs["b"].astype(np.float64)
    assert ref.shape == (len(rows) * 200 + 300 * len(cols),)
    np.testing.assert_allclose(ref, take(full, (rows, cols)), rtol=1e-12)
    # a wrong column in C shows up in the sample (every column is in the sampled rows)
    wrong = full.astype(np.float32)
    wrong[:, 123] += 1.0
    assert not compare(take(wrong, (rows, cols)), ref, W.tolerance_for(s)).passed
    assert compare(take(full.astype(np.float32), (rows, cols)), ref, W.tolerance_for(s)).passed


# ---- traffic model --------------------------------------------------------------------------

def model(name, m=1024, n=1024, k=1024):
    return W.traffic(shape(m, n, k), W.variant(name))


def test_compulsory_bytes_and_flops():
    t = model("naive")
    assert t.flops == 2 * 1024 ** 3 and t.bytes == 4 * 3 * 1024 ** 2
    assert model("cublas").extra == {} and model("cublas").bytes == t.bytes


def test_naive_reads_8_bytes_per_fma():
    t = model("naive")
    assert t.extra["model_bytes"] == 8 * 1024 ** 3 + 4 * 1024 ** 2
    assert t.extra["model_AI_flop_per_B"] == pytest.approx(0.25, rel=1e-3)


@pytest.mark.parametrize("name, ai", [("tiled16", 4), ("tiled32", 8), ("corner_turning", 8), ("dynamic_smem", 8),
                                      ("coarsened", 12.8), ("regtile2x2", 8), ("regtile4x4", 16),
                                      ("blocktile8x8", 32), ("warptile", 32), ("double_buffer", 32),
                                      ("cp_async", 32), ("tuned", 128 * 256 / (128 + 256) / 2)])
def test_tiled_intensity_is_tile_over_4(name, ai):
    # Loads alone give T/4 (ai); the 4MN bytes of C writes add 2 ai / K to the denominator.
    k = 1024
    assert model(name, k=k).extra["model_AI_flop_per_B"] == pytest.approx(ai / (1 + 2 * ai / k), rel=1e-12)


def test_partial_tiles_count_only_the_blocks_that_exist():
    t = model("tiled16", 513, 257, 18)
    loads = 513 * 18 * 17 + 18 * 257 * 33  # A once per block column (17), B once per block row (33)
    assert t.extra["model_bytes"] == 4 * loads + 4 * 513 * 257


# ---- dynamic shared memory ------------------------------------------------------------------

H200 = dict(threads_per_sm=2048, smem_per_sm=233472, smem_per_block_optin=232448)


def test_dynamic_tile_depth_on_an_h200():
    assert dynamic_tile_depth(1024, 32, **H200) == (352, 352 * 256)  # 3 phases, 88 KB: needs the opt-in
    assert dynamic_tile_depth(18, 32, **H200) == (32, 32 * 256)
    assert dynamic_tile_depth(448, 32, **H200) == (448, 448 * 256)


@pytest.mark.parametrize("dev", [H200, dict(threads_per_sm=1536, smem_per_sm=102400, smem_per_block_optin=101376),
                                 dict(threads_per_sm=2048, smem_per_sm=65536, smem_per_block_optin=49152)])
def test_dynamic_tile_depth_fits_and_covers_k(dev):
    blocks = dev["threads_per_sm"] // 1024
    for k in (1, 31, 32, 33, 100, 1000, 1024, 4096, 4097):
        tk, nbytes = dynamic_tile_depth(k, 32, **dev)
        assert tk % 32 == 0 and tk >= 32
        assert nbytes <= dev["smem_per_block_optin"] and blocks * (nbytes + 1024) <= dev["smem_per_sm"]
        phases = -(-k // tk)
        assert phases * tk - k < 32 * phases  # evened out: less than one tile of zeros per phase


# ---- validation and CLI ---------------------------------------------------------------------

@pytest.mark.parametrize("bad, message", [
    (shape(0, 4, 4), "M must be a positive integer"),
    (shape(4, -1, 4), "N must be a positive integer"),
    (shape(4, 4, 0), "K must be a positive integer"),
    (shape(65535 * 16 + 1, 4, 4), "at most 1048560"),
    (shape(4, 4, (1 << 30) + 1), "K = 1073741825 is above"),
])
def test_validate_rejects(bad, message):
    with pytest.raises(UsageError, match=message):
        W.validate(bad)


def test_validate_accepts_the_limits():
    W.validate(shape(65535 * 16, 1, 1 << 30))


@pytest.mark.parametrize("args", [("0", "4", "4"), ("4", "4", "4", "0"), ("4", "-3", "4"),
                                  ("1048561", "4", "4"), ("4", "4", "4", "--variants", "tiled64")])
def test_cli_bad_input_is_one_line_exit_2(run_cli, args):
    code, _, err = run_cli("gemm", *args)
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


# ---- NVRTC ----------------------------------------------------------------------------------

@pytest.mark.parametrize("arch", ["sm_90", "sm_80"])
def test_every_kernel_compiles_without_spills(arch):
    from pmppbench.cli.tools import skipped_on  # noqa: PLC0415

    # the wgmma rungs build for sm_90a only (test_gemm_tc.py); beside them a unit's static
    # shared memory is padded to 1 KB (docs/tensor_cores.md), so the sizes below are sm_90's
    names = [k for k in W.kernel_names() if k not in skipped_on(W, arch)[1]]
    unit = compile_unit("gemm", names, arch)
    for name in names:
        r = unit.ptxas[name]
        assert 0 < r.registers < 255, f"{name}: {r.registers} registers"
        assert r.spill_stores == 0 and r.spill_loads == 0, f"{name} spills"
    # the shared memory each kernel declares is what its comments say
    assert unit.ptxas["tiled<32>"].static_smem == 2 * 32 * 32 * 4
    assert unit.ptxas["corner_turning<32>"].static_smem == (32 * 32 + 32 * 33) * 4
    assert unit.ptxas["dynamic_smem<32>"].static_smem == 0
    one_stage = (8 * 132 + 8 * 128) * 4
    assert unit.ptxas[W.variant("warptile").kernel].static_smem == one_stage
    assert unit.ptxas[W.variant("double_buffer").kernel].static_smem == 2 * one_stage
    assert unit.ptxas[W.variant("cp_async").kernel].static_smem == 3 * one_stage


# ---- the course's listing (studies/baselines.py times it beside the rungs) ------------

def test_course_listing_compiles_through_the_same_path(monkeypatch):
    listings = Path(__file__).resolve().parent.parent / "studies" / "course_listings"
    monkeypatch.setenv("PMPPBENCH_KERNELS", str(listings))
    names = ["gemm_naive", "gemm_tiled16", "gemm_tiled32", "gemm_coarsened"]
    unit = compile_unit("course", names, "sm_90", use_cache=False)
    for name, report in unit.ptxas.items():
        assert report.registers > 0 and (report.spill_stores, report.stack_bytes) == (0, 0), name


@pytest.mark.parametrize("workload", ["vecadd", "transpose", "gemm", "stencil"])
def test_baselines_script_pairs_every_textbook_rung_and_its_sources_compile(workload, tmp_path, monkeypatch):
    """studies/baselines.py: each pair names a real variant and listing kernel, and the
    `--ab` source (__restrict__ on every float* parameter) still compiles."""
    import importlib.util

    path = Path(__file__).resolve().parent.parent / "studies" / "baselines.py"
    spec = importlib.util.spec_from_file_location("baselines", path)
    baselines = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "baselines", baselines)  # its dataclasses look themselves up there
    spec.loader.exec_module(baselines)
    w = workloads.get(workload)
    pairs = baselines.PAIRS[workload]
    textbook = {"vecadd": ["scalar"], "transpose": ["copy", "naive", "shared32", "padded33"],
                "gemm": ["naive", "tiled16", "tiled32", "coarsened"], "stencil": ["naive", "shared"]}
    assert [p.rung for p in pairs] == textbook[workload]
    baselines.with_restrict(Path(__file__).resolve().parent.parent / "kernels_cu" / f"{workload}.cu", tmp_path,
                            f"restrict_{workload}")
    text = (tmp_path / f"restrict_{workload}.cu").read_text()
    assert "float* a," not in text and "float* x," not in text and "float* A," not in text
    monkeypatch.setenv("PMPPBENCH_KERNELS", str(tmp_path))
    names = sorted({w.variant(p.rung).kernel for p in pairs})
    defines = {"RADIUS": 32} if workload == "stencil" else {}
    unit = compile_unit(f"restrict_{workload}", names, "sm_90", defines, use_cache=False)
    assert set(unit.ptxas) == set(names)


# ---- GPU ------------------------------------------------------------------------------------

EDGE_SHAPES = [shape(*s) for s in ((129, 127, 20), (300, 1, 7), (1, 300, 5), (128, 128, 8), (64, 132, 12),
                                   (17, 33, 1), (2, 3, 4), (130, 131, 1030))]


@pytest.mark.gpu
def test_every_variant_passes_on_the_check_shapes():
    shapes = W.check_shapes()
    rows = check_rows("gemm", shapes)
    assert len(rows) == len(shapes) * len(LADDER)
    assert_all_pass(rows)


@pytest.mark.gpu
def test_every_variant_passes_on_more_edges():
    assert_all_pass(check_rows("gemm", EDGE_SHAPES))


@pytest.mark.gpu
def test_sweep_points_pass_on_edges(monkeypatch):
    from pmppbench.engine.worker.pipeline import run_shape

    monkeypatch.setenv("PMPPBENCH_KERNEL_PATH", str(STUDY))
    study = tuning.WORKLOAD
    shapes = [shape(*s) for s in ((257, 260, 36), (513, 257, 18), (130, 131, 9), (1, 1, 1), (256, 256, 64))]
    rows = []
    for i, s in enumerate(shapes):
        rows += run_shape(study, s, protocol=study.protocol, check_only=True, seed=1 + i, variants=list(tuning.SWEEP))
    assert len(rows) == len(shapes) * len(tuning.SWEEP)
    assert_all_pass(rows)


def _run(s, variants, seed=5):
    from pmppbench.engine.worker.pipeline import run_shape

    return {r.variant: r for r in run_shape(W, s, protocol=W.protocol, check_only=True, seed=seed,
                                            variants=list(variants))}


@pytest.mark.gpu
@pytest.mark.parametrize("s", [shape(513, 257, 18), shape(64, 64, 17), shape(1000, 999, 1023)])
def test_kernel_that_skips_the_last_k_tile_fails(s):
    row = _run(s, [W.variant("naive"), SKIPS_LAST_K_TILE])[SKIPS_LAST_K_TILE.name]
    assert row.check == "FAIL" and "normwise error" in row.check_detail


@pytest.mark.gpu
def test_the_same_kernel_passes_when_k_has_no_tail():
    assert _run(shape(100, 70, 64), [W.variant("naive"), SKIPS_LAST_K_TILE])[SKIPS_LAST_K_TILE.name].check == "PASS"


@pytest.mark.gpu
def test_sampled_check_passes_good_kernels_and_fails_the_wrong_one(monkeypatch):
    monkeypatch.setattr(gemm_check, "FULL_CHECK_MAX_MNK", 1 << 20)
    s = shape(300, 200, 50)
    assert gemm_sampled(s)
    rows = _run(s, [*LADDER, SKIPS_LAST_K_TILE])
    assert rows.pop(SKIPS_LAST_K_TILE.name).check == "FAIL"
    assert_all_pass(rows.values())


@pytest.mark.gpu
def test_a_product_above_the_full_check_limit_is_sampled_and_passes():
    s = shape(4096, 4096, 4097)
    assert gemm_sampled(s)
    assert_all_pass(_run(s, [W.variant("double_buffer"), W.variant("cublas")]).values())


@pytest.mark.gpu
def test_dynamic_smem_takes_its_size_from_the_device():
    from pmppbench.hardware import device

    d = device.current()
    row = _run(shape(1024, 1024, 1024), [W.variant("dynamic_smem")])["dynamic_smem"]
    _, nbytes = dynamic_tile_depth(1024, 32, d.max_threads_per_sm, d.smem_per_sm, d.smem_per_block_optin)
    assert row.check == "PASS" and row.dynamic_smem_bytes == nbytes and row.static_smem_bytes == 0
    if d.smem_per_block_optin >= 2 * 49152:  # sm_80 and later: the opt-in above 48 KB was needed
        assert nbytes > 49152


@pytest.mark.gpu
def test_timed_run_produces_sane_rows(run_cli, tmp_path):
    out = tmp_path / "g.json"
    code, stdout, _ = run_cli("gemm", "256", "256", "256", "3", "--variants", "naive,tiled16,double_buffer,cublas",
                              "--out", str(out))
    assert code == 0 and "PASS" in stdout
    rows = {r["variant"]: r for r in json.loads(out.read_text())["results"]}
    assert set(rows) == {"naive", "tiled16", "double_buffer", "cublas"}
    for name, r in rows.items():
        assert r["check"] == "PASS" and r["median_ms"] > 0 and r["gflop_per_s"] > 0
        assert r["flops"] == 2 * 256 ** 3
        if name != "cublas":
            assert r["registers"] > 0 and r["model"]["model_AI_flop_per_B"] > 0
    assert rows["double_buffer"]["threads_per_block"] == 256
    assert rows["cublas"]["pct_of_roof"] == pytest.approx(100.0)
    assert rows["naive"]["speedup"] == pytest.approx(1.0)


@pytest.mark.gpu
def test_too_large_for_device_memory_is_skip_rows_with_the_reason(run_cli, tmp_path):
    # a shape the GPU cannot hold is left out as SKIP rows that say why (an 8 GB laptop
    # GPU and a large config shape), before anything is allocated; the run itself goes on
    from pmppbench.results.resultfile import load

    out = tmp_path / "big.csv"
    code, _, err = run_cli("gemm", "1000000", "1000000", "1000", "--check-only", "--out", str(out))
    assert code == 0, err
    rows = load(out)[0]
    assert rows and all(r.check == "SKIP" and "of device memory" in r.check_detail for r in rows)


@pytest.mark.gpu
def test_best_choices_pass_on_edges_after_repeated_launches():
    """Every configuration `best` can choose, on shapes that take each branch of the rule and
    leave partial tiles; launched three times before the output is read, so arrival counters
    that did not come back to zero would show. (2200, 4100, 24) has whole and shared tiles."""
    from pmppbench.hardware import device
    from pmppbench.engine.worker.pipeline import prepared

    sms = device.current().sm_count
    variants = [c.variant() for c in CHOICES.values()]
    for s in (shape(2200, 4100, 24), shape(513, 257, 1030), shape(1000, 999, 17), shape(129, 127, 20),
              shape(1, 1, 1), shape(300, 1, 7)):
        with prepared(W, s, variants) as (inputs, ctx):
            ref = W.reference(s, inputs, variants[0])
            for v in variants:
                job = W.job(v, s, ctx)
                job.poison()
                for _ in range(3):
                    job.run()
                result = compare(job.output(), ref, W.tolerance_for(s))
                assert result.passed, (v.name, s, result.detail)
        assert choose(s["m"], s["n"], s["k"], sms) in CHOICES.values()


def test_config_launch_builds_the_schedules_arguments(monkeypatch):
    """config_launch on the CPU, with NumPy for the device arrays and a fake occupancy:
    the grid, the block, the schedule's arguments and the workspace sizes."""
    from pmppbench.hardware import compile as comp
    from pmppbench.hardware import occupancy

    monkeypatch.setattr(gemm_launch, "cupy", lambda: np)
    monkeypatch.setattr(occupancy, "api_active_blocks", lambda kernel, threads, smem: 1)

    def fake(name):
        return comp.Kernel(name=name, function=None, registers=227, static_smem=16, local_bytes=0, max_threads=256,
                           spill_bytes=0)

    s = shape(4096, 4096, 4096)
    ctx = Context({}, None, a="A", b="B", c="C")
    cfg = CHOICES["hybrid"]
    ctx.kernels[cfg.expression] = fake(cfg.expression)
    launch = gemm_launch.config_launch(cfg, s, ctx, 132)
    sched = schedule_for(cfg, 4096, 4096, 4096, 132)
    assert launch.grid == (sched.grid,) == (264 + 132,) and launch.block == (256,)
    # two stages of 24.8 KB fit in static shared memory: the launch asks for no dynamic memory
    assert TUNED.smem_bytes(2) == 2 * 4 * (8 * 132 + 8 * 256) <= 48 * 1024 and launch.dynamic_smem == 0
    bk16 = Config("streamk", Tiles(128, 256, 16, 64, 64, 4, 4, 4), async_b=True)  # 49.7 KB: dynamic
    assert bk16.dynamic_smem == bk16.tiles.smem_bytes(2) > 48 * 1024
    a, b, c, m, n, k, dp, per, group, partials, arrivals = launch.args
    assert (a, b, c) == ("A", "B", "C") and (m, n, k) == (4096, 4096, 4096) and m.dtype == np.int32
    assert (dp, per, group) == (264, sched.per, 8) and per.dtype == np.int32
    assert partials.dtype == np.float32 and partials.size == 2 * 132 * 128 * 256
    assert arrivals.dtype == np.int32 and arrivals.size == 512 - 264 and not arrivals.any()
    assert "264 whole tiles + 132 shared blocks" in launch.kernel.name and launch.kernel.registers == 227
    assert gemm_launch.config_launch(cfg, s, ctx, 132).args[-1] is arrivals  # one workspace per configuration
    # the tuned rung's own kernel as a configuration: its 2-D grid and no extra arguments
    db = Config("double_buffer", TUNED)
    ctx.kernels[db.expression] = fake(db.expression)
    launch = gemm_launch.config_launch(db, shape(1000, 1000, 10), ctx, 132)
    assert launch.grid == (4, 8) and len(launch.args) == 6 and launch.dynamic_smem == 0
    # pipelined with BK = 16: the same 2-D grid, its 49.7 KB of stages as dynamic shared memory,
    # the kernel's limit raised first
    pl = CHOICES["pipelined"]
    raised = []
    ctx.kernels[pl.expression] = fake(pl.expression)
    monkeypatch.setattr(comp.Kernel, "allow_dynamic_smem", lambda self, nbytes: raised.append(nbytes))
    launch = gemm_launch.config_launch(pl, shape(4096, 4096, 4096), ctx, 132)
    assert launch.grid == (16, 32) and launch.block == (256,) and len(launch.args) == 6
    assert launch.dynamic_smem == raised[0] == 49664


def test_best_rule_on_the_h200_shapes():
    """Which configuration `choose` names on 132 SMs (the picks the second H200 sweep
    measured fastest or within 1% of it): the tuned tiles where they fill the GPU, hybrid
    where the cost model says it saves more than 1%; below that, the largest smaller tile
    that gives every SM 16 K steps, stream-K; the smallest tile whole when none does."""
    def pick(*s, sms=132):
        return next(key for key, cfg in CHOICES.items() if cfg is choose(*s, sms))

    for s in [(2048, 2048, 2048), (4096, 4096, 4096), (4096, 4096, 1024), (1024, 8192, 4096), (4096, 1024, 8192),
              (8192, 8192, 256)]:
        assert pick(*s) == "pipelined", s  # a last wave 97% full: hybrid would not save 1%
    # 16 waves, 97% full: hybrid's stream-K part is 10% of the work, but streamk's K steps are
    # 11% slower than pipelined's (sweep 3: hybrid 91.9%, pipelined 100.2% of cuBLAS)
    assert pick(8192, 8192, 8192) == "pipelined"
    assert pick(2304, 2304, 2048) == "hybrid"  # 162 tiles: two waves, the second 23% full
    assert pick(3072, 3072, 3072) == "hybrid"  # 288 tiles: 3 waves at 73%
    assert pick(1536, 1536, 1536) == pick(1024, 1024, 1024) == "streamk 128x128"
    assert pick(1024, 1024, 8192) == "streamk 128x128"
    assert pick(768, 768, 768) == "streamk 128x64"  # 128 x 128: 36 tiles x 48 steps = 13 per SM, too few
    assert pick(512, 512, 512) == "streamk 32x64"  # 64 x 64: 15.5 K steps per SM
    assert pick(256, 256, 256) == pick(1, 1, 1) == "whole 32x64"
    # the cost model on its own: whole tiles take 4 waves at 4096^3, hybrid 3.88 + its costs
    assert best.hybrid_cost(4096, 4096, 4096, 132) == pytest.approx(1.11 * (512 / 132 + (0.05 * 962 + 15) / 512))
    assert best.hybrid_cost(2304, 2304, 2048, 132) < 1.5 < 2  # sweep 3: 1.33x pipelined's time
    # a GPU with half the SMs: 2048^3's 128 tuned tiles are 2 waves there, the second 94% full
    assert pick(2048, 2048, 2048, sms=66) == "pipelined"
    assert pick(1536, 1536, 1536, sms=66) == "hybrid"  # 72 tiles on 66 SMs: the second wave 9% full
    row = W.traffic(shape(512, 512, 512), W.variant("best"), GPUS["H200"])  # modelled with the tiles best uses
    t = CHOICES["streamk 32x64"].tiles
    assert row.extra["model_bytes"] == 4 * (512 * 512 * (512 // t.bn) + 512 * 512 * (512 // t.bm)) + 4 * 512 * 512


# The facts `best` depends on, of GPUs with different SM counts (the other fields as the
# device reports them; only sm_count and the shared-memory limits are read here).
_H200 = DeviceInfo("NVIDIA H200", "9.0", "sm_90", 132, 1980, 3201, 6144, 150 << 30, 60 << 20, 233472, 49152,
                   232448, 65536, 2048, 32, 1024, 32, "13.0", "13.0", "14.2.0")
GPUS = {
    "T4": replace(_H200, name="Tesla T4", compute_capability="7.5", arch="sm_75", sm_count=40, smem_per_sm=65536,
                  smem_per_block_optin=65536, max_threads_per_sm=1024, max_blocks_per_sm=16),
    "A100": replace(_H200, name="NVIDIA A100", compute_capability="8.0", arch="sm_80", sm_count=108,
                    smem_per_sm=167936, smem_per_block_optin=166912),
    "RTX 4090": replace(_H200, name="NVIDIA GeForce RTX 4090", compute_capability="8.9", arch="sm_89", sm_count=128,
                        smem_per_sm=102400, smem_per_block_optin=101376, max_threads_per_sm=1536),
    "H100": replace(_H200, name="NVIDIA H100", sm_count=132),
    "H200": _H200,
    "RTX 5090": replace(_H200, name="NVIDIA GeForce RTX 5090", compute_capability="12.0", arch="sm_120",
                        sm_count=170, smem_per_sm=102400, smem_per_block_optin=101376, max_threads_per_sm=1536),
}


def _config_shapes():
    """Every FP32 GEMM shape of the bundled configs (best runs FP32 only; --precision shapes
    have the tensor-core table: tests/test_gemm_tc.py)."""
    from pmppbench.cli import config

    shapes = []
    for name in config.bundled():
        for plan in config.load(name).sections:
            if plan.name == "gemm":
                shapes += [s for s in plan.shapes if s not in shapes and s.get("precision", "fp32") == "fp32"]
    return shapes


@pytest.mark.parametrize("gpu", GPUS)
def test_best_job_and_traffic_model_agree_on_every_gpu(gpu, monkeypatch):
    """On each GPU's facts and every GEMM shape of the bundled configs: the tiles of the
    kernel best's job launches (on the CPU, NumPy for the device arrays) are the tiles its
    traffic row is modelled with, and the launch is that configuration's."""
    from pmppbench.hardware import compile as comp
    from pmppbench.hardware import occupancy

    facts = GPUS[gpu]
    monkeypatch.setattr(gemm_launch, "cupy", lambda: np)
    monkeypatch.setattr(gemm_workload, "cupy", lambda: np)
    monkeypatch.setattr(occupancy, "api_active_blocks", lambda kernel, threads, smem: 1)
    monkeypatch.setattr(comp.Kernel, "allow_dynamic_smem", lambda self, nbytes: None)
    kernels = {e: comp.Kernel(name=e, function=None, registers=128, static_smem=0, local_bytes=0, max_threads=256,
                              spill_bytes=0) for e in [c.expression for c in CHOICES.values()] + [gemm_launch.PAD_KERNEL]}
    shapes = _config_shapes()
    assert shape(4096, 4096, 4096) in shapes and len(shapes) >= 14
    bv = W.variant("best")
    for s in shapes:
        m, n, k = s["m"], s["n"], s["k"]
        ctx = Context(dict(kernels), facts, a="A", b="B", c=np.empty(0, np.float32))
        job = W.job(bv, s, ctx)
        cfg = choose(m, n, k, facts.sm_count)
        expression = job.launch.kernel.name.split(" (")[0]
        bm, bn = (int(x) for x in expression.split("<")[1].split(",")[:2])
        assert expression == cfg.expression and (bm, bn) == (cfg.tiles.bm, cfg.tiles.bn), (gpu, s)
        assert job.launch.block == (cfg.tiles.threads,)
        if cfg.schedule == "dp":
            assert math.prod(job.launch.grid) == -(-m // bm) * -(-n // bn)
        else:
            assert job.launch.grid == (schedule_for(cfg, m, n, k, facts.sm_count).grid,)
        row = W.traffic(s, bv, facts)  # pipelined_padded: its loads over the padded K and its copies
        padding = padding_for(cfg.tiles, m, n, k) if cfg.padded else None
        assert row == model_traffic(m, n, k, Cover(bm, bn, job.launch.block), padding=padding), (gpu, s)
    # the facts matter: the same shape can take other tiles on another GPU, and its model follows
    small, large = GPUS["T4"], GPUS["RTX 5090"]
    s = shape(1536, 1536, 1536)
    assert choose(1536, 1536, 1536, small.sm_count) != choose(1536, 1536, 1536, large.sm_count)
    assert W.traffic(s, bv, small) != W.traffic(s, bv, large)
    # without a GPU's facts (the parent's time limit) best's row has no model columns, never a guess
    assert W.traffic(s, bv).extra == {} and W.traffic(s, bv).bytes == W.traffic(s, bv, small).bytes


@pytest.mark.skipif(not (shutil.which("g++") or shutil.which("c++")), reason="needs a host C++ compiler")
def test_streamk_schedules_give_the_right_c_when_emulated_on_the_cpu():
    """gemm.cu's streamk compiled for the host (tests/gemm_emulate.py: one thread per
    CUDA thread, blocks in random order) for each of best's configurations on shapes with
    partial tiles, K % 4 != 0 and few slots: the same normwise check as on the GPU, and the
    arrival counters back at zero after every launch. A schedule whose runs are one K step
    short (the same blocks, so the last steps belong to nobody) must fail it."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import gemm_emulate as emu

    runs = emu.plan(quick=True)
    configs = list(dict.fromkeys(c for c, _, _ in runs))
    lib = emu.build(configs)
    for i, (cfg, (m, n, k), slots) in enumerate(runs):
        assert emu.run_one(lib, configs.index(cfg), cfg, m, n, k, slots, launches=2, seed=i) == []
    cfg = CHOICES["streamk 64x64"]
    good = schedule_for(cfg, 300, 520, 100, 5)
    assert good.per > 1 and good.shared_blocks > 1
    problems = emu.run_one(lib, configs.index(cfg), cfg, 300, 520, 100, 5, launches=1, seed=0,
                           schedule=replace(good, per=good.per - 1))
    assert any("elements wrong" in p for p in problems) and any("arrival counters" in p for p in problems)


def test_every_pick_of_the_rule_was_measured_in_the_committed_sweep():
    """The rule was read from tests/data/gemm-best-sweep.csv (studies/gemm_best_sweep.py on an
    H200): for every shape there, the configuration `choose` names on the H200's 132 SMs has a
    checked, timed row (or is the tuned rung, which every shape has), so the sweep's table
    (scripts/gemm_best_table.py) has a number for every pick."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
    import gemm_best_table

    path = Path(__file__).resolve().parent / "data" / "gemm-best-sweep.csv"
    shapes = gemm_best_table.rows_by_shape(path)
    assert (4096, 4096, 4096) in shapes and len(shapes) >= 14
    for s, rows in shapes.items():
        assert all(r["check"] == "PASS" for r in rows.values()), s
        cfg = choose(*s, 132)
        row = rows[cfg.name]
        assert float(row["median_ms"]) > 0 and float(row["pct_of_roof"]) > 0, s
    lines = gemm_best_table.table(path)
    assert len(lines) == 2 + len(shapes) and all("not timed" not in line for line in lines)


RESULTS = Path(__file__).resolve().parent.parent / "results"


@pytest.mark.parametrize("path", sorted(RESULTS.glob("*/gemm-sizes.csv")), ids=lambda p: p.parent.name)
def test_every_best_row_of_the_committed_size_table_ran_the_rules_pick(path):
    """results/<board>/gemm-sizes.csv is `best` under this rule (docs/gemm.md, the size table):
    each of its `best` rows names the kernel `choose` picks for that shape on 132 SMs (an H100
    SXM's and an H200's), passed the check, and has cuBLAS from the same run beside it -- so a
    rule changed after that run fails here until the table is measured again."""
    import csv

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
    import gemm_best_table

    rows = list(csv.DictReader(open(path, newline="")))
    best = [r for r in rows if r["variant"] == "best"]
    assert len(best) >= 14 and {r["run_id"] for r in rows} == {best[0]["run_id"]}  # one run
    for r in best:
        m, n, k = (int(x) for x in r["shape"].split("x"))
        assert r["check"] == "PASS" and r["kernel"].startswith(choose(m, n, k, 132).expression), r["shape"]
        assert any(c["variant"] == "cublas" and c["shape"] == r["shape"] and c["check"] == "PASS" for c in rows)
    lines = gemm_best_table.table(path, best_rows=True)
    assert len(lines) == 2 + len(best) and "**" not in "".join(lines)  # no target missed


def test_a_size_table_is_committed():
    assert sorted(RESULTS.glob("*/gemm-sizes.csv")), "no results/<board>/gemm-sizes.csv: docs/gemm.md quotes one"



def test_any_configuration_is_a_variant_by_its_name():
    """`--variants` (and a config file) take a configuration's Config.name beside the table's
    names: the pipelined kernel's checked path at 4097 x 4095 x 4096 was timed so beside best
    (docs/gemm.md, "Odd shapes"). A name that is neither is the usual one-line error."""
    checked = W.variant("pl_128x256x16_w64x64_i4_t4x4_chk_nf")
    assert checked.kernel == "pipelined<128, 256, 16, 64, 64, 4, 4, 4, false, false>"
    assert parse(checked.name) == Config("pipelined", CHOICES["pipelined"].tiles, checked=True, frags=False)
    hybrid = CHOICES["hybrid"]
    assert W.variant(hybrid.name) == hybrid.variant() and W.variant("best") is W.variants[W.variant_names().index("best")]
    with pytest.raises(UsageError, match="unknown variant 'pl_nope'"):
        W.variant("pl_nope")


# ---- odd shapes: pipelined_padded -------------------------------------------------------------

PADDED = best.PADDED


def test_best_pads_odd_shapes_whose_copies_are_cheap():
    """Where the 128 x 256 tiles fill the GPU but pipelined has no unchecked path (K % 16 != 0
    or N % 4 != 0), best runs pipelined_padded unless its copies would move more than
    PAD_BYTES_PER_FLOP; aligned shapes, and odd ones with a fast interior path, keep pipelined."""
    assert choose(4097, 4095, 4096, 132) is PADDED  # N % 4 != 0: B copied
    assert choose(4095, 4095, 4095, 132) is PADDED  # K % 16 != 0 too: A and B copied
    assert choose(1409, 2815, 64, 132) is PADDED  # the GPU test's shape: 132 tiles
    assert choose(3000, 5000, 2000, 132) is CHOICES["pipelined"]  # interior tiles unchecked already
    assert choose(4096, 4096, 4096, 132) is CHOICES["pipelined"]
    # 1409 x 2815 x 33: B's copy (33 -> 48 rows) is above the limit, the checked loop stays
    pad = configs_padding(1409, 2815, 33)
    assert pad.copied_bytes > best.PAD_BYTES_PER_FLOP * 2 * 1409 * 2815 * 33
    assert choose(1409, 2815, 33, 132) is CHOICES["pipelined"]
    assert choose(2304, 2303, 2048, 132) is CHOICES["hybrid"]  # hybrid is decided first, as before


def test_best_takes_half_tiles_where_the_large_tiles_last_wave_is_nearly_empty():
    """4095 x 4097 x 4095: 128 x 256 tiles are 32 x 17 = 544 (the 17th column one element
    wide): 5 waves on 132 SMs, the last 12% full. 128 x 128 tiles are 32 x 33 = 1056: 8 full
    waves of half the work at TILE_SPEED, 4.26 tile-times against 5 (and hybrid's 4.67), so
    best runs them, on padded copies (K % 16, N % 4 != 0). Where the waves come out alike the
    large tile stays (it is faster a tile), and hybrid is weighed against the better of the two."""
    half = CHOICES["pipelined 128x128 padded"]
    assert choose(4095, 4097, 4095, 132) is half and half.tiles == best.HALF_TILES and half.padded
    assert best.whole_cost(best.PIPELINED_TILES, 4095, 4097, 132) == 5
    assert best.whole_cost(best.HALF_TILES, 4095, 4097, 132) == pytest.approx(8 * 0.5 * 3.210 / 3.014)
    assert best.hybrid_cost(4095, 4097, 4095, 132) > best.whole_cost(best.HALF_TILES, 4095, 4097, 132)
    assert choose(4096, 4096, 4096, 132) is CHOICES["pipelined"]  # 4 waves either way: the large tile
    assert choose(8192, 8192, 8192, 132) is CHOICES["pipelined"]  # 16 against 32 waves of half
    assert choose(3072, 3072, 3072, 132) is CHOICES["hybrid"]  # 2.53 against 2.66 (half) and 3 (large)


def configs_padding(m, n, k):
    from pmppbench.workloads.gemm.configs import padding_for

    return padding_for(PADDED.tiles, m, n, k)


def test_padding_of_each_case():
    p = configs_padding(4097, 4095, 4096)
    assert (p.kp, p.np, p.a, p.b) == (4096, 4096, False, True)
    assert p.copied_bytes == 4 * (4096 * 4095 + 4096 * 4096)  # B read once, its copy written once
    p = configs_padding(4095, 4095, 4095)
    assert (p.kp, p.np, p.a, p.b) == (4096, 4096, True, True)
    assert p.copied_bytes == 4 * (4095 * (4095 + 4096) + 4095 * 4095 + 4096 * 4096)
    p = configs_padding(300, 520, 64)  # already so: no copy
    assert (p.kp, p.np, p.a, p.b, p.copied_bytes) == (64, 520, False, False, 0)
    assert configs_padding(1, 1, 1) == replace(p, m=1, n=1, k=1, kp=16, np=4, a=True, b=True)
    assert PADDED.expression == "pipelined_padded<128, 256, 16, 64, 64, 4, 4, 4>"
    assert PADDED.name == "pl_128x256x16_w64x64_i4_t4x4_nf_pad" and parse(PADDED.name) == PADDED
    assert PADDED.dynamic_smem == CHOICES["pipelined"].dynamic_smem
    for bad in ({"checked": True}, {"frags": True}):
        with pytest.raises(ValueError):
            Config("pipelined", PADDED.tiles, padded=True, **{"frags": False, **bad})
    with pytest.raises(ValueError):
        Config("streamk", PADDED.tiles, padded=True)


def test_padded_call_launches_its_copies_then_the_kernel(monkeypatch):
    """config_launches on the CPU (NumPy for the device arrays): pad_rows for each operand
    that needs it, into buffers kept in ctx, then pipelined_padded on them; the job counts
    every launch and shows the GEMM kernel's resources; no copy where the shape needs none."""
    from pmppbench.hardware import compile as comp

    monkeypatch.setattr(gemm_launch, "cupy", lambda: np)
    monkeypatch.setattr(comp.Kernel, "allow_dynamic_smem", lambda self, nbytes: None)

    def fake(name):
        return comp.Kernel(name=name, function=None, registers=241, static_smem=0, local_bytes=0, max_threads=256,
                           spill_bytes=0)

    kernels = {PADDED.expression: fake(PADDED.expression), gemm_launch.PAD_KERNEL: fake(gemm_launch.PAD_KERNEL)}
    for (m, n, k), copies in (((4095, 4095, 4095), 2), ((4097, 4095, 4096), 1), ((300, 520, 64), 0)):
        ctx = Context(dict(kernels), GPUS["H200"], a="A", b="B", c=np.empty((m, n), np.float32))
        launches = gemm_launch.config_launches(PADDED, shape(m, n, k), ctx, 132)
        assert len(launches) == copies + 1
        *pads, gemm = launches
        assert gemm.kernel.name == PADDED.expression and gemm.grid == (-(-n // 256), -(-m // 128))
        assert all(p.kernel.name == gemm_launch.PAD_KERNEL and p.block == (256,) for p in pads)
        pad = configs_padding(m, n, k)
        ap, bp = ctx[("padded operands", pad)]
        a, b, c, mm, nn, kp, np_ = gemm.args  # the padded K and row length of B from the host
        assert (a is ap) == pad.a and (b is bp) == pad.b and (mm, nn, kp, np_) == (m, n, pad.kp, pad.np)
        assert kp.dtype == np.int32 and gemm.dynamic_smem == PADDED.dynamic_smem
        assert copies or (a, b) == ("A", "B")  # already padded: the inputs themselves
        if copies:
            src, dst, rows, cols, rows_out, ld = pads[-1].args  # B's copy: K x N into kp x np
            assert (src, dst, rows, cols, rows_out, ld) == ("B", bp, k, n, pad.kp, pad.np) and bp.size == pad.kp * pad.np
            assert pads[-1].grid == (-(-pad.np // 4 // 256), pad.kp)
        if copies == 2:
            assert pads[0].args[:6] == ("A", ap, m, k, m, pad.kp) and ap.size == m * pad.kp
        job = W.job(W.variant(PADDED.name), shape(m, n, k), ctx)
        assert [(x.kernel.name, x.grid) for x in job.launches] == [(x.kernel.name, x.grid) for x in launches]
        assert job.launch is job.launches[-1] and job.launches[-1].args[0] is a  # the same buffers as before
    assert gemm_launch.pad_grid(100_000, 8) == (1, 65535)  # rows past 65535 are strided over
    with pytest.raises(ValueError, match="several launches"):
        gemm_launch.config_launch(PADDED, shape(300, 520, 64), ctx, 132)


def test_padded_traffic_counts_whole_tiles_and_the_copies():
    s = shape(4095, 4095, 4095)
    row = W.traffic(s, W.variant(PADDED.name), GPUS["H200"])
    pad = configs_padding(4095, 4095, 4095)
    loads = 32 * 16 * (128 + 256) * 4096  # every tile's A and B, the clamped parts too, over kp
    assert row.extra["model_bytes"] == 4 * loads + 4 * 4095 * 4095 + pad.copied_bytes
    assert row.bytes == 4 * 3 * 4095 * 4095 and row.flops == 2 * 4095 ** 3  # the compulsory traffic as before
    assert W.traffic(shape(4096, 4096, 4096), W.variant("best"), GPUS["H200"]) == \
        model_traffic(4096, 4096, 4096, Cover(128, 256, (256,)))


def test_the_padded_row_says_what_its_call_contains():
    assert "pad_rows copies them in the call: 2-3 launches" in W.variant(PADDED.name).about
    assert {PADDED.expression, gemm_launch.PAD_KERNEL} <= set(W.kernel_names())  # built, compile-tested everywhere


def test_the_caption_says_what_a_padded_call_launches():
    assert "3 launches a call" in W.call_note(shape(4095, 4095, 4095)) and "A and B" in W.call_note(shape(4095, 4095, 4095))
    assert "2 launches a call" in W.call_note(shape(4097, 4095, 4096))
    assert W.call_note(shape(4096, 4096, 4096)) == W.call_note(shape(3000, 5000, 2000)) == ""
    assert W.call_note({"m": 4095, "n": 4095, "k": 4095, "precision": "bf16"}) == ""


@pytest.mark.gpu
def test_best_and_the_padded_knob_pass_on_odd_dims():
    """best and pipelined_padded on shapes that are 1, 7, 129, 4095 or 4097 in some dimension,
    and two whose 128 x 256 tiles fill an H200 (1409 x 2815 x 64: B copied; 1535 x 5631 x 40:
    A and B)."""
    shapes = [shape(1409, 2815, 64), shape(1535, 5631, 40), shape(129, 4097, 7), shape(7, 129, 4095),
              shape(4097, 1, 129), shape(1, 7, 1)]
    from pmppbench.hardware import device

    rows = check_rows("gemm", shapes, variants=["best", PADDED.name, "cublas"])
    assert len(rows) == 3 * len(shapes)
    assert_all_pass(rows)
    if device.current().sm_count == 132:  # best itself took the padded call on the first two
        assert choose(1409, 2815, 64, 132) is PADDED and choose(1535, 5631, 40, 132) is PADDED


def test_gemm_kernel_files_are_one_family_each_and_have_no_switches():
    """Each GEMM kernel file holds one family in at most 700 lines, and no preprocessor switch
    but the guards of what a target or the host compiler can build (a study or a test builds a
    changed copy instead: studies/gemm_tile_order.py, the mutants of test_gemm_tc.py)."""
    import re

    from pmppbench.hardware.compile import shipped_kernels_dir

    allowed = {"#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800",  # cp.async: sm_80 and later
               "#if defined(__CUDACC_RTC__) || defined(__CUDACC__)"}  # the tensor cores: not for the host emulation
    files = sorted(shipped_kernels_dir().glob("gemm*.cu*"))
    assert [f.name for f in files] == ["gemm.cu", "gemm_streamk.cuh", "gemm_tc.cuh", "gemm_warptile.cuh",
                                       "gemm_wgmma.cuh"]
    for f in files:
        text = f.read_text()
        assert len(text.splitlines()) <= 700, f.name
        switches = {line.strip() for line in text.splitlines() if re.match(r"\s*#\s*(if|ifdef|ifndef|elif)\b", line)}
        assert switches <= allowed, (f.name, switches - allowed)
